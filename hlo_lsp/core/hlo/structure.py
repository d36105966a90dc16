"""A module's structure from its column-0 lines: computation headers, closing braces, the metadata
tables, and which instructions each computation owns (by regex and bisection on machine-written text; line
by line otherwise, reporting lines it cannot read).
"""

from __future__ import annotations

import bisect
import re
import sys
from array import array
from itertools import accumulate, repeat
from operator import methodcaller, sub

from hlo_lsp.core.diagnostics import Range, error
from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.model import Computation, HloModule, TableRow
from hlo_lsp.core.hlo.names import NameIndex
from hlo_lsp.core.hlo.text import INSTR, TABLE_ROW, TABLES, TOP_LINE, computation_header
from hlo_lsp.core.process import pieces

# (never a line starting "HloModule": the module header, as the per-line reader takes it; the lookahead also spares
# a search the backtracking over a long module header line, 5 ms over the 23 MB module's 816 kB one)
_HEADER_LINE = re.compile(
    r"\n(?!HloModule)(ENTRY[ \t]+)?%?([^\s(%{=}/][^\s(%{=]*)(?![^\s(%{=])[ \t]*(?![ \t])([^\n]*)\{[ \t]*(?=\n|\Z)"
)


def read_structure(mod: HloModule, scan: str, offsets: list[int], instrs: InstructionTable, roots: list[int]) -> None:
    """Computations, tables and header from the column-0 lines. Machine-written text takes the bulk path
    (`_read_structure_bulk`: headers and closing braces found by regex and paired by bisection); anything it
    cannot vouch for takes the per-line path, which also places the errors."""
    if not _read_structure_bulk(mod, scan, offsets, instrs, roots):
        mod.computations.clear()
        mod.computation_by_name.clear()
        mod.tables.clear()
        mod.table_lines.clear()
        _read_structure_lines(mod, scan, offsets, instrs, roots)


# a closing line (a lone brace), the blank lines after it, and the next computation's header line: group 1 the
# header from its newline, groups 2-4 as `_HEADER_LINE`'s 1-3 (one pass over the text finds every header but the
# first, at the speed of a search for the literal "\n}": the header pattern tried at each of the 23 MB module's
# 300,000 newlines took 21 ms of the 60 before a part's rows could be read)
_CLOSE_THEN_HEADER = re.compile(r"\n\}[ \t]*(?:\n[ \t]*(?=\n))*(" + _HEADER_LINE.pattern + ")")


def lead(scan: str) -> int:
    """1 when ``scan`` is a text with a newline put before it (offsets in it are the text's plus one), 0 when it
    is the text itself, which `read.read_hlo` uses so only when its first line is the module header (a text
    beginning with a newline of its own is always given one more)."""
    return 1 if scan[:1] == "\n" else 0


def bulk_headers(mod: HloModule, scan: str, start: int = 0, end: int | None = None):
    """The first computation's header match (`_HEADER_LINE`), each later one's with the closing line before it
    (`_CLOSE_THEN_HEADER`), and the offsets of every closing line's newline, when the column-0 lines are the
    module header and tables (read into ``mod`` here), then computation headers and lone closing braces
    alternating with only blank lines between; None otherwise (``mod`` may then hold part of the prefix).
    (A line inside a computation that is a closing brace not followed by a header, or a header not after a
    closing brace, is one of its lines, which the readers of its lines refuse: not a row, not an instruction.)

    ``scan[start:end]`` alone is read when given: a part starting after the first computation (``start`` the
    newline ending a closing line) holds only blank lines before its first header (no module header), and one
    ending early ends with the newline after a closing brace, so the parts of a module all pass exactly when the
    whole does."""
    if end is None:
        end = len(scan)
    first = _HEADER_LINE.search(scan, start, end)
    if first is None:
        return None
    # one match at a time (a Python step each): ``list(finditer)`` over a 23 MB text was one C call holding the
    # GIL for 30-40 ms, which a background read of a buffer file's module made a hover wait for
    later = [m for m in _CLOSE_THEN_HEADER.finditer(scan, first.end(), end)]
    closes = [m.start() for m in later]
    last = scan.rfind("\n}", later[-1].end() if later else first.end(), end)  # the last computation's
    if last < 0:
        return None
    closes.append(last)
    eol = scan.find("\n", last + 1, end)
    if eol < 0:
        eol = end
    if scan[last + 1 : eol].rstrip() != "}" or (eol < end and not scan[eol:end].isspace()):
        return None
    h = first.start()
    if start:  # a later part: nothing but blank lines before its first computation
        return (first, later, closes) if h == start or scan[start:h].isspace() else None
    # the prefix before the first computation: module header and tables, read line by line (it is small; read with
    # a newline before it, as the per-line reader reads a text: ``scan`` may be the text itself, `lead`)
    _read_structure_lines(mod, scan[: h + 1] if lead(scan) else "\n" + scan[:h], [], [], [])
    if mod.computations or mod.diagnostics:
        return None
    return first, later, closes


