"""The join behind `BufferSet.from_docs`: the documents in a fixed kind order (assignment listing, used values,
live ranges, peak list, memory report), each record merged into the `BufferValue` of its canonical key by a dict
lookup; a value remembers, per role, which record of which document it was joined from (later lines win). Linear
in the number of records: the loops over them are written out, and call `_value` only for a value not seen yet
and `_set_id` (which reports a mismatch) only for ids that disagree."""

from __future__ import annotations

from array import array
from itertools import repeat
from typing import TYPE_CHECKING

from hlo_lsp.core.buffers.columns import NONE, WIDE, Assignments, LiveRanges, UsedValues, shape_index
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.value import ASG, FROM, LIVE, PEAK, ROLES, USED, BufferValue, Roles, Source
from hlo_lsp.core.diagnostics import Range, warning
from hlo_lsp.core.process import pieces, turns

if TYPE_CHECKING:
    from hlo_lsp.core.buffers.bufferset import BufferSet

_KIND_ORDER = {"single": 0, "assignment": 0, "values": 1, "live-range": 2, "memory-report": 3}

# The join of the benchmark's assignment file is 0.3 s of GIL: given way to requests only between files, it took
# every other turn from the lenses and token delta an edit of it asks for (they finished twice as late)
GIVE_WAY_EVERY = 8191  # records, minus one (a mask): about 10 ms of joining


def _value(bs: BufferSet, key: str, instruction: str, index: tuple[int, ...] | None) -> BufferValue:
    v = bs.values_by_key.get(key)
    if v is None:
        n = len(bs.values_by_key)
        v = BufferValue(key, instruction, index, None, False, None, bs.roles, n)
        bs.values_by_key[key] = v
        if n >= len(bs.roles.records[0]):  # `from_docs` sizes the role columns ahead
            for role in range(ROLES):
                bs.roles.records[role].append(-1)
                bs.roles.docs[role].append(0)
    elif v.index is None and index is not None:
        v.index = index
    return v


def _set_id(bs: BufferSet, v: BufferValue, value_id: int, kind: str, cols, r: int) -> None:
    if v.value_id is None:
        v.value_id = value_id
    elif v.value_id != value_id:
        ln = cols.line[r]
        rng = Range(ln, cols.start[r], ln, cols.end[r])
        bs.problems.append(
            (
                kind,
                warning(rng, "bufferset.id-mismatch", f"{v.key} has id {value_id} here but {v.value_id} elsewhere"),
            )
        )


def join_docs(bs: BufferSet, docs: list[BufferDoc]) -> BufferSet:
    """Join one old single file, or the split files of one module (any subset, any order), into the empty ``bs``."""
    if len(docs) > 255:
        docs = docs[:255]  # one byte names a value's document
    most = sum(
        len(d.assignment_records) + len(d.used_values) + len(d.live_ranges) + len(d.peak_entries) for d in docs
    )  # at most one value per record: the role columns are made at that size once
    bs.roles = Roles(most)
    for d, doc in enumerate(sorted(docs, key=lambda d: _KIND_ORDER.get(d.kind, 9))):
        turns.give_way()  # joined in the background: the requests under way first
        _join_doc(bs, d, doc)
    n = len(bs.values_by_key)
    for role in range(ROLES):
        del bs.roles.records[role][n:]
        del bs.roles.docs[role][n:]
    _unallocated_problems(bs)
    return bs


def _join_doc(bs: BufferSet, d: int, doc: BufferDoc) -> None:
    """Join document number ``d``: its records by role, and the facts it holds once (totals, sequence, peak)."""
    kind = doc.kind
    bs.docs.setdefault(kind, doc)
    A, U, L, P = doc.assignment_records, doc.used_values, doc.live_ranges, doc.peak_entries
    for role, cols in ((ASG, A), (USED, U), (FROM, U), (LIVE, L), (PEAK, P)):
        bs.roles.sources[role].append((kind, cols))
    bs.allocations.extend(doc.allocations)
    bs.allocation_at.add(kind, doc.allocations)
    _join_values(bs, d, kind, A, used=False)
    if doc.total_bytes_used is not None:
        bs.total_bytes_used = doc.total_bytes_used
        bs.total_at = _number_at(kind, doc.total_bytes_used_line, "Total bytes used: ", doc.total_bytes_used)
    _join_values(bs, d, kind, U, used=True)
    if doc.live_range_max is not None:
        bs.live_range_max = doc.live_range_max
    if doc.sequence:
        bs.sequence = doc.sequence
        bs.sequence_at = kind
    _join_live_ranges(bs, d, L)
    if doc.peak_step is not None:
        bs.peak_step = doc.peak_step
        bs.peak_at = _number_at(kind, doc.peak_line, "  Live ranges at ", doc.peak_step)
        bs.peak_entries = doc.peak_entries
        for r in range(len(P)):
            peak_key = P.key(r)
            if peak_key is not None:
                v = _value(bs, peak_key, P.instruction[r], None)
                bs.roles.records[PEAK][v.n] = r
                bs.roles.docs[PEAK][v.n] = d
    if doc.memory_report:
        bs.memory_report = doc.memory_report


