"""The three memory figures reconciled (issue 19), on every real buffer-assignment set of tests/data: XLA peak
(the dump's own peak list), the bytes its values share within an allocation, the bytes reserved at that step and
at the allocated peak (per allocation, the union of live slices), and Total bytes; each reason line's figure is
the one the test computes. Expected values come from the dump text (tests/fixtures.py's listing parser and
tests/insight/test_peak.py's independent per-step sums), never from hlo_lsp."""

from __future__ import annotations

import re

import pytest

from hlo_lsp.core.shapes import human_size
from tests.fixtures import parse_assignment_listing, require_found
from tests.insight.test_peak import LOCAL, SHARED_SETS, expected_peak, independent_allocated, report_for

TOTAL_USED = re.compile(r"^Total bytes used: (\d+)", re.M)


def _listing(path) -> str:
    if path.name.endswith("-live-range.txt"):
        return path.with_name(path.name[: -len("-live-range.txt")] + "-buffer-assignment.txt").read_text()
    return path.read_text()


def _union(slices) -> int:
    """Bytes covered: the slices merged into disjoint runs (sorted by start; a run grows while the next starts
    inside it)."""
    runs: list[list[int]] = []
    for s, e in sorted(slices):
        if runs and s <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], e)
        else:
            runs.append([s, e])
    return sum(e - s for s, e in runs)


def _shared(names: list[str], listing: str) -> int:
    by_key = {v["key"]: v for v in parse_assignment_listing(listing)}
    per_alloc: dict[int, list[tuple[int, int]]] = {}
    for n in names:
        v = by_key.get(n if "{" in n else n + "{}")
        if v is not None:
            per_alloc.setdefault(v["allocation"], []).append((v["offset"], v["offset"] + v["size"]))
    return sum(sum(e - s for s, e in sl) - _union(sl) for sl in per_alloc.values())


@pytest.mark.parametrize("path", LOCAL, ids=[p.name[:60] for p in LOCAL])
def test_figures_equal_the_dump_text(path):
    check_figures(path)


def test_figures_on_every_shared_dump():
    """The same over every set of ../shared (skipped without it; fails under CI=true when nothing is found)."""
    require_found(SHARED_SETS, "buffer-assignment sets")
    for path in SHARED_SETS:
        check_figures(path)


def check_figures(path):
    exp = expected_peak(path.read_text())
    f = report_for(path).figures
    assert f is not None
    assert (f.xla_step, f.xla_bytes) == (exp["step"], sum(b for _, b in exp["entries"]))
    listing = _listing(path)
    total = TOTAL_USED.search(listing)
    if total:
        assert f.total_bytes == int(total.group(1))
    current = all("{" in n for n, _ in exp["entries"])
    if current:
        assert f.shared_bytes == _shared([n for n, _ in exp["entries"]], listing)
    totals, _ = independent_allocated(path)
    assert f.reserved_at_xla_step == totals[exp["step"]]
    assert (f.allocated_bytes, f.allocated_step) == (max(totals), totals.index(max(totals)))
    text = " ".join(f.reasons)
    if f.shared_bytes and current:
        assert f"{human_size(f.shared_bytes)} of the XLA peak is bytes that its values share" in text
    if f.allocated_step != f.xla_step:
        assert f"the allocated peak is at step {f.allocated_step}" in text
    if f.total_bytes != f.allocated_bytes:
        assert f"Total bytes ({human_size(f.total_bytes)}) is every allocation whole" in text
