"""Outline, folding ranges, document links and workspace symbols.

HLO text: module → computations → instructions. Buffer files: allocations → values; the ``Used values`` list;
the live-range sections (sequence, buffer live ranges, the peak list); the memory-usage report's tables.
Folding follows the same blocks. Peak-list names link to their definitions.

The outline is for a person to navigate, so it is bounded: a block (computation, allocation, section) lists at
most `OUTLINE_CHILDREN` entries and the whole outline at most `OUTLINE_BUDGET` children; what is left out is
one entry ``… N more instructions`` (or values) at the first line left out, and every name stays reachable by
workspace symbols (Go to Symbol in Workspace). Every block itself is listed up to `OUTLINE_BLOCKS` (then the
entry computation and one ``… N more computations`` entry). A module of 200,000
instructions in 17,000 computations thus gets every computation (what breadcrumbs need), the entry
computation's first `OUTLINE_CHILDREN` instructions (it takes the budget first), then the instructions of the
computations met first in the file; not 200,000 entries (57 MB of JSON, 20 s) that no outline view can show.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import chain, compress, repeat
from operator import contains, not_
from typing import NamedTuple

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.document import Lines
from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.process import pieces
from hlo_lsp.core.workspace import Analysis, ReadError, Workspace
from hlo_lsp.ide.context import instruction_definition, value_definition
from hlo_lsp.ide.oom import oom_links, oom_symbols
from hlo_lsp.ide.types import DocumentLink, FoldingRange, Location, Symbol, WorkspaceSymbol

MAX_WORKSPACE_SYMBOLS = 500
OUTLINE_CHILDREN = 500  # entries listed under one block of the outline
OUTLINE_BUDGET = 2_000  # entries listed under blocks, in the whole outline
OUTLINE_BLOCKS = 20_000  # computations (allocations) listed at most; the entry computation always is


def _line_range(lines: Lines, start: int, end: int) -> Range:
    end = min(max(end, start), len(lines) - 1)
    return Range(start, 0, end, len(lines[end]) if 0 <= end < len(lines) else 0)


class _Budget:
    """How many children the outline may still list (`OUTLINE_BUDGET`, at most `OUTLINE_CHILDREN` a block)."""

    def __init__(self, total: int, per_block: int):
        self.left = total
        self.per_block = per_block

    def take(self, n: int) -> int:
        k = max(0, min(n, self.per_block, self.left))
        self.left -= k
        return k


def outline_budget(total: int | None = None, per_block: int | None = None) -> _Budget:
    """What `document_symbols` lists under blocks at most (see the module docstring): `OUTLINE_BUDGET` and
    `OUTLINE_CHILDREN` unless given."""
    return _Budget(OUTLINE_BUDGET if total is None else total, OUTLINE_CHILDREN if per_block is None else per_block)


def _more(lines: Lines, n: int, what: str, first: int, last: int) -> Symbol:
    """The entry standing for ``n`` children left out of the outline, lines ``first..last``."""
    return Symbol(
        f"… {n:,} more {what}",
        "key",
        _line_range(lines, first, last),
        Range(first, 0, first, 0),
        "not listed here: Go to Symbol in Workspace finds each by name",
    )


def document_symbols(ws: Workspace, path: str, total: int | None = None, per_block: int | None = None) -> list[Symbol]:
    """The outline of ``path``, bounded as the module docstring says; [] when it cannot be read or is not ours."""
    try:
        a = ws.analysis(path)
    except ReadError:
        return []
    budget = outline_budget(total, per_block)
    if a.hlo is not None:
        return _hlo_symbols(a.hlo, budget)
    if a.buffers is not None:
        return _buffer_symbols(a, budget)
    if a.oom is not None:
        return oom_symbols(ws, path)
    return []


def _bounded(lines: Lines, items, budget: _Budget, make, what: str, line_of) -> list[Symbol]:
    """Children made by ``make(item)`` for as many of ``items`` (a sequence) as the budget allows, then one
    `_more` entry for the rest."""
    k = budget.take(len(items))
    out = [make(items[j]) for j in range(k)]
    if 0 < k < len(items):  # none listed: the block's detail gives the count instead (`_unlisted`)
        out.append(_more(lines, len(items) - k, what, line_of(items[k]), line_of(items[len(items) - 1])))
    return out


def _unlisted(detail: str, children: list[Symbol], n: int, what: str) -> str:
    """``detail`` plus ``N instructions`` when none of the block's ``n`` children made the outline."""
    if children or not n:
        return detail
    return (detail + " · " if detail else "") + f"{n:,} {what}"


