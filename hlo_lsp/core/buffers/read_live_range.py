"""``HloLiveRange (max N):`` (`-live-range.txt`): the instruction sequence, the buffer live ranges, the values live
at the peak and the ``Stack trace breakdown`` tree under it.
"""

from __future__ import annotations

import re

from hlo_lsp.core.buffers.columns import shape_index
from hlo_lsp.core.buffers.read_common import (
    CODE_STRUCTURE,
    GIVE_WAY_LINES,
    ReaderState,
    intern_str,
    new_record,
    spaced_int,
)
from hlo_lsp.core.buffers.records import StackNode
from hlo_lsp.core.buffers.text import INDEX, NAME
from hlo_lsp.core.diagnostics import Range, Severity
from hlo_lsp.core.process import turns

LR_HEADER = re.compile(r"HloLiveRange \(max (-?\d+)\):\Z")
SEQ = re.compile(rf"    (\d+):({NAME})\Z")
LR = re.compile(rf"    ({NAME})({INDEX})?:(-?\d+)-(-?\d+)\Z")
PEAK_HEADER = re.compile(r"  Live ranges at (-?\d+) \(peak\):\Z")
PEAK = re.compile(rf"    ({NAME})({INDEX})?: (\d+) bytes(?: \(cumulative: (\d+) bytes\))?\Z")
STACK_HEADER = re.compile(r"  Stack trace breakdown for peak usage: ([\d ]+) bytes\Z")
STACK_TAIL = re.compile(
    r" \((\d+(?:\.\d+)?)%, total: ([\d ]+) bytes, current: ([\d ]+) bytes, remaining: ([\d ]+) bytes\)\Z"
)
TREE_CHARS = " │├└─"
_ITEMS = {  # what an item line of each subsection looks like, for the error on one that does not
    "seq": "`    N:instruction`",
    "lrs": "`    name{index}:start-end`",
    "peak": "`    name{index}: N bytes (cumulative: N bytes)`",
}


