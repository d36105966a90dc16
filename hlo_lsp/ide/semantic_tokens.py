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

Full requests on a long document (over `LIGHT_LINES` lines: a machine-written module of 200,000 instructions,
a buffer file of 100,000 values) get the names only (`document_tokens`), read from the document's arrays
without tokenizing a line: in HLO text every instruction, computation and the module where it is defined
(``declaration``); in buffer files every value, allocation and instruction name the reader records. That is
where colour adds what the editors' own grammars (shipped with both
plugins: opcodes, shapes, attributes, numbers) cannot tell: which name is defined here. Colouring every token of
such a file costs tens of seconds and tens of MB of JSON for what the grammar already shows; range requests
(the viewport) still get every token.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from itertools import chain, repeat
from operator import add, gt, mul, not_, sub
from typing import NamedTuple

from hlo_lsp.core import kinds
from hlo_lsp.core.hlo.instructions import name_columns
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.occurrences import occurrence_pairs
from hlo_lsp.core.process import pieces
from hlo_lsp.core.workspace import ReadError, Workspace

TOKEN_TYPES = [
    "namespace",
    "function",
    "variable",
    "parameter",
    "type",
    "keyword",
    "macro",
    "property",
    "string",
    "number",
    "comment",
    "enumMember",
]
TOKEN_MODIFIERS = ["declaration"]
_T = {t: i for i, t in enumerate(TOKEN_TYPES)}
DECL = 1
ROWS = "i"  # the typecode of packed token rows (`definition_rows`; `ide.token_reuse.TOKEN_ROWS`)

_HLO_WORDS = "HloModule|ENTRY|ROOT|FileNames|FunctionNames|FileLocations|StackFrames"
_BUFFER_WORDS = (
    r"BufferAssignment|allocation|value|size|offset|parameter|output shape is|maybe-live-out|thread-local|"
    r"preallocated-temp|constant|color|shape|at ShapeIndex|Total bytes used|Used values|positions|uses|operand|"
    r"from instruction|HloLiveRange|max|InstructionSequence|BufferLiveRange|Live ranges at|peak|bytes|cumulative|"
    r"Stack trace breakdown for peak usage|total|current|remaining|Memory space|Allocation"
)
_MODULE_NAME = re.compile(r"HloModule\s+([^\s,]+)")
_SIG_PARAM = re.compile(r"[(,]\s*(?:/\*[^*]*\*/)?%?([^\s:(),%]+):")
LIGHT_LINES = 20_000  # a full request on a longer document gets the definitions only (see above)
# A longer line gets only the tokens in its first MAX_LINE characters: VS Code draws nothing of a line past column
# 10,000 (`editor.stopRenderingLineAfter`) and its own tokenizer skips a line over 20,000 whole
# (`editor.maxTokenizationLineLength`); Neovim's syntax stops at column 3,000 (`synmaxcol`). The 23 MB benchmark
# module's first line (its module header, 812,781 characters) made the viewport at the top of the file, where an
# editor opens it, 7,182 tokens in 30 ms with 100,000; 1,292 in 3.6 ms with this (with the packing of ASCII lines).
MAX_LINE = 10_000


Tok5 = tuple[int, int, int, int, int]  # (line, start, end or length, type, modifiers)


class Token(NamedTuple):
    line: int
    start: int
    end: int
    type: int
    modifiers: int = 0


class _Line:
    """Accepted tokens of one line. Candidates are added in passes of falling priority (`add` queues one,
    `flush` ends a pass): a candidate overlapping an accepted token or an earlier candidate of its pass is
    dropped. Each pass is one sort and one linear merge, so a long line with many numbers stays linear-ish."""

    def __init__(self, line: int):
        self.line = line
        self.accepted: list[Token] = []
        self.pending: list[tuple[int, int, int, int]] = []

    def add(self, start: int, end: int, kind: str, mods: int = 0) -> None:
        if end > start and start < MAX_LINE:
            self.pending.append((start, end, _T[kind], mods))

    def flush(self) -> None:
        if not self.pending:
            return
        self.pending.sort(key=lambda c: c[0])
        self.accepted = _merged(self.line, self.accepted, self.pending)
        self.pending = []

    @property
    def tokens(self) -> list[Token]:
        self.flush()
        return self.accepted


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


