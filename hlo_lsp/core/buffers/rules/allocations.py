"""Buffer rules on the allocation listing and the used values (errors: invariants XLA CHECKs), see `rules`."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, repeat
from operator import add, attrgetter, gt, lt

from hlo_lsp.core.buffers.bufferset import Source
from hlo_lsp.core.buffers.columns import Assignments
from hlo_lsp.core.buffers.rules.context import Context, Finding, report, source, value_runs
from hlo_lsp.core.diagnostics import Range, error
from hlo_lsp.core.document import Lines
from hlo_lsp.core.shapes import ELEMENT_BITS, element_count, parse_shape


def slice_out_of_range(ctx: Context) -> Iterator[Finding]:
    """``buffer.slice-out-of-range`` (error): a value's ``offset + size`` exceeds its allocation's size, or the
    offset is negative. XLA: ``BufferAllocation::AddAssignment`` CHECKs ``offset <= size_`` and
    ``offset + size <= size_`` for every assigned value."""
    listing = ctx.listing()
    if listing is not None:
        cols, allocs = listing.cols, listing.allocations
        limits = chain.from_iterable(map(repeat, map(attrgetter("size"), allocs), map(attrgetter("count"), allocs)))
        if min(cols.offset, default=0) >= 0 and min(cols.size, default=0) >= 0:
            if not any(map(gt, map(add, cols.offset, cols.size), limits)):
                return
    for alloc, kind, cols, numbers in value_runs(ctx):
        req, sizes, offsets, limit = cols.req, cols.size, cols.offset, alloc.size
        for i in numbers:
            offset, size = req(offsets, "offset", i), req(sizes, "size", i)
            if offset < 0 or size < 0 or offset + size > limit:
                a = cols._make(i)
                yield report(
                    error,
                    source(kind, a),
                    "buffer.slice-out-of-range",
                    f"{a.name}: bytes [{a.offset}, {a.offset + a.size}) lie outside allocation {alloc.index} "
                    f"of {alloc.size} bytes",
                )


def duplicate_value(ctx: Context) -> Iterator[Finding]:
    """``buffer.duplicate-value`` (error): one value id listed twice, in one allocation or in two.
    XLA: ``BufferAllocation::AddAssignment`` CHECKs the value is not yet assigned to the allocation, and
    ``BufferAssignment::AddAssignment`` CHECKs it has no allocation yet (``allocation_index_for_value_``)."""
    listing = ctx.listing()
    if listing is not None and len(set(listing.cols.value_id)) == len(listing.cols):
        return
    first: dict[int, tuple[str, Assignments, int, int]] = {}  # value id -> (kind, columns, record, allocation)
    for alloc, kind, cols, numbers in value_runs(ctx):
        req, ids = cols.req, cols.value_id
        for i in numbers:
            value_id = req(ids, "value_id", i)
            prev = first.get(value_id)
            if prev is None:
                first[value_id] = (kind, cols, i, alloc.index)
                continue
            a = cols._make(i)
            where = "again in the same allocation" if prev[3] == alloc.index else f"also in allocation {prev[3]}"
            yield report(
                error,
                source(kind, a),
                "buffer.duplicate-value",
                f"value {value_id} ({a.name}) is listed {where}; XLA assigns a value once",
                ((source(prev[0], prev[1]._make(prev[2])), f"first listing of value {value_id}"),),
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
        yield report(
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
        yield report(
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


def size_below_shape(ctx: Context) -> Iterator[Finding]:
    """``buffer.size-below-shape`` (error): an array value's size is smaller than its shape's data (elements x
    bits, packed, without padding). XLA: a value's size is the backend's ``BufferValue::SizeFunction`` of its
    shape, at least ``ShapeUtil::ByteSizeOf`` (padding, tiling and dynamic-shape metadata only add to it), and
    ``HloBufferSize`` takes the max over aliased values. Tuples (platform-specific pointer tables), token and
    opaque values are not checked; a value larger than its shape is never flagged."""
    listing = ctx.listing()
    if listing is not None:
        cols = listing.cols
        least = {shape: (-1 if (need := _packed_bytes(shape)) is None else need) for shape in set(cols.shape)}
        if not any(map(lt, cols.size, map(least.__getitem__, cols.shape))):
            return
    seen: dict[str, int | None] = {}
    for _alloc, kind, cols, numbers in value_runs(ctx):
        req, sizes, shapes = cols.req, cols.size, cols.shape
        for i in numbers:
            shape = shapes[i]
            need = seen.get(shape, -1)
            if need == -1:
                need = seen[shape] = _packed_bytes(shape)
            if need is not None and req(sizes, "size", i) < need:
                a = cols._make(i)
                yield report(
                    error,
                    source(kind, a),
                    "buffer.size-below-shape",
                    f"{a.name} has size {a.size}, but its shape {a.shape} holds {need} bytes of data",
                )


def _packed_bytes(shape_text: str) -> int | None:
    """The smallest byte size an array of this shape can have; None for tuples, tokens and unreadable shapes."""
    if shape_text.startswith("("):
        return None  # a tuple, not parsed (a large module's output tuple has thousands of elements: 8 ms)
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
            yield report(
                error, at, "buffer.used-values-mismatch", f"{v.key} is a used value, but no allocation lists it"
            )
        elif assignment_at is not None and used_at is None:
            at = assignment_at
            yield report(
                error, at, "buffer.used-values-mismatch", f"{v.key} is assigned, but `Used values` does not list it"
            )
