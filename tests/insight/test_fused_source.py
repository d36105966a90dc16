"""A fusion whose line carries no metadata takes its source from its fused computation (issue 19): the root's
op_name and stack when the root has them (marked ``via root ...``), else the first instruction with a stack frame.
Checked on every such fusion of the real TPU dumps in tests/data, against the fused computation's text."""

from __future__ import annotations

import re

import pytest

from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.memory.values import Sources, ValueSource
from tests.fixtures import DATA

MODULES = sorted(
    p
    for p in DATA.rglob("*after_optimizations.txt")
    if "buffer" not in p.name and (p.name.startswith("module_") and ".txt" in p.name)
)
FUSION = re.compile(r"^\s+(?:ROOT )?%?([\w.\-]+) = .*? fusion\(.*\bcalls=%?([\w.\-]+)")
HEADER = re.compile(r"^%?([\w.\-]+) .*\{\s*$")
OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')


def _computations(lines: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    cur = None
    for line in lines:
        h = HEADER.match(line)
        if h and not line.startswith(" "):
            cur = out.setdefault(h.group(1), [])
        elif line.startswith("}"):
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def _expected(body: list[str]) -> tuple[str | None, str | None]:
    """(op_name, instruction) the fusion borrows: the root's when it has an op_name, else the first instruction
    with a stack frame, else the first with an op_name; (None, None) when the computation names no source."""
    root = next((x for x in body if x.lstrip().startswith("ROOT ")), None)
    rest = [x for x in body if x is not root and "metadata=" in x]
    name = re.compile(r"^\s+(?:ROOT )?%?([\w.\-]+) = ")
    if root is not None and (op := OP_NAME.search(root)) is not None:
        return op.group(1), name.match(root).group(1)
    framed = [x for x in rest if "stack_frame_id=" in x or "source_file=" in x]
    for x in framed + [x for x in rest if OP_NAME.search(x)]:
        op = OP_NAME.search(x)
        return (op.group(1) if op else None), name.match(x).group(1)
    return None, None


@pytest.mark.parametrize("path", MODULES, ids=[p.parent.name + "/" + p.name[:40] for p in MODULES])
def test_fusion_without_metadata_borrows_its_computations_source(path):
    text = path.read_text()
    lines = text.split("\n")
    comps = _computations(lines)
    hlo = read_hlo(text)
    sources = Sources(None, hlo)  # type: ignore[arg-type]  # the fused fallback reads the module only
    for line in lines:
        m = FUSION.match(line)
        if m is None or "metadata=" in line:
            continue
        name, called = m.groups()
        op, via = _expected(comps[called])
        src = sources._fused(name)
        if via is None:
            assert src is None
        else:
            assert isinstance(src, ValueSource) and src.via is not None
            assert src.op_name == op
            assert src.via.split(" of ")[0].removeprefix("root ") == via


def test_the_samples_hold_fusions_that_borrow():
    """The check above is not vacuous: tests/data holds fusions without metadata whose computation names a source."""
    borrowing = 0
    for path in MODULES:
        lines = path.read_text().split("\n")
        comps = _computations(lines)
        for line in lines:
            m = FUSION.match(line)
            if m and "metadata=" not in line and _expected(comps[m.group(2)])[1] is not None:
                borrowing += 1
    assert borrowing >= 10