def document_tokens(ws: Workspace, path: str) -> Sequence[Tok5]:
    """The tokens of a full request as (line, start, end, type, modifiers): every token of a document of at most
    `LIGHT_LINES` lines, the definitions only above that (`definition_tokens`); [] for a document we do not
    read."""
    try:
        a = ws.analysis(path)
    except ReadError:
        return []
    if len(a.lines) <= LIGHT_LINES:
        return semantic_tokens(ws, path)
    return definition_tokens(a)


def definition_tokens(a) -> list[Tok5]:
    """(line, start, end, type, modifiers) in document order: in HLO text where each name is defined (the module
    name, computations, instructions); in buffer files every name the reader records (values, allocations,
    instructions; the definitions with ``declaration``): the values and live-range files define nothing."""
    out: list[Tok5] = []
    if a.kind == kinds.HLO and a.hlo is not None:
        mod = a.hlo
        if mod.header_line is not None:
            m = _MODULE_NAME.search(a.lines[mod.header_line])
            if m:
                out.append((mod.header_line, m.start(1), m.end(1), _T["namespace"], DECL))
        names, line_of, col_of = name_columns(mod.instructions)
        fn, var = _T["function"], _T["variable"]
        append = out.append
        columns = _instruction_tokens(mod, names, line_of, col_of, var)
        for c in mod.computations:  # plain tuples (a Token each would double the time)
            if c.name_start < MAX_LINE:
                append((c.line, c.name_start, c.name_start + len(c.name), fn, DECL))
            if columns is not None:
                out += columns[c.instructions.start : c.instructions.stop]
                continue
            for i in c.instructions:
                s = col_of[i]
                if s < MAX_LINE:
                    append((line_of[i], s, s + len(names[i]), var, DECL))
    elif a.buffers is not None and a.index is not None and hasattr(a.index, "all_spans"):
        out = occurrence_tokens(a.index)
    if not _in_order(out):
        out.sort()  # a malformed document (an instruction outside its computation's lines)
    return out


def _instruction_tokens(mod, names, line_of, col_of, var: int) -> list[Tok5] | None:
    """Every instruction's definition token, in instruction order, made by C-level iterators a piece at a time
    (`process.pieces.PIECE`; the GIL is free between pieces): the 100 MB module's 640,000 tokens were a Python
    loop of 0.5 s. None when a computation's instructions are not a plain run of them or a name starts past
    `MAX_LINE` (then the loop makes them)."""
    rs = [c.instructions for c in mod.computations]
    if any(not isinstance(r, range) or r.step != 1 for r in rs) or pieces.largest(col_of) >= MAX_LINE:
        return None
    out: list[Tok5] = []
    step = pieces.PIECE
    for i in pieces.starts(0, len(names), step):  # (an answer's worker: the hovers and the viewport's requests first)
        cols = col_of[i : i + step]
        n = len(cols)
        out += zip(
            line_of[i : i + step], cols, map(add, cols, map(len, names[i : i + step])), repeat(var, n), repeat(DECL, n)
        )
    return out


def _in_order(tokens: Sequence[Tok5]) -> bool:
    """Each token before the next, tested a piece at a time by C-level iterators."""
    step = pieces.PIECE
    for i in pieces.starts(0, max(len(tokens) - 1, 0), step):
        if any(map(gt, tokens[i : i + step], tokens[i + 1 : i + step + 1])):
            return False
    return True