# The loops below run once per record: `_value` and `_set_id` are called only where the value is new or its id
# disagrees.
def _join_values(bs: BufferSet, d: int, kind: str, cols: Assignments | UsedValues, used: bool) -> None:
    """The value lines of the allocation listing (``used`` False: their phi flag and color win), or the ``Used
    values:`` (``used``: a phi flag or a color only where none was given, and the `` from instruction:`` line)."""
    by_key, num = bs.values_by_key, cols.num
    rec, src = bs.roles.records[USED if used else ASG], bs.roles.docs[USED if used else ASG]
    rec_from, src_from = bs.roles.records[FROM], bs.roles.docs[FROM]
    if _new_values(bs, d, cols, rec, src):
        return
    from_lines = cols.from_line if isinstance(cols, UsedValues) else repeat(NONE, len(cols))
    columns = zip(cols.key, cols.index_text, cols.value_id, cols.color, from_lines)
    for r, (key, itext, vid, color, from_line) in enumerate(columns):
        if not r & GIVE_WAY_EVERY:
            turns.give_way()
        v = by_key.get(key)
        if v is None or v.index is None and itext is not None:
            v = _value(bs, key, cols.instruction[r], shape_index(itext))
        if vid <= WIDE:
            vid = num(cols.value_id, "value_id", r)
        if v.value_id is None:
            v.value_id = vid
        elif v.value_id != vid:
            _set_id(bs, v, vid, kind, cols, r)
        n = v.n
        if not used:
            v.phi, v.color = bool(cols.phi[r]), (color if color > WIDE else num(cols.color, "color", r))
        else:
            if cols.phi[r]:
                v.phi = True
            if v.color is None:
                v.color = num(cols.color, "color", r)
            if from_line != NONE:
                rec_from[n] = r
                src_from[n] = d
        rec[n] = r
        src[n] = d


def _new_values(bs: BufferSet, d: int, cols: Assignments | UsedValues, rec, src) -> bool:
    """`_join_values` when every record of ``cols`` is a value of its own that the set does not hold yet (a
    buffer file joined alone, as the pull at its open does, or first): each value made with its facts at once,
    a few thousand at a time by C iterators, its roles' records written a slice at a time. False (nothing done)
    when a key repeats or is held, or a number is kept on the side (`Records.wide`): the loop then joins them.
    The benchmark's values file alone: 37,286 values, 50 ms by the loop."""
    by_key, keys = bs.values_by_key, cols.key
    total = len(keys)
    n0 = len(by_key)
    if not total or n0 + total > len(rec) or cols.wide or NONE in cols.value_id:
        return False
    step = pieces.PIECE
    held, seen = by_key.keys(), set()
    for lo in range(0, total, step):  # a piece at a time: no single C call over every key
        piece = keys[lo : lo + step]
        if not held.isdisjoint(piece):
            return False
        seen.update(piece)
    if len(seen) != total:
        return False
    del seen
    roles = bs.roles
    for lo in range(0, total, GIVE_WAY_EVERY + 1):
        turns.give_way()  # joined in the background: the requests under way first
        hi = min(lo + GIVE_WAY_EVERY + 1, total)
        colors = [None if c == NONE else c for c in cols.color[lo:hi]]
        values = map(
            BufferValue,
            keys[lo:hi],
            cols.instruction[lo:hi],
            map(shape_index, cols.index_text[lo:hi]),
            cols.value_id[lo:hi],
            map(bool, cols.phi[lo:hi]),
            colors,
            repeat(roles, hi - lo),
            range(n0 + lo, n0 + hi),
        )
        by_key.update(zip(keys[lo:hi], values))
    for lo in range(0, total, step):
        hi = min(lo + step, total)
        rec[n0 + lo : n0 + hi] = array("q", range(lo, hi))
    src[n0 : n0 + total] = bytes((d,)) * total
    if isinstance(cols, UsedValues):  # the values' `` from instruction:`` lines, where one was read
        rec_from, src_from = bs.roles.records[FROM], bs.roles.docs[FROM]
        if NONE not in cols.from_line:  # every value's (a listing read to its end)
            rec_from[n0 : n0 + total] = rec[n0 : n0 + total]
            src_from[n0 : n0 + total] = src[n0 : n0 + total]
            return True
        for r, from_line in enumerate(cols.from_line):
            if from_line != NONE:
                rec_from[n0 + r] = r
                src_from[n0 + r] = d
    return True


def _join_live_ranges(bs: BufferSet, d: int, L: LiveRanges) -> None:
    by_key = bs.values_by_key
    rec, src = bs.roles.records[LIVE], bs.roles.docs[LIVE]
    for r, (key, itext) in enumerate(zip(L.key, L.index_text)):
        if not r & GIVE_WAY_EVERY:
            turns.give_way()
        v = by_key.get(key)
        if v is None or v.index is None and itext is not None:
            v = _value(bs, key, L.instruction[r], shape_index(itext))
        rec[v.n] = r
        src[v.n] = d


def _unallocated_problems(bs: BufferSet) -> None:
    """A value with a live range but no allocation, when the listing was joined."""
    if not bs.allocations:
        return
    asg, live = bs.roles.records[ASG], bs.roles.records[LIVE]
    for v in bs.values_by_key.values():
        if asg[v.n] < 0 and live[v.n] >= 0 and (at := v.live_range_at) is not None:
            bs.problems.append(
                (
                    at.kind,
                    warning(at.range, "bufferset.no-allocation", f"{v.key} has a live range but no allocation"),
                )
            )


def _number_at(kind: str, line: int | None, before: str, number: int) -> Source:
    """Where a header line (``before`` then ``number``) gives its number: the range covers the number."""
    ln = line or 0
    return Source(kind, ln, Range(ln, len(before), ln, len(before) + len(str(number))))
