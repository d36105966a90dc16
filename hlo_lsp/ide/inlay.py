"""Inlay hints: byte sizes and live ranges written beside the text, for the requested lines only.

- HLO text: after each instruction's result shape, its ``ByteSizeOf`` (``: 192.0KiB``, with the TPU-padded size
  when tiling changes it); when the folder holds the module's buffer assignment, the live range of the
  instruction's values follows (``live 53–55``).
- Buffer-assignment files: after each value of the allocation listing, the used-values listing and the
  BufferLiveRange section, the value's assigned size and its live range.

Each line is handled on its own (`parse_instruction_line` or the reader's records by line, found by bisection),
so a request costs time in proportion to the lines it asks for. Nothing is shown for values the files do not size.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from hlo_lsp.core import kinds
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.memos import memo_table
from hlo_lsp.core.shapes import SizeError, byte_size, human_size, is_tiled, padded_byte_size, parse_shape
from hlo_lsp.core.workspace import Workspace

MAX_LINES = 20000  # a request for more lines than this is answered for its first MAX_LINES lines


@dataclass(frozen=True, slots=True)
class InlayHint:
    line: int
    col: int  # code points; the hint is drawn before this column
    label: str
    tooltip: str = ""
    kind: str = "type"  # "type" or "parameter" (LSP InlayHintKind)


def shape_size_label(text: str) -> str | None:
    """``: 192.0KiB`` for a shape string (``: 4B (512B padded)`` under tiling); None when unsized."""
    sh = parse_shape(text)
    if sh is None:
        return None
    b = byte_size(sh, 8)
    if isinstance(b, SizeError):
        return None
    label = f": {human_size(b)}"
    if is_tiled(sh):
        p = padded_byte_size(sh, 8)
        if not isinstance(p, SizeError) and p != b:
            label += f" ({human_size(p)} padded)"
    return label


def live_label(live_range: tuple[int, int] | None) -> str:
    """``live 53–55``; ``""`` without a live range."""
    if live_range is None:
        return ""
    s, e = live_range
    return f"live {s}" if s == e else f"live {s}–{e}"


def inlay_hints(ws: Workspace, path: str, start_line: int, end_line: int) -> list[InlayHint]:
    """Hints for lines ``start_line..end_line`` (inclusive) of ``path``; [] when it is no dump we read."""
    found = ws.module(path)
    if found is None:
        return []
    a, bundle = found
    lines = a.lines
    start = max(0, start_line)
    end = min(len(lines) - 1, end_line, start + MAX_LINES)
    if end < start:
        return []
    bs = bundle.buffers
    if a.kind == kinds.HLO and a.hlo is not None:
        return _hlo_hints(a.hlo, lines, start, end, bs)
    if a.buffers is not None and bs is not None:
        return _buffer_hints(a.buffers, lines, start, end, bs)
    return []


def _hlo_hints(mod, lines, start, end, bs) -> list[InlayHint]:
    out: list[InlayHint] = []
    table = mod.instructions
    line_of = table.line_of if hasattr(table, "line_of") else [i.line for i in table]
    for j in range(bisect.bisect_left(line_of, start), bisect.bisect_right(line_of, end)):
        ins = table[j]
        d = parse_instruction_line(lines[ins.line])
        if d is None or d.shape is None:
            continue
        label = shape_size_label(d.shape.text)
        if label is None:
            continue
        tooltip = "ByteSizeOf(shape), 8-byte pointers"
        if bs is not None:
            ranges = [v.live_range for v in bs.values_of(ins.name) if v.live_range is not None]
            if ranges:
                label += " · " + live_label((min(r[0] for r in ranges), max(r[1] for r in ranges)))
                tooltip += "; live range of its buffers in the schedule (InstructionSequence steps)"
        out.append(InlayHint(ins.line, d.shape.end, label, tooltip))
    return out


def _value_hint(line: int, col: int, v) -> InlayHint | None:
    parts = []
    if v.size is not None:
        parts.append(human_size(v.size))
    if v.live_range is not None:
        parts.append(live_label(v.live_range))
    if not parts:
        return None
    return InlayHint(line, col, ": " + " · ".join(parts), "assigned size and live range of this value")


_records: dict[int, tuple[object, Sequence[int], list[str]]] = memo_table(
    {}
)  # id(doc) -> (doc, lines, keys), sorted by line


def _value_records(doc) -> tuple[Sequence[int], list[str]]:
    """(lines, keys) of every value record of a buffer document, sorted by line; made once per document, from
    the record columns (`buffers.columns`) without making a record object: a viewport request answers on the
    event loop, and making the 200,000 records of a large assignment file held it for 0.2 s."""
    hit = _records.get(id(doc))
    if hit is not None and hit[0] is doc:
        return hit[1], hit[2]
    parts = sorted(
        (c for c in (doc.assignment_records, doc.used_values, doc.live_ranges) if len(c)), key=lambda c: c.line[0]
    )
    lines = array("I")
    keys: list[str] = []
    for c in parts:  # each column is in line order (read top to bottom); sections do not interleave
        lines.extend(c.line)
        keys.extend(c.key)
    if any(a.line[-1] >= b.line[0] for a, b in zip(parts, parts[1:])):  # they did after all: sort the pairs
        pairs = sorted(zip(lines, keys))
        lines, keys = array("I", [p[0] for p in pairs]), [p[1] for p in pairs]
    if len(_records) > 8:
        _records.clear()
    _records[id(doc)] = (doc, lines, keys)
    return lines, keys


def _buffer_hints(doc, lines, start, end, bs) -> list[InlayHint]:
    out: list[InlayHint] = []
    rec_lines, keys = _value_records(doc)
    for j in range(bisect.bisect_left(rec_lines, start), bisect.bisect_right(rec_lines, end)):
        ln, key = rec_lines[j], keys[j]
        v = bs.value(key)
        if v is None:
            continue
        h = _value_hint(ln, len(lines[ln].rstrip()), v)
        if h is not None:
            out.append(h)
    return out