def bulk_computations(
    mod: HloModule, scan: str, start: int = 0, end: int | None = None
) -> list[tuple[int, int]] | None:
    """`bulk_headers` (of ``scan[start:end]``), with each computation made and added to ``mod`` (name, lines,
    signature; the name interned: callers name the computations again): per computation the offsets in ``scan`` of
    the newline ending its header line and of its closing line's newline, between which its instruction lines are.
    None as `bulk_headers`. (A signature names its parameters, which XLA numbers across the module: the 23 MB
    benchmark module's 17,569 and the 100 MB synthetic module's 84,390 are all distinct, and interning them took
    34 ms of the latter's read, sharing nothing.)"""
    found = bulk_headers(mod, scan, start, end)
    if found is None:
        return None
    first, later, closes = found
    # (each step a C iteration: `map` over the methods and the counts; a Python loop step per computation took
    # 2 us of the 23 MB module's 15,000)
    heads = [first.start(), *map(_START_1, later)]
    names = [first.group(2), *map(_GROUP_3, later)]
    sigs = [first.group(3), *map(_GROUP_4, later)]
    name_cols = [first.start(2), *map(_START_3, later)]
    entries = [first.start(1) >= 0, *[e >= 0 for e in map(_START_2, later)]]
    count = scan.count
    after = [h + 1 for h in heads]
    closed = [c + 1 for c in closes]
    # the lines: the newlines of each computation's lines and of the blank lines after it, counted once, summed
    # from the first header's line (counted from the text's start): header, closing, next header, ...
    # (the computations' lines counted `COUNT_PIECE` computations at a time, giving way between: counted in one C
    # call, the 23 MB module's held the GIL 7-10 ms, and a background read of it met a hover on its buffer file)
    bodies: list = []
    for i in pieces.starts(0, len(after), COUNT_PIECE):
        bodies += map(count, repeat("\n"), after[i : i + COUNT_PIECE], closed[i : i + COUNT_PIECE])
    steps: list = [0] * (2 * len(heads) - 1)
    steps[0::2] = bodies
    steps[1::2] = map(count, repeat("\n"), closed[:-1], after[1:])
    at = list(accumulate(steps, initial=count("\n", 0, after[0]) - lead(scan)))
    lns, ends = at[0::2], at[1::2]
    intern = sys.intern
    names = list(map(intern, names))
    sigs = list(map(str.strip, sigs))
    comps = mod.computations
    by_comp = mod.computation_by_name
    k = len(comps)
    made = list(map(Computation, names, lns, map(sub, name_cols, after), entries, sigs, ends))
    for name in names:
        by_comp.setdefault(name, k)
        k += 1
    comps += made
    # (each header line ends where its match does: the pattern ends before the newline)
    return list(zip([first.end(), *map(_END, later)], closes))


COUNT_PIECE = 2048  # computations whose lines `bulk_computations` counts in one C call (1-2 MB of text, 0.5-1 ms)
_START_1, _START_2, _START_3 = methodcaller("start", 1), methodcaller("start", 2), methodcaller("start", 3)
_GROUP_3, _GROUP_4 = methodcaller("group", 3), methodcaller("group", 4)
_END = methodcaller("end")