def definition_rows(a) -> array | None:
    """`definition_tokens` of a long document, packed five integers a token (`ide.token_reuse.token_rows`' form),
    made from the model's columns by C iterators and strided copies, with no tuple per token (the 23 MB module's
    217,000 tokens: 0.1 s as tuples, then as long again to encode and pack them); None when the columns cannot
    give them (a name past `MAX_LINE`, instructions outside a plain run per computation, a wide occurrence start):
    `definition_tokens` then makes them."""
    if a.kind == kinds.HLO and a.hlo is not None:
        return _module_rows(a)
    if a.buffers is not None and a.index is not None and hasattr(a.index, "columns"):
        return _occurrence_rows(a.index)
    return None


def _interleaved(columns: list[Sequence[int] | int], n: int) -> array:
    """``n`` tokens from their five columns (a column given as an int is that value for each), one token after
    another (`ROWS` rows), made a piece of `process.pieces.PIECE` tokens at a time by strided copies and added to
    the end (made whole first, zeroed, the 100 MB module's 12.8 MB were one C call of 3-8 ms)."""
    out = array(ROWS)
    row_bytes = out.itemsize * 5
    step = pieces.PIECE
    for i in pieces.starts(0, n, step):
        j = min(i + step, n)
        seg = array(ROWS, bytes(row_bytes * (j - i)))
        for k, col in enumerate(columns):
            seg[k::5] = array(ROWS, repeat(col, j - i)) if isinstance(col, int) else array(ROWS, col[i:j])
        out += seg
    return out


def _module_rows(a) -> array | None:
    mod = a.hlo
    names, line_of, col_of = name_columns(mod.instructions)
    comps = mod.computations
    if not isinstance(line_of, array) or pieces.largest(col_of) >= MAX_LINE:
        return None
    for c in comps:
        r = c.instructions
        if not isinstance(r, range) or r.step != 1 or c.name_start >= MAX_LINE:
            return None
    fn, var = _T["function"], _T["variable"]
    head: list[Tok5] = []
    if mod.header_line is not None:
        m = _MODULE_NAME.search(a.lines[mod.header_line])
        if m:
            head.append((mod.header_line, m.start(1), m.end(1), _T["namespace"], DECL))
    # every instruction's token, then each computation's header token put before its instructions
    n = len(names)
    step = pieces.PIECE
    ends = array(ROWS)
    for i in pieces.starts(0, n, step):
        ends.extend(map(add, col_of[i : i + step], map(len, names[i : i + step])))
    ins = _interleaved([line_of, col_of, ends, var, DECL], n)
    out = array(ROWS, chain.from_iterable(head))
    at = 0
    for c in comps:
        r = c.instructions
        if r.start != at:
            return None  # instructions outside every computation, or out of order: the tuples sort them
        out.extend((c.line, c.name_start, c.name_start + len(c.name), fn, DECL))
        out += ins[5 * r.start : 5 * r.stop]
        at = r.stop
    if at != n or not _rows_in_order(out):
        return None  # (a computation's header after an instruction, say: the tuples sort them)
    return out


def _rows_in_order(rows: array) -> bool:
    """Each token of ``rows`` before the next (by line, then start), tested a piece at a time."""
    step = pieces.PIECE
    n = len(rows) // 5
    for i in pieces.starts(0, max(n - 1, 0), step):
        part = rows[5 * i : 5 * min(i + step + 1, n)]
        cols = [part[k::5] for k in range(5)]
        if any(map(gt, zip(*cols), zip(*(c[1:] for c in cols)))):
            return False
    return True


def _occurrence_rows(index) -> array | None:
    cols = index.columns()
    if cols is None:
        return None
    lines, starts, ends, codes = cols
    if pieces.largest(starts) >= MAX_LINE:
        return None
    pairs = occurrence_pairs()
    types = bytes(_T[_OCC_TYPE.get(kind, "variable")] for kind, _role in pairs).ljust(256, b"\0")
    decl = bytes(DECL if role == "def" else 0 for _kind, role in pairs).ljust(256, b"\0")
    kinds_of, roles_of = array("B", codes.translate(types)), array("B", codes.translate(decl))  # (values, not bytes)
    return _interleaved([lines, starts, ends, kinds_of, roles_of], len(codes))


