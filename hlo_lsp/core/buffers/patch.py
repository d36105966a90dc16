"""A buffer file's model patched for an edit inside one record block, instead of the whole file read again.

Reading the 4.6 MB ``-buffer-assignment.txt`` of the benchmark dump takes 0.25 s, the 11 MB values file 0.4 s; an
edit (typing on a line) changes one allocation, one used value or one live-range line of them. The reader is a
state machine over lines, and at the first line of a record in its section's fast loop (an ``allocation N:``
header, a ``<id name @c>`` header, a live-range item) its state is that section's and nothing else: the
record before is closed there. So the lines from such a record's first line up to the next record's first line
(the *block*) are read the same when read on their own, after a *primer* (the section's header line: what puts
the reader in that section), as they were in the whole file.

`patch` finds the block around the changed lines (the lines before and after them are the old text's), reads the
old block and the new block that way, and:

1. checks that the old block read alone gives exactly what the whole read recorded for its lines (records,
   occurrences, diagnostics) and that each read ends in the state the primer alone leaves (nothing in the block
   opened another section, skipped lines or set anything of the document's): otherwise it answers None and the
   file is read again as a whole;
2. makes the new model: each column of the record lists, the occurrence table and the pass's diagnostics are the
   old ones before the block, the new block's rows, and the old ones after it, moved by the lines the edit added
   or removed (C-speed slices of arrays and lists);
3. runs the reader's checks of the whole text (`finish`) on it, as the read does.

In the values file an edit among one used value's items reads only the changed lines (`_patch_items`): a value
may hold thousands of uses, and its block is all of them.

The old model is left as it was (a request or a join may still be reading it). `tests/core/test_buffers_patch.py`
checks on real dumps that after random edits the patched model equals a fresh read of the final text.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from itertools import repeat
from operator import add
from typing import TypeVar

from hlo_lsp.core.buffers.columns import NONE, Records
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.read_common import without_cr
from hlo_lsp.core.buffers.reader import _Reader
from hlo_lsp.core.buffers.text import FROM
from hlo_lsp.core.diagnostics import Diagnostic, moved
from hlo_lsp.core.document import TextLines, common_prefix, common_suffix
from hlo_lsp.core.occurrences import COL_BITS, OccurrenceTable

# the section a block is read in, and the lines that put the reader there
PRIMERS: dict[str, tuple[str, ...]] = {
    "alloc": ("BufferAssignment:",),
    "used": ("Used values:",),
    "seq": ("HloLiveRange (max 0):", "  InstructionSequence:"),
    "lrs": ("HloLiveRange (max 0):", "  BufferLiveRange:"),
    "peak": ("HloLiveRange (max 0):", "  Live ranges at 0 (peak):"),
}
LISTS = ("assignment_records", "used_values", "sequence", "live_ranges", "peak_entries")  # the column lists
_LIST_OF = {"used": "used_values", "seq": "sequence", "lrs": "live_ranges", "peak": "peak_entries"}
PATCHED_KINDS = ("assignment", "values", "live-range")  # the split files whose records are all in blocks
R = TypeVar("R", bound=Records)


@dataclass(frozen=True, slots=True)
class Patched:
    """Where a patched model's occurrences differ from the model it was patched from (serial ``source``):
    occurrences ``start .. start + count - 1`` are new, in place of the old ``start .. old_end - 1``. Semantic
    tokens splice their previous data with it (`ide.token_reuse`)."""

    source: int
    start: int
    old_end: int
    count: int


def _columns(records: Records) -> list[str]:
    return [s for cls in type(records).__mro__ for s in getattr(cls, "__slots__", ()) if s not in _NOT_COLUMNS]


_NOT_COLUMNS = ("wide", "text", "records", "_made")  # a column list's slots that are not columns


def _state(r: _Reader) -> tuple:
    """What of the reader and its document a block must leave as its primer did (see the module docstring)."""
    d = r.doc
    return (
        r.section,
        r.sub,
        r.value,
        r.alloc,
        r.table,
        r.space,
        tuple(r.stack_parents),
        frozenset(r.saw),
        r.skipping,
        frozenset(r.lr_parts),
        r.pending_old_table,
        d.total_bytes_used,
        d.total_bytes_used_line,
        d.live_range_available,
        d.live_range_max,
        d.live_range_line,
        d.peak_step,
        d.peak_line,
        d.peak_breakdown_total,
        len(d.stack_trace),
        len(d.memory_report),
    )


_PRIMED: dict[tuple[str, str], tuple] = {}


def _primed(section: str, kind: str) -> tuple:
    """The state the primer alone leaves (kept: the same for every block)."""
    got = _PRIMED.get((section, kind))
    if got is None:
        r = _Reader("\n".join(PRIMERS[section]), kind)
        doc = r.run(finish=False)
        empty = not doc.diagnostics and not doc.occurrences and not doc.allocations
        got = _PRIMED[(section, kind)] = (_state(r), empty)
    return got


def _read_block(section: str, kind: str, lines: list[str]) -> BufferDoc | None:
    """``lines`` read on their own after ``section``'s primer; None when they leave another state than the
    primer alone (they opened a section, set something of the document's, or end skipping lines)."""
    lead = next((i for i, line in enumerate(lines) if line), len(lines))  # empty lines are passed over
    # ended with a newline, as a block is in the file
    return read_block_text(section, kind, "\n".join((*PRIMERS[section], *lines, "")), lead)


def read_block_text(section: str, kind: str, text: str, lead: int = 0) -> BufferDoc | None:
    """`_read_block` of a block's lines given as ``text``: ``section``'s primer's lines, then the block's, whose
    first ``lead`` lines are empty."""
    state, empty = _primed(section, kind)
    if not empty:
        return None
    primer = PRIMERS[section]
    r = _Reader(text, kind)
    doc = r.run(finish=False)
    if _state(r) != state:
        return None
    if section not in ("alloc", "used"):
        return doc  # an item is one line: the line before it closed nothing
    # its first line must start a record: in the file, any other line would belong to the record before
    if section == "alloc":
        first = doc.allocations[0].line if doc.allocations else None
    else:
        records = getattr(doc, _LIST_OF[section])
        first = records.line[0] if len(records) else None
    return doc if first == len(primer) + lead else None


def _moved(col, by: int):
    """A line column moved by ``by`` lines (NONE stays NONE): its lines and theirs moved are line numbers."""
    if not by:
        return col
    if isinstance(col, array):
        if col.typecode == "q" and NONE in col:
            return array("q", [v if v == NONE else v + by for v in col])
        return plus(col, by)
    return list(map(add, col, repeat(by)))


def plus(col: array, by: int) -> array:
    """``col`` with ``by`` added to each entry, where every entry and every sum is in ``[0, 2**(8*w - 1))``
    (``w`` the column's item size: line numbers, packed positions). The entries are the 8w-bit digits of one
    integer and ``by`` is added to every digit at once by adding the integer whose digits are all ``by`` (or
    subtracting all ``-by``): no digit carries or borrows into the next, since each sum stays in its range. A
    line added in the values file moves 180,000 occurrences and 37,000 values' lines: this is a few C calls
    over their bytes, four times as fast as adding them one by one."""
    if not col or not by:
        return array(col.typecode, col)
    order = sys.byteorder
    digits = int.from_bytes(array(col.typecode, (abs(by),)) * len(col), order)
    total = int.from_bytes(col, order) + (digits if by > 0 else -digits)
    out = array(col.typecode)
    out.frombytes(total.to_bytes(len(col) * col.itemsize, order))
    return out


def _diagnostic_moved(d: Diagnostic, by: int) -> Diagnostic | None:
    """``d`` moved by ``by`` lines (`diagnostics.moved`); None when it points elsewhere too (related places,
    fixes: they may lie outside the lines that move)."""
    if by and (d.related or d.fixes):
        return None
    return moved(d, by)


def _section_at(doc: BufferDoc, line: int) -> tuple[str, list | array] | None:
    """The section whose records hold ``line`` (the last record starting at or before it), with the first lines
    of its records."""
    if doc.kind == "assignment":
        return "alloc", doc.allocations.line
    if doc.kind == "values":
        return "used", doc.used_values.line
    best = None
    for section in ("seq", "lrs", "peak"):
        starts = getattr(doc, _LIST_OF[section]).line
        k = bisect_left(starts, line + 1) - 1
        if k >= 0 and (best is None or starts[k] > best[2]):
            best = (section, starts, starts[k])
    return None if best is None else (best[0], best[1])


def changed_run(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """(first changed line, its end in ``old``, its end in ``new``): the lines before and after are equal."""
    pre = common_prefix(old, new, min(len(old), len(new)))
    suf = common_suffix(old, new, min(len(old), len(new)) - pre)
    return pre, len(old) - suf, len(new) - suf


def patch(doc: BufferDoc, old: list[str], new: list[str]) -> BufferDoc | None:
    """The model of the text ``new`` made from ``doc``, the model of ``old``; None when the edit is not inside
    one block of records (the caller reads ``new`` as a whole). ``doc`` is not changed."""
    if doc.kind not in PATCHED_KINDS or doc.read_count < 0:
        return None
    pre, old_end, new_end = changed_run(old, new)
    if pre == len(old) == len(new):
        return doc  # nothing changed
    if doc.kind == "values":
        out = _patch_items(doc, old, new, pre, old_end, new_end)
        if out is not None:
            return out
    found = _section_at(doc, pre)
    if found is None:
        return None
    section, starts = found
    k1 = bisect_left(starts, old_end)
    shift = new_end - old_end
    # the block: from the last record starting at or before the changed lines (or the one before it, when the
    # new text's lines there do not start a record) to the next record after them, or the end of the file
    k0 = bisect_left(starts, pre + 1) - 1
    for k in (k0, k0 - 1):
        if k < 0:
            return None  # before the first record: what is there is read with the section's header
        s0 = starts[k]
        e0 = starts[max(k1, k + 1)] if max(k1, k + 1) < len(starts) else len(old)
        old_block = _kept_block(doc, section, old, s0, e0) or _read_block(section, doc.kind, old[s0:e0])
        if old_block is None:
            return None
        new_lines = new[s0 : e0 + shift]
        new_block = _read_block(section, doc.kind, new_lines)
        if new_block is not None:
            out = _splice(doc, old_block, new_block, s0, e0, s0 - len(PRIMERS[section]), shift, new)
            if out is not None:
                _finish(out, new)
                out.kept_block = (section, new_lines, new_block)
            return out
    return None


# a used value's header, as the primer of its item lines (`_patch_items`), then the heading of their list
_ITEM_PRIMER = ("Used values:", "<0 v @0>")
_HEADINGS = (" positions:", " uses:")


def _patch_items(
    doc: BufferDoc, old: list[str], new: list[str], pre: int, old_end: int, new_end: int
) -> BufferDoc | None:
    """The values file's model patched for an edit among one used value's items (its `` positions:`` and
    `` uses:`` lines), reading only the changed lines; None when the edit is not that (`patch` then reads the
    value's whole block: the benchmark's values file has values of 6,000 uses, 30 ms a read line by line).

    The whole read set the value's `` from instruction:`` line (its last one: each sets it), so the value was
    the reader's current one from its header to that line: only a value's header makes a value current, and
    every line that leaves the ``Used values:`` section, or closes the value, makes it no value's again (a line
    at column 0 goes through `finish_value`; an indented one there is an item, a list's heading, a
    `` from instruction:`` line, or reported by `ValuesReader.used_part`). So the reader's state at a line in
    between is the value's and its list's (the last heading or `` from instruction:`` line before it), and
    the changed lines read after a primer that leaves that state (the section's header, a value's, the list's
    heading) are read as in the whole file. As `patch` does for a block, the old lines read so must give what
    the whole read recorded for them, and the old and the new lines must leave the reader in one state."""
    used = doc.used_values
    v = bisect_right(used.line, pre) - 1
    if v < 0 or doc.has_cr or used.wide:
        return None
    head, last = used.line[v], used.from_line[v]
    if last == NONE or not head < pre or old_end > last:
        return None
    heading = _heading(old, head, pre)
    if heading not in _HEADINGS:
        return None  # before the first list, or after a `` from instruction:`` line
    changed = new[pre:new_end]
    if any("\r" in line for line in changed):
        return None
    primer = (*_ITEM_PRIMER, heading)
    old_read = _read_items(primer, old[pre:old_end])
    new_read = _read_items(primer, changed)
    if old_read is None or new_read is None or old_read[0] != new_read[0]:
        return None
    out = _splice(doc, old_read[1], new_read[1], pre, old_end, pre - len(primer), new_end - old_end, new)
    if out is None:
        return None
    out.used_values.from_line[v] = last + new_end - old_end  # the value's own end moves with its items
    _finish(out, new)
    return out


def _heading(lines: list[str], head: int, pre: int) -> str | None:
    """The last list heading or `` from instruction:`` line among ``lines[head + 1 : pre]`` (None if none)."""
    # a value's lists have a heading each, its items start with two spaces: the later heading's first place,
    # with only such lines after it, is the last one (found by C calls: a list may be 6,000 items)
    at = max((_first(lines, h, head + 1, pre) for h in _HEADINGS), default=-1)
    if at >= 0 and sum(map(str.startswith, lines[at + 1 : pre], repeat("  "))) == pre - at - 1:
        return lines[at]
    for ln in range(pre - 1, head, -1):
        line = lines[ln]
        if line in _HEADINGS or line.startswith(" from instruction:") and FROM.match(line):
            return line
    return None


def _first(lines: list[str], line: str, start: int, end: int) -> int:
    """The first place of ``line`` in ``lines[start:end]``; -1 when it is not there."""
    try:
        return lines.index(line, start, end)
    except ValueError:
        return -1


def _read_items(primer: tuple[str, ...], lines: list[str]) -> tuple[tuple, BufferDoc] | None:
    """``lines`` read after ``primer`` (`_patch_items`): the state they leave the reader in, and a model holding
    only what they made (their occurrences and diagnostics, on the lines of the read); None when they made a
    record."""
    r = _Reader("\n".join((*primer, *lines, "")), "values")
    read = r.run(finish=False, close=False)  # the value goes on after the lines
    if len(read.used_values) != 1 or any(d.range.start_line < len(primer) for d in read.diagnostics):
        return None
    block = BufferDoc(kind="values")
    occ = read.occurrences
    if occ.wide:
        return None
    k = bisect_left(occ.pos, len(primer) << COL_BITS)  # without the primer's value header
    block.occurrences.pos, block.occurrences.ends = occ.pos[k:], occ.ends[k:]
    block.occurrences.codes, block.occurrences.keys = occ.codes[k:], occ.keys[k:]
    block.diagnostics = read.diagnostics
    return _state(r), block


def _kept_block(doc: BufferDoc, section: str, old: list[str], s0: int, e0: int) -> BufferDoc | None:
    """The read of the block ``old[s0:e0]`` when the patch that made ``doc`` read those very lines as its new
    block (typing goes on in the same record: the read is the same, and a value of the benchmark's values file
    with 6,000 uses is a block of 6,000 lines, 10-15 ms a read); None otherwise."""
    kept = doc.kept_block
    if kept is None:
        return None
    kept_section, lines, block = kept
    if kept_section != section or len(lines) != e0 - s0 or old[s0:e0] != lines:
        return None
    return block


def _splice(
    doc: BufferDoc, old_block: BufferDoc, new_block: BufferDoc, s0: int, e0: int, base: int, shift: int, new: list[str]
) -> BufferDoc | None:
    out = BufferDoc(kind=doc.kind)
    # lines outside the block are the old text's: only the block's may have brought a ``\r``
    out.has_cr = any("\r" in line for line in (new if doc.has_cr else new[s0 : e0 + shift]))
    # the column lists
    for name in LISTS:
        held: Records = getattr(doc, name)
        got = _splice_records(held, getattr(old_block, name), getattr(new_block, name), s0, e0, base, shift)
        if got is None:
            return None
        setattr(out, name, got)
    # the records' text is ``new`` itself (the editor's snapshot, never changed: one pointer a line, made already;
    # the 11 MB text joined and kept beside it took 5-10 ms of the patch)
    out.used_values.text = new
    # the allocations: their value lines are rows of the spliced `assignment_records` (the block's from the
    # block's first row on, those after it as many rows on as the block gained)
    first = bisect_left(doc.assignment_records.line, s0)
    gained = len(new_block.assignment_records) - len(old_block.assignment_records)
    allocations = _splice_records(
        doc.allocations, old_block.allocations, new_block.allocations, s0, e0, base, shift, (first, gained)
    )
    if allocations is None:
        return None
    allocations.records, allocations.text = out.assignment_records, new
    out.allocations = allocations
    # the occurrences
    occ = doc.occurrences
    if occ.wide or old_block.occurrences.wide or new_block.occurrences.wide:
        return None
    o0, o1 = bisect_left(occ.pos, s0 << COL_BITS), bisect_left(occ.pos, e0 << COL_BITS)
    if _occurrence_rows(old_block.occurrences, base) != (
        occ.pos[o0:o1],
        occ.ends[o0:o1],
        occ.codes[o0:o1],
        occ.keys[o0:o1],
    ):
        return None
    pos, ends, codes, keys = _occurrence_rows(new_block.occurrences, base)
    table = OccurrenceTable()
    table.pos = occ.pos[:o0] + pos + (occ.pos[o1:] if not shift else plus(occ.pos[o1:], shift << COL_BITS))
    table.ends = occ.ends[:o0] + ends + occ.ends[o1:]
    table.codes = occ.codes[:o0] + codes + occ.codes[o1:]
    table.keys = occ.keys[:o0] + keys + occ.keys[o1:]
    out.occurrences = table
    # the diagnostics of the pass over the lines
    diagnostics = _splice_diagnostics(doc, old_block, new_block, s0, e0, base, shift)
    if diagnostics is None:
        return None
    out.diagnostics = diagnostics
    # what is outside the blocks of records
    for name in ("total_bytes_used_line", "live_range_line", "peak_line"):
        v = getattr(doc, name)
        if v is not None and v >= s0:
            if v < e0:
                return None
            v += shift
        setattr(out, name, v)
    for name in ("total_bytes_used", "live_range_available", "live_range_max", "peak_step", "peak_breakdown_total"):
        setattr(out, name, getattr(doc, name))
    out.memory_report = doc.memory_report
    if shift and any(t.line >= s0 for t in doc.memory_report):
        return None
    out.stack_trace = [
        n if n.line < s0 or not shift else replace(n, line=n.line + shift, range=n.range.moved(shift))
        for n in doc.stack_trace
    ]
    if any(s0 <= n.line < e0 for n in doc.stack_trace):
        return None
    out.read_count = len(diagnostics)
    out.end_saw, out.end_lr_parts = doc.end_saw, doc.end_lr_parts
    out.patched = Patched(doc.serial, o0, o1, len(pos))
    return out  # the whole text's checks are the caller's (`_finish`), once the model is whole


def _splice_records(
    held: R, old_block: R, new_block: R, s0: int, e0: int, base: int, shift: int, rows: tuple[int, int] = (0, 0)
) -> R | None:
    """The column list ``held`` with the block's rows replaced by ``new_block``'s; None when ``old_block`` does
    not hold exactly ``held``'s rows of the block. Line columns move by ``base`` in the block and ``shift``
    after it; an allocation's first value row by ``rows`` (the block's first row, the rows it gained)."""
    if held.wide or old_block.wide or new_block.wide:
        return None
    r0, r1 = bisect_left(held.line, s0), bisect_left(held.line, e0)
    if len(old_block) != r1 - r0:
        return None
    out = type(held)()
    for c in _columns(held):
        col = getattr(held, c)
        by = (base, shift) if c in ("line", "from_line") else rows if c == "first" else None
        if (_moved(getattr(old_block, c), by[0]) if by else getattr(old_block, c)) != col[r0:r1]:
            return None
        mid = _moved(getattr(new_block, c), by[0]) if by else getattr(new_block, c)
        tail = col[r1:]
        setattr(out, c, col[:r0] + mid + (_moved(tail, by[1]) if by else tail))
    return out


def _occurrence_rows(t: OccurrenceTable, base: int) -> tuple[array, array, bytearray, list[str]]:
    return array("q", [p + (base << COL_BITS) for p in t.pos]), t.ends, t.codes, t.keys


def _splice_diagnostics(doc, old_block, new_block, s0, e0, base, shift) -> list[Diagnostic] | None:
    """The pass's diagnostics with the block's replaced: those on the block's lines must follow each other (the
    reader reports a record's problems while reading it, or when the next record closes it)."""
    read = doc.diagnostics[: doc.read_count]
    inside = [i for i, d in enumerate(read) if s0 <= d.range.start_line < e0]
    d0 = inside[0] if inside else sum(1 for d in read if d.range.start_line < s0)
    d1 = d0 + len(inside)
    if inside and inside[-1] != d1 - 1:
        return None
    if any(d.range.start_line >= s0 for d in read[:d0]) or any(d.range.start_line < e0 for d in read[d1:]):
        return None
    old_mid = [_diagnostic_moved(d, base) for d in old_block.diagnostics]
    if old_mid != read[d0:d1]:
        return None
    mid = [_diagnostic_moved(d, base) for d in new_block.diagnostics]
    after = [_diagnostic_moved(d, shift) for d in read[d1:]]
    kept = [d for d in mid + after if d is not None]
    if len(kept) != len(mid) + len(after):
        return None
    return read[:d0] + kept


def _finish(doc: BufferDoc, lines: list[str] | TextLines) -> None:
    """The reader's checks of the whole text (`reader._Reader.finish`), on the patched model, over the lines as
    the reader holds them (without their ``\r`` when the text has one: `read_common.ReaderState`). A `TextLines`
    reads as the list of its lines (`halves`: the whole text, never split there)."""
    r = _Reader.__new__(_Reader)
    r.doc = doc
    if doc.has_cr:
        r.lines = without_cr(list(lines))
    else:
        r.lines = lines  # type: ignore[assignment]  # (only read by line number, as a list)
    r.saw = set(doc.end_saw)
    r.lr_parts = set(doc.end_lr_parts)
    r.finish()
