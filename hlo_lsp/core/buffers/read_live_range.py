"""``HloLiveRange (max N):`` (`-live-range.txt`): the instruction sequence, the buffer live ranges, the values live
at the peak and the ``Stack trace breakdown`` tree under it.
"""

from __future__ import annotations

import re

from hlo_lsp.core.buffers.read_common import ReaderState, new_record, spaced_int, value_names
from hlo_lsp.core.buffers.read_common import intern_str as intern
from hlo_lsp.core.buffers.records import StackNode
from hlo_lsp.core.buffers.text import INDEX, NAME
from hlo_lsp.core.diagnostics import Range

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


class LiveRangeReader(ReaderState):
    """The live-range section of `reader._Reader`."""

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
                m = self.header(ln, line, PEAK_HEADER, "`  Live ranges at N (peak):`")
                if m is None:
                    return
                doc.peak_step = int(m.group(1))
                doc.peak_line = ln
                self.section = "peak"
            elif line.startswith("  Stack trace breakdown"):
                m = self.header(ln, line, STACK_HEADER, "`  Stack trace breakdown for peak usage: N bytes`")
                if m is None:
                    return
                doc.peak_breakdown_total = spaced_int(m.group(1))
                self.section = "stack"
                self.stack_parents = []
            else:
                self.bad_header(ln, line, "a live-range subsection header")
            return
        s = self.section
        if s == "seq":
            m = SEQ.match(line)
            if m is None:
                self.bad_line(ln, line, "`    N:instruction`")
                return
            name = intern(m.group(2))
            doc.sequence.add(int(m.group(1)), name, ln, m.start(2), m.end(2))
            self.instruction_use(ln, m.start(2), m.end(2), name)
        elif s == "lrs":
            m = LR.match(line)
            if m is None:
                self.bad_line(ln, line, "`    name{index}:start-end`")
                return
            e = m.end(2) if m.group(2) is not None else m.end(1)
            instr, itext, key = value_names(m.group(1), m.group(2))
            doc.live_ranges.add(key, instr, itext, int(m.group(3)), int(m.group(4)), ln, e)
            self.value_use(ln, 4, e, key)
        elif s == "peak":
            m = PEAK.match(line)
            if m is None:
                self.bad_line(ln, line, "`    name{index}: N bytes (cumulative: N bytes)`")
                return
            instr, itext = intern(m.group(1)), m.group(2)
            e = m.end(2) if itext is not None else m.end(1)
            if itext is not None:
                itext = intern(itext)
            peak_key = intern(instr + itext) if itext is not None else None
            cum_text = m.group(4)
            nbytes, cum = int(m.group(3)), (int(cum_text) if cum_text is not None else None)
            doc.peak_entries.add(instr, itext, nbytes, cum, ln, e)
            if peak_key is not None:
                self.value_use(ln, 4, e, peak_key)
            else:
                self.instruction_use(ln, 4, e, instr)
        elif s == "stack":
            self.stack_line(ln, line)
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