def _read_structure_bulk(
    mod: HloModule, scan: str, offsets: list[int], instrs: InstructionTable, roots: list[int]
) -> bool:
    """The bulk path; returns False (having changed nothing that the per-line path does not reset) unless every
    column-0 line is the module header, a table line, a computation header or a closing brace, and headers and
    braces alternate."""
    spans = bulk_computations(mod, scan)
    if spans is None:
        return False
    r = 0
    n_roots = len(roots)
    for comp, (h, c) in zip(mod.computations, spans):
        lo = bisect.bisect_right(offsets, h)
        hi = bisect.bisect_left(offsets, c)
        comp.instructions = range(lo, hi)
        while r < n_roots and roots[r] < lo:
            r += 1
        while r < n_roots and roots[r] < hi:
            comp.root = roots[r]
            r += 1
        if comp.root is None and hi > lo:
            comp.root = hi - 1
        if comp.end_line - comp.line - 1 != hi - lo:
            return False  # blank, comment or unreadable lines inside: let the per-line path place them
    if sum(len(c.instructions) for c in mod.computations) != len(instrs):
        return False
    mod.instructions = instrs
    mod.by_name = NameIndex.first_of(instrs.names)
    return True


def _read_structure_lines(
    mod: HloModule, scan: str, offsets: list[int], instrs: InstructionTable | list, roots: list[int]
) -> None:
    """The per-line path: read the column-0 lines (header, tables, computation headers, braces) and give each
    computation its contiguous slice of the instruction array, reporting whatever does not fit."""
    top = _TopLines(mod)
    top.read(scan)
    kept, covered = _own_instructions(mod, top.spans, offsets, instrs, roots)
    if covered != len(instrs):
        inside = set(kept)
        for i in range(len(instrs)):
            if i not in inside:
                ins = instrs[i]
                mod.diagnostics.append(
                    error(ins.name_range, "syntax-error", f"instruction `{ins.name}` is outside any computation")
                )
    if isinstance(instrs, InstructionTable) and covered == len(instrs):
        mod.instructions = instrs  # every instruction kept, in order
    elif isinstance(instrs, InstructionTable):
        mod.instructions = InstructionTable(
            [instrs.names[i] for i in kept],
            array("i", [instrs.line_of[i] for i in kept]),
            array("i", [instrs.col_of[i] for i in kept]),
            bytearray([instrs.root_flags[i] for i in kept]),
            mod.lines,
        )
    else:
        mod.instructions = [instrs[i] for i in kept]
    kept_instructions = mod.instructions
    names = (
        kept_instructions.names
        if isinstance(kept_instructions, InstructionTable)
        else [x.name for x in kept_instructions]
    )
    mod.by_name = NameIndex.first_of(names)  # (the first definition of a repeated name wins)


