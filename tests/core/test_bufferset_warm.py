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


def _lookups_made(a) -> bool:
    """``a``'s lazily made lookups (`analysis.warm_index`) are made: a module's name index and users map, a buffer
    file's key map."""
    from hlo_lsp.core.occurrences import OccurrenceIndex

    if a.hlo is not None:
        return a.hlo.index_made() and a.hlo._users is not None
    return not isinstance(a.index, OccurrenceIndex) or a.index._by_key is not None


class _Watched(dict):
    """A workspace table that records, for each value stored, whether ``check`` held for it then."""

    def __init__(self, check) -> None:
        super().__init__()
        self.check, self.seen = check, []

    def __setitem__(self, key, value) -> None:
        self.seen.append((key, self.check(value)))
        super().__setitem__(key, value)


def test_what_the_background_reads_for_an_open_buffer_file_is_seen_with_its_lookups_made():
    """`Workspace.warm` for an open buffer file makes the file's own lookups, then reads its module and the other
    buffer files from disk: each is cached (where a request sees it) with its lookups made, and so is the joined
    bundle (a hover on the values file searched the module's names, 5-8 ms, until `warm` had made them after the
    join; a definition request on it made its key map on the event loop, 50 ms); a read outside background work
    leaves them for later."""
    from hlo_lsp.core.process import turns

    module = MODULES[0]
    path = str(module).replace(".txt", "-buffer-assignment-values.txt")
    ws = Workspace()
    ws.open(path, open(path).read(), 1)
    # (each sibling stored with its lookups made, and after the open file's own: made before its siblings are read)
    ws._analyses = _Watched(lambda a: _lookups_made(a) and (a.path == path or _lookups_made(ws._analyses[path])))
    ws._bundles = _Watched(lambda held: all(_lookups_made(d) for d in held[1].documents()))
    with turns.background():
        ws.warm(path)
    siblings = [(k, ok) for k, ok in ws._analyses.seen if k != path]
    assert len(siblings) >= 3 and all(ok for _, ok in siblings), siblings
    assert ws._bundles.seen and all(ok for _, ok in ws._bundles.seen)
    other = Workspace()
    a = other.analysis(str(module))
    assert not _lookups_made(a)
