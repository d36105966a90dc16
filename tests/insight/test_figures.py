"""The three memory figures reconciled (issue 19), on every real buffer-assignment set of tests/data (producers'
TPU, GPU, TensorFlow and old jax dumps included), examples and ../shared: XLA peak (the dump's own peak list),
the bytes its values share within an allocation, the bytes reserved at that step and at the allocated peak (per
allocation, the union of live slices; an entry parameter's allocation whole), the parameters' buffers idle at
XLA's step, the fragmentation at the allocated peak, the thread-local bytes and Total bytes; each reason line's
figure is the one the test computes. Expected values come from the dump text (tests/fixtures.py's listing
parser and tests/insight/test_peak.py's independent per-step sums), never from hlo_lsp."""

from __future__ import annotations

import re

import pytest

from hlo_lsp.core.shapes import human_size
from tests.fixtures import DATA, REPO, SHARED, parse_assignment_listing, parse_live_ranges, require_found
from tests.insight.test_peak import expected_peak, independent_allocated, report_for
from tests.insight.util import module_sets, union_length

TOTAL_USED = re.compile(r"^Total bytes used: (\d+)", re.M)
ALLOC = re.compile(r"^allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)(.*):$", re.M)
LOCAL = module_sets(DATA) + module_sets(REPO / "examples")
SHARED_SETS = module_sets(SHARED) if SHARED.is_dir() else []


def _listing(path) -> str:
    if path.name.endswith("-live-range.txt"):
        return path.with_name(path.name[: -len("-live-range.txt")] + "-buffer-assignment.txt").read_text()
    return path.read_text()


def _shared(names: list[str], listing: str) -> int:
    by_key = {v["key"]: v for v in parse_assignment_listing(listing)}
    per_alloc: dict[int, list[tuple[int, int]]] = {}
    for n in names:
        v = by_key.get(n if "{" in n else n + "{}")
        if v is not None:
            per_alloc.setdefault(v["allocation"], []).append((v["offset"], v["offset"] + v["size"]))
    return sum(sum(e - s for s, e in sl) - union_length(sl) for sl in per_alloc.values())


@pytest.mark.parametrize("path", LOCAL, ids=[str(p.relative_to(REPO))[-70:] for p in LOCAL])
def test_figures_equal_the_dump_text(path):
    check_figures(path)


def test_sets_reach_producers_and_examples():
    names = [str(p) for p in LOCAL]
    assert any("/producers/gpu-" in n for n in names) and any("/producers/tpu-" in n for n in names)
    assert any("/examples/" in n for n in names) and any("/producers/tf-" in n for n in names)


@pytest.mark.parametrize("path", LOCAL, ids=[str(p.relative_to(REPO))[-70:] for p in LOCAL])
def test_the_parameter_band_holds_every_parameter_buffer_at_every_step(path):
    """The timeline's parameter band is every entry parameter's allocation whole, at every step: donated
    buffers do not drop out between their parameter's last use and the next value XLA puts there."""
    listing = _listing(path)
    params = sum(int(m.group(2)) for m in ALLOC.finditer(listing) if re.search(r"\bparameter \d+", m.group(3)))
    view = report_for(path).allocated
    assert set(view.by_category["parameter"]) <= {params}


def test_donated_buffers_idle_in_a_real_dump():
    """In donation-cpu, params['w2'] (allocation 3, donated) ends at step 12 and the next value in its buffer
    starts at 14: at step 13 no live value is in it, yet the parameter band holds it (the band used to dip)."""
    path = DATA / "memory" / "donation-cpu" / "module_0000.jit_step.cpu_after_optimizations-live-range.txt"
    listing = _listing(path)
    ranges = parse_live_ranges(path.read_text())
    in_alloc3 = [v for v in parse_assignment_listing(listing) if v["allocation"] == 3]
    assert in_alloc3 and not any(ranges[v["key"]][0] <= 13 <= ranges[v["key"]][1] for v in in_alloc3)
    size3 = int(re.search(r"^allocation 3: size (\d+), parameter", listing, re.M).group(1))
    view = report_for(path).allocated
    live_params = sum(
        size
        for i, size, rest in ((int(m.group(1)), int(m.group(2)), m.group(3)) for m in ALLOC.finditer(listing))
        if "parameter" in rest and i != 3
    )
    assert view.by_category["parameter"][13] == live_params + size3


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
    headers = [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in ALLOC.finditer(listing)]
    thread_local = sum(size for _, size, rest in headers if "thread-local" in rest)
    assert f.thread_local == thread_local
    if f.allocated_step is not None:
        assert f.fragmentation == sum(size for _, size, _ in headers) - thread_local - max(totals)
    # parameters' allocations (held whole) with no live value at XLA's step: size minus the union of live slices
    ranges = parse_live_ranges(path.read_text())
    step = exp["step"]
    live: dict[int, list[tuple[int, int]]] = {}
    for v in parse_assignment_listing(listing):
        r = ranges.get(v["key"])
        if r and r[0] <= step <= r[1]:
            live.setdefault(v["allocation"], []).append((v["offset"], v["offset"] + v["size"]))
    params = [(i, size) for i, size, rest in headers if re.search(r"\bparameter \d+", rest)]
    assert f.idle_parameters == sum(size - union_length(live.get(i, [])) for i, size in params)
    text = " ".join(f.reasons)
    if f.idle_parameters:
        assert f"at step {step} the allocated view holds {human_size(f.idle_parameters)} of parameters' buffers" in text
    if f.shared_bytes and current:
        assert f"{human_size(f.shared_bytes)} of the XLA peak is bytes that its values share" in text
    if f.allocated_step != f.xla_step:
        assert f"the allocated peak is at step {f.allocated_step}" in text
    if f.total_bytes != f.allocated_bytes:
        assert f"Total bytes ({human_size(f.total_bytes)}) is every allocation whole" in text
        assert f"fragmentation {human_size(f.fragmentation)} (reserved, holding no live value)" in text
