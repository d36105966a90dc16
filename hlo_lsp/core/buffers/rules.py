"""Buffer-assignment rules: invariants XLA's buffer assigner and live-range analysis guarantee.

Each rule is a function ``rule(ctx) -> Iterator[Finding]`` over one module's joined buffer facts (`BufferSet`),
with a stable ``code`` and a docstring naming the XLA code that guarantees the invariant. A `Finding` says which
document kind (``single``, ``assignment``, ``values``, ``live-range``, ``memory-report``) holds the offending line
and, for each related location, which kind holds it; the IDE layer turns kinds into paths. Errors are invariants
XLA CHECKs (a violation means a corrupted or hand-edited dump); warnings are invariants of its algorithms.

Algorithm: every rule is one pass over the values, allocations or sections with dict lookups, except the overlap
rule, which sorts each allocation's live values by offset and sweeps them, comparing only byte-overlapping pairs
(so its cost is O(n log n + overlapping pairs)). Nothing here raises on odd input: facts a file did not give are
skipped, never guessed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from hlo_lsp.core.buffers.bufferset import BufferSet, Source
from hlo_lsp.core.buffers.records import Assignment
from hlo_lsp.core.diagnostics import Diagnostic, Range, Related, Severity, error, info, warning
from hlo_lsp.core.document import Lines
from hlo_lsp.core.shapes import ELEMENT_BITS, element_count, parse_shape

_log = logging.getLogger(__name__)
#: Pair comparisons the overlap sweep may spend on one allocation (a few seconds at most).
OVERLAP_BUDGET = 4_000_000


class Finding(NamedTuple):
    """A diagnostic for the document of kind ``kind``; ``related_kinds[i]`` is the kind of ``related[i]``."""

    kind: str
    diagnostic: Diagnostic
    related_kinds: tuple[str, ...] = ()


@dataclass(slots=True)
class Context:
    bs: BufferSet
    lines: dict[str, Lines]  # document kind -> its lines, for facts the model keeps no line of
    broken: frozenset[str] = frozenset()  # kinds whose reader reported errors (cut or corrupted files)
    _runs: list | None = None  # (allocation, kind, its assignments), made once for the rules that need them

    def runs(self) -> list:
        """(allocation, document kind, its value lines as a list) for every allocation, in reading order. The
        records are made once here: the model keeps them by column and makes one on each access."""
        if self._runs is None:
            out = []
            for alloc in self.bs.allocations:
                at = self.bs.allocation_at.get(alloc.index)
                out.append((alloc, at.kind if at is not None else "assignment", list(alloc.assignments)))
            self._runs = out
        return self._runs

    def complete(self, *kinds: str) -> bool:
        """True when none of the given document kinds (nor an old single file) had reader errors: rules that
        compare whole sections stay silent on a cut file, whose reader error already says so."""
        return not (self.broken & {*kinds, "single"})


def _finding(at: Source, diag: Diagnostic, related: tuple[tuple[Source, str], ...] = ()) -> Finding:
    rel = tuple(Related(s.range, msg) for s, msg in related)
    if rel:
        diag = Diagnostic(diag.range, diag.severity, diag.code, diag.message, rel, diag.fixes, diag.source)
    return Finding(at.kind, diag, tuple(s.kind for s, _ in related))


def _report(
    severity: Callable[[Range, str, str], Diagnostic],
    at: Source,
    code: str,
    message: str,
    related: tuple[tuple[Source, str], ...] = (),
) -> Finding:
    """A finding at ``at`` (its range is the diagnostic's) of ``severity`` (`error`, `warning` or `info`)."""
    return _finding(at, severity(at.range, code, message), related)


def _assignments(ctx: Context):
    """(allocation, assignment, kind) for every value line of every allocation, in reading order."""
    for alloc, kind, assignments in ctx.runs():
        for a in assignments:
            yield alloc, a, kind


# ------------------------------------------------------------------------------------------------ errors


def slice_out_of_range(ctx: Context) -> Iterator[Finding]:
    """``buffer.slice-out-of-range`` (error): a value's ``offset + size`` exceeds its allocation's size, or the
    offset is negative. XLA: ``BufferAllocation::AddAssignment`` CHECKs ``offset <= size_`` and
    ``offset + size <= size_`` for every assigned value."""
    for alloc, a, kind in _assignments(ctx):
        if a.offset < 0 or a.size < 0 or a.offset + a.size > alloc.size:
            yield _report(
                error,
                Source(kind, a.line, a.range),
                "buffer.slice-out-of-range",
                f"{a.name}: bytes [{a.offset}, {a.offset + a.size}) lie outside allocation {alloc.index} "
                f"of {alloc.size} bytes",
            )


def duplicate_value(ctx: Context) -> Iterator[Finding]:
    """``buffer.duplicate-value`` (error): one value id listed twice, in one allocation or in two.
    XLA: ``BufferAllocation::AddAssignment`` CHECKs the value is not yet assigned to the allocation, and
    ``BufferAssignment::AddAssignment`` CHECKs it has no allocation yet (``allocation_index_for_value_``)."""
    first: dict[int, tuple[Source, int]] = {}
    for alloc, a, kind in _assignments(ctx):
        here = Source(kind, a.line, a.range)
        prev = first.get(a.value_id)
        if prev is None:
            first[a.value_id] = (here, alloc.index)
            continue
        where = "again in the same allocation" if prev[1] == alloc.index else f"also in allocation {prev[1]}"
        yield _report(
            error,
            here,
            "buffer.duplicate-value",
            f"value {a.value_id} ({a.name}) is listed {where}; XLA assigns a value once",
            ((prev[0], f"first listing of value {a.value_id}"),),
        )


def total_mismatch(ctx: Context) -> Iterator[Finding]:
    """``buffers.total`` (error): ``Total bytes used`` differs from the sum of the allocation sizes, or a
    memory-usage report's ``Total bytes`` differs from the sum of its memory space's allocation sizes. The code is
    the buffer reader's, which already checks an old single file on its own (so this rule skips that case).
    XLA: ``BufferAssignment::ToString`` prints ``total_size``, the sum of ``allocation.size()`` over all
    allocations; the memory-usage report sums them the same way (checked only for dumps whose allocations are
    all of color 0, where every real report agrees; how it splits other memory spaces is not assumed)."""
    bs = ctx.bs
    if not bs.allocations or not ctx.complete("assignment", "values", "memory-report"):
        return
    total = sum(a.size for a in bs.allocations)
    if (
        bs.total_bytes_used is not None
        and bs.total_at is not None
        and bs.total_at.kind != "single"
        and bs.total_bytes_used != total
    ):
        at = bs.total_at
        yield _report(
            error,
            at,
            "buffers.total",
            f"Total bytes used is {bs.total_bytes_used}, but the {len(bs.allocations)} allocations add up to {total}",
        )
    lines = ctx.lines.get("memory-report")
    if not bs.memory_report or lines is None or "assignment" not in bs.docs:
        return
    if any(a.color for a in bs.allocations):
        return  # the report's per-memory-space totals are verified on color-0-only dumps; do not guess others
    by_color: dict[int, int] = {}
    for a in bs.allocations:
        by_color[a.color] = by_color.get(a.color, 0) + a.size
    seen: set[int] = set()
    for t in bs.memory_report:
        if t.total_bytes is None or t.allocation is not None or t.color in seen:
            continue
        seen.add(t.color)
        expected = by_color.get(t.color, 0)
        if t.total_bytes == expected:
            continue
        ln = _total_line(lines, t.line, t.total_bytes)
        start = len("Total bytes: ")
        rng = Range(ln, start, ln, start + len(str(t.total_bytes)))
        yield _report(
            error,
            Source("memory-report", ln, rng),
            "buffers.total",
            f"Total bytes is {t.total_bytes}, but the allocations of color {t.color} add up to {expected}",
        )


def _total_line(lines: Lines, table_line: int, total: int) -> int:
    """The ``Total bytes: N`` line at or before ``table_line``; ``table_line`` when there is none."""
    want = f"Total bytes: {total} "
    for ln in range(min(table_line, len(lines) - 1), -1, -1):
        if lines[ln].startswith(want):
            return ln
        if lines[ln].startswith("Memory Space:"):
            break
    return table_line


def live_range_bounds(ctx: Context) -> Iterator[Finding]:
    """``live-range.inverted`` (error) for ``start > end``; ``live-range.beyond-schedule`` (error) for an end
    past ``HloLiveRange (max N)`` or a negative start. XLA: ``HloLiveRange`` builds every ``TimeBound`` from
    instruction times in ``[0, schedule_end_time]`` with ``start <= end`` (``CalculateBufferStartEndMap``,
    which also extends live-out values exactly to ``schedule_end_time``)."""
    bs = ctx.bs
    mx = bs.live_range_max
    for v in bs.values_by_key.values():
        if v.live_range is None or v.live_range_at is None:
            continue
        start, end = v.live_range
        at = v.live_range_at
        if start > end:
            yield _report(
                error,
                at,
                "live-range.inverted",
                f"{v.key} is live from {start} to {end}: the range ends before it starts",
            )
        elif start < 0 or mx is not None and end > mx:
            yield _report(
                error, at, "live-range.beyond-schedule", f"{v.key} is live {start}-{end}, outside the schedule 0-{mx}"
            )


def sequence_steps(ctx: Context) -> Iterator[Finding]:
    """``live-range.sequence-index`` (error): the ``InstructionSequence`` is not numbered ``0..max-1`` in order;
    ``live-range.duplicate-step`` (error): an instruction appears twice in it. XLA: ``HloLiveRange::ToString``
    prints ``flattened_instruction_sequence_`` with each instruction's index, and
    ``FlattenSchedule`` adds an instruction once (``instruction_schedule_`` maps it to one time)."""
    bs = ctx.bs
    kind = bs.sequence_at
    if not bs.sequence or kind is None:
        return
    seen: dict[str, Source] = {}
    reported_index = False
    for pos, step in enumerate(bs.sequence):
        here = Source(kind, step.line, step.range)
        if step.step != pos and not reported_index:
            reported_index = True
            yield _report(
                error,
                here,
                "live-range.sequence-index",
                f"step {step.step} is at position {pos} of the sequence; XLA numbers the steps 0, 1, 2, ... in order",
            )
        prev = seen.get(step.name)
        if prev is not None:
            yield _report(
                error,
                here,
                "live-range.duplicate-step",
                f"`{step.name}` is scheduled twice (steps {bs.step_of(step.name)} and {step.step})",
                ((prev, f"first step of `{step.name}`"),),
            )
        else:
            seen[step.name] = here
    mx = bs.live_range_max
    if mx is not None and not reported_index and len(bs.sequence) != mx and ctx.complete("live-range"):
        last = bs.sequence[-1]
        yield _report(
            error,
            Source(kind, last.line, last.range),
            "live-range.sequence-index",
            f"the sequence has {len(bs.sequence)} steps, but the header says max {mx}",
        )


def size_below_shape(ctx: Context) -> Iterator[Finding]:
    """``buffer.size-below-shape`` (error): an array value's size is smaller than its shape's data (elements x
    bits, packed, without padding). XLA: a value's size is the backend's ``BufferValue::SizeFunction`` of its
    shape, at least ``ShapeUtil::ByteSizeOf`` (padding, tiling and dynamic-shape metadata only add to it), and
    ``HloBufferSize`` takes the max over aliased values. Tuples (platform-specific pointer tables), token and
    opaque values are not checked; a value larger than its shape is never flagged."""
    seen: dict[str, int | None] = {}
    for _alloc, a, kind in _assignments(ctx):
        need = seen.get(a.shape, -1)
        if need == -1:
            need = seen[a.shape] = _packed_bytes(a.shape)
        if need is not None and a.size < need:
            yield _report(
                error,
                Source(kind, a.line, a.range),
                "buffer.size-below-shape",
                f"{a.name} has size {a.size}, but its shape {a.shape} holds {need} bytes of data",
            )


def _packed_bytes(shape_text: str) -> int | None:
    """The smallest byte size an array of this shape can have; None for tuples, tokens and unreadable shapes."""
    s = parse_shape(shape_text)
    if s is None or not s.is_array:
        return None
    count = element_count(s)
    if not isinstance(count, int):
        return None
    return (count * ELEMENT_BITS[s.element_type] + 7) // 8


def used_values_mismatch(ctx: Context) -> Iterator[Finding]:
    """``buffer.used-values-mismatch`` (error): a value of ``Used values`` that no allocation lists, or an
    assigned value missing from ``Used values``. XLA: ``BufferAssignment::ToString`` builds ``Used values`` from
    exactly the values of ``allocation.assigned_buffers()`` of every allocation. Checked only when the module's
    files hold both the listing and a non-empty ``Used values`` section."""
    bs = ctx.bs
    if not bs.allocations or not ctx.complete("assignment", "values"):
        return
    if not any(v.used is not None for v in bs.values_by_key.values()):
        return
    for v in bs.values_by_key.values():
        used_at, assignment_at = v.used_at, v.assignment_at  # each read from the files' columns
        if used_at is not None and assignment_at is None:
            at = used_at
            yield _report(
                error, at, "buffer.used-values-mismatch", f"{v.key} is a used value, but no allocation lists it"
            )
        elif assignment_at is not None and used_at is None:
            at = assignment_at
            yield _report(
                error, at, "buffer.used-values-mismatch", f"{v.key} is assigned, but `Used values` does not list it"
            )


# ---------------------------------------------------------------------------------------------- warnings


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
    bs = ctx.bs
    for alloc, at_kind, assignments in ctx.runs():
        if alloc.color or alloc.thread_local:
            continue
        items = []
        for a in assignments:
            v = bs.values_by_key.get(a.key)
            if v is None or v.live_range is None or a.size <= 0:
                continue
            s, e = v.live_range
            if s > e:
                continue
            items.append((a.offset, a.offset + a.size, s, e, a))
        items.sort(key=lambda t: (t[0], t[1]))
        active: list[tuple[int, int, int, int, Assignment]] = []
        budget = OVERLAP_BUDGET
        for it in items:
            off = it[0]
            active = [x for x in active if x[1] > off]
            budget -= 2 * len(active)
            if budget < 0:
                yield _report(
                    info,
                    Source(at_kind, alloc.line, alloc.range),
                    "buffer.overlap-incomplete",
                    f"allocation {alloc.index}: too many values share bytes to compare every pair; the overlap "
                    f"check stopped at offset {off}",
                )
                break
            for other in active:
                if other[4].value_id != it[4].value_id and _interferes(other, it):
                    first, second = sorted((other, it), key=lambda t: t[4].line)
                    yield _overlap(at_kind, alloc.index, first, second)
            active.append(it)


def _interferes(x, y) -> bool:
    lo = max(x[2], y[2])
    hi = min(x[3], y[3])
    if lo < hi:
        return True
    return lo == hi and (x[0], x[1]) != (y[0], y[1])


def _overlap(kind: str, index: int, first, second) -> Finding:
    """The overlap of two sweep items, reported on the line of the value listed later (XLA lists by id)."""
    va, vb = first[4], second[4]
    msg = (
        f"{vb.name} (bytes {vb.offset}-{vb.offset + vb.size}, live {second[2]}-{second[3]}) overlaps "
        f"{va.name} (bytes {va.offset}-{va.offset + va.size}, live {first[2]}-{first[3]}) in allocation "
        f"{index}"
    )
    diag = warning(vb.range, "buffer.overlap", msg)
    return _finding(
        Source(kind, vb.line, vb.range),
        diag,
        (
            (Source(kind, va.line, va.range), f"{va.name}, overlapped"),
            (Source(kind, vb.line, vb.range), f"{vb.name}, overlapping"),
        ),
    )


def peak_not_live(ctx: Context) -> Iterator[Finding]:
    """``live-range.peak-not-live`` (warning): an entry of ``Live ranges at N (peak)`` none of whose values is
    live at N. XLA: ``HloLiveRange`` prints the values whose closed ``[start, end]`` contains the peak moment.
    Older dumps print bare instruction names: then any value of that instruction may be the live one (seed 002
    lists ``fusion.10`` at 78, where ``fusion.10{}`` ends at 77 but ``fusion.10{0}`` is live). Entries whose
    values have no live range in these files are not judged."""
    bs = ctx.bs
    n = bs.peak_step
    if n is None or bs.peak_at is None:
        return
    kind = bs.peak_at.kind
    for p in bs.peak_entries:
        if p.key is not None:
            v = bs.value(p.key)
            candidates = [v] if v is not None else []
        else:
            candidates = bs.values_of(p.instruction)
        ranges = [v.live_range for v in candidates if v.live_range is not None]
        if any(s > e for s, e in ranges):
            continue  # an inverted range is reported by `live_range_bounds`
        if not ranges or any(s <= n <= e for s, e in ranges):
            continue
        shown = ", ".join(f"{s}-{e}" for s, e in ranges[:4])
        yield _report(
            warning,
            Source(kind, p.line, p.range),
            "live-range.peak-not-live",
            f"{p.name} is listed as live at the peak {n}, but is live {shown}",
        )


def peak_cumulative(ctx: Context) -> Iterator[Finding]:
    """``live-range.peak-cumulative`` (warning): a ``cumulative`` column that is not the running sum of the
    ``bytes`` column. XLA: the peak list prints each value's size and the sum so far, in list order. A row is
    flagged when it matches neither the running sum nor the row above plus its size, so one edited figure gives
    one diagnostic."""
    bs = ctx.bs
    if bs.peak_at is None:
        return
    kind = bs.peak_at.kind
    running = 0
    previous = 0
    for p in bs.peak_entries:
        running += p.bytes
        if p.cumulative is None:
            return
        # One wrong row is flagged once: it breaks both the running sum and the step from the row above, while
        # the rows after a wrong cumulative (or after a wrong size) break only one of the two.
        if p.cumulative != running and p.cumulative != previous + p.bytes:
            yield _report(
                warning,
                Source(kind, p.line, p.range),
                "live-range.peak-cumulative",
                f"cumulative {p.cumulative} bytes, but the sizes so far add up to {running}",
            )
        previous = p.cumulative


#: Every rule with the codes it can emit, in the order they run.
BUFFER_RULES: tuple[tuple[Callable[[Context], Iterator[Finding]], tuple[str, ...]], ...] = (
    (slice_out_of_range, ("buffer.slice-out-of-range",)),
    (duplicate_value, ("buffer.duplicate-value",)),
    (total_mismatch, ("buffers.total",)),
    (live_range_bounds, ("live-range.inverted", "live-range.beyond-schedule")),
    (sequence_steps, ("live-range.sequence-index", "live-range.duplicate-step")),
    (size_below_shape, ("buffer.size-below-shape",)),
    (used_values_mismatch, ("buffer.used-values-mismatch",)),
    (overlapping_slices, ("buffer.overlap", "buffer.overlap-incomplete")),
    (peak_not_live, ("live-range.peak-not-live",)),
    (peak_cumulative, ("live-range.peak-cumulative",)),
)


def buffer_findings(bs: BufferSet, lines: dict[str, Lines] | None = None) -> list[Finding]:
    """All findings of every buffer rule on one module's buffer facts; [] for a consistent dump. ``lines`` maps a
    document kind to its lines (used to place the memory report's totals); rules needing absent text skip."""
    broken = frozenset(
        kind for kind, doc in bs.docs.items() if any(d.severity >= Severity.ERROR for d in doc.diagnostics)
    )
    ctx = Context(bs, lines or {}, broken)
    out: list[Finding] = []
    for rule, _codes in BUFFER_RULES:
        try:
            out.extend(rule(ctx))
        except Exception:  # a rule's bug must not take the document's other diagnostics down
            _log.exception("buffer rule %s failed", rule.__name__)
    return out