def _hlo_symbols(mod: HloModule, budget: _Budget) -> list[Symbol]:
    lines = mod.lines
    comps = []
    table = mod.instructions

    def instruction(i: int) -> Symbol:
        ins = table[i] if not hasattr(table, "make") else table.make(i)
        return Symbol(
            ins.name,
            "variable",
            _line_range(lines, ins.line, ins.line),
            ins.name_range,
            ins.opcode + (" (ROOT)" if ins.is_root else ""),
        )

    line_of = (lambda i: table.line_of[i]) if hasattr(table, "line_of") else (lambda i: table[i].line)
    # the entry computation (the program, usually last in the file) takes its share of the budget first
    first = {
        id(c): _bounded(lines, c.instructions, budget, instruction, "instructions", line_of)
        for c in mod.computations
        if c.is_entry
    }
    listed = mod.computations
    if len(listed) > OUTLINE_BLOCKS:  # the first ones in the file and the entry computation
        listed = [c for k, c in enumerate(listed) if k < OUTLINE_BLOCKS or c.is_entry]
    for c in listed:
        children = (
            first[id(c)]
            if id(c) in first
            else _bounded(lines, c.instructions, budget, instruction, "instructions", line_of)
        )
        comps.append(
            Symbol(
                c.name,
                "function",
                _line_range(lines, c.line, c.end_line),
                c.name_range,
                _unlisted("ENTRY" if c.is_entry else "", children, len(c.instructions), "instructions"),
                children,
            )
        )
    if len(listed) < len(mod.computations):
        rest = [c for k, c in enumerate(mod.computations) if k >= OUTLINE_BLOCKS and not c.is_entry]
        comps.append(_more(lines, len(rest), "computations", rest[0].line, rest[-1].end_line))
        comps.sort(key=lambda x: x.range.start_line)
    if mod.header_line is not None and mod.name:
        start = mod.lines[mod.header_line].find(mod.name)
        sel = Range(mod.header_line, start, mod.header_line, start + len(mod.name))
        return [
            Symbol(mod.name, "module", _line_range(lines, mod.header_line, len(lines) - 1), sel, "HloModule", comps)
        ]
    return comps


class OutlineShape(NamedTuple):
    """What an HLO module's outline depends on besides the lines of the instructions it lists (`outline_kept`):
    the number of lines, the module's header line and name, and each computation's header line, closing line,
    number of instructions, name and whether it is the entry."""

    line_count: int
    header: tuple[int | None, str | None]
    starts: array
    ends: array
    sizes: array
    names: list[str]
    entries: bytes


MAX_KEPT_LINES = 1_000  # edited lines `outline_kept` looks at (more: the outline is made again)


def outline_shape(mod: HloModule) -> OutlineShape:
    """``mod``'s `OutlineShape` (a few ms for the 23 MB module's 17,570 computations)."""
    comps = mod.computations
    return OutlineShape(
        len(mod.lines),
        (mod.header_line, mod.name),
        array("i", [c.line for c in comps]),
        array("i", [c.end_line for c in comps]),
        array("i", [len(c.instructions) for c in comps]),
        [c.name for c in comps],
        bytes([c.is_entry for c in comps]),
    )


def outline_kept(mod: HloModule, before: OutlineShape, edits: Sequence[tuple[int, int, int]]) -> bool:
    """True when the outline of ``mod`` (`document_symbols`, default bounds) is the one made when the module had
    the shape ``before``, given the ``edits`` made to its text since, each (first line, lines replaced, lines
    put in): every edit kept its number of lines and changed only lines strictly inside computations that list
    no instruction in the outline (past the budget, or past `OUTLINE_BLOCKS`; never the entry), and the shape
    is the same now. Such a computation's entry shows its name, its line range (header to closing brace) and its
    number of instructions only, and every other entry stands on lines the edits left alone, so the outline's
    every entry and range are the same: an edit in the middle of a large module's text, the usual case, keeps
    it (the 23 MB module's outline is otherwise made again whole, 0.25 s of work, after each edit)."""
    if not edits or any(old != new for _, old, new in edits) or sum(n for _, n, _ in edits) > MAX_KEPT_LINES:
        return False
    now = outline_shape(mod)
    if now != before:
        return False
    unlisted = _first_unlisted(mod)
    starts, ends = now.starts, now.ends
    for first, count, _ in edits:
        for ln in range(first, first + count):
            k = bisect_right(starts, ln) - 1
            if k < unlisted or now.entries[k] or not starts[k] < ln < ends[k]:
                return False
    return True