class _TopLines:
    """The per-line path over the column-0 lines: the computation open (and where its header line starts in
    the scan), the table being read and the line its next row must be on; per computation, the offsets of its
    header and closing lines (``spans``)."""

    def __init__(self, mod: HloModule) -> None:
        self.mod = mod
        self.spans: list[tuple[int, int]] = []
        self.cur: Computation | None = None
        self.cur_off = 0
        self.table: dict[int, TableRow] | None = None
        self.table_next = -1

    def read(self, scan: str) -> None:
        ln = -1
        prev = 0
        for m in TOP_LINE.finditer(scan):
            off = m.start()
            ln += scan.count("\n", prev, off + 1)
            prev = off + 1
            self.line(ln, off, m.group(1))
        cur = self.cur
        if cur is not None:
            self._unclosed(cur, len(self.mod.lines) - 1)
            self.spans.append((self.cur_off, len(scan)))

    def _unclosed(self, cur: Computation, end_line: int) -> None:
        self.mod.diagnostics.append(
            error(cur.name_range, "unclosed-computation", f"computation `{cur.name}` has no closing `}}`")
        )
        cur.end_line = end_line

    def line(self, ln: int, off: int, line: str) -> None:
        if line.startswith("//"):
            return
        cur = self.cur
        if cur is not None:
            if line[0] == "}":
                cur.end_line = ln
                self.spans.append((self.cur_off, off))
                self.cur = None
                return
            if computation_header(line) is None:
                return  # an unindented instruction (scanned already) or an unreadable line (found below)
            self._unclosed(cur, ln - 1)
            self.spans.append((self.cur_off, off))
            self.cur = None
        if self.table is not None and ln == self.table_next:
            t = TABLE_ROW.match(line)
            if t:
                rid = int(t.group(1)) if len(t.group(1)) < 19 else -1
                self.table[rid] = TableRow(rid, ln, t.group(2), t.start(2))
                self.table_next = ln + 1
                return
        self.table = None
        self.outside(ln, off, line)

    def outside(self, ln: int, off: int, line: str) -> None:
        """A column-0 line outside any computation: the module header, a table's name, a computation header."""
        mod = self.mod
        if line.startswith("HloModule"):
            nm = re.match(r"\s+([^\s,]+)", line[9:])
            mod.name = nm.group(1) if nm else None
            mod.header_line = ln
            return
        stripped = line.strip()
        if stripped in TABLES:
            self.table = mod.tables.setdefault(stripped, {})
            mod.table_lines[stripped] = ln
            self.table_next = ln + 1
            return
        h = computation_header(line)
        if h is not None:
            self.cur = Computation(h[2], ln, h[1], h[0], h[3])
            self.cur_off = off
            mod.computation_by_name.setdefault(self.cur.name, len(mod.computations))
            mod.computations.append(self.cur)
            return
        if " = " not in line or not INSTR.match(line):
            mod.diagnostics.append(
                error(
                    Range(ln, 0, ln, len(line.rstrip())),
                    "syntax-error",
                    "unexpected text outside any computation: expected `HloModule`, a table, or a computation header",
                )
            )


def _own_instructions(
    mod: HloModule,
    spans: list[tuple[int, int]],
    offsets: list[int],
    instrs: InstructionTable | list,
    roots: list[int],
) -> tuple[list[int], int]:
    """Give each computation the scanned instructions between its header and its closing line, kept as indices
    into ``instrs``, so that a table stays a table (a module with one unreadable line must not turn 200,000
    instructions into objects: about 40 MB more for as long as the typo stays); report the lines inside that
    are no instruction. Returns the kept indices and how many instructions the computations cover (-1 when
    they leave gaps in the array)."""
    kept: list[int] = []
    line_at = instrs.line_of.__getitem__ if isinstance(instrs, InstructionTable) else (lambda i: instrs[i].line)
    covered = 0
    contiguous = True  # computations cover the instruction array without gaps (the normal case)
    for c, (a, b) in zip(mod.computations, spans):
        lo = bisect.bisect_right(offsets, a)
        hi = bisect.bisect_left(offsets, b)
        if lo != covered:
            contiguous = False
        base = len(kept)
        kept.extend(range(lo, hi))
        covered += hi - lo
        c.instructions = range(base, len(kept))
        r = bisect.bisect_left(roots, lo)
        while r < len(roots) and roots[r] < hi:
            c.root = base + roots[r] - lo  # the last ROOT wins; two are an error for the checks
            r += 1
        if c.root is None and c.instructions:
            c.root = c.instructions[-1]
        if c.end_line - c.line - 1 != len(c.instructions):
            _report_unread_lines(mod, c, {line_at(kept[i]) for i in c.instructions})
    return kept, (covered if contiguous else -1)


def _report_unread_lines(mod: HloModule, comp: Computation, have: set[int]) -> None:
    """Report the lines of a computation (``have``: its instructions' lines) that are neither instructions, blank
    lines nor comments."""
    for ln in range(comp.line + 1, min(comp.end_line + 1, len(mod.lines))):
        text = mod.lines[ln]
        s = text.strip()
        if ln in have or not s or s.startswith("//") or s == "}" or text[:1] == "}":
            continue
        col = len(text) - len(text.lstrip())
        mod.diagnostics.append(
            error(
                Range(ln, col, ln, len(text.rstrip())),
                "syntax-error",
                "cannot read this line as an instruction: expected `name = shape opcode(operands)`",
            )
        )
