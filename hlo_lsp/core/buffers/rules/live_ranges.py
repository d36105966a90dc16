"""Buffer rules on the live-range dump: the ranges against the schedule, the schedule's numbering, and the peak
list against the ranges and its own running sum; see `rules`."""

from __future__ import annotations

from collections.abc import Iterator

from hlo_lsp.core.buffers.columns import PeakEntries, SequenceSteps
from hlo_lsp.core.buffers.rules.context import Context, Finding, report, source
from hlo_lsp.core.diagnostics import error, warning


def live_range_bounds(ctx: Context) -> Iterator[Finding]:
    """``live-range.inverted`` (error) for ``start > end``; ``live-range.beyond-schedule`` (error) for an end
    past ``HloLiveRange (max N)`` or a negative start. XLA: ``HloLiveRange`` builds every ``TimeBound`` from
    instruction times in ``[0, schedule_end_time]`` with ``start <= end`` (``CalculateBufferStartEndMap``,
    which also extends live-out values exactly to ``schedule_end_time``)."""
    bs = ctx.bs
    mx = bs.live_range_max
    for v in bs.values_by_key.values():
        got = v.live_range
        if got is None:
            continue
        start, end = got
        if start > end:
            code = "live-range.inverted"
            message = f"{v.key} is live from {start} to {end}: the range ends before it starts"
        elif start < 0 or mx is not None and end > mx:
            code, message = "live-range.beyond-schedule", f"{v.key} is live {start}-{end}, outside the schedule 0-{mx}"
        else:
            continue
        at = v.live_range_at  # made only for a finding: one per value took most of this check's time
        if at is not None:
            yield report(error, at, code, message)


def sequence_steps(ctx: Context) -> Iterator[Finding]:
    """``live-range.sequence-index`` (error): the ``InstructionSequence`` is not numbered ``0..max-1`` in order;
    ``live-range.duplicate-step`` (error): an instruction appears twice in it. XLA: ``HloLiveRange::ToString``
    prints ``flattened_instruction_sequence_`` with each instruction's index, and
    ``FlattenSchedule`` adds an instruction once (``instruction_schedule_`` maps it to one time)."""
    bs = ctx.bs
    kind = bs.sequence_at
    if not bs.sequence or kind is None:
        return
    steps = bs.sequence
    if not isinstance(steps, SequenceSteps):
        return  # no sequence was read (the join's default)
    seen: dict[str, int] = {}  # name -> position of its first step
    reported_index = False
    req, numbers, names = steps.req, steps.step, steps.name
    for pos in range(len(steps)):
        number, name = req(numbers, "step", pos), names[pos]
        if number != pos and not reported_index:
            reported_index = True
            yield report(
                error,
                source(kind, steps._make(pos)),
                "live-range.sequence-index",
                f"step {number} is at position {pos} of the sequence; XLA numbers the steps 0, 1, 2, ... in order",
            )
        prev = seen.get(name)
        if prev is not None:
            yield report(
                error,
                source(kind, steps._make(pos)),
                "live-range.duplicate-step",
                f"`{name}` is scheduled twice (steps {bs.step_of(name)} and {number})",
                ((source(kind, steps._make(prev)), f"first step of `{name}`"),),
            )
        else:
            seen[name] = pos
    mx = bs.live_range_max
    if mx is not None and not reported_index and len(bs.sequence) != mx and ctx.complete("live-range"):
        last = bs.sequence[-1]
        yield report(
            error,
            source(kind, last),
            "live-range.sequence-index",
            f"the sequence has {len(bs.sequence)} steps, but the header says max {mx}",
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
    entries = bs.peak_entries
    if not isinstance(entries, PeakEntries):
        return  # no peak list was read (the join's default)
    for i in range(len(entries)):
        key = entries.key(i)
        if key is not None:
            v = bs.value(key)
            candidates = [v] if v is not None else []
        else:
            candidates = bs.values_of(entries.instruction[i])
        ranges = [r for v in candidates if (r := v.live_range) is not None]
        if any(s > e for s, e in ranges):
            continue  # an inverted range is reported by `live_range_bounds`
        if not ranges or any(s <= n <= e for s, e in ranges):
            continue
        p = entries._make(i)
        shown = ", ".join(f"{s}-{e}" for s, e in ranges[:4])
        yield report(
            warning,
            source(kind, p),
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
            yield report(
                warning,
                source(kind, p),
                "live-range.peak-cumulative",
                f"cumulative {p.cumulative} bytes, but the sizes so far add up to {running}",
            )
        previous = p.cumulative
