"""Hovers on a module's buffer facts: a value (its size, allocation, offset, live range, positions, uses and the
instruction that defines it), an allocation (its kind, values and use at XLA's peak), and a value's numeric id."""

from __future__ import annotations

import re

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.memory.allocated import union_bytes
from hlo_lsp.ide.context import Cursor
from hlo_lsp.ide.hover_fields import (
    MAX_SHAPE_TEXT,
    Fields,
    defining_text,
    fmt_bytes,
    shorten,
    size_of_shape,
    source_fields,
)
from hlo_lsp.ide.types import HoverResult

_VALUE_ID = re.compile(r"<(\d+) ")


def hover_value_id(cur: Cursor) -> HoverResult | None:
    """On the numeric id of ``<820 name @0>`` (assignment listing, Used values): the hover of the value named
    right after it, over the id's range."""
    lines = cur.analysis.lines
    text = lines[cur.line] if 0 <= cur.line < len(lines) else ""
    for m in _VALUE_ID.finditer(text):
        if m.start(1) <= cur.col <= m.end(1):
            o = cur.index.at(cur.line, m.end())
            if o is not None and o.kind == "value":
                return hover_value(cur, o.key, Range(cur.line, m.start(1), cur.line, m.end(1)))
            return None
    return None


def _allocation_kind(alloc) -> str:
    k = alloc.kinds()
    if alloc.parameter is not None and alloc.parameter_shape_index:
        k = [
            f"parameter {alloc.parameter} at ShapeIndex {{{','.join(map(str, alloc.parameter_shape_index))}}}"
            if x.startswith("parameter")
            else x
            for x in k
        ]
    return ", ".join(k) if k else "temp"


def _step_name(bs, step: int) -> str | None:
    seq = bs.sequence
    if 0 <= step < len(seq) and seq[step].step == step:
        return seq[step].name
    return None


def _live_range_fields(f: Fields, bs, v, partial: bool = False) -> None:
    if v.live_range is None:
        f.add(
            "Live range",
            "not read yet (a large sibling file is still loading)" if partial else "no live range in this dump",
        )
        return
    s, e = v.live_range

    def end_name(step: int) -> str:
        name = _step_name(bs, step)
        if name is not None:
            return f"`{name}`"
        return "end of program" if step == bs.live_range_max else f"step {step}"

    # intervals are code spans: a bare `[70, 73]` is a Markdown shortcut link, which Neovim's hover conceals
    f.add("Live range", f"`[{s}, {e}]` ({end_name(s)} … {end_name(e)})")
    if bs.peak_step is not None:
        live = s <= bs.peak_step <= e
        f.add("At XLA peak", f"{'live' if live else 'not live'} at step {bs.peak_step}")


def hover_value(cur: Cursor, key: str, rng: Range) -> HoverResult | None:
    bs = cur.bundle.buffers
    v = bs.value(key) if bs is not None else None
    if bs is None or v is None:
        return None
    ident = f" · id {v.value_id}" if v.value_id is not None else ""
    f = Fields(f"**value** `{key}`{ident}", f"value {key}{ident}")
    if v.shape:
        f.add("Shape", f"`{shorten(v.shape, MAX_SHAPE_TEXT)}`")
    unpadded, padded, err = size_of_shape(v.shape)
    if v.size is not None:
        f.add("Size", fmt_bytes(v.size))
    if unpadded is not None and (unpadded != v.size or padded is not None):
        extra = f", padded {fmt_bytes(padded)}" if padded is not None else ""
        f.add("Unpadded", fmt_bytes(unpadded) + extra)
    if err:
        f.add("Shape size", err)
    if v.allocation is not None:
        alloc = bs.allocation(v.allocation)
        kind = _allocation_kind(alloc) if alloc is not None else "?"
        f.add("Allocation", f"{v.allocation} ({kind})")
        if v.offset is not None and v.size is not None:
            f.add("Offset", f"{v.offset} · bytes `[{v.offset}, {v.offset + v.size})`")
    if v.color:
        f.add("Color", str(v.color))
    _live_range_fields(f, bs, v, cur.bundle.partial)
    if v.positions:
        f.add(
            "Positions",
            ", ".join(f"`{p.instruction}{_idx(p.index)}`" for p in v.positions[:8])
            + (" …" if len(v.positions) > 8 else ""),
        )
    if v.uses:
        f.add(
            "Uses",
            ", ".join(f"`{u.instruction}` operand {u.operand}" for u in v.uses[:8]) + (" …" if len(v.uses) > 8 else ""),
        )
    src_text = defining_text(cur, v.instruction) or v.from_instruction
    if src_text:
        f.add("Defined by", "")
        f.block(shorten(src_text))
    source_fields(f, cur, v.instruction)
    return f.result(rng)


def hover_allocation(cur: Cursor, index: int, rng: Range) -> HoverResult | None:
    bs = cur.bundle.buffers
    alloc = bs.allocation(index) if bs is not None else None
    if bs is None or alloc is None:
        return None
    f = Fields(f"**allocation {index}**", f"allocation {index}")
    f.add("Size", fmt_bytes(alloc.size))
    f.add("Kind", _allocation_kind(alloc))
    shape = alloc.parameter_shape or alloc.output_shape
    if shape:
        f.add("Shape", f"`{shorten(shape, MAX_SHAPE_TEXT)}`")
    f.add("Values", str(len(alloc.assignments)))
    if bs.peak_step is not None:
        live = [bs.value(a.key) for a in alloc.assignments]
        used = union_bytes(
            (v.offset, v.offset + v.size)
            for v in live
            if v is not None
            and v.live_range
            and v.offset is not None
            and v.size is not None
            and v.live_range[0] <= bs.peak_step <= v.live_range[1]
        )
        f.add("In use at XLA peak", f"{fmt_bytes(used)} of {fmt_bytes(alloc.size)} (step {bs.peak_step})")
    if bs.total_bytes_used:
        f.add("Share of total", f"{100.0 * alloc.size / bs.total_bytes_used:.1f}% of {fmt_bytes(bs.total_bytes_used)}")
    return f.result(rng)


def _idx(index) -> str:
    return "" if index is None else " {" + ",".join(map(str, index)) + "}"
