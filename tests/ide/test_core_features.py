"""Unit tests of the protocol-agnostic features: fixture strings with a ``$0`` cursor, one `check` helper per
feature (rust-analyzer style), and the layering rule that the core never imports pygls or lsprotocol."""

from __future__ import annotations

import subprocess
import sys

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import hover, navigation, symbols
from tests.fixtures import cursor

MODULE = """HloModule m

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[8,128]) -> f32[] {
  %p = f32[8,128]{1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %zero), dimensions={0,1}, to_apply=%add
}
"""


def _ws(text: str, name: str = "/mem/m.hlo") -> tuple[Workspace, str, int, int]:
    clean, line, col = cursor(text)
    ws = Workspace()
    ws.open(name, clean, 1)
    return ws, name, line, col


def check_hover(text: str, *expected: str, absent: tuple[str, ...] = ()) -> None:
    ws, path, line, col = _ws(text)
    h = hover.hover(ws, path, line, col)
    assert h is not None, "no hover"
    for e in expected:
        assert e in h.markdown, f"{e!r} not in\n{h.markdown}"
    for a in absent:
        assert a not in h.markdown


def check_definition(text: str, target_line: int, target_text: str) -> None:
    ws, path, line, col = _ws(text)
    locs = navigation.definition(ws, path, line, col)
    assert locs, "no definition"
    lines = ws.analysis(path).lines
    r = locs[0].range
    assert r.start_line == target_line
    assert lines[r.start_line][r.start_col : r.end_col] == target_text


def test_hover_instruction_sizes():
    check_hover(
        MODULE.replace("%p = f32[8,128]", "%$0p = f32[8,128]"),
        "**parameter** `%p` in `main`",
        "**Bytes** 4096 bytes (4.0KiB)",
        "**Users** 1",
    )


def test_hover_operand_resolves_in_scope():
    check_hover(MODULE.replace("add(%x, %y)", "add(%x, %$0y)"), "**parameter** `%y` in `add`", "**Parameter** 1")


def test_hover_called_computation_signature():
    check_hover(MODULE.replace("to_apply=%add", "to_apply=%a$0dd"), "**computation** `add`", "**Called by** `r`")


def test_hover_shape_tiled():
    check_hover(
        MODULE.replace("%zero = f32[] constant(0)", "%zero = f32[]{:T($0128)} constant(0)"),
        "**Bytes** 4 bytes",
        "**Padded** 512 bytes",
    )


def test_definition_operand_and_callee():
    check_definition(MODULE.replace("reduce(%p,", "reduce(%$0p,"), 9, "p")
    check_definition(MODULE.replace("to_apply=%add", "to_apply=%ad$0d"), 2, "add")


def test_definition_reducer_parameter_stays_put():
    # a reducer's parameters are scalars the reduce feeds, not operands: definition stays on the parameter
    check_definition(MODULE.replace("%x = f32[] parameter(0)", "%$0x = f32[] parameter(0)"), 3, "x")


def test_no_hover_on_blank_line_and_nothing_raises():
    ws, path, _, _ = _ws(MODULE + "$0")
    assert hover.hover(ws, path, 1, 0) is None
    assert hover.hover(ws, path, 999, 999) is None
    assert navigation.definition(ws, path, -1, -5) == []


def test_outline():
    ws, path, _, _ = _ws(MODULE + "$0")
    (mod,) = symbols.document_symbols(ws, path)
    assert mod.name == "m" and [c.name for c in mod.children] == ["add", "main"]
    assert [i.name for i in mod.children[1].children] == ["p", "zero", "r"]


def test_core_never_imports_the_protocol():
    code = (
        "import importlib, pkgutil, sys\n"
        "import hlo_lsp.core, hlo_lsp.ide\n"
        "for pkg in (hlo_lsp.core, hlo_lsp.ide):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('pygls', 'lsprotocol'))\n"
        "print(len([n for n in sys.modules if n.startswith('hlo_lsp.')]), bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert int(r.stdout.split()[0]) >= 15
