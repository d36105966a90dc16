"""A computation's rows are read a piece of at most `rows.ROWS_PIECE_CHARS` characters at a time (a longer line
alone), its lines taken `pieces.PIECE` at a time, so that the GIL is free between C calls while the users map is
built in the background; the rows are those of one call over all of its lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hlo_lsp.core.hlo import rows
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rows import ROW, computation_rows, line_pieces
from hlo_lsp.core.process import pieces
from tests.fixtures import DATA

MODULES = sorted((DATA / "jax-cpu").glob("*/module_*.cpu_after_optimizations.txt"))


@given(st.lists(st.integers(0, 50)), st.integers(1, 120))
def test_pieces_cover_the_lines_in_order_each_within_the_limit_or_one_line(lengths, limit):
    texts = ["x" * n for n in lengths]
    got = list(line_pieces(texts, limit))
    assert [i for a, b in got for i in range(a, b)] == list(range(len(texts)))
    for a, b in got:
        assert b > a
        assert b - a == 1 or sum(lengths[a:b]) <= limit
        if b < len(texts):  # a piece is cut only where the next line would pass the limit
            assert sum(lengths[a : b + 1]) > limit


@pytest.mark.parametrize("piece", [3, pieces.PIECE])
@pytest.mark.parametrize("limit", [1, 300, 5000, 10**9])
def test_rows_read_in_pieces_are_the_rows_of_one_call(limit, piece, monkeypatch):
    assert MODULES, "no jax-cpu modules in tests/data"
    seen = 0
    for path in MODULES:
        mod = read_hlo(path.read_text(encoding="utf-8"))
        whole = []
        for c in mod.computations:
            texts = [mod.lines[mod.instructions.line_of[i]] for i in c.instructions]
            got = ROW.findall("\n" + "\n".join(texts))
            whole.append(got if len(got) == len(texts) else None)
        monkeypatch.setattr(rows, "ROWS_PIECE_CHARS", limit)
        monkeypatch.setattr(pieces, "PIECE", piece)
        cut = [computation_rows(mod, c) for c in mod.computations]
        monkeypatch.undo()
        assert cut == whole
        seen += sum(len(c.instructions) > 1 for c in mod.computations)
    assert seen > 100


@given(
    st.integers(0, 40).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, 99))))
    ),
    st.booleans(),
)
def test_pairs_grouped_a_piece_at_a_time_are_grouped_as_in_one_pass(case, ordered):
    """`rows._grouped` in pieces of 3 pairs, giving way at each piece, groups as a plain counting sort does: each
    defining instruction's users in the order they came (``ordered``) or sorted."""
    from array import array

    from hlo_lsp.core.process import turns

    n, pairs = case
    if n == 0:
        pairs = []
    dst, src = array("i", [d for d, _ in pairs]), array("i", [i for _, i in pairs])
    ways = []
    saved_piece, saved_give = pieces.PIECE, turns.give_way
    pieces.PIECE, turns.give_way = 3, lambda: ways.append(1)
    try:
        start, flat = rows._grouped(n, dst, src, ordered)
    finally:
        pieces.PIECE, turns.give_way = saved_piece, saved_give
    for d in range(n):
        users = [i for dd, i in pairs if dd == d]
        assert list(flat[start[d] : start[d + 1]]) == (users if ordered else sorted(users))
    assert start[n] == len(pairs) and len(ways) >= len(pairs) // 3  # a turn given at every piece


def test_a_list_released_a_piece_at_a_time_gives_way_at_each(monkeypatch):
    from hlo_lsp.core.process import turns

    ways = []
    monkeypatch.setattr(pieces, "PIECE", 4)
    monkeypatch.setattr(turns, "give_way", lambda: ways.append(1))
    items = list(range(10))
    pieces.release(items)
    assert items == [] and len(ways) == 3
