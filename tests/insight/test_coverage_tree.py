"""The allocated view's coverage tree (`allocated._Coverage`) equals `union_bytes` of the slices present after any
sequence of insertions and removals (overlapping, nested, repeated and empty slices included), and the per-step
reserved bytes of an allocation with many values equal those of the sort-at-each-time path it replaces."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_lsp.core.memory import allocated
from hlo_lsp.core.memory.allocated import _Coverage, union_bytes

slices = st.tuples(st.integers(0, 64), st.integers(0, 16)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=300, deadline=None)
@given(st.lists(slices, min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_coverage_equals_union_of_present_slices(pieces, rnd):
    tree = _Coverage(pieces)
    present: list[tuple[int, int]] = []
    for p in pieces:  # insert all, checking after each
        tree.add(p, 1)
        present.append(p)
        assert tree.covered() == union_bytes(present)
    rnd.shuffle(present)
    while present:  # remove in random order, checking after each
        p = present.pop()
        tree.add(p, -1)
        assert tree.covered() == union_bytes(present)
    assert tree.covered() == 0


class _V:
    def __init__(self, key: str, lr: tuple[int, int], offset: int, size: int):
        self.key, self.live_range, self.offset, self.size = key, lr, offset, size


def test_segments_with_the_tree_equal_the_sorting_path():
    rnd = random.Random(7)
    for _ in range(20):
        n = 60
        vals = []
        for k in range(rnd.randint(40, 120)):
            s = rnd.randint(0, n - 1)
            vals.append(_V(f"v{k}", (s, rnd.randint(s, n)), rnd.choice([0, 8, 16, 64, 128]), rnd.randint(0, 96)))
        with_tree = list(allocated._reserved_segments(vals, n))
        old = allocated._TREE_MIN_VALUES
        try:
            allocated._TREE_MIN_VALUES = 10**9  # every allocation takes the sorting path
            without = list(allocated._reserved_segments(vals, n))
        finally:
            allocated._TREE_MIN_VALUES = old
        assert with_tree == without