class LiveRangeReader(ReaderState):
    """The live-range section of `reader._Reader`."""

    # ------------------------------------------------------------------ headers
    def live_range_header(self, ln: int, line: str) -> None:
        """``HloLiveRange (max N):``, or ``HloLiveRange not available ...``."""
        doc = self.doc
        self.saw.add("live-range")
        m = LR_HEADER.match(line)
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

    def _subsection(self, ln: int, line: str, pattern: re.Pattern[str], what: str, section: str) -> re.Match | None:
        """A subsection header read by ``pattern`` (its section starts), or None after `bad_header`."""
        m = self.header(ln, line, pattern, what)
        if m is not None:
            self.section = section
        return m

    # ------------------------------------------------------------------ items
    def live_range_items(self, start: int) -> int:
        """The fast loop of ``InstructionSequence:``, ``BufferLiveRange:`` and the peak list (see `read_common`):
        from line ``start``, the items of the current subsection; `live_range_line` only reports the item lines
        this loop does not take. Returns the first line it does not take."""
        if self.skipping:
            return start
        s = self.section
        lines = self.lines
        n = len(lines)
        intern = intern_str
        doc = self.doc
        add_step, add_live, add_peak = doc.sequence.add, doc.live_ranges.add, doc.peak_entries.add
        instruction_use, value_use = self.instruction_use, self.value_use
        match = SEQ.match if s == "seq" else LR.match if s == "lrs" else PEAK.match
        every = GIVE_WAY_LINES
        for ln in range(start, n):
            if not ln & every:
                turns.give_way()  # a background read lets the requests under way go first
            line = lines[ln]
            if not line:
                continue
            if not line.startswith("    "):
                return ln
            try:
                m = match(line)
                if m is None:
                    return ln
                if s == "lrs":
                    instr, itext, first, last = m.groups()
                    e = m.end(2) if itext is not None else m.end(1)
                    if itext is not None:  # `value_names`, inlined: once per live-range line
                        shape_index(itext)
                        itext = intern(itext)
                    instr = intern(instr)
                    key = intern(instr + itext if itext is not None else instr + "{}")
                    add_live(key, instr, itext, int(first), int(last), ln, e)
                    value_use(ln, 4, e, key)
                elif s == "seq":
                    name = intern(m.group(2))
                    add_step(int(m.group(1)), name, ln, m.start(2), m.end(2))
                    instruction_use(ln, m.start(2), m.end(2), name)
                else:
                    instr, itext, nbytes_text, cum_text = m.groups()
                    instr = intern(instr)
                    nbytes, cumulative = int(nbytes_text), (int(cum_text) if cum_text is not None else None)
                    if itext is not None:
                        itext = intern(itext)
                        e = m.end(2)
                        add_peak(instr, itext, nbytes, cumulative, ln, e)
                        value_use(ln, 4, e, intern(instr + itext))
                    else:
                        e = m.end(1)
                        add_peak(instr, itext, nbytes, cumulative, ln, e)
                        instruction_use(ln, 4, e, instr)
            except Exception as exc:
                self.internal_error(ln, line, exc)
        return n

    def live_range_line(self, ln: int, line: str) -> None:
        """A line of the live-range dump that no fast loop took: a subsection header, a stack-trace node, or an
        item `live_range_items` declined (what is wrong with it)."""
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
                m = self._subsection(ln, line, PEAK_HEADER, "`  Live ranges at N (peak):`", "peak")
                if m is not None:
                    doc.peak_step = int(m.group(1))
                    doc.peak_line = ln
            elif line.startswith("  Stack trace breakdown"):
                m = self._subsection(
                    ln, line, STACK_HEADER, "`  Stack trace breakdown for peak usage: N bytes`", "stack"
                )
                if m is not None:
                    doc.peak_breakdown_total = spaced_int(m.group(1))
                    self.stack_parents = []
            else:
                self.bad_header(ln, line, "a live-range subsection header")
            return
        expected = _ITEMS.get(self.section or "")
        if self.section == "stack":
            self.stack_line(ln, line)
        elif expected is not None:
            self.bad_line(ln, line, expected)
        else:
            self.bad_line(ln, line, "a live-range subsection header before its items")

    def stack_line(self, ln: int, line: str) -> None:
        col = len(line) - len(line.lstrip(TREE_CHARS))  # the tree drawing before the name
        # The tail holds no " (" of its own, so it starts at the last one: one anchored match, linear time.
        m = STACK_TAIL.match(line, max(line.rfind(" ("), 0))
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
                spaced_int(m.group(2)),
                spaced_int(m.group(3)),
                spaced_int(m.group(4)),
                parent,
                ln,
                new_record(Range, (ln, col, ln, m.start())),
            )
        )
        while len(parents) < depth:
            parents.append(parent if parent is not None else len(nodes) - 1)
        parents.append(len(nodes) - 1)

    # ------------------------------------------------------------------ end of document
    def finish_live_range(self) -> None:
        """What spans the live-range dump: the sequence's length against the header's max, and a dump cut short
        (its subsections missing, the stack-trace breakdown ending with bytes not shown)."""
        doc = self.doc
        lines = self.lines
        if doc.live_range_available and doc.live_range_max is not None and doc.sequence and not doc.diagnostics:
            want = doc.live_range_max
            if len(doc.sequence) != want:
                ln = doc.sequence[-1].line
                self.err(
                    ln,
                    0,
                    len(lines[ln]),
                    f"InstructionSequence has {len(doc.sequence)} steps but the header says max {want}",
                    CODE_STRUCTURE,
                )
        if any(d.severity >= Severity.ERROR for d in doc.diagnostics):
            return
        if doc.live_range_available and doc.sequence:
            missing = [
                h
                for h, key in (("BufferLiveRange:", "BufferLiveRa"), ("Live ranges at N (peak):", "Live ranges "))
                if key not in self.lr_parts
            ]
            if missing:
                last = len(lines) - 1
                while last > 0 and not lines[last].strip():
                    last -= 1
                self.err(
                    last,
                    0,
                    len(lines[last]),
                    f"the live-range dump ends before `{missing[0]}` (truncated file?)",
                    CODE_STRUCTURE,
                )
        if doc.stack_trace and doc.stack_trace[-1].remaining != 0:
            node = doc.stack_trace[-1]
            self.err(
                node.line,
                0,
                len(lines[node.line]),
                f"the stack-trace breakdown ends with {node.remaining} bytes not shown (truncated file?)",
                CODE_STRUCTURE,
            )
