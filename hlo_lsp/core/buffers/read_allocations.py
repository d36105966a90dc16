"""The `-buffer-assignment.txt` listing: ``allocation N: ...:`` headers (XLA's fixed property order in one regex,
any other order through a property scanner), their `` value:`` lines, and ``Total bytes used:``.
"""

from __future__ import annotations

import re

from hlo_lsp.core.buffers.columns import shape_index
from hlo_lsp.core.buffers.read_common import CODE_STRUCTURE, CODE_TOTAL, GIVE_WAY_LINES, ReaderState, intern_str
from hlo_lsp.core.buffers.records import Allocation
from hlo_lsp.core.buffers.text import INDEX, NAME, parse_index
from hlo_lsp.core.process import turns
from hlo_lsp.core.shapes import human_size

ALLOC = re.compile(r"allocation (\d+): (?:(0x[0-9a-fA-F]+|\(nil\)), )?size (\d+)")
ALLOC_FULL = re.compile(
    r"allocation (\d+): (?:(0x[0-9a-fA-F]+|\(nil\)), )?size (\d+)(?:, color (\d+))?"
    r"(?:, parameter (\d+)(?:, shape \|([^|]*)\|)?(?: at ShapeIndex \{([0-9,]*)\})?)?"
    r"(?:, output shape is \|([^|]*)\|)?(, constant)?(, thread-local)?(, maybe-live-out)?(, preallocated-temp)?:\Z"
)
VALUE = re.compile(rf" value: <(\d+) ({NAME})({INDEX})?( \(phi\))?(?: @(\d+))?> \(size=(\d+),offset=(\d+)\): (\S.*)\Z")
TOTAL = re.compile(r"Total bytes used: (\d+) \(([^()]*)\)\Z")
_FLAGS = {
    "constant": "constant",
    "thread-local": "thread_local",
    "maybe-live-out": "maybe_live_out",
    "preallocated-temp": "preallocated_temp",
}


def _digits_end(s: str, j: int) -> int:
    """Just past the run of digits at ``s[j]`` (``j`` itself when there is none)."""
    n = len(s)
    while j < n and "0" <= s[j] <= "9":
        j += 1
    return j


