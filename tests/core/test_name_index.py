"""The name index (`HloModule.by_name`) a read leaves to its first use: until it is made, lookups search the
names and give what the index gives; made after any edits, or while the editor renames instructions, it is the
index of the names as they are then, as a fresh read makes it."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_lsp.core.hlo import model
from hlo_lsp.core.hlo import names as names_module
from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.process import pieces
from hlo_lsp.core.workspace import Workspace
from tests.core.test_bulk_rows import HLO
from tests.core.test_incremental import PATH, TEXT, edit_at_random


def _first(names: list[str]) -> dict[str, int]:
    want: dict[str, int] = {}
    for i, x in enumerate(names):
        want.setdefault(x, i)
    return want


def test_lookups_before_the_index_is_made_give_what_the_index_gives():
    """Every module of tests/data read by the rows pass: the index is not made by the read, the uniqueness the
    read found is the names', and each instruction looked up by name (in its own computation, in another, in
    none) is the one the index finds once made, which is each name's first instruction."""
    rng = random.Random(5)
    read = 0
    for path in HLO:
        mod = read_hlo(path.read_text(errors="replace"))
        if not mod.rows_read:
            continue
        read += 1
        assert not mod.index_made(), path
        t = mod.instructions
        assert isinstance(t, InstructionTable)
        names = list(t.names)
        assert mod.names_unique() == (len(set(names)) == len(names)), path
        comps = mod.computations
        asks = [(n, rng.choice([None, *comps])) for n in rng.sample(names, min(40, len(names)))]
        asks += [("no-such-name", None), ("no-such-name", comps[0] if comps else None)]
        before = [(mod.instruction(n, c) or None) and mod.instruction(n, c).line for n, c in asks]
        users_before = [mod.user_count(n) for n, _ in asks]
        # the defining instruction given (as a hover has it): the same count, with or without the index
        at = [mod.by_name.get(n) if mod.index_made() else mod._search(n, None) for n, _ in asks]
        assert [mod.user_count(n, i) for (n, _), i in zip(asks, at)] == users_before, path
        assert not mod.index_made(), path  # (the lookups did not make it)
        assert mod.by_name == _first(names), path
        assert mod.index_made()
        assert [(mod.instruction(n, c) or None) and mod.instruction(n, c).line for n, c in asks] == before, path
        assert [mod.user_count(n) for n, _ in asks] == users_before, path
        assert mod.names_unique() == (len(set(names)) == len(names)), path
    assert read >= 20


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=1, max_value=10))
def test_edits_before_the_index_is_made_leave_it_as_a_fresh_read_makes_it(seed, n_edits):
    """Random edits (renames among them) of a module read by the rows pass, none of which asks for the name index:
    the index made afterwards, the uniqueness and the lookups are a fresh read's of the edited text."""
    rng = random.Random(seed)
    ws = edit_at_random(rng, n_edits)
    a = ws.analysis(PATH)
    fresh = read_hlo(ws.document(PATH).text)
    assert a.hlo.names_unique() == fresh.names_unique()
    names = [i.name for i in fresh.instructions]
    sample = rng.sample(names, min(30, len(names)))
    assert [(a.hlo.instruction(n) or None) and a.hlo.instruction(n).line for n in sample] == [
        fresh.instruction(n).line for n in sample
    ]
    assert dict(a.hlo.by_name) == dict(fresh.by_name) == _first(names)


def test_a_rename_while_the_index_is_being_made_is_applied_to_it(monkeypatch):
    """The index made a piece at a time (as the background work makes it) while the editor renames an
    instruction between two pieces: the index is the one of the names after the rename, not a mix."""
    ws = Workspace()
    ws.open(PATH, TEXT, 1)
    a = ws.analysis(PATH)
    mod = a.hlo
    assert not mod.index_made()
    doc = ws.document(PATH)
    # an instruction of the last piece, the first one made (the pieces are made from the last to the first)
    k = max(i for i, line in enumerate(doc.lines) if line.startswith("  %") and " = " in line)
    old = doc.lines[k][3 : doc.lines[k].index(" ", 3)]
    monkeypatch.setattr(pieces, "PIECE", 50)
    renamed = []
    real = model.turns.give_way

    def rename_once() -> None:
        real()
        if not renamed:
            edit = doc.apply(k, 3, k, 3 + len(old), old + "_renamed")
            renamed.append(ws.edited(PATH, 2, [edit]))

    monkeypatch.setattr(model.turns, "give_way", rename_once)
    by = mod.by_name
    assert renamed == [True]  # patched in place, during the making
    names = list(mod.instructions.names)
    assert old + "_renamed" in names and by == _first(names)
    assert by.get(old + "_renamed") == names.index(old + "_renamed") and old not in by


