"""``Memory Space: ...`` tables (`-memory-usage-report.txt`), in the current layout and the older one that names each
table's allocation.
"""

from __future__ import annotations

import re

from hlo_lsp.core.buffers.read_common import CODE_TOTAL, ReaderState
from hlo_lsp.core.buffers.read_common import intern_str as intern
from hlo_lsp.core.buffers.records import MemoryRow, MemoryTable
from hlo_lsp.core.shapes import human_size

MEM_SPACE = re.compile(r"Memory Space: ([^()]*) \(color=(\d+)\)\Z")
MEM_TOTAL = re.compile(r"Total bytes: (\d+) \(([^()]*)\)\Z")
MEM_HEADER = re.compile(r"\s*cumulative_size;\s+size;\s+offset;\s+used_by_n_values;\s+shapes_list\Z")
MEM_CUM = re.compile(r"\s*([0-9.]+[KMGTPE]?i?B)\(\s*(\d+)%\)\Z")
MEM_SIZE = re.compile(r"\s*([0-9.]+[KMGTPE]?i?B)\Z")
MEM_INT = re.compile(r"\s*(\d+)\Z")
MEM_OLD_ROW = re.compile(
    r"\s*[0-9.]+[KMGTPE]?i?B\(\s*\d+%\);\s*-?[0-9.]+[KMGTPE]?i?B; allocation \d+: size [0-9.]+[KMGTPE]?i?B.*:\Z"
)
MEM_OLD_ALLOC = re.compile(r"allocation (\d+): size [0-9.]+[KMGTPE]?i?B.*:\Z")
MEM_OLD_COLOR = re.compile(r", color (\d+)")
MEM_REST = re.compile(r"\s*The rest \d+ (?:values|allocations) are less than")


class ReportReader(ReaderState):
    """The memory-usage-report section of `reader._Reader`."""

    # ------------------------------------------------------------------ headers
    def memory_space(self, ln: int, line: str) -> None:
        """``Memory Space: NAME (color=N)``: a table of the current layout follows."""
        self.saw.add("memory-report")
        m = MEM_SPACE.match(line)
        if m is None:
            self.bad_line(ln, line, "`Memory Space: NAME (color=N)`")
            return
        self.space = (int(m.group(2)), m.group(1), None)
        self.section = "mem"
        self.table = None

    def old_report(self, ln: int, line: str) -> None:
        """``Allocations sorted by size:`` or ``... with their values:``, the older layout's two lists."""
        self.saw.add("memory-report")
        self.section = "mem-old-list" if line.endswith("size:") else "mem-old-values"
        self.table = None

    def space_total(self, ln: int, line: str) -> None:
        """``Total bytes: N (size)`` under ``Memory Space:``."""
        m = MEM_TOTAL.match(line)
        if m is None or self.section != "mem" or self.space is None:
            self.bad_line(ln, line, "`Total bytes: N (size)` after `Memory Space:`")
            return
        self.space = (self.space[0], self.space[1], int(m.group(1)))
        if human_size(int(m.group(1))) != m.group(2):
            self.err(ln, m.start(2), m.end(2), f"{m.group(2)} does not match {m.group(1)} bytes", CODE_TOTAL)

    # ------------------------------------------------------------------ memory-usage report
    def mem_old_line(self, ln: int, line: str) -> bool:
        """Lines of the older report layout (``Allocations sorted by size:`` ...); False when not one of them."""
        stripped = line.strip()
        if not stripped or stripped.strip("-") == "":
            return True
        if self.section == "mem-old-list":
            if stripped == "cumulative_size; total_size - cumulative_size; allocation" or MEM_REST.match(line):
                return True
            if not (line[0] == " " or line[0].isdigit()):
                return False  # a section header: `top` takes it
            m = MEM_OLD_ROW.match(line)
            if m is None:
                self.bad_line(ln, line, "a row `cumulative(P%); remaining; allocation N: size S, ...:`")
            return True
        m = MEM_OLD_ALLOC.match(line)
        if m is not None:
            color = MEM_OLD_COLOR.search(line)
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
            if MEM_HEADER.match(line) and self.table is not None and self.pending_old_table:
                self.pending_old_table = False  # the table belongs to the allocation line above it
                return True
            self.mem_line(ln, line)
            return True
        return False

    def mem_line(self, ln: int, line: str) -> None:
        if MEM_HEADER.match(line):
            sp = self.space or (0, "", None)
            self.table = MemoryTable(color=sp[0], memory_space=sp[1], total_bytes=sp[2], line=ln)
            self.doc.memory_report.append(self.table)
            return
        stripped = line.strip()
        if stripped and stripped.strip("-") == "":
            return
        if MEM_REST.match(line):
            return
        parts = line.split(";", 4)
        if len(parts) != 5 or self.table is None:
            self.bad_line(ln, line, "a report row `cumulative(P%); size; offset; n_values; shapes`")
            return
        mc = MEM_CUM.match(parts[0])
        ms = MEM_SIZE.match(parts[1])
        mo = MEM_INT.match(parts[2])
        mn = MEM_INT.match(parts[3])
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
                intern(ms.group(1)),
                int(mo.group(1)),
                int(mn.group(1)),
                ln,
                self.text_lines,
            )
        )
