"""Buffer rules on the live-range dump: the ranges against the schedule, the schedule's numbering, and the peak
list against the ranges and its own running sum; see `rules`."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from operator import gt

from hlo_lsp.core.buffers.columns import NONE, WIDE, LiveRanges, PeakEntries, SequenceSteps
from hlo_lsp.core.buffers.rules.context import Context, Finding, report, source
from hlo_lsp.core.buffers.value import LIVE
from hlo_lsp.core.diagnostics import error, warning


def live_range_bounds(ctx: Context) -> Iterator[Finding]:
    """``live-range.inverted`` (error) for ``start > end``; ``live-range.beyond-schedule`` (error) for an end
    past ``HloLiveRange (max N)`` or a negative start. XLA: ``HloLiveRange`` builds every ``TimeBound`` from
    instruction times in ``[0, schedule_end_time]`` with ``start <= end`` (``CalculateBufferStartEndMap``,
    which also extends live-out values exactly to ``schedule_end_time``).

    Tested a live-range file's columns at a time (`_bad_live_rows`): asked of each value, its range took this
    rule 7 ms on the benchmark's live-range file, its pull waiting; only a row out of bounds is then looked up
    (it counts when it is its value's range: a later line of the same value wins)."""
    bs = ctx.bs
    mx = bs.live_range_max
    recs, docs, cols = _live_columns(bs)
    by_key = bs.values_by_key
    bad: list[tuple[int, int, int]] = []  # (value number, first, last)
    for d, got in enumerate(cols):
        if got is None:
            continue
        first, last, keys = got
        for r in _bad_live_rows(first, last, mx):
            v = by_key.get(keys[r])
            if v is not None and recs[v.n] == r and docs[v.n] == d:
                bad.append((v.n, first[r], last[r]))
    if not bad:
        return
    values = list(by_key.values())  # numbered in this order (`join._value`): findings in the values' order
    for n, start, end in sorted(bad):
        v = values[n]
        if start > end:
            code = "live-range.inverted"
            message = f"{v.key} is live from {start} to {end}: the range ends before it starts"
        else:
            code, message = "live-range.beyond-schedule", f"{v.key} is live {start}-{end}, outside the schedule 0-{mx}"
        at = v.live_range_at  # made only for a finding: one per value took most of this check's time
        if at is not None:
            yield report(error, at, code, message)


def _bad_live_rows(first: Sequence[int], last: Sequence[int], mx: int | None) -> list[int]:
    """The rows of a live-range file whose range is inverted, starts before 0 or ends past ``mx``: a few C
    passes over the columns, then the rows that fail one."""
    if not first:
        return []
    ok = min(first) >= 0 and (mx is None or max(last) <= mx) and not any(map(gt, first, last))
    if ok:
        return []
    return [r for r, (s, e) in enumerate(zip(first, last)) if s > e or s < 0 or mx is not None and e > mx]


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
    values have no live range in these files are not judged.

    An entry with an index reads its value's range from the live-range columns directly (`_live_columns`): a
    `BufferValue.live_range` per entry was 25 ms of the benchmark live-range file's pull (15,003 entries)."""
    bs = ctx.bs
    n = bs.peak_step
    if n is None or bs.peak_at is None:
        return
    kind = bs.peak_at.kind
    entries = bs.peak_entries
    if not isinstance(entries, PeakEntries):
        return  # no peak list was read (the join's default)
    recs, docs, cols = _live_columns(bs)
    get = bs.values_by_key.get
    for i, (instruction, itext) in enumerate(zip(entries.instruction, entries.index_text)):
        if itext is not None:
            v = get(instruction + itext)
            if v is None or (r := recs[v.n]) < 0 or (c := cols[docs[v.n]]) is None:
                continue  # no live range in these files: not judged
            s, e = c[0][r], c[1][r]
            if s > e or s <= n <= e:
                continue  # inverted (`live_range_bounds` reports it) or live at the peak
            ranges = [(s, e)]
        else:
            ranges = [r for v in bs.values_of(instruction) if (r := v.live_range) is not None]
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


def _live_columns(bs) -> tuple[array, bytearray, list[tuple[Sequence[int], Sequence[int], list[str]] | None]]:
    """What `BufferValue.live_range` reads, for every value at once: per value number its live-range record and
    document (`Roles`), and per document its first and last steps as numbers and its keys (None for a document
    without live ranges)."""
    roles = bs.roles
    cols = [
        (c.ints("first"), c.ints("last"), c.key) if isinstance(c, LiveRanges) else None for _, c in roles.sources[LIVE]
    ]
    return roles.records[LIVE], roles.docs[LIVE], cols


def peak_cumulative(ctx: Context) -> Iterator[Finding]:
    """``live-range.peak-cumulative`` (warning): a ``cumulative`` column that is not the running sum of the
    ``bytes`` column. XLA: the peak list prints each value's size and the sum so far, in list order. A row is
    flagged when it matches neither the running sum nor the row above plus its size, so one edited figure gives
    one diagnostic. Read from the peak list's columns (a record made per entry was most of this rule's time);
    an entry is made only for a finding."""
    bs = ctx.bs
    if bs.peak_at is None:
        return
    kind = bs.peak_at.kind
    entries = bs.peak_entries
    if not isinstance(entries, PeakEntries):
        yield from _peak_cumulative_records(kind, entries)
        return
    sizes, cumulative, wide = entries.ints("bytes"), entries.cumulative, entries.wide
    running = 0
    previous = 0
    for i, (size, c) in enumerate(zip(sizes, cumulative)):
        running += size
        if c <= WIDE:
            if c == NONE:
                return
            c = wide[("cumulative", i)]
        # One wrong row is flagged once: it breaks both the running sum and the step from the row above, while
        # the rows after a wrong cumulative (or after a wrong size) break only one of the two.
        if c != running and c != previous + size:
            yield report(
                warning,
                source(kind, entries._make(i)),
                "live-range.peak-cumulative",
                f"cumulative {c} bytes, but the sizes so far add up to {running}",
            )
        previous = c


def _peak_cumulative_records(kind: str, entries) -> Iterator[Finding]:
    """`peak_cumulative` over a list of `PeakEntry` records."""
    running = 0
    previous = 0
    for p in entries:
        running += p.bytes
        if p.cumulative is None:
            return
        if p.cumulative != running and p.cumulative != previous + p.bytes:
            yield report(
                warning,
                source(kind, p),
                "live-range.peak-cumulative",
                f"cumulative {p.cumulative} bytes, but the sizes so far add up to {running}",
            )
        previous = p.cumulative
