"""Folding's bounded selection and ordering without one long C-level sort (`symbols.within_limit`,
`symbols._sorted_unique`): the same spans as the sort-based reference, on random nested spans and limits."""

from __future__ import annotations

import random

from hlo_lsp.ide import symbols


def _reference_within_limit(spans, limit):
    if limit is None or len(spans) <= limit:
        return spans
    levels, open_ends = [], []
    for start, end in spans:
        while open_ends and open_ends[-1] < start:
            open_ends.pop()
        levels.append(len(open_ends))
        open_ends.append(end)
    counts = {}
    for lv in levels:
        counts[lv] = counts.get(lv, 0) + 1
    kept, cut = 0, max(counts) + 1
    for lv in sorted(counts):
        if kept + counts[lv] > limit:
            cut = lv
            break
        kept += counts[lv]
    at_cut = sorted((k for k, lv in enumerate(levels) if lv == cut), key=lambda k: (spans[k][0] - spans[k][1], k))
    chosen = set(at_cut[: max(limit - kept, 0)])
    return [sp for k, (sp, lv) in enumerate(zip(spans, levels)) if lv < cut or k in chosen]


def _random_spans(rng: random.Random) -> list[tuple[int, int]]:
    out = []
    line = 0
    for _ in range(rng.randrange(1, 60)):
        start = line + rng.randrange(0, 3)
        end = start + rng.randrange(1, 12)
        out.append((start, end))
        for _ in range(rng.randrange(0, 4)):  # nested blocks, some of equal length
            a = rng.randrange(start, end)
            out.append((a, min(end, a + rng.randrange(1, 4))))
        line = end + 1
    return out


def test_the_bounded_selection_equals_the_sorted_one():
    rng = random.Random(7)
    for _ in range(400):
        spans = symbols._sorted_unique(_random_spans(rng))
        assert spans == sorted(set(spans))
        for limit in (None, 0, 1, 3, 10, len(spans) - 1, len(spans)):
            assert symbols.within_limit(spans, limit) == _reference_within_limit(spans, limit)


def test_spans_out_of_order_or_repeated_are_sorted():
    assert symbols._sorted_unique([(3, 4), (1, 2), (3, 4)]) == [(1, 2), (3, 4)]
    assert symbols._sorted_unique([(1, 2), (1, 2)]) == [(1, 2)]
    ordered = [(1, 5), (2, 3), (6, 9)]
    assert symbols._sorted_unique(ordered) is ordered
