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
