"""Reader for XLA's buffer-assignment dumps: the old single file and each file of the current split set.

Algorithm: one pass over the lines with a small section state machine. A line's first characters pick the
handler (top-level headers start in column 0, allocation values with `` value:``, used-value parts with one
space, list items with two or four spaces), and each handler is one precompiled, anchored regex without
nested quantifiers, so a line costs O(its length) and a garbled line can never make the reader backtrack.
Any line no handler accepts becomes an error `Diagnostic` over that line's text and reading goes on with the
next line; an unexpected exception inside a handler is caught the same way, so `read_buffers` never raises.

Sections (all files use the same machinery, so the old single file is just all sections in one document):
``BufferAssignment:`` + ``allocation N: ...:`` + `` value: ...`` (the `-buffer-assignment.txt` listing),
``Total bytes used:`` + ``Used values:`` + ``<id name @c>`` blocks (`-buffer-assignment-values.txt`),
``HloLiveRange (max N):`` with ``InstructionSequence:``, ``BufferLiveRange:``, ``Live ranges at N (peak):``
and the ``Stack trace breakdown`` tree (`-live-range.txt`), and ``Memory Space:`` + tables
(`-memory-usage-report.txt`). Formats follow xla/service/buffer_assignment.cc, hlo_value.cc and
hlo_live_range.cc, checked against the seeds and the jax-cpu corpus.
"""

from __future__ import annotations

import gc
import re
import sys

from hlo_lsp.core.buffers.columns import NONE, shape_index
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.records import Allocation, MemoryRow, MemoryTable, StackNode
from hlo_lsp.core.buffers.text import FROM, HEADER, INDEX, NAME, POSITION, USE, parse_index
from hlo_lsp.core.diagnostics import Diagnostic, Range, Severity, error, info
from hlo_lsp.core.document import TextLines
from hlo_lsp.core.kinds import SPLIT_SUFFIXES
from hlo_lsp.core.occurrences import COL_BITS
from hlo_lsp.core.occurrences import pair_code as occ_pair_code
from hlo_lsp.core.shapes import human_size

_ALLOC = re.compile(r"allocation (\d+): (?:(0x[0-9a-fA-F]+|\(nil\)), )?size (\d+)")
# The whole header in XLA's fixed property order (BufferAllocation::ToShortString); other orders and errors
# go through the property scanner in `_Reader.allocation`.
_ALLOC_FULL = re.compile(
    r"allocation (\d+): (?:(0x[0-9a-fA-F]+|\(nil\)), )?size (\d+)(?:, color (\d+))?"
    r"(?:, parameter (\d+)(?:, shape \|([^|]*)\|)?(?: at ShapeIndex \{([0-9,]*)\})?)?"
    r"(?:, output shape is \|([^|]*)\|)?(, constant)?(, thread-local)?(, maybe-live-out)?(, preallocated-temp)?:\Z"
)
_VALUE = re.compile(rf" value: <(\d+) ({NAME})({INDEX})?( \(phi\))?(?: @(\d+))?> \(size=(\d+),offset=(\d+)\): (\S.*)\Z")
_TOTAL = re.compile(r"Total bytes used: (\d+) \(([^()]*)\)\Z")
# A whole used value as XLA writes it (header, positions, uses, `from instruction:`), matched in the text at the
# header's offset: such a block is read in one step (`_Reader.used_block`); any other form goes line by line.
_BLOCK = re.compile(
    rf"<(\d+) ({NAME})({INDEX})?( \(phi\))?(?: @(\d+))?>\n"
    rf" positions:\n((?:  {NAME}(?: {INDEX})?\n)+)"
    rf" uses:\n((?:  {NAME}, operand \d+(?: {INDEX})?\n)+|  \(none\)\n)"
    rf" from instruction: ?%?({NAME})(?![^\s{{}}<>:,=()])[^\n]*\n"  # the name ends where it ends: linear
)
_LR_HEADER = re.compile(r"HloLiveRange \(max (-?\d+)\):\Z")
_SEQ = re.compile(rf"    (\d+):({NAME})\Z")
_LR = re.compile(rf"    ({NAME})({INDEX})?:(-?\d+)-(-?\d+)\Z")
_PEAK_HEADER = re.compile(r"  Live ranges at (-?\d+) \(peak\):\Z")
_PEAK = re.compile(rf"    ({NAME})({INDEX})?: (\d+) bytes(?: \(cumulative: (\d+) bytes\))?\Z")
_STACK_HEADER = re.compile(r"  Stack trace breakdown for peak usage: ([\d ]+) bytes\Z")
_STACK_TAIL = re.compile(
    r" \((\d+(?:\.\d+)?)%, total: ([\d ]+) bytes, current: ([\d ]+) bytes, remaining: ([\d ]+) bytes\)\Z"
)
_MEM_SPACE = re.compile(r"Memory Space: ([^()]*) \(color=(\d+)\)\Z")
_MEM_TOTAL = re.compile(r"Total bytes: (\d+) \(([^()]*)\)\Z")
_MEM_HEADER = re.compile(r"\s*cumulative_size;\s+size;\s+offset;\s+used_by_n_values;\s+shapes_list\Z")
_MEM_CUM = re.compile(r"\s*([0-9.]+[KMGTPE]?i?B)\(\s*(\d+)%\)\Z")
_MEM_SIZE = re.compile(r"\s*([0-9.]+[KMGTPE]?i?B)\Z")
_MEM_INT = re.compile(r"\s*(\d+)\Z")
_MEM_OLD_ROW = re.compile(
    r"\s*[0-9.]+[KMGTPE]?i?B\(\s*\d+%\);\s*-?[0-9.]+[KMGTPE]?i?B; allocation \d+: size [0-9.]+[KMGTPE]?i?B.*:\Z"
)
_MEM_OLD_ALLOC = re.compile(r"allocation (\d+): size [0-9.]+[KMGTPE]?i?B.*:\Z")
_MEM_OLD_COLOR = re.compile(r", color (\d+)")
_MEM_REST = re.compile(r"\s*The rest \d+ (?:values|allocations) are less than")
_TREE_CHARS = " │├└─"
_new = tuple.__new__  # builds NamedTuples without their Python-level __new__ (hot path)
_intern = sys.intern  # names, keys and shapes repeat across a module's files: one string each

