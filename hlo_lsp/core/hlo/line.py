"""Detail of one HLO instruction line, derived on demand (hover, definition, occurrences of that line).

`parse_instruction_line` returns the spans of the shape, the opcode, every operand name, every attribute and
every called computation, and the metadata fields. It walks the line once with a small depth-and-string-aware
scanner, so it is linear and never recursive; it never raises (an unreadable line gives None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hlo_lsp.core.hlo.text import (
    ATTR_KEY,
    CALL_ATTRS,
    COMMENT_INDEX,
    INSTR,
    find_close_paren,
    operand_name,
    scan_value_end,
    split_operands,
)
from hlo_lsp.core.memos import memo_table

_NAME_IN_LIST = re.compile(r"%?([^\s,{}%]+)")
# a key starts after a non-key character: finditer stays linear on a 100 KB run of letters without '='
_META_FIELD = re.compile(r'(?<![A-Za-z_])([A-Za-z_]+)=("(?:[^"\\]|\\.)*"|[^\s}]+)')


@dataclass(slots=True)
class Span:
    text: str
    start: int
    end: int


@dataclass(slots=True)
class Attribute:
    key: str
    key_start: int
    value: str
    value_start: int
    value_end: int


@dataclass(slots=True)
class InstructionLine:
    name: Span
    is_root: bool
    shape: Span | None  # None when the result shape is omitted (hand-written)
    opcode: Span
    operands: list[Span] = field(default_factory=list)  # operand names (without %), nested inline ones skipped
    operand_shapes: list[Span | None] = field(default_factory=list)  # old style `f32[4]{0} %x`: the written shape
    attributes: list[Attribute] = field(default_factory=list)
    called: list[Span] = field(default_factory=list)  # called computation names (without %)
    metadata: dict[str, Span] = field(default_factory=dict)  # op_name, stack_frame_id, source_file, ...

    def attribute(self, key: str) -> Attribute | None:
        """The first attribute named ``key``; None when absent."""
        for a in self.attributes:
            if a.key == key:
                return a
        return None


_LONG_LINE = 4096
_long_lines: dict[str, InstructionLine | None] = memo_table(
    {}
)  # the last few long lines parsed (a root tuple of 9,000)


def parse_instruction_line(line: str) -> InstructionLine | None:
    """Spans of everything on an instruction line; None when the line is no instruction. A long line's
    result is kept for the next few calls (a hover parses the line it is on more than once); the result is
    shared, so callers only read it."""
    if len(line) < _LONG_LINE:
        return _parse_line(line)
    if line in _long_lines:
        return _long_lines[line]
    got = _parse_line(line)
    if len(_long_lines) >= 8:
        _long_lines.clear()
    _long_lines[line] = got
    return got


def _parse_line(line: str) -> InstructionLine | None:
    m = INSTR.match(line)
    if m is None:
        return None
    name = Span(m.group(3), m.start(3), m.end(3))
    shape = Span(m.group(4), m.start(4), m.end(4)) if m.group(4) else None
    opcode = Span(m.group(5), m.start(5), m.end(5))
    out = InstructionLine(name, m.group(1) is not None, shape, opcode)
    open_pos = m.end() - 1
    close = find_close_paren(line, open_pos)
    seg_end = close if close >= 0 else len(line)
    seg = line[open_pos + 1 : seg_end]
    if opcode.text not in ("constant", "parameter") and seg.strip():
        clean = COMMENT_INDEX.sub(lambda mm: " " * len(mm.group()), seg)
        for a, b in split_operands(clean):
            item = clean[a:b]
            r = operand_name(item)
            if r is None:
                continue
            nm, off = r
            start = open_pos + 1 + a + off
            out.operands.append(Span(nm, start, start + len(nm)))
            written = item[:off].strip().rstrip("%").strip()
            if written:
                ws = open_pos + 1 + a + item.index(written)
                out.operand_shapes.append(Span(written, ws, ws + len(written)))
            else:
                out.operand_shapes.append(None)
    if close < 0:
        return out
    i = close + 1
    n = len(line)
    while i < n:
        km = ATTR_KEY.search(line, i)
        if km is None:
            break
        key = km.group(1)
        vstart = km.end()
        vend = scan_value_end(line, vstart)
        value = line[vstart:vend]
        out.attributes.append(Attribute(key, km.start(1), value, vstart, vend))
        if key in CALL_ATTRS:
            for cm in _NAME_IN_LIST.finditer(value):
                out.called.append(Span(cm.group(1), vstart + cm.start(1), vstart + cm.end(1)))
        elif key == "metadata" and value.startswith("{"):
            for fm in _META_FIELD.finditer(value, 1):
                raw = fm.group(2)
                s = vstart + fm.start(2)
                if raw.startswith('"'):
                    out.metadata[fm.group(1)] = Span(_unescape(raw[1:-1]), s + 1, s + len(raw) - 1)
                else:
                    out.metadata[fm.group(1)] = Span(raw, s, s + len(raw))
        i = vend + 1
    return out


def _unescape(s: str) -> str:
    """Undo the C escapes XLA writes in strings (``\\'``, ``\\"``, ``\\\\``, ``\\n``)."""
    if "\\" not in s:
        return s
    out = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)