def _first_unlisted(mod: HloModule) -> int:
    """The first computation from which on each computation but the entry lists no instruction in the outline
    (`_hlo_symbols`: the entry computations take the budget first, then the others in file order; past
    `OUTLINE_BLOCKS` a computation is not listed at all)."""
    budget = outline_budget()
    comps = mod.computations
    for c in comps:
        if c.is_entry:
            budget.take(len(c.instructions))
    for k, c in enumerate(comps):
        if k >= OUTLINE_BLOCKS or budget.left <= 0:
            return k
        if not c.is_entry:
            budget.take(len(c.instructions))
    return len(comps)


def _section(name: str, kind: str, lines: Lines, first: int, last: int, children: list[Symbol]) -> Symbol:
    return Symbol(
        name, kind, _line_range(lines, first, last), Range(first, 0, first, len(lines[first].rstrip())), "", children
    )


class AllocationEntry(NamedTuple):
    """An allocation's outline entry (`allocation_entries`), as the `Symbol` it stands for (`symbol`) holds it."""

    name: str
    line: int
    last_line: int  # the entry's range: ``line``, column 0 to ``last_line``, column ``last_end``
    last_end: int
    name_end: int  # the selection range: ``line``, column 0 to ``name_end``
    detail: str
    children: list[Symbol]

    def symbol(self) -> Symbol:
        ln = self.line
        return Symbol(
            self.name,
            "object",
            Range(ln, 0, self.last_line, self.last_end),
            Range(ln, 0, ln, self.name_end),
            self.detail,
            self.children,
        )


def allocation_entries(a: Analysis, budget: _Budget) -> list[AllocationEntry]:
    """The outline's entries of a buffer file's allocations (the first `OUTLINE_BLOCKS`), read from their
    columns: the benchmark's 23,576 allocations as `Symbol`s, then dicts, then JSON took 0.3 s; the server writes
    these tuples' JSON directly (`handlers_document`)."""
    doc = a.buffers
    if doc is None:
        return []
    lines = a.lines
    A = doc.allocations
    n = min(len(A), OUTLINE_BLOCKS)
    indexes, sizes, lasts, kinds = A.ints("number"), A.ints("size"), A.last_lines(), A.kinds
    end = len(lines) - 1
    out = []
    for i, ln, count, name_end in zip(range(n), A.line, A.values, A.name_end):
        kids = (
            _bounded(
                lines,
                A[i].assignments,
                budget,
                lambda x: Symbol(
                    x.name, "field", _line_range(lines, x.line, x.line), x.range, f"{x.size} bytes @ {x.offset}"
                ),
                "values",
                _by_line,
            )
            if count and budget.left
            else []
        )
        last = min(max(lasts[i], ln), end)
        detail = _unlisted(f"{sizes[i]} bytes, " + (", ".join(kinds(i)) or "temp"), kids, count, "values")
        last_end = len(lines[last]) if last >= 0 else 0
        out.append(AllocationEntry(f"allocation {indexes[i]}", ln, last, last_end, name_end, detail, kids))
    return out


def _by_line(x) -> int:
    return x.line


def _buffer_symbols(a: Analysis, budget: _Budget) -> list[Symbol]:
    """The outline of a buffer file: each allocation, then its sections."""
    return [e.symbol() for e in allocation_entries(a, budget)] + buffer_sections(a, budget)


