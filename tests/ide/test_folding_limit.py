"""Folding ranges within the client's ``rangeLimit`` (`symbols.within_limit`): outer nesting levels whole while
they fit, then the longest blocks of the first level that does not, none deeper; on random nested blocks against
a definition written out here, and on real dumps' folding ranges."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import symbols
from tests.fixtures import DATA


@st.composite
def nested_spans(draw) -> list[tuple[int, int]]:
    """Sorted (first line, last line) blocks, each nested in or apart from the others, at most three deep."""
    out: list[tuple[int, int]] = []

    def block(first: int, depth: int) -> int:
        line = first + 1
        for _ in range(draw(st.integers(0, 4 if depth < 3 else 0))):
            line = block(line, depth + 1) + draw(st.integers(1, 2))
        last = line + draw(st.integers(0, 5))
        out.append((first, last))
        return last

    line = 0
    for _ in range(draw(st.integers(0, 8))):
        line = block(line, 0) + draw(st.integers(1, 3))
    return sorted(out)


def depth_of(spans: list[tuple[int, int]], span: tuple[int, int]) -> int:
    """How many other spans contain ``span``."""
    return sum(1 for s in spans if s != span and s[0] <= span[0] and span[1] <= s[1])


@settings(max_examples=300, deadline=None)
@given(nested_spans(), st.integers(0, 40))
def test_outer_levels_whole_then_the_longest_of_the_next(spans, limit):
    got = symbols.within_limit(spans, limit)
    assert got == sorted(got) and set(got) <= set(spans)
    if len(spans) <= limit:
        assert got == spans
        return
    assert len(got) == limit
    depth = {s: depth_of(spans, s) for s in spans}
    kept_depths = {depth[s] for s in got}
    cut = next(d for d in sorted(set(depth.values())) if sum(1 for s in spans if depth[s] <= d) > limit)
    assert all(s in got for s in spans if depth[s] < cut)  # every outer level whole
    assert all(d <= cut for d in kept_depths)  # nothing deeper than the level cut
    at_cut = [s for s in spans if depth[s] == cut]
    kept = [s for s in at_cut if s in got]
    left = [s for s in at_cut if s not in got]
    if kept and left:  # the longest kept: none left out is longer than one kept
        assert min(e - b for b, e in kept) >= max(e - b for b, e in left)


def test_no_limit_or_enough_room_keeps_everything():
    spans = [(0, 9), (1, 3), (5, 8)]
    assert symbols.within_limit(spans, None) == spans
    assert symbols.within_limit(spans, 3) == spans
    assert symbols.within_limit(spans, 2) == [(0, 9), (5, 8)]
    assert symbols.within_limit(spans, 0) == []


MODULES = sorted((DATA / "jax-cpu").glob("*/*cpu_after_optimizations.txt"))


@pytest.mark.parametrize("path", MODULES[:4], ids=lambda p: p.parent.name)
def test_a_module_over_the_limit_keeps_the_module_and_its_longest_computations(path: Path):
    ws = Workspace()
    text = path.read_text()
    ws.open(str(path), text, 1)
    spans = symbols.folding_spans(ws, str(path))
    assert len(spans) >= 4
    limit = len(spans) - 2
    got = symbols.within_limit(spans, limit)
    assert len(got) == limit
    assert got[0] == spans[0] and spans[0][1] >= max(e for _, e in spans)  # the module's own block
    entry = next(k for k, x in enumerate(text.split("\n")) if x.startswith("ENTRY "))
    longest = max(spans[1:], key=lambda s: s[1] - s[0])
    assert longest in got
    if any(s[0] == entry for s in spans):
        entry_span = next(s for s in spans if s[0] == entry)
        assert entry_span in got or entry_span[1] - entry_span[0] <= min(e - b for b, e in got[1:])
