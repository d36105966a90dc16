"""The `-buffer-assignment.txt` listing: ``allocation N: ...:`` headers (XLA's fixed property order in one regex,
any other order through a property scanner), their `` value:`` lines, and ``Total bytes used:``.
"""

from __future__ import annotations

import re

from hlo_lsp.core.buffers.read_common import CODE_STRUCTURE, ReaderState, value_names
from hlo_lsp.core.buffers.read_common import intern_str as intern
from hlo_lsp.core.buffers.records import Allocation
from hlo_lsp.core.buffers.text import INDEX, NAME, parse_index

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
    while j < n and s[j].isdigit():
        j += 1
    return j


class AllocationsReader(ReaderState):
    """The allocation section of `reader._Reader` (one state, one pass; see `reader`)."""

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
                intern(oshape) if oshape is not None else None,
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
        self.doc.allocations.append(alloc)
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
                    e = self._closing(ln, line, base, rest, pos, pos + 9, "|", "`shape |...|`")
                    if e < 0:
                        return
                    alloc.parameter_shape = rest[pos + 9 : e]
                    pos = e + 1
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
                e = self._closing(ln, line, base, rest, pos, pos + 17, "|", "`output shape is |...|`")
                if e < 0:
                    return
                alloc.output_shape = rest[pos + 17 : e]
                pos = e + 1
            else:
                e = rest.find(",", pos)
                e = n if e < 0 else e
                flag = _FLAGS.get(rest[pos:e])
                if flag is None:
                    self.err(ln, base + pos, base + e, f"unknown allocation property {rest[pos:e]!r}")
                else:
                    setattr(alloc, flag, True)
                pos = e

    def _closing(self, ln: int, line: str, base: int, rest: str, pos: int, after: int, close: str, what: str) -> int:
        """Where the first ``close`` from ``after`` stands in ``rest`` (closing the piece opened at ``pos``), or -1
        with an error from ``pos`` to the line's end when there is none."""
        e = rest.find(close, after)
        if e < 0:
            self.err(ln, base + pos, len(line), f"unterminated {what}")
        return e

    def alloc_value(self, ln: int, line: str) -> None:
        m = VALUE.match(line)
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
        instr, itext, key = value_names(m.group(2), m.group(3))
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
            intern(m.group(8)),
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