def test_a_rename_as_the_index_made_is_stored_is_not_lost(monkeypatch):
    """The editor renames an instruction at the moment the index, made without any rename during its making, is
    stored: the store and the rename take turns (`model._INDEX_LOCK`), and the index is the renamed names'."""
    ws = Workspace()
    ws.open(PATH, TEXT, 1)
    mod = ws.analysis(PATH).hlo
    assert not mod.index_made()
    doc = ws.document(PATH)
    k = max(i for i, line in enumerate(doc.lines) if line.startswith("  %") and " = " in line)
    old = doc.lines[k][3 : doc.lines[k].index(" ", 3)]
    renamed: list[bool] = []
    entered: list[bool] = []
    real_lock = model._INDEX_LOCK

    class RenameFirst:
        """The lock, entered first by the store: the rename comes just before it takes the lock."""

        def __enter__(self):
            if not entered:
                entered.append(True)  # (the rename enters it too)
                edit = doc.apply(k, 3, k, 3 + len(old), old + "_renamed")
                renamed.append(ws.edited(PATH, 2, [edit]))
            return real_lock.__enter__()

        def __exit__(self, *exc):
            return real_lock.__exit__(*exc)

    monkeypatch.setattr(model, "_INDEX_LOCK", RenameFirst())
    by = mod.by_name
    assert renamed == [True]  # patched in place, between the making and the store
    names = list(mod.instructions.names)
    assert by == _first(names) and by.get(old + "_renamed") == names.index(old + "_renamed") and old not in by


def test_distinct_made_a_piece_at_a_time_is_a_sets_answer(monkeypatch):
    monkeypatch.setattr(pieces, "PIECE", 7)
    rng = random.Random(11)
    for _ in range(300):
        names = [f"n{rng.randrange(60)}" for _ in range(rng.randrange(0, 50))]
        assert model.distinct(names) == (len(set(names)) == len(names))


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10**9), st.sampled_from([1 << 30, 64, 7]))
def test_renames_while_the_index_is_being_made_are_applied_to_it(seed, shard_names):
    """The editor renames instructions between the pieces of the index's making, at every turn it gives way
    (to new names, to another instruction's name, back again): the index is made once, and it is the index
    of the names as they are at the end, first occurrence winning. (It was made again after any rename, and a
    rename at every turn kept it from ever being made.)"""
    rng = random.Random(seed)
    ws = Workspace()
    ws.open(PATH, TEXT, 1)
    mod = ws.analysis(PATH).hlo
    assert not mod.index_made()
    doc = ws.document(PATH)
    rows = [i for i, line in enumerate(doc.lines) if line.startswith("  %") and " = " in line]
    real_give_way = model.turns.give_way
    real_first_of = names_module.NameIndex.first_of.__func__
    made: list[int] = []
    patched: list[bool] = []
    version = [1]

    def rename() -> None:
        k = rng.choice(rows)
        line = doc.lines[k]
        old = line[3 : line.index(" ", 3)]
        pick = rng.random()
        if pick < 0.3:  # another instruction's name: now a repeated name
            other = doc.lines[rng.choice(rows)]
            new = other[3 : other.index(" ", 3)]
        elif pick < 0.5 and old.endswith("_r"):
            new = old[:-2]  # back again
        else:
            new = old + "_r"
        if new == old:
            return
        edit = doc.apply(k, 3, k, 3 + len(old), new)
        version[0] += 1
        patched.append(ws.edited(PATH, version[0], [edit]))

    def give_way() -> None:
        real_give_way()
        if rng.random() < 0.8:
            rename()

    def first_of(cls, names):
        made.append(len(names))
        return real_first_of(cls, names)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pieces, "PIECE", 5)
        mp.setattr(names_module, "SHARD_NAMES", shard_names)
        mp.setattr(model.turns, "give_way", give_way)
        mp.setattr(names_module.NameIndex, "first_of", classmethod(first_of))
        by = mod.by_name
    assert patched and all(patched)  # each rename patched in place, during the making
    assert len(made) == 1
    assert ws.analysis(PATH).hlo is mod
    names = list(mod.instructions.names)
    assert dict(by) == _first(names)
    assert not mod._rename_log and not mod._making_index  # nothing kept once the index is made
    rename()  # and a rename after it moves the made index
    assert dict(mod.by_name) == _first(list(mod.instructions.names))
