"""The piecewise bulk helpers (`process.pieces`) give what the single C calls they stand for give."""

from __future__ import annotations

from array import array
from itertools import chain

import pytest

from hlo_lsp.core.process import pieces


@pytest.mark.parametrize("n", [0, 1, 5, pieces.PIECE - 1, pieces.PIECE, pieces.PIECE + 1, 3 * pieces.PIECE + 7])
def test_pieces_equal_the_whole(n):
    items = [f"line {k}" for k in range(n)]
    assert pieces.copy_list(items) == items and pieces.copy_list(items) is not items
    rows = [(k, k + 1, k + 2, 3, 0) for k in range(n)]
    assert pieces.packed("i", rows) == array("i", chain.from_iterable(rows))
    ints = list(range(5 * n))
    assert pieces.int_array("i", ints) == array("i", ints)
    a, b = list(items), list(rows)
    pieces.release(a, b)
    assert a == [] and b == []


def test_occurrences_sorted_by_key_in_pieces_equal_one_stable_sort(monkeypatch):
    import random

    from hlo_lsp.core import occurrences

    rng = random.Random(5)
    for piece in (1, 3, 16, 10_000):
        monkeypatch.setattr(pieces, "PIECE", piece)
        for n in (0, 1, 2, 17, 300):
            keys = [rng.choice(["a", "b", "c", "dd", "é"]) for _ in range(n)]
            assert list(occurrences._by_key(keys)) == sorted(range(n), key=keys.__getitem__)


@pytest.mark.parametrize("piece", [1, 3, 64, pieces.ARRAY_PIECE])
def test_arrays_joined_and_rows_shifted_in_pieces_equal_the_whole(monkeypatch, piece):
    """`pieces.joined` equals ``a + b + c`` of arrays and slices of them (views given back: the arrays can grow
    afterwards), and `pieces.shifted` equals an extended slice assignment, for any piece size."""
    import random

    monkeypatch.setattr(pieces, "ARRAY_PIECE", piece)
    monkeypatch.setattr(pieces, "PIECE", max(1, piece // 4))
    rng = random.Random(piece)
    for typecode in ("i", "q"):
        for n in (0, 1, 5, 199, 1000):
            a = array(typecode, (rng.randrange(-(2**31), 2**31) for _ in range(n)))
            cut, end = sorted(rng.randrange(n + 1) for _ in range(2))
            mid = array(typecode, (rng.randrange(100) for _ in range(rng.randrange(7))))
            with memoryview(a) as view:
                got = pieces.joined(typecode, [view[:cut], mid, view[end:], array(typecode)])
            assert got == a[:cut] + mid + a[end:] and got.typecode == typecode
            a.append(1)  # no view of it is left
            rows = array(typecode, (rng.randrange(1000) for _ in range(5 * n)))
            for start in {0, 5 * (n // 2), 5 * n}:
                by = rng.randrange(-50, 50)
                want = array(typecode, rows)
                want[start::5] = array(typecode, (x + by for x in rows[start::5]))
                pieces.shifted(rows, start, 5, by)
                assert rows == want


@pytest.mark.parametrize("piece", [1, 7, pieces.PIECE])
def test_the_largest_in_pieces_equals_max(monkeypatch, piece):
    import random

    monkeypatch.setattr(pieces, "PIECE", piece)
    rng = random.Random(piece)
    for n in (0, 1, 6, 7, 8, 500):
        items = array("i", (rng.randrange(-1000, 1000) for _ in range(n)))
        assert pieces.largest(items) == max(items, default=-1)
        assert pieces.largest(list(items), default=-5000) == max(items, default=-5000)
