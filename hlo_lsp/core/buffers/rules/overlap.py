"""``buffer.overlap``: two values of one allocation on shared bytes while both are live (a sweep by offset over
each allocation's live values); see `rules`."""

from __future__ import annotations

from collections.abc import Iterator

from hlo_lsp.core.buffers.columns import Assignments
from hlo_lsp.core.buffers.rules.context import Context, Finding, finding, report, source, value_runs
from hlo_lsp.core.diagnostics import info, warning

#: Pair comparisons the overlap sweep may spend on one allocation (a few seconds at most).
OVERLAP_BUDGET = 4_000_000


def overlapping_slices(ctx: Context) -> Iterator[Finding]:
    """``buffer.overlap`` (warning): two values of one allocation whose byte ranges intersect while both are
    live. Live ranges are closed intervals: flagged when ``max(starts) < min(ends)``, or when they only touch
    (``max(starts) == min(ends)``) and the two slices differ (XLA lets a user take its operand's exact slice at
    the operand's last use). XLA: ``BufferAssigner::LiveRangeInterferes`` / ``MaybeAssignBuffer`` and the heap
    simulator never place interfering values on shared bytes; aliased values (one ``HloBuffer``) share one
    slice and ``HloLiveRange::NormalizeAliasedBuffers`` makes their ranges touch at most. Skipped: allocations
    with a non-zero color (memory-space assignment and private stacks reuse bytes by other rules),
    thread-local allocations, and values without a live range. Reported on the line of the value listed later,
    with both values as related locations. The sweep compares each value with the values still covering its
    offset; past `OVERLAP_BUDGET` comparisons in one allocation it stops with one information
    (``buffer.overlap-incomplete``) rather than take quadratic time on a hostile file."""
    values = ctx.bs.values_by_key
    # (one value overlaps nothing: chosen first, a large module's allocations of one value cost no lookups)
    shared = [a for a in ctx.bs.allocations if a.count > 1 and not a.color and not a.thread_local]
    for alloc, at_kind, cols, numbers in value_runs(ctx, shared):
        req, keys, sizes, offsets, ids, lines = cols.req, cols.key, cols.size, cols.offset, cols.value_id, cols.line
        items = []
        for i in numbers:
            v = values.get(keys[i])
            size = req(sizes, "size", i)
            if v is None or v.live_range is None or size <= 0:
                continue
            s, e = v.live_range
            if s > e:
                continue
            offset = req(offsets, "offset", i)
            items.append((offset, offset + size, s, e, i))
        items.sort(key=lambda t: (t[0], t[1]))
        active: list[tuple[int, int, int, int, int]] = []
        budget = OVERLAP_BUDGET
        for it in items:
            off = it[0]
            active = [x for x in active if x[1] > off]
            budget -= 2 * len(active)
            if budget < 0:
                yield report(
                    info,
                    source(at_kind, alloc),
                    "buffer.overlap-incomplete",
                    f"allocation {alloc.index}: too many values share bytes to compare every pair; the overlap "
                    f"check stopped at offset {off}",
                )
                break
            for other in active:
                if req(ids, "value_id", other[4]) != req(ids, "value_id", it[4]) and _interferes(other, it):
                    first, second = sorted((other, it), key=lambda t: lines[t[4]])
                    yield _overlap(at_kind, alloc.index, cols, first, second)
            active.append(it)


def _interferes(x, y) -> bool:
    lo = max(x[2], y[2])
    hi = min(x[3], y[3])
    if lo < hi:
        return True
    return lo == hi and (x[0], x[1]) != (y[0], y[1])


def _overlap(kind: str, index: int, cols: Assignments, first, second) -> Finding:
    """The overlap of two sweep items (their last entry: a record number in ``cols``), reported on the line of
    the value listed later (XLA lists by id)."""
    va, vb = cols._make(first[4]), cols._make(second[4])
    msg = (
        f"{vb.name} (bytes {vb.offset}-{vb.offset + vb.size}, live {second[2]}-{second[3]}) overlaps "
        f"{va.name} (bytes {va.offset}-{va.offset + va.size}, live {first[2]}-{first[3]}) in allocation "
        f"{index}"
    )
    diag = warning(vb.range, "buffer.overlap", msg)
    return finding(
        source(kind, vb),
        diag,
        (
            (source(kind, va), f"{va.name}, overlapped"),
            (source(kind, vb), f"{vb.name}, overlapping"),
        ),
    )