def encode_rows(rows: array, typecode: str) -> array:
    """`encode_spans` of tokens packed five integers each (`definition_rows`), by C iterators over strided copies
    of the columns, a piece at a time (`process.pieces.PIECE` tokens), each added to the end (`_interleaved`)."""
    n = len(rows) // 5
    out = array(typecode)
    size = array(typecode).itemsize
    prev_line = prev_start = 0
    step = pieces.PIECE
    for i in pieces.starts(0, n, step):
        part = rows[5 * i : 5 * min(i + step, n)]
        lines, starts = part[0::5], part[1::5]
        d_line = array(typecode, map(sub, lines, chain((prev_line,), lines)))
        d_start = array(typecode, map(sub, starts, map(mul, chain((prev_start,), starts), map(not_, d_line))))
        seg = array(typecode, bytes(size * len(part)))
        seg[0::5] = d_line
        seg[1::5] = d_start
        seg[2::5] = array(typecode, map(sub, part[2::5], starts))
        seg[3::5] = array(typecode, part[3::5])
        seg[4::5] = array(typecode, part[4::5])
        out += seg
        prev_line, prev_start = lines[-1], starts[-1]
    return out


def occurrence_tokens(index, lo: int = 0, hi: int | None = None) -> list[Tok5]:
    """The tokens of a buffer file's occurrences (of occurrences ``lo .. hi - 1``), one each but those starting
    past `MAX_LINE` (`definition_tokens`)."""
    types = {k: _T[v] for k, v in _OCC_TYPE.items()}
    var = _T["variable"]
    return [
        (ln, s, e, types.get(kind, var), DECL if is_def else 0)
        for ln, s, e, kind, is_def in index.all_spans(lo, hi)
        if s < MAX_LINE
    ]


def _combined(words: str) -> re.Pattern:
    """One alternation for everything that is not a name: comment, string, shape, word, attribute key, number.
    Every branch is linear (no nested quantifiers); the key's lookbehind pins it to the start of a word."""
    return re.compile(
        r"(?P<comment>/\*[^*\n]*\*/)|(?P<string>\"(?:[^\"\\\n]|\\.)*\")"
        r"|(?P<type>\b(?:pred|token|opaque|bf16|[suf]\d{1,2}|c64|c128|f[48]e\w+)\[[^\]\n]*\](?:\{[^}\n]*\})?)"
        rf"|(?P<macro>\b(?:{words})\b)|(?P<property>(?<![\w.\-])[A-Za-z_][\w.\-]*(?==))"
        r"|(?P<number>(?<![\w.])-?\d+(?!\w))"
    )


def _generic(acc: _Line, text: str, pattern: re.Pattern) -> None:
    """The pattern's tokens of ``text`` where no token of ``acc`` is (those win: names, spans), added to ``acc``.
    The matches come in order and never overlap: taken as they come, not queued and sorted one by one as
    `_Line.add` and `_Line.flush` do (the 23 MB module's buffer-assignment file opens on two lines of tuple shapes,
    137,000 and 184,000 characters: its first 80 lines' 3,488 tokens took 9 ms that way)."""
    acc.flush()  # the names and spans already queued win over everything below
    types = _T
    found = [(m.start(), m.end(), types[m.lastgroup], 0) for m in pattern.finditer(text) if m.lastgroup is not None]
    old = acc.accepted
    if not old:
        ln = acc.line
        acc.accepted = [Token(ln, start, end, typ) for start, end, typ, _ in found if end > start]
        return
    acc.accepted = _merged(acc.line, old, found)