def buffer_sections(a: Analysis, budget: _Budget, allocations: bool = True) -> list[Symbol]:
    """The outline of a buffer file after its allocations' entries (`allocation_entries`): the entry for the
    allocations past `OUTLINE_BLOCKS` (with ``allocations``; folding has its own for every allocation), then
    the file's sections."""
    doc = a.buffers
    if doc is None:
        return []
    lines = a.lines
    out: list[Symbol] = []
    by_line = _by_line
    if allocations and len(doc.allocations) > OUTLINE_BLOCKS:
        A = doc.allocations
        last = A.last_lines()[-1]
        out.append(_more(lines, len(A) - OUTLINE_BLOCKS, "allocations", A.line[OUTLINE_BLOCKS], last))
    if doc.used_values:
        kids = _bounded(
            lines,
            doc.used_values,
            budget,
            lambda u: Symbol(u.name, "field", _line_range(lines, u.line, u.last_line), u.range, f"id {u.value_id}"),
            "values",
            by_line,
        )
        out.append(
            _section(
                "Used values",
                "namespace",
                lines,
                max(0, doc.used_values[0].line - 1),
                doc.used_values[-1].last_line,
                kids,
            )
        )
    if doc.sequence:
        kids = _bounded(
            lines,
            doc.sequence,
            budget,
            lambda s: Symbol(f"{s.step}:{s.name}", "event", _line_range(lines, s.line, s.line), s.range),
            "steps",
            by_line,
        )
        out.append(
            _section("InstructionSequence", "namespace", lines, doc.sequence[0].line - 1, doc.sequence[-1].line, kids)
        )
    if doc.live_ranges:
        kids = _bounded(
            lines,
            doc.live_ranges,
            budget,
            lambda r: Symbol(f"{r.key}", "field", _line_range(lines, r.line, r.line), r.range, f"{r.start}-{r.end}"),
            "live ranges",
            by_line,
        )
        out.append(
            _section("BufferLiveRange", "namespace", lines, doc.live_ranges[0].line - 1, doc.live_ranges[-1].line, kids)
        )
    if doc.peak_step is not None and doc.peak_line is not None:
        kids = _bounded(
            lines,
            doc.peak_entries,
            budget,
            lambda p: Symbol(p.name, "field", _line_range(lines, p.line, p.line), p.range, f"{p.bytes} bytes"),
            "values",
            by_line,
        )
        last = doc.peak_entries[-1].line if doc.peak_entries else doc.peak_line
        out.append(_section(f"Live ranges at {doc.peak_step} (peak)", "namespace", lines, doc.peak_line, last, kids))
    if doc.stack_trace:
        first = doc.stack_trace[0].line
        out.append(
            _section("Stack trace breakdown", "namespace", lines, max(0, first - 1), doc.stack_trace[-1].line, [])
        )
    for t in doc.memory_report:
        last = t.rows[-1].line if t.rows else t.line
        out.append(_section(f"Memory space {t.memory_space} (color {t.color})", "namespace", lines, t.line, last, []))
    return out


def folding_ranges(ws: Workspace, path: str) -> list[FoldingRange]:
    """Foldable blocks (`folding_spans`) as `FoldingRange`s."""
    return [FoldingRange(s, e) for s, e in folding_spans(ws, path)]


def within_limit(spans: list[tuple[int, int]], limit: int | None) -> list[tuple[int, int]]:
    """At most ``limit`` of ``spans`` (sorted; each nested in the spans that contain its first line), in order:
    whole nesting levels from the outermost while they fit, then the longest blocks of the first level that does
    not (the earlier first among equal lengths), none deeper. An editor shows at most so many (VS Code's
    ``editor.foldingMaximumRegions``, 5000, sent as ``rangeLimit``) and, given more, keeps outer levels the same
    way, but in document order: of a module's 17,570 computations it folded the first 4,999 and not the entry
    computation at the end. Here the blocks a person would fold are the ones kept, and the answer is 0.2 MB
    instead of 0.9 MB (4.5 MB for the 100 MB module) for the editor to read and drop."""
    if limit is None or len(spans) <= limit:
        return spans
    levels: list[int] = []
    open_ends: list[int] = []  # the last lines of the spans that contain the current one
    for start, end in spans:
        while open_ends and open_ends[-1] < start:
            open_ends.pop()
        levels.append(len(open_ends))
        open_ends.append(end)
    counts: dict[int, int] = {}
    for lv in levels:
        counts[lv] = counts.get(lv, 0) + 1
    kept, cut = 0, max(counts) + 1
    for lv in sorted(counts):
        if kept + counts[lv] > limit:
            cut = lv
            break
        kept += counts[lv]
    at_cut = [k for k, lv in enumerate(levels) if lv == cut]
    chosen = set(_longest_first(at_cut, [spans[k][1] - spans[k][0] for k in at_cut], max(limit - kept, 0)))
    return [sp for k, (sp, lv) in enumerate(zip(spans, levels)) if lv < cut or k in chosen]