CODE_SYNTAX = "buffers.syntax"
CODE_STRUCTURE = "buffers.structure"
CODE_TOTAL = "buffers.total"
CODE_INTERNAL = "buffers.internal"


def _value_names(instr: str, itext: str | None) -> tuple[str, str | None, str]:
    """A value's instruction name, index text and key (``name{1,0}``, or ``name{}`` without an index), each
    interned (names and keys repeat across a module's files); raises ValueError for a malformed index text, as
    the reader's parse of it does."""
    if itext is not None:
        shape_index(itext)
        itext = _intern(itext)
    instr = _intern(instr)
    return instr, itext, _intern(instr + itext if itext is not None else instr + "{}")


def _spaced_int(text: str) -> int:
    return int(text.replace(" ", ""))


class _Reader:
    def __init__(self, text: str | TextLines, kind_hint: str | None):
        self.text_lines = text if isinstance(text, TextLines) else TextLines(text)
        self.lines = self.text_lines.split()  # transient: the records keep line numbers, not line strings
        self.text_lines_list = self.lines
        self.doc = BufferDoc(kind=kind_hint or "")
        self.doc.used_values.text = self.text_lines
        self.section: str | None = None  # alloc | used | seq | lr | peak | stack | mem | lr-none
        self.sub: str | None = None  # positions | uses (inside a used value)
        self.alloc: Allocation | None = None
        self.value: int | None = None  # the number of the used value being read, in doc.used_values
        self.table: MemoryTable | None = None
        self.space: tuple[int, str, int | None] | None = None
        self.stack_parents: list[int] = []
        self.saw = set()
        # After a block header that cannot be read, its indented lines are skipped silently (one error, not one
        # per line); `mark` is the diagnostic count when the current block began, so structural checks only
        # speak up for blocks whose lines all read cleanly.
        self.skipping = False
        self.mark = 0
        self.lr_parts: set[str] = set()
        self.pending_old_table = False
        occ = self.doc.occurrences
        self.instruction_use = occ.adder("instruction", "use")
        self.value_def = occ.adder("value", "def")
        self.value_use = occ.adder("value", "use")
        self.allocation_def = occ.adder("allocation", "def")

    # ------------------------------------------------------------------ diagnostics
    def err(self, ln: int, start: int, end: int, message: str, code: str = CODE_SYNTAX) -> None:
        line = self.lines[ln].rstrip("\r")
        end = max(min(end, len(line)), 0)
        start = min(start, end)
        if start == end and line:
            start, end = 0, len(line)
        self.doc.diagnostics.append(error(Range(ln, start, ln, end), code, message))

    def bad_line(self, ln: int, line: str, what: str) -> None:
        stripped = len(line) - len(line.lstrip(" "))
        self.err(ln, stripped, len(line), f"unrecognised line: expected {what}")

    # ------------------------------------------------------------------ driver
    def run(self) -> BufferDoc:
        doc = self.doc
        lines = self.lines
        if "\r" in self.text_lines.text:
            lines = self.lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        instruction_use = self.instruction_use
        value_use = self.value_use
        intern = _intern
        pos_match = POSITION.match
        use_match = USE.match
        header_match = HEADER.match
        value_match = _VALUE.match
        seq_match = _SEQ.match
        lr_match = _LR.match
        peak_match = _PEAK.match
        from_match = FROM.match
        add_peak = doc.peak_entries.add
        used = doc.used_values
        add_used = used.add
        add_assignment = doc.assignment_records.add
        add_step = doc.sequence.add
        add_live = doc.live_ranges.add
        # the occurrence table's columns, for the most frequent lines (what `instruction_use` appends)
        occ = doc.occurrences
        occ_pos, occ_end, occ_code, occ_key = occ._pos.append, occ._end.append, occ._code.append, occ._keys.append
        use_code = occ_pair_code("instruction", "use")
        col_bits = COL_BITS
        # whole used-value blocks are read from the text itself (offsets from its line table) when it has no \r
        block_text = None if lines is not self.text_lines_list else self.text_lines.text
        cum = self.text_lines._cum
        skip = 0  # lines before this one were read as part of a block
        for ln, line in enumerate(lines):
            if ln < skip or not line:
                continue
            try:
                # Fast paths for the lines that make up nearly all of a large file: the items under a used
                # value's `positions:`/`uses:`, the value headers and value lines, the schedule and the live
                # ranges. Anything else (and any line a fast path does not accept) goes to the full handlers.
                c = line[0]
                if c == " ":
                    section = self.section
                    if section == "used":
                        v = self.value
                        if v is not None and line[1] == " ":
                            sub = self.sub
                            # the items themselves are read again when asked for (`used_value_block`)
                            if sub == "positions":
                                m = pos_match(line)
                                if m is not None:
                                    name, itext = m.group(1, 2)
                                    if itext:
                                        shape_index(itext)  # a bad index is reported here, as reading it would
                                    occ_pos((ln << col_bits) | 2)  # instruction_use(ln, 2, end, name), written out
                                    occ_end(m.end(1))
                                    occ_code(use_code)
                                    occ_key(intern(name))
                                    continue
                            elif sub == "uses" and line != "  (none)":
                                m = use_match(line)
                                if m is not None:
                                    name, opnd, itext = m.group(1, 2, 3)
                                    int(opnd)
                                    if itext:
                                        shape_index(itext)
                                    occ_pos((ln << col_bits) | 2)
                                    occ_end(m.end(1))
                                    occ_code(use_code)
                                    occ_key(intern(name))
                                    continue
                        elif v is not None and line == " uses:":
                            self.sub = "uses"
                            continue
                        elif v is not None and line == " positions:":
                            self.sub = "positions"
                            continue
                        elif v is not None and line.startswith(" from instruction:"):
                            m = from_match(line)
                            if m is not None:
                                used.from_line[v] = ln  # its text and name range are read when asked for
                                instruction_use(ln, m.start(2), m.end(2), intern(m.group(2)))
                                self.sub = "done"
                                if line[-1] == ">":
                                    self.glued_header(ln, line)
                                continue
                    elif section == "alloc":
                        alloc = self.alloc
                        if alloc is not None:
                            m = value_match(line)
                            if m is not None and line[-1] in "]})":
                                vid, instr, itext, phi, color, size, offset, shape = m.groups()
                                s = m.start(2)
                                e = m.end(3) if itext is not None else m.end(2)
                                if itext is not None:  # `_value_names`, inlined: once per value line
                                    shape_index(itext)
                                    itext = intern(itext)
                                instr = intern(instr)
                                key = intern(instr + itext if itext is not None else instr + "{}")
                                vid, size, offset = int(vid), int(size), int(offset)
                                color = int(color) if color is not None else None
                                add_assignment(
                                    vid,
                                    key,
                                    instr,
                                    itext,
                                    phi is not None,
                                    color,
                                    size,
                                    offset,
                                    intern(shape),
                                    alloc.index,
                                    ln,
                                    s,
                                    e,
                                )
                                alloc.count += 1
                                self.value_def(ln, s, e, key)
                                continue
                    elif section == "seq" and not self.skipping and line.startswith("    "):
                        m = seq_match(line)
                        if m is not None:
                            name = intern(m.group(2))
                            add_step(int(m.group(1)), name, ln, m.start(2), m.end(2))
                            instruction_use(ln, m.start(2), m.end(2), name)
                            continue
                    elif section == "peak" and not self.skipping and line.startswith("    "):
                        m = peak_match(line)
                        if m is not None:
                            instr, itext, nbytes, cum = m.groups()
                            instr = intern(instr)
                            nbytes, cum = int(nbytes), (int(cum) if cum is not None else None)
                            if itext is not None:
                                itext = intern(itext)
                                e = m.end(2)
                                add_peak(instr, itext, nbytes, cum, ln, e)
                                value_use(ln, 4, e, intern(instr + itext))
                            else:
                                e = m.end(1)
                                add_peak(instr, itext, nbytes, cum, ln, e)
                                instruction_use(ln, 4, e, instr)
                            continue
                    elif section == "lrs" and not self.skipping and line.startswith("    "):
                        m = lr_match(line)
                        if m is not None:
                            instr, itext, first, last = m.groups()
                            e = m.end(2) if itext is not None else m.end(1)
                            if itext is not None:  # `_value_names`, inlined: once per live-range line
                                shape_index(itext)
                                itext = intern(itext)
                            instr = intern(instr)
                            key = intern(instr + itext if itext is not None else instr + "{}")
                            add_live(key, instr, itext, int(first), int(last), ln, e)
                            value_use(ln, 4, e, key)
                            continue
                    self.indented(ln, line)
                elif c == "<" and self.section == "used":
                    if self.value is not None and used.from_line[self.value] == NONE:
                        self.finish_value()
                    if block_text is not None:
                        n = self.used_block(block_text, cum[ln] + ln, ln)
                        if n:
                            skip = ln + n
                            continue
                    m = header_match(line)
                    if m is None:
                        self.bad_line(ln, line, "`<id name @color>`")
                        self.value = None
                        self.skipping = True
                        continue
                    self.skipping = False
                    self.mark = len(doc.diagnostics)
                    vid, instr, itext, phi, color = m.group(1, 2, 3, 4, 5)
                    s = m.start(2)
                    e = m.end(3) if itext is not None else m.end(2)
                    instr, itext, key = _value_names(instr, itext)
                    vid = int(vid)
                    color = int(color) if color is not None else None
                    self.value = len(used)
                    add_used(vid, key, instr, itext, phi is not None, color, ln, s, e)
                    value_use(ln, s, e, key)
                    self.sub = None
                elif c == "a" and self.section == "alloc" and line.startswith("allocation "):
                    self.skipping = False  # what `top` does before handing the line to `allocation`
                    self.allocation(ln, line)
                else:
                    self.top(ln, line)
            except Exception as exc:  # a reader bug must not take the server down: report it on the line
                self.err(ln, 0, len(line), f"internal reader error: {type(exc).__name__}: {exc}", CODE_INTERNAL)
        self.finish_value()
        self.finish_alloc()
        self.finish()
        return doc

    def top(self, ln: int, line: str) -> None:
        doc = self.doc
        if line.isspace():
            return
        self.skipping = False
        c = line[0]
        if c == "<":
            if self.section != "used":
                # Recover: report once, then read the values as if `Used values:` had been there.
                self.err(ln, 0, len(line), "a value header outside `Used values:`", CODE_STRUCTURE)
                self.finish_alloc()
                self.section = "used"
                self.saw.add("values")
            self.used_header(ln, line)
            return
        if self.section is not None and self.section.startswith("mem-old"):
            if self.mem_old_line(ln, line):
                return
        elif c == "\t" and self.section == "mem":
            self.mem_line(ln, line)
            return
        if c == "a" and line.startswith("allocation "):
            self.allocation(ln, line)
            return
        self.finish_value()
        self.finish_alloc()
        if line == "BufferAssignment:":
            self.section = "alloc"
            self.saw.add("assignment")
        elif line.startswith("Total bytes used:"):
            m = _TOTAL.match(line)
            if m is None:
                self.bad_line(ln, line, "`Total bytes used: N (size)`")
                return
            doc.total_bytes_used = int(m.group(1))
            doc.total_bytes_used_line = ln
            self.saw.add("values")
            if human_size(doc.total_bytes_used) != m.group(2):
                self.err(
                    ln,
                    m.start(2),
                    m.end(2),
                    f"{m.group(2)} does not match {doc.total_bytes_used} bytes ({human_size(doc.total_bytes_used)})",
                    CODE_TOTAL,
                )
            self.section = None
        elif line == "Used values:":
            self.section = "used"
            self.saw.add("values")
        elif line.startswith("HloLiveRange"):
            self.saw.add("live-range")
            m = _LR_HEADER.match(line)
            if m is not None:
                doc.live_range_max = int(m.group(1))
                doc.live_range_line = ln
                doc.live_range_available = True
                self.section = "lr-top"
            elif line.startswith("HloLiveRange not available"):
                doc.live_range_available = False
                doc.live_range_line = ln
                self.section = "lr-none"
            else:
                self.bad_line(ln, line, "`HloLiveRange (max N):`")
        elif line.startswith("Memory Space:"):
            self.saw.add("memory-report")
            m = _MEM_SPACE.match(line)
            if m is None:
                self.bad_line(ln, line, "`Memory Space: NAME (color=N)`")
                return
            self.space = (int(m.group(2)), m.group(1), None)
            self.section = "mem"
            self.table = None
        elif line in ("Allocations sorted by size:", "Allocations sorted by size with their values:"):
            self.saw.add("memory-report")
            self.section = "mem-old-list" if line.endswith("size:") else "mem-old-values"
            self.table = None
        elif line.startswith("Total bytes:"):
            m = _MEM_TOTAL.match(line)
            if m is None or self.section != "mem" or self.space is None:
                self.bad_line(ln, line, "`Total bytes: N (size)` after `Memory Space:`")
                return
            self.space = (self.space[0], self.space[1], int(m.group(1)))
            if human_size(int(m.group(1))) != m.group(2):
                self.err(ln, m.start(2), m.end(2), f"{m.group(2)} does not match {m.group(1)} bytes", CODE_TOTAL)
        else:
            self.bad_line(ln, line, "a section header (`BufferAssignment:`, `Used values:`, `HloLiveRange`, ...)")

    def indented(self, ln: int, line: str) -> None:
        if line.isspace():
            return
        if self.skipping and (self.section in ("alloc", "used", None) or line.startswith("    ")):
            return
        s = self.section
        if s == "alloc":
            self.alloc_value(ln, line)
        elif s == "used":
            self.used_part(ln, line)
        elif s is not None and s.startswith("lr") or s in ("seq", "lrs", "peak", "stack"):
            self.live_range_line(ln, line)
        elif s == "mem":
            self.mem_line(ln, line)
        elif s is not None and s.startswith("mem-old") and self.mem_old_line(ln, line):
            return
        elif line.startswith(("  InstructionSequence:", "  BufferLiveRange:", "  Live ranges at ", "  Stack trace")):
            self.section = "lr-top"  # recover from a lost `HloLiveRange` header (reported on its own line)
            self.saw.add("live-range")
            self.live_range_line(ln, line)
        elif _MEM_HEADER.match(line):
            self.section = "mem"  # recover from a lost `Memory Space:` header
            self.saw.add("memory-report")
            self.mem_line(ln, line)
        else:
            self.bad_line(ln, line, "a section header before indented lines")
            self.skipping = True

    # ------------------------------------------------------------------ allocations
    def allocation(self, ln: int, line: str) -> None:
        self.finish_value()
        self.finish_alloc()
        if self.section not in ("alloc",):
            self.err(ln, 0, len(line), "an allocation outside the `BufferAssignment:` listing", CODE_STRUCTURE)
        self.section = "alloc"
        self.saw.add("assignment")
        f = _ALLOC_FULL.match(line)  # the whole header in XLA's order (nearly always), else the scanner below
        m = f if f is not None else _ALLOC.match(line)
        if m is None or not line.endswith(":"):
            self.bad_line(ln, line, "`allocation N: size S, ...:`")
            self.skipping = True
            return
        self.mark = len(self.doc.diagnostics)
        records = self.doc.assignment_records
        if f is not None:  # one positional construction: this runs once per allocation of a large dump
            idx, address, size, color, param, pshape, pindex, oshape, const, tl, mlo, temp = f.groups()
            pindex = (tuple(int(p) for p in pindex.split(",")) if pindex else ()) if pindex is not None else None
            alloc = Allocation(
                int(idx),
                int(size),
                ln,
                f.end(1),
                address,
                int(color) if color is not None else 0,
                int(param) if param is not None else None,
                pshape if param is not None else None,
                pindex if param is not None else None,
                _intern(oshape) if oshape is not None else None,
                const is not None,
                tl is not None,
                mlo is not None,
                temp is not None,
                records,
                len(records),
                0,
                self.text_lines,
            )
            rest = ""
        else:
            alloc = Allocation(
                index=int(m.group(1)),
                size=int(m.group(3)),
                line=ln,
                name_end=m.end(1),
                address=m.group(2),
                records=records,
                first=len(records),
                text=self.text_lines,
            )
            rest = line[m.end() : -1]
        base = m.end()
        pos = 0
        n = len(rest)
        while pos < n:
            if not rest.startswith(", ", pos):
                self.err(ln, base + pos, len(line), "expected `, ` between allocation properties")
                break
            pos += 2
            start = pos
            if rest.startswith("color ", pos):
                j = pos + 6
                k = j
                while k < n and rest[k].isdigit():
                    k += 1
                if k == j:
                    self.err(ln, base + start, base + k, "expected a color number")
                    break
                alloc.color = int(rest[j:k])
                pos = k
            elif rest.startswith("parameter ", pos):
                j = pos + 10
                k = j
                while k < n and rest[k].isdigit():
                    k += 1
                if k == j:
                    self.err(ln, base + start, base + k, "expected a parameter number")
                    break
                alloc.parameter = int(rest[j:k])
                pos = k
                if rest.startswith(", shape |", pos):
                    e = rest.find("|", pos + 9)
                    if e < 0:
                        self.err(ln, base + pos, len(line), "unterminated `shape |...|`")
                        break
                    alloc.parameter_shape = rest[pos + 9 : e]
                    pos = e + 1
                if rest.startswith(" at ShapeIndex {", pos):
                    e = rest.find("}", pos + 16)
                    if e < 0:
                        self.err(ln, base + pos, len(line), "unterminated shape index")
                        break
                    try:
                        alloc.parameter_shape_index = parse_index(rest[pos + 15 : e + 1])
                    except ValueError:
                        self.err(ln, base + pos + 15, base + e + 1, "bad shape index")
                    pos = e + 1
            elif rest.startswith("output shape is |", pos):
                e = rest.find("|", pos + 17)
                if e < 0:
                    self.err(ln, base + pos, len(line), "unterminated `output shape is |...|`")
                    break
                alloc.output_shape = rest[pos + 17 : e]
                pos = e + 1
            else:
                e = rest.find(",", pos)
                e = n if e < 0 else e
                word = rest[pos:e]
                if word == "constant":
                    alloc.constant = True
                elif word == "thread-local":
                    alloc.thread_local = True
                elif word == "maybe-live-out":
                    alloc.maybe_live_out = True
                elif word == "preallocated-temp":
                    alloc.preallocated_temp = True
                else:
                    self.err(ln, base + pos, base + e, f"unknown allocation property {word!r}")
                pos = e
        self.doc.allocations.append(alloc)
        self.allocation_def(ln, 0, m.end(1), m.group(1))  # unique per allocation: nothing to share
        self.alloc = alloc

    def alloc_value(self, ln: int, line: str) -> None:
        m = _VALUE.match(line)
        if m is None:
            self.bad_line(ln, line, "` value: <id name @color> (size=S,offset=O): shape`")
            return
        if line[-1] not in "]})":
            self.err(ln, m.start(8), len(line), "the shape is cut short (truncated line?)")
            return
        alloc = self.alloc
        if alloc is None:
            self.err(ln, 0, len(line), "a value line before any `allocation N:`", CODE_STRUCTURE)
            return
        s, e = m.start(2), (m.end(3) if m.group(3) is not None else m.end(2))
        instr, itext, key = _value_names(m.group(2), m.group(3))
        color = m.group(5)
        vid, size, offset = int(m.group(1)), int(m.group(6)), int(m.group(7))
        color = int(color) if color is not None else None
        self.doc.assignment_records.add(
            vid,
            key,
            instr,
            itext,
            m.group(4) is not None,
            color,
            size,
            offset,
            _intern(m.group(8)),
            alloc.index,
            ln,
            s,
            e,
        )
        alloc.count += 1
        self.value_def(ln, s, e, key)

    def finish_alloc(self) -> None:
        alloc = self.alloc
        # A heap-simulated temp block is made empty and filled from the heap result's chunks
        # (BufferAssigner::AssignBuffersFromHeapSimulator): with no chunks it stays empty (TPU writes
        # `size 0, color 1, preallocated-temp:`). Parameters, constants and live-out buffers are made with
        # their value (NewAllocation), so only those must list one.
        if (
            alloc is not None
            and not alloc.count
            and not alloc.preallocated_temp
            and len(self.doc.diagnostics) == self.mark
        ):
            r = alloc.range
            self.err(
                r.start_line,
                0,
                len(self.lines[alloc.line]),
                f"allocation {alloc.index} lists no values",
                CODE_STRUCTURE,
            )
        self.alloc = None

    # ------------------------------------------------------------------ used values
    def used_header(self, ln: int, line: str) -> None:
        self.finish_value()
        m = HEADER.match(line)
        if m is None:
            self.bad_line(ln, line, "`<id name @color>`")
            self.skipping = True
            return
        self.start_value(ln, m)

    def glued_header(self, ln: int, line: str) -> None:
        """The next value's ``<id name @color>`` header at the end of a `` from instruction:`` line, where
        jaxlib 0.4.30 and 0.4.35 write it (their values listing has no line break after an instruction's text);
        nothing when the line does not end with one. Names hold no ``<``, so the header starts at the last."""
        m = HEADER.match(line, line.rfind("<"))
        if m is not None:
            self.finish_value()
            self.skipping = False
            self.start_value(ln, m)

    def start_value(self, ln: int, m: re.Match) -> None:
        """Record the used value whose header ``m`` matched on line ``ln``; it becomes the current one."""
        self.mark = len(self.doc.diagnostics)
        s, e = m.start(2), (m.end(3) if m.group(3) is not None else m.end(2))
        instr, itext, key = _value_names(m.group(2), m.group(3))
        color = m.group(5)
        vid = int(m.group(1))
        color = int(color) if color is not None else None
        used = self.doc.used_values
        self.value = len(used)
        used.add(vid, key, instr, itext, m.group(4) is not None, color, ln, s, e)
        self.value_use(ln, s, e, key)
        self.sub = None

    def used_block(self, text: str, base: int, ln: int) -> int:
        """Read the used value whose header is line ``ln`` (at offset ``base`` of ``text``) in one step when it
        has XLA's exact form, with the same records, occurrences and state as reading it line by line; the
        number of lines read, 0 when the block is not of that form (or has a line the reader would report)."""
        m = _BLOCK.match(text, base)
        if m is None or text[m.end() - 2] == ">":  # the next header glued to the `from instruction:` line
            return 0
        vid, instr, itext, phi, color, pos_text, use_text, from_name = m.groups()
        try:  # everything that can fail is done before anything is recorded
            vid = int(vid)
            color = int(color) if color is not None else None
            if itext is not None:
                shape_index(itext)
            positions = []
            for item in pos_text[:-1].split("\n"):
                name, _, index_text = item[2:].partition(" ")
                if index_text:
                    shape_index(index_text)
                positions.append(name)
            uses = []
            if use_text != "  (none)\n":
                for item in use_text[:-1].split("\n"):
                    name, _, rest = item[2:].partition(", operand ")
                    operand, _, index_text = rest.partition(" ")
                    int(operand)
                    if index_text:
                        shape_index(index_text)
                    uses.append(name)
        except ValueError:
            return 0
        doc = self.doc
        self.skipping = False
        self.mark = len(doc.diagnostics)
        s = m.start(2) - base
        e = (m.end(3) if itext is not None else m.end(2)) - base
        instr = _intern(instr)  # `_value_names` without the check (done above), inlined: once per used value
        if itext is not None:
            itext = _intern(itext)
        key = _intern(instr + itext if itext is not None else instr + "{}")
        used = doc.used_values
        i = len(used)
        used.add(vid, key, instr, itext, phi is not None, color, ln, s, e)
        self.value_use(ln, s, e, key)
        # the items' occurrences (what `instruction_use` appends), written out; a value's position and its
        # `from instruction:` name are nearly always its own instruction, already interned
        occ = doc.occurrences
        pos, end, code, keys = occ._pos.append, occ._end.append, occ._code.append, occ._keys.append
        use_code = occ_pair_code("instruction", "use")
        k = ln + 2
        for name in positions:
            pos((k << COL_BITS) | 2)
            end(2 + len(name))
            code(use_code)
            keys(instr if name == instr else _intern(name))
            k += 1
        k += 1  # `` uses:``
        for name in uses:
            pos((k << COL_BITS) | 2)
            end(2 + len(name))
            code(use_code)
            keys(_intern(name))
            k += 1
        if not uses:
            k += 1  # ``  (none)``
        used.from_line[i] = k
        line_start = m.end(7)
        self.instruction_use(
            k, m.start(8) - line_start, m.end(8) - line_start, instr if from_name == instr else _intern(from_name)
        )
        self.value = i
        self.sub = "done"
        return k - ln + 1

    def used_part(self, ln: int, line: str) -> None:
        v = self.value
        if v is None:
            self.err(ln, 0, len(line), "a value part before any `<id name @color>` header", CODE_STRUCTURE)
            return
        if line[1] != " ":
            if line == " positions:":
                self.sub = "positions"
            elif line == " uses:":
                self.sub = "uses"
            elif line.startswith(" from instruction:"):
                m = FROM.match(line)
                if m is None:
                    self.bad_line(ln, line, "` from instruction: %name = ...`")
                    return
                self.doc.used_values.from_line[v] = ln  # its text and name range are read when asked for
                self.instruction_use(ln, m.start(2), m.end(2), _intern(m.group(2)))
                self.sub = "done"
                if line[-1] == ">":
                    self.glued_header(ln, line)
            else:
                self.bad_line(ln, line, "` positions:`, ` uses:` or ` from instruction:`")
            return
        sub = self.sub
        if sub == "positions":
            m = POSITION.match(line)
            if m is None:
                self.bad_line(ln, line, "a position `  name {index}`")
                return
            itext = m.group(2)
            if itext:
                shape_index(itext)
            self.instruction_use(ln, 2, m.end(1), _intern(m.group(1)))
        elif sub == "uses":
            if line == "  (none)":
                return
            m = USE.match(line)
            if m is None:
                self.bad_line(ln, line, "a use `  name, operand N {index}`")
                return
            opnd, itext = m.group(2, 3)
            int(opnd)
            if itext:
                shape_index(itext)
            self.instruction_use(ln, 2, m.end(1), _intern(m.group(1)))
        else:
            self.bad_line(ln, line, "` positions:` or ` uses:` before list items")

    def finish_value(self) -> None:
        i = self.value
        if i is not None and self.doc.used_values.from_line[i] == NONE and len(self.doc.diagnostics) == self.mark:
            v = self.doc.used_values[i]
            self.err(
                v.line,
                v.range.start_col,
                v.range.end_col,
                f"value {v.name} ends before its ` from instruction:` line",
                CODE_STRUCTURE,
            )
        self.value = None
        self.sub = None

    # ------------------------------------------------------------------ live ranges
    def live_range_line(self, ln: int, line: str) -> None:
        doc = self.doc
        if self.section == "lr-none":
            self.bad_line(ln, line, "nothing after `HloLiveRange not available`")
            return
        if not line.startswith("    "):
            self.skipping = False
            self.lr_parts.add(line.strip()[:12])
            if line == "  InstructionSequence:":
                self.section = "seq"
            elif line == "  BufferLiveRange:":
                self.section = "lrs"
            elif line.startswith("  Live ranges at "):
                m = _PEAK_HEADER.match(line)
                if m is None:
                    self.bad_line(ln, line, "`  Live ranges at N (peak):`")
                    self.skipping = True
                    return
                doc.peak_step = int(m.group(1))
                doc.peak_line = ln
                self.section = "peak"
            elif line.startswith("  Stack trace breakdown"):
                m = _STACK_HEADER.match(line)
                if m is None:
                    self.bad_line(ln, line, "`  Stack trace breakdown for peak usage: N bytes`")
                    self.skipping = True
                    return
                doc.peak_breakdown_total = _spaced_int(m.group(1))
                self.section = "stack"
                self.stack_parents = []
            else:
                self.bad_line(ln, line, "a live-range subsection header")
                self.skipping = True
            return
        s = self.section
        if s == "seq":
            m = _SEQ.match(line)
            if m is None:
                self.bad_line(ln, line, "`    N:instruction`")
                return
            name = _intern(m.group(2))
            doc.sequence.add(int(m.group(1)), name, ln, m.start(2), m.end(2))
            self.instruction_use(ln, m.start(2), m.end(2), name)
        elif s == "lrs":
            m = _LR.match(line)
            if m is None:
                self.bad_line(ln, line, "`    name{index}:start-end`")
                return
            e = m.end(2) if m.group(2) is not None else m.end(1)
            instr, itext, key = _value_names(m.group(1), m.group(2))
            doc.live_ranges.add(key, instr, itext, int(m.group(3)), int(m.group(4)), ln, e)
            self.value_use(ln, 4, e, key)
        elif s == "peak":
            m = _PEAK.match(line)
            if m is None:
                self.bad_line(ln, line, "`    name{index}: N bytes (cumulative: N bytes)`")
                return
            instr, itext = _intern(m.group(1)), m.group(2)
            e = m.end(2) if itext is not None else m.end(1)
            if itext is not None:
                itext = _intern(itext)
            key = _intern(instr + itext) if itext is not None else None
            cum = m.group(4)
            nbytes, cum = int(m.group(3)), (int(cum) if cum is not None else None)
            doc.peak_entries.add(instr, itext, nbytes, cum, ln, e)
            if key is not None:
                self.value_use(ln, 4, e, key)
            else:
                self.instruction_use(ln, 4, e, instr)
        elif s == "stack":
            self.stack_line(ln, line)
        else:
            self.bad_line(ln, line, "a live-range subsection header before its items")

    def stack_line(self, ln: int, line: str) -> None:
        col = len(line) - len(line.lstrip(_TREE_CHARS))  # the tree drawing before the name
        # The tail holds no " (" of its own, so it starts at the last one: one anchored match, linear time.
        m = _STACK_TAIL.match(line, max(line.rfind(" ("), 0))
        if m is None or m.start() <= col:
            self.bad_line(
                ln, line, "a stack-trace node `name (P%, total: N bytes, current: N bytes, remaining: N bytes)`"
            )
            return
        depth = 0 if col <= 4 else max(1, (col - 6) // 4)
        parents = self.stack_parents
        del parents[depth:]
        parent = parents[-1] if parents and depth > 0 else None
        nodes = self.doc.stack_trace
        nodes.append(
            StackNode(
                line[col : m.start()],
                depth,
                float(m.group(1)),
                _spaced_int(m.group(2)),
                _spaced_int(m.group(3)),
                _spaced_int(m.group(4)),
                parent,
                ln,
                _new(Range, (ln, col, ln, m.start())),
            )
        )
        while len(parents) < depth:
            parents.append(parent if parent is not None else len(nodes) - 1)
        parents.append(len(nodes) - 1)

    # ------------------------------------------------------------------ memory-usage report
    def mem_old_line(self, ln: int, line: str) -> bool:
        """Lines of the older report layout (``Allocations sorted by size:`` ...); False when not one of them."""
        stripped = line.strip()
        if not stripped or stripped.strip("-") == "":
            return True
        if self.section == "mem-old-list":
            if stripped == "cumulative_size; total_size - cumulative_size; allocation" or _MEM_REST.match(line):
                return True
            if not (line[0] == " " or line[0].isdigit()):
                return False  # a section header: `top` takes it
            m = _MEM_OLD_ROW.match(line)
            if m is None:
                self.bad_line(ln, line, "a row `cumulative(P%); remaining; allocation N: size S, ...:`")
            return True
        m = _MEM_OLD_ALLOC.match(line)
        if m is not None:
            color = _MEM_OLD_COLOR.search(line)
            self.table = MemoryTable(
                color=int(color.group(1)) if color else 0,
                memory_space="",
                total_bytes=None,
                line=ln,
                allocation=int(m.group(1)),
            )
            self.doc.memory_report.append(self.table)
            self.pending_old_table = True
            return True
        if line[0] in " \t":
            if _MEM_HEADER.match(line) and self.table is not None and self.pending_old_table:
                self.pending_old_table = False  # the table belongs to the allocation line above it
                return True
            self.mem_line(ln, line)
            return True
        return False

    def mem_line(self, ln: int, line: str) -> None:
        if _MEM_HEADER.match(line):
            sp = self.space or (0, "", None)
            self.table = MemoryTable(color=sp[0], memory_space=sp[1], total_bytes=sp[2], line=ln)
            self.doc.memory_report.append(self.table)
            return
        stripped = line.strip()
        if stripped and stripped.strip("-") == "":
            return
        if _MEM_REST.match(line):
            return
        parts = line.split(";", 4)
        if len(parts) != 5 or self.table is None:
            self.bad_line(ln, line, "a report row `cumulative(P%); size; offset; n_values; shapes`")
            return
        mc = _MEM_CUM.match(parts[0])
        ms = _MEM_SIZE.match(parts[1])
        mo = _MEM_INT.match(parts[2])
        mn = _MEM_INT.match(parts[3])
        if mc is None or ms is None or mo is None or mn is None:
            self.bad_line(ln, line, "a report row `cumulative(P%); size; offset; n_values; shapes`")
            return
        shapes = parts[4].strip()
        if not shapes or shapes[-1] not in "])":
            self.err(ln, len(line) - len(parts[4]), len(line), "the shapes list is cut short (truncated line?)")
            return
        self.table.rows.append(
            MemoryRow(
                mc.group(1),
                int(mc.group(2)),
                _intern(ms.group(1)),
                int(mo.group(1)),
                int(mn.group(1)),
                ln,
                self.text_lines,
            )
        )

    # ------------------------------------------------------------------ end of document
    def finish(self) -> None:
        doc = self.doc
        saw = self.saw
        if not doc.kind:
            if "assignment" in saw and ("values" in saw or "live-range" in saw):
                doc.kind = "single"
            elif "assignment" in saw:
                doc.kind = "assignment"
            elif "memory-report" in saw and not doc.used_values:
                doc.kind = "memory-report"
            elif "values" in saw:
                doc.kind = "values"
            elif "live-range" in saw:
                doc.kind = "live-range"
            elif "memory-report" in saw:
                doc.kind = "memory-report"
            else:
                doc.kind = "assignment"
        if not saw:
            last = max(len(self.lines) - 1, 0)
            doc.diagnostics.append(
                error(
                    Range(0, 0, 0, len(self.lines[0]) if self.lines else 0),
                    CODE_STRUCTURE,
                    "no buffer-assignment section found (empty or not an XLA buffer dump)",
                )
            )
            del last
        if doc.kind == "single" and doc.allocations and doc.total_bytes_used is not None:
            total = sum(a.size for a in doc.allocations)
            if total != doc.total_bytes_used:
                ln = doc.total_bytes_used_line or 0
                self.err(
                    ln,
                    0,
                    len(self.lines[ln]),
                    f"Total bytes used {doc.total_bytes_used} differs from the sum of allocation sizes {total}",
                    CODE_TOTAL,
                )
        if doc.live_range_available and doc.live_range_max is not None and doc.sequence and not doc.diagnostics:
            want = doc.live_range_max
            if len(doc.sequence) != want:
                ln = doc.sequence[-1].line
                self.err(
                    ln,
                    0,
                    len(self.lines[ln]),
                    f"InstructionSequence has {len(doc.sequence)} steps but the header says max {want}",
                    CODE_STRUCTURE,
                )
        clean = not any(d.severity >= Severity.ERROR for d in doc.diagnostics)
        last = len(self.lines) - 1
        while last > 0 and not self.lines[last].strip():
            last -= 1
        if clean and doc.live_range_available and doc.sequence:
            missing = [
                h
                for h, key in (("BufferLiveRange:", "BufferLiveRa"), ("Live ranges at N (peak):", "Live ranges "))
                if key not in self.lr_parts
            ]
            if missing:
                self.err(
                    last,
                    0,
                    len(self.lines[last]),
                    f"the live-range dump ends before `{missing[0]}` (truncated file?)",
                    CODE_STRUCTURE,
                )
        if clean and doc.stack_trace and doc.stack_trace[-1].remaining != 0:
            node = doc.stack_trace[-1]
            self.err(
                node.line,
                0,
                len(self.lines[node.line]),
                f"the stack-trace breakdown ends with {node.remaining} bytes not shown (truncated file?)",
                CODE_STRUCTURE,
            )
        if self.lines and self.lines[-1]:
            ln = len(self.lines) - 1
            doc.diagnostics.append(
                info(
                    Range(ln, 0, ln, len(self.lines[ln])),
                    "buffers.truncated",
                    "the file ends in the middle of a line (XLA ends dumps with a newline): is it truncated?",
                )
            )
        if doc.live_range_available is False:
            ln = doc.live_range_line or 0
            doc.diagnostics.append(
                info(
                    Range(ln, 0, ln, len(self.lines[ln])),
                    "buffers.no-live-range",
                    "XLA wrote no live ranges for this module",
                )
            )


def read_buffers(text: str, kind_hint: str | None = None) -> BufferDoc:
    """Read any XLA buffer dump (old single file or one split file) into a `BufferDoc`; never raises.

    ``kind_hint`` ('single'|'assignment'|'values'|'live-range'|'memory-report', e.g. from the file name) sets
    ``doc.kind``; without it the kind follows the sections found. Problems are in ``doc.diagnostics``."""
    if not isinstance(text, (str, TextLines)):
        doc = BufferDoc(kind=kind_hint or "assignment")
        doc.diagnostics.append(error(Range(0, 0, 0, 0), CODE_INTERNAL, "buffer reader was given no text"))
        return doc
    # The reader allocates hundreds of thousands of small tuples that never form cycles; pausing the cyclic
    # garbage collector while it runs saves most of the time it would spend rescanning them.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Reader(text, kind_hint).run()
    except Exception as exc:  # pragma: no cover - a last resort; the per-line guard should catch everything
        doc = BufferDoc(kind=kind_hint or "assignment")
        doc.diagnostics.append(error(Range(0, 0, 0, 0), CODE_INTERNAL, f"internal reader error: {exc!r}"))
        return doc
    finally:
        if was_enabled:
            gc.enable()


def kind_from_path(path: str) -> str | None:
    """The document kind a dump file's name implies; None when the name is not a split-set name."""
    for suffix, kind in SUFFIX_KINDS:
        if path.endswith(suffix):
            return kind
    return None


SUFFIX_KINDS = SPLIT_SUFFIXES  # (suffix, kind), longest suffix first: the one table, in `kinds`

__all__ = ["read_buffers", "kind_from_path", "SUFFIX_KINDS", "Diagnostic"]