def _merged(line: int, old: list[Token], candidates) -> list[Token]:
    """``old`` (tokens in order, none overlapping another) with every candidate ``(start, end, type, modifiers)``,
    taken in start order, that is not empty and overlaps neither a token of ``old`` nor a candidate taken before it
    (one linear merge: `_Line.flush`, `_generic`)."""
    merged: list[Token] = []
    i, n = 0, len(old)
    last_end = -1  # end of the last token placed in `merged`
    for start, end, typ, mods in candidates:
        while i < n and old[i].start < start:
            merged.append(old[i])
            last_end = old[i].end
            i += 1
        if end <= start or start < last_end or (i < n and old[i].start < end):
            continue
        merged.append(Token(line, start, end, typ, mods))
        last_end = end
    merged.extend(old[i:])
    return merged


_HLO_TOKENS = _combined(_HLO_WORDS)
_BUFFER_TOKENS = _combined(_BUFFER_WORDS)


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
            for sh in d.operand_shapes:
                if sh is not None:
                    acc.add(sh.start, sh.end, "type")
            for at in d.attributes:
                acc.add(at.key_start, at.key_start + len(at.key), "property")
            for _key, s in d.metadata.items():
                acc.add(s.start, s.end, "number" if s.text.isdigit() else "string")
    else:
        comp = mod.computation_at_line(ln)
        if comp is not None and comp.line == ln:
            acc.add(comp.name_start, comp.name_start + len(comp.name), "function", DECL)
            for m in _SIG_PARAM.finditer(text, comp.name_start + len(comp.name)):
                acc.add(m.start(1), m.end(1), "parameter", DECL)
        elif mod.header_line == ln:
            head = _MODULE_NAME.search(text)
            if head:
                acc.add(head.start(1), head.end(1), "namespace", DECL)
        else:
            for o in a.index.on_line(ln):
                acc.add(o.start, o.end, "number", DECL if o.role == "def" else 0)
    _generic(acc, text, _HLO_TOKENS)
    return acc.tokens


_OCC_TYPE = {"value": "variable", "instruction": "variable", "allocation": "enumMember", "computation": "function"}


def _buffer_line(a, ln: int, text: str) -> list[Token]:
    acc = _Line(ln)
    text = text[:MAX_LINE]
    for o in a.index.on_line(ln):
        acc.add(o.start, o.end, _OCC_TYPE.get(o.kind, "variable"), DECL if o.role == "def" else 0)
    _generic(acc, text, _BUFFER_TOKENS)
    return acc.tokens


def encode(tokens: Sequence[Tok5]) -> list[int]:
    """LSP's relative encoding of (line, start, length, type, modifiers) tuples already in wire columns."""
    data: list[int] = []
    prev_line = prev_start = 0
    for line, start, length, typ, mods in tokens:
        delta_line = line - prev_line
        delta_start = start - prev_start if delta_line == 0 else start
        data += [delta_line, delta_start, length, typ, mods]
        prev_line, prev_start = line, start
    return data


def encode_spans(tokens: Sequence[Tok5], typecode: str) -> array:
    """`encode` of (line, start, end, type, modifiers) tokens whose columns are wire columns already (an ASCII
    document), as an array, made by C-level iterators a piece at a time (`process.pieces.PIECE`): the length of
    each from its end, each line and start relative to the token before (the start only on the same line). The
    100 MB module's 640,000 tokens were two Python loops of 0.6 s."""
    out = array(typecode)
    prev_line = prev_start = 0
    step = pieces.PIECE
    for i in pieces.starts(0, len(tokens), step):
        lines, starts, ends, types, mods = zip(*tokens[i : i + step])
        d_line = list(map(sub, lines, chain((prev_line,), lines)))
        # start - the previous start on the same line, else start: the previous start times "same line"
        d_start = map(sub, starts, map(mul, chain((prev_start,), starts), map(not_, d_line)))
        out.extend(chain.from_iterable(zip(d_line, d_start, map(sub, ends, starts), types, mods)))
        prev_line, prev_start = lines[-1], starts[-1]
    return out
