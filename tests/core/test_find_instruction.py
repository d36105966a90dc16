"""`HloIndex.find` for an instruction (definition, signature and every operand use, the lines taken from the
users map, a machine-written operand list searched with str.find) against the full per-line occurrence
reading (`HloIndex.on_line`) of every line of the module: the same occurrences, on every real module."""

from __future__ import annotations

import random

import pytest

from hlo_lsp.core.hlo.index import HloIndex
from hlo_lsp.core.hlo.read import read_hlo
from tests.fixtures import DATA

MODULES = sorted(DATA.glob("jax-cpu/*/*optimizations.txt")) + sorted(DATA.glob("seeds/00[01]_*.txt"))


def test_modules_found():
    assert len(MODULES) >= 20


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name[:60])
def test_find_instruction_equals_the_per_line_reading(path):
    mod = read_hlo(path.read_text())
    index = HloIndex(mod)
    everywhere: dict[str, set] = {}
    for ln in range(len(mod.lines)):
        for o in index.on_line(ln):
            if o.kind == "instruction":
                everywhere.setdefault(o.key, set()).add((o.line, o.start, o.end, o.role))
    names = list(mod.by_name)
    random.Random(0).shuffle(names)
    for name in names[:400]:
        got = {(o.line, o.start, o.end, o.role) for o in index.find("instruction", name)}
        assert got == everywhere.get(name, set()), name