def _longest_first(ks: list[int], lengths: list[int], n: int) -> list[int]:
    """The first ``n`` of ``ks`` (ascending) ordered by their ``lengths``, longest first, then the earliest: every
    one longer than the length where the count reaches ``n``, and the earliest of those that long. Counted, not
    sorted or heaped: a sort of the 100 MB module's 84,000 computations was one C call holding the GIL for tens of
    ms, and a heap of the (length, index) pairs kept (`heapq.nsmallest`) 14 ms while a hover waited."""
    if n <= 0:
        return []
    if n >= len(ks):
        return list(ks)
    counts: Counter[int] = Counter()
    for i in range(0, len(lengths), pieces.PIECE):  # (one count of 84,000 lengths: 3-4.5 ms holding the GIL)
        counts.update(lengths[i : i + pieces.PIECE])
    need = n
    threshold = 0
    for length in sorted(counts, reverse=True):  # the distinct lengths: a few hundred
        if counts[length] >= need:
            threshold = length
            break
        need -= counts[length]
    out = []
    for k, length in zip(ks, lengths):
        if length > threshold:
            out.append(k)
        elif length == threshold and need > 0:
            out.append(k)
            need -= 1
    return out


def folding_spans(ws: Workspace, path: str) -> list[tuple[int, int]]:
    """Foldable blocks as (first line, last line), in order: every multi-line entry of the unbounded outline
    (computations, allocations, sections, used values), found without making the outline's entries where they
    cannot fold (one-line children) nor the allocations (read from their columns)."""
    out: list[tuple[int, int]] = []
    try:
        a = ws.analysis(path)
    except ReadError:
        return out
    lines = a.lines
    n = len(lines) - 1
    if a.hlo is not None:  # the module, its tables and its computations (instructions are one line each)
        stack = []
        if a.hlo.header_line is not None and a.hlo.name and n > a.hlo.header_line:
            out.append((a.hlo.header_line, n))
        # the tables (between the header and the computations in a dump) in their place: spans in order need no
        # sort (`_sorted_unique`; the 100 MB module's 84,000 sorted in one C call held the GIL 57 ms)
        for table, ln in sorted(a.hlo.table_lines.items(), key=lambda t: t[1]):
            rows = a.hlo.tables.get(table, {})
            if rows:
                out.append((ln, max(r.line for r in rows.values())))
        for c in a.hlo.computations:
            end = min(max(c.end_line, c.line), n)
            if end > c.line:
                out.append((c.line, end))
    elif a.buffers is not None:
        stack = [x for x in buffer_sections(a, outline_budget(0, 0), allocations=False) if x.kind != "key"]
        A = a.buffers.allocations  # every allocation, past the outline's OUTLINE_BLOCKS too
        out += [(first, min(last, n)) for first, last in zip(A.line, A.last_lines()) if min(last, n) > first]
        # the used values are the only multi-line children
        out += [(first, min(end, n)) for first, end in a.buffers.used_values.spans() if min(end, n) > first]
    elif a.oom is not None:  # the two lists and their entries
        stack = oom_symbols(ws, path)
    else:
        stack = []
    while stack:
        s = stack.pop()
        if s.range.end_line > s.range.start_line:
            out.append((s.range.start_line, s.range.end_line))
            stack.extend(c for c in s.children if c.kind != "key")  # not the `… N more` entries
    return _sorted_unique(out)


