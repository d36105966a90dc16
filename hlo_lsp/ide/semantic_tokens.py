"""Semantic tokens for HLO text and buffer-assignment files, so every client colours them alike.

Legend (`TOKEN_TYPES`): computations are ``function``; instructions, values and parameters ``variable``;
opcodes ``keyword``; structural words (``HloModule``, ``ENTRY``, ``ROOT``, section headers, allocation flags)
``macro``; shapes ``type``; attribute names ``property``; strings ``string``; sizes, offsets, steps and table ids
``number``; ``/*index=N*/`` ``comment``; allocations ``enumMember``; the module name ``namespace``. A defining
occurrence carries the ``declaration`` modifier.

Algorithm: each line is tokenized on its own (instruction lines from `parse_instruction_line`, names from the
document's occurrence index, the rest from small linear regexes), candidates are taken in priority order (names,
then shapes, then words, then numbers) and a candidate overlapping an accepted token is dropped. Tokens never
span lines. A range request tokenizes only its lines.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from hlo_lsp.core import kinds
from hlo_lsp.core.hlo_line import parse_instruction_line
from hlo_lsp.core.workspace import ReadError, Workspace

TOKEN_TYPES = ["namespace", "function", "variable", "parameter", "type", "keyword", "macro", "property", "string",
               "number", "comment", "enumMember"]
TOKEN_MODIFIERS = ["declaration"]
_T = {t: i for i, t in enumerate(TOKEN_TYPES)}
DECL = 1

_SHAPE = re.compile(r"\b(?:pred|token|opaque|bf16|[suf]\d{1,2}|c64|c128|f[48]e\w+)\[[^\]\n]*\](?:\{[^}\n]*\})?")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?![\w])")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_COMMENT = re.compile(r"/\*[^*\n]*\*/")
_ATTR_KEY = re.compile(r"([A-Za-z_][\w.\-]*)=")
_HLO_WORDS = re.compile(r"\b(HloModule|ENTRY|ROOT|FileNames|FunctionNames|FileLocations|StackFrames)\b")
_BUFFER_WORDS = re.compile(
    r"\b(BufferAssignment|allocation|value|size|offset|parameter|output shape is|maybe-live-out|thread-local|"
    r"preallocated-temp|constant|color|shape|at ShapeIndex|Total bytes used|Used values|positions|uses|operand|"
    r"from instruction|HloLiveRange|max|InstructionSequence|BufferLiveRange|Live ranges at|peak|bytes|cumulative|"
    r"Stack trace breakdown for peak usage|total|current|remaining|Memory space|Allocation)\b")
_MODULE_NAME = re.compile(r"HloModule\s+([^\s,]+)")
_SIG_PARAM = re.compile(r"[(,]\s*(?:/\*[^*]*\*/)?%?([^\s:(),%]+):")
MAX_LINE = 100_000  # a longer line gets only the tokens in its first MAX_LINE characters


@dataclass(frozen=True, slots=True)
class Token:
    line: int
    start: int
    end: int
    type: int
    modifiers: int = 0


class _Line:
    """Accepted tokens of one line; `add` refuses a token that overlaps one already accepted."""

    def __init__(self, line: int):
        self.line = line
        self.starts: list[int] = []
        self.tokens: list[Token] = []

    def add(self, start: int, end: int, kind: str, mods: int = 0) -> None:
        if end <= start or start >= MAX_LINE:
            return
        i = bisect.bisect_right(self.starts, start)
        if i > 0 and self.tokens[i - 1].end > start:
            return
        if i < len(self.tokens) and self.tokens[i].start < end:
            return
        self.starts.insert(i, start)
        self.tokens.insert(i, Token(self.line, start, end, _T[kind], mods))


def semantic_tokens(ws: Workspace, path: str, start_line: int = 0, end_line: int | None = None) -> list[Token]:
    """Tokens of lines ``start_line..end_line`` (inclusive; all lines when None), in document order; [] for a
    document we do not read."""
    try:
        a = ws.analysis(path)
    except ReadError:
        return []
    lines = a.lines
    end = len(lines) - 1 if end_line is None else min(end_line, len(lines) - 1)
    out: list[Token] = []
    if a.kind == kinds.HLO and a.hlo is not None:
        for ln in range(max(0, start_line), end + 1):
            out += _hlo_line(a, ln, lines[ln])
    elif a.buffers is not None and a.index is not None:
        for ln in range(max(0, start_line), end + 1):
            out += _buffer_line(a, ln, lines[ln])
    return out


def _generic(acc: _Line, text: str, words: re.Pattern) -> None:
    for m in _COMMENT.finditer(text):
        acc.add(m.start(), m.end(), "comment")
    for m in _STRING.finditer(text):
        acc.add(m.start(), m.end(), "string")
    for m in _SHAPE.finditer(text):
        acc.add(m.start(), m.end(), "type")
    for m in words.finditer(text):
        acc.add(m.start(), m.end(), "macro")
    for m in _ATTR_KEY.finditer(text):
        acc.add(m.start(1), m.end(1), "property")
    for m in _NUMBER.finditer(text):
        acc.add(m.start(), m.end(), "number")


def _hlo_line(a, ln: int, text: str) -> list[Token]:
    acc = _Line(ln)
    text = text[:MAX_LINE]
    mod = a.hlo
    ins = mod.instruction_at_line(ln)
    if ins is not None:
        d = parse_instruction_line(text)
        if d is not None:
            acc.add(d.name.start, d.name.end, "variable", DECL)
            for s in d.operands:
                acc.add(s.start, s.end, "variable")
            for s in d.called:
                acc.add(s.start, s.end, "function")
            acc.add(d.opcode.start, d.opcode.end, "keyword")
            if d.shape is not None:
                acc.add(d.shape.start, d.shape.end, "type")
            for s in d.operand_shapes:
                if s is not None:
                    acc.add(s.start, s.end, "type")
            for at in d.attributes:
                acc.add(at.key_start, at.key_start + len(at.key), "property")
            for key, s in d.metadata.items():
                acc.add(s.start, s.end, "number" if s.text.isdigit() else "string")
    else:
        comp = mod.computation_at_line(ln)
        if comp is not None and comp.line == ln:
            acc.add(comp.name_start, comp.name_start + len(comp.name), "function", DECL)
            for m in _SIG_PARAM.finditer(text, comp.name_start + len(comp.name)):
                acc.add(m.start(1), m.end(1), "parameter", DECL)
        elif mod.header_line == ln:
            m = _MODULE_NAME.search(text)
            if m:
                acc.add(m.start(1), m.end(1), "namespace", DECL)
        else:
            for o in a.index.on_line(ln):
                acc.add(o.start, o.end, "number", DECL if o.role == "def" else 0)
    _generic(acc, text, _HLO_WORDS)
    return acc.tokens


_OCC_TYPE = {"value": "variable", "instruction": "variable", "allocation": "enumMember", "computation": "function"}


def _buffer_line(a, ln: int, text: str) -> list[Token]:
    acc = _Line(ln)
    text = text[:MAX_LINE]
    for o in a.index.on_line(ln):
        acc.add(o.start, o.end, _OCC_TYPE.get(o.kind, "variable"), DECL if o.role == "def" else 0)
    _generic(acc, text, _BUFFER_WORDS)
    return acc.tokens


def encode(tokens: list[tuple[int, int, int, int, int]]) -> list[int]:
    """LSP's relative encoding of (line, start, length, type, modifiers) tuples already in wire columns."""
    data: list[int] = []
    prev_line = prev_start = 0
    for line, start, length, typ, mods in tokens:
        delta_line = line - prev_line
        delta_start = start - prev_start if delta_line == 0 else start
        data += [delta_line, delta_start, length, typ, mods]
        prev_line, prev_start = line, start
    return data
