"""The joined values by instruction (`BufferSet.values_of`, every hover on an instruction reads it) are made in
the background after the join (`Workspace.warm`), a piece at a time, and read the same as made by the first
hover in one go."""

from __future__ import annotations

import pytest

from hlo_lsp.core.process import pieces
from hlo_lsp.core.workspace import Workspace
from tests.fixtures import DATA

MODULES = sorted((DATA / "jax-cpu").glob("*/module_*.cpu_after_optimizations.txt"))


def _by_instruction(bs) -> dict[str, list[str]]:
    names = {v.instruction for v in bs.values_by_key.values()}
    return {n: [v.key for v in bs.values_of(n)] for n in sorted(names)}


def test_warm_makes_the_values_by_instruction_map():
    path = str(MODULES[0])
    ws = Workspace()
    bs = ws.bundle(path, read_large=True).buffers
    assert bs is not None and bs._by_instruction is None  # made on first use
    ws.warm(path)
    assert ws.bundle(path, read_large=True).buffers._by_instruction is not None


@pytest.mark.parametrize("piece", [1, 7])
def test_made_in_pieces_as_in_one_go(piece, monkeypatch):
    assert MODULES, "no jax-cpu modules in tests/data"
    paths = [str(p) for p in MODULES[:6]]
    whole = [_by_instruction(Workspace().bundle(p, read_large=True).buffers) for p in paths]
    monkeypatch.setattr(pieces, "PIECE", piece)
    cut = [_by_instruction(Workspace().bundle(p, read_large=True).buffers) for p in paths]
    assert cut == whole and all(whole)


def test_the_join_warm_makes_is_kept_with_its_map_made():
    """`Workspace.warm` joins the module's files with the map made before the join is kept (a hover between the
    join and the map made the map on the event loop); a request's join leaves it for later."""
    path = str(MODULES[0])
    ws = Workspace()
    made = ws.bundle(path, read_large=True, warm=True).buffers
    assert made is not None and made._by_instruction is not None
    assert all(bs._by_instruction is not None for _, bs in ws._joins)
    other = Workspace()
    lazy = other.bundle(path, read_large=True).buffers
    assert lazy is not None and lazy._by_instruction is None