def _sorted_unique(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``sorted(set(spans))``, without the sort when they came in order (the blocks of a module or of a buffer
    file mostly do: one C-level sort of the 100 MB module's 84,000 held the GIL for tens of ms); the check is a
    loop, during which other threads get their turns."""
    prev = None
    for s in spans:
        if prev is not None and s <= prev:
            return sorted(set(spans))
        prev = s
    return spans


def document_links(ws: Workspace, path: str, later: bool = False) -> list[DocumentLink]:
    """Links from peak-list names (and an out-of-memory report's labels) to their definitions. With ``later``,
    a buffer file's peak-list links come from its own text, each with no target but its entry's ``index``
    (`resolve_link` finds the target when the editor asks: the definitions are in its module's files, which
    may still be being read)."""
    links = oom_links(ws, path)
    if links:
        return links
    if later:
        try:
            doc = ws.analysis(path).buffers
        except ReadError:
            return []
        if doc is None:
            return []
        return [DocumentLink(p.range, None, f"definition of {p.name}", i) for i, p in enumerate(doc.peak_entries)]
    found = ws.module(path)
    if found is None:
        return []
    a, bundle = found
    doc = a.buffers
    if doc is None:
        return []
    out = []
    for p in doc.peak_entries:
        loc = _peak_definition(bundle, p)
        if loc is not None:
            out.append(DocumentLink(p.range, loc, f"definition of {p.name}"))
    return out


def _peak_definition(bundle, p) -> Location | None:
    loc = value_definition(bundle, p.key) if p.key else None
    return loc or instruction_definition(bundle, p.instruction)


def resolve_link(ws: Workspace, path: str, index: int) -> DocumentLink | None:
    """The link of peak-list entry ``index`` of ``path`` with its target (`document_links` with ``later``);
    None when the entry or its definition is not found."""
    found = ws.module(path)
    if found is None:
        return None
    a, bundle = found
    doc = a.buffers
    if doc is None or not 0 <= index < len(doc.peak_entries):
        return None
    p = doc.peak_entries[index]
    loc = _peak_definition(bundle, p)
    return DocumentLink(p.range, loc, f"definition of {p.name}", index) if loc is not None else None


def workspace_symbols(ws: Workspace, query: str, paths: list[str]) -> list[WorkspaceSymbol]:
    """Computations, instructions and allocations whose name contains ``query`` (case-insensitive) in ``paths``
    and their siblings, best matches (prefix, then shortest) first, then in document order; at most
    MAX_WORKSPACE_SYMBOLS. Each match is ranked from its module's columns by C iteration, and only the best become
    symbols: an `Instruction` made for each of the 23 MB module's 200,000 names took 0.12-1.3 s a query."""
    q = query.lower()
    docs: list[Analysis] = []
    seen_paths: set[str] = set()
    for p in paths:
        try:
            bundle_docs = ws.bundle(p).documents()
        except ReadError:
            continue
        for a in bundle_docs:
            if a.path not in seen_paths:
                seen_paths.add(a.path)
                docs.append(a)
    # (rank, length, name, document, line, which symbol of the document): never equal up to the line
    ranked = chain.from_iterable(_ranked(a, q, seq) for seq, a in enumerate(docs))
    return [
        _workspace_symbol(docs[seq], name, which)
        for _, _, name, seq, _, which in heapq.nsmallest(MAX_WORKSPACE_SYMBOLS, ranked)
    ]


def _ranked(a: Analysis, q: str, seq: int) -> Iterator[tuple[int, int, str, int, int, int]]:
    """The symbols of ``a`` (document ``seq``) whose lower-cased name holds ``q``, as `workspace_symbols` ranks
    them; which symbol: an instruction's index, ``-1 - k`` for computation ``k``, ``k`` for allocation ``k``."""
    if a.hlo is not None:
        mod = a.hlo
        comps = mod.computations
        for k, c in enumerate(comps):
            low = c.name.lower()
            if q in low:
                yield (0 if low.startswith(q) else 1), len(c.name), c.name, seq, c.line, -1 - k
        t = mod.instructions
        inside = _in_computations(mod)
        if isinstance(t, InstructionTable):
            names, line_of = t.names, t.line_of
            low_names = list(map(str.lower, names))
            hits = list(compress(range(len(names)), map(contains, low_names, repeat(q))))
            if inside is not None:
                hits = [i for i in hits if i in inside]
            matched = list(map(names.__getitem__, hits))
            prefix = map(str.startswith, map(low_names.__getitem__, hits), repeat(q))
            yield from zip(
                map(int, map(not_, prefix)),
                map(len, matched),
                matched,
                repeat(seq),
                map(line_of.__getitem__, hits),
                hits,
            )
            return
        for i, ins in enumerate(t):
            low = ins.name.lower()
            if q in low and (inside is None or i in inside):
                yield (0 if low.startswith(q) else 1), len(ins.name), ins.name, seq, ins.line, i
    elif a.buffers is not None:
        for k, al in enumerate(a.buffers.allocations):
            name = f"allocation {al.index}"
            if q in name:
                yield (0 if name.startswith(q) else 1), len(name), name, seq, al.range.start_line, k


def _in_computations(mod: HloModule) -> set[int] | None:
    """The instructions inside a computation, when some are not (a module with lines outside every block); None
    when every one is (as in every module XLA writes)."""
    if sum(len(c.instructions) for c in mod.computations) == len(mod.instructions):
        return None
    return {i for c in mod.computations for i in c.instructions}


def _workspace_symbol(a: Analysis, name: str, which: int) -> WorkspaceSymbol:
    """`_ranked`'s symbol ``which`` of ``a``, named ``name``."""
    if a.hlo is None:
        assert a.buffers is not None
        return WorkspaceSymbol(name, "object", Location(a.path, a.buffers.allocations[which].range), "")
    mod = a.hlo
    if which < 0:
        c = mod.computations[-1 - which]
        return WorkspaceSymbol(name, "function", Location(a.path, c.name_range), mod.name or "")
    ins = mod.make_instruction(which)
    comp = mod.computation_of(ins)
    return WorkspaceSymbol(name, "variable", Location(a.path, ins.name_range), comp.name if comp else "")