class AllocationsReader(ReaderState):
    """The allocation section of `reader._Reader` (one state, one pass; see `reader`)."""

    # ------------------------------------------------------------------ section headers and the listing's total
    def listing_header(self, ln: int, line: str) -> None:
        """``BufferAssignment:``: the allocations follow."""
        self.section = "alloc"
        self.saw.add("assignment")

    def total_used(self, ln: int, line: str) -> None:
        """``Total bytes used: N (size)`` (the values file's first line): N, its size as printed checked."""
        doc = self.doc
        m = TOTAL.match(line)
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

    def finish_listing(self) -> None:
        """In the old single file, ``Total bytes used`` is the sum of the allocations' sizes."""
        doc = self.doc
        if doc.kind == "single" and doc.allocations and doc.total_bytes_used is not None:
            total = sum(doc.allocations.ints("size"))
            if total != doc.total_bytes_used:
                ln = doc.total_bytes_used_line or 0
                self.err(
                    ln,
                    0,
                    len(self.lines[ln]),
                    f"Total bytes used {doc.total_bytes_used} differs from the sum of allocation sizes {total}",
                    CODE_TOTAL,
                )

    # ------------------------------------------------------------------ allocations
    def allocation(self, ln: int, line: str) -> None:
        self.finish_value()
        self.finish_alloc()
        if self.section not in ("alloc",):
            self.err(ln, 0, len(line), "an allocation outside the `BufferAssignment:` listing", CODE_STRUCTURE)
        self.section = "alloc"
        self.saw.add("assignment")
        f = ALLOC_FULL.match(line)  # the whole header in XLA's order (nearly always), else the scanner below
        m = f if f is not None else ALLOC.match(line)
        if m is None or not line.endswith(":"):
            self.bad_header(ln, line, "`allocation N: size S, ...:`")
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
                intern_str(oshape) if oshape is not None else None,
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
        self._properties(ln, line, m.end(), rest, alloc)
        self.allocation_def(ln, 0, m.end(1), m.group(1))  # unique per allocation: nothing to share
        self.alloc = alloc

    def _properties(self, ln: int, line: str, base: int, rest: str, alloc: Allocation) -> None:
        """The header's properties after ``size S`` (``rest``, from column ``base``) in any order; the first
        malformed one is reported and ends the scan."""
        pos = 0
        n = len(rest)
        while pos < n:
            if not rest.startswith(", ", pos):
                self.err(ln, base + pos, len(line), "expected `, ` between allocation properties")
                return
            pos += 2
            numbered = (
                "color"
                if rest.startswith("color ", pos)
                else "parameter"
                if rest.startswith("parameter ", pos)
                else None
            )
            if numbered is not None:
                j = pos + len(numbered) + 1
                k = _digits_end(rest, j)
                if k == j:
                    self.err(ln, base + pos, base + k, f"expected a {numbered} number")
                    return
                setattr(alloc, numbered, int(rest[j:k]))
                pos = k
                if numbered == "color":
                    continue
                if rest.startswith(", shape |", pos):
                    pos = self._piped(ln, line, base, rest, pos, len(", shape |"), "parameter_shape", alloc)
                    if pos < 0:
                        return
                if rest.startswith(" at ShapeIndex {", pos):
                    e = self._closing(ln, line, base, rest, pos, pos + 16, "}", "shape index")
                    if e < 0:
                        return
                    try:
                        alloc.parameter_shape_index = parse_index(rest[pos + 15 : e + 1])
                    except ValueError:
                        self.err(ln, base + pos + 15, base + e + 1, "bad shape index")
                    pos = e + 1
            elif rest.startswith("output shape is |", pos):
                pos = self._piped(ln, line, base, rest, pos, len("output shape is |"), "output_shape", alloc)
                if pos < 0:
                    return
            else:
                e = rest.find(",", pos)
                e = n if e < 0 else e
                flag = _FLAGS.get(rest[pos:e])
                if flag is None:
                    self.err(ln, base + pos, base + e, f"unknown allocation property {rest[pos:e]!r}")
                else:
                    setattr(alloc, flag, True)
                pos = e

    def _piped(self, ln: int, line: str, base: int, rest: str, pos: int, opening: int, field: str, alloc) -> int:
        """Set ``alloc.<field>`` to the shape written between ``|`` after the ``opening`` characters of the
        property at ``pos`` (``, shape |...|``, ``output shape is |...|``); where the property ends, or -1 after
        the error of one with no closing ``|``."""
        what = f"`{rest[pos : pos + opening].removeprefix(', ')}...|`"  # `shape |...|`, `output shape is |...|`
        e = self._closing(ln, line, base, rest, pos, pos + opening, "|", what)
        if e >= 0:
            setattr(alloc, field, rest[pos + opening : e])
            return e + 1
        return -1

    def _closing(self, ln: int, line: str, base: int, rest: str, pos: int, after: int, close: str, what: str) -> int:
        """Where the first ``close`` from ``after`` stands in ``rest`` (closing the piece opened at ``pos``), or -1
        with an error from ``pos`` to the line's end when there is none."""
        e = rest.find(close, after)
        if e < 0:
            self.err(ln, base + pos, len(line), f"unterminated {what}")
        return e

    def value_lines(self, start: int) -> int:
        """The fast loop of the ``BufferAssignment:`` listing (see `read_common`): from line ``start``, each
        allocation's header (`allocation`) and its `` value:`` lines, read inline (`alloc_value` only reports the
        lines this loop does not take). Returns the first line it does not take."""
        lines = self.lines
        n = len(lines)
        intern = intern_str
        value_match = VALUE.match
        add_assignment = self.doc.assignment_records.add
        value_def = self.value_def
        alloc = self.alloc
        every = GIVE_WAY_LINES
        for ln in range(start, n):
            if not ln & every:
                turns.give_way()  # a background read lets the requests under way go first (the listing is 0.2 s)
            line = lines[ln]
            if not line:
                continue
            try:
                if line[0] == "a" and line.startswith("allocation "):
                    self.skipping = False  # what `top` does before handing the line to `allocation`
                    self.allocation(ln, line)
                    alloc = self.alloc
                    continue
                if line[0] != " " or alloc is None:
                    return ln
                m = value_match(line)
                if m is None or line[-1] not in "]})":
                    return ln
                vid, instr, itext, phi, color, size, offset, shape = m.groups()
                s = m.start(2)
                e = m.end(3) if itext is not None else m.end(2)
                if itext is not None:  # `value_names`, inlined: once per value line
                    shape_index(itext)
                    itext = intern(itext)
                instr = intern(instr)
                key = intern(instr + itext if itext is not None else instr + "{}")
                vid, size, offset = int(vid), int(size), int(offset)
                color = int(color) if color is not None else None
                add_assignment(
                    size, offset, intern(shape), alloc.index, vid, key, instr, itext, phi is not None, color, ln, s, e
                )
                alloc.count += 1
                value_def(ln, s, e, key)
            except Exception as exc:
                self.internal_error(ln, line, exc)
        return n

    def alloc_value(self, ln: int, line: str) -> None:
        """An indented line of the listing that `value_lines` did not take: what is wrong with it."""
        m = VALUE.match(line)
        if m is None:
            self.bad_line(ln, line, "` value: <id name @color> (size=S,offset=O): shape`")
        elif line[-1] not in "]})":
            self.err(ln, m.start(8), len(line), "the shape is cut short (truncated line?)")
        else:
            self.err(ln, 0, len(line), "a value line before any `allocation N:`", CODE_STRUCTURE)

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
        if alloc is not None:
            self.doc.allocations.add(alloc)  # its values counted: the listing keeps it by column
        self.alloc = None
