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

from hlo_lsp.core.buffers.columns import NONE, shape_index
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.read_allocations import TOTAL, VALUE, AllocationsReader
from hlo_lsp.core.buffers.read_common import CODE_INTERNAL, CODE_STRUCTURE, CODE_TOTAL, intern_str, value_names
from hlo_lsp.core.buffers.read_live_range import LR, LR_HEADER, PEAK, SEQ, LiveRangeReader
from hlo_lsp.core.buffers.read_report import MEM_HEADER, MEM_SPACE, MEM_TOTAL, ReportReader
from hlo_lsp.core.buffers.read_values import ValuesReader
from hlo_lsp.core.buffers.text import FROM, HEADER, POSITION, USE
from hlo_lsp.core.diagnostics import Diagnostic, Range, Severity, error, info
from hlo_lsp.core.document import TextLines
from hlo_lsp.core.kinds import SPLIT_SUFFIXES
from hlo_lsp.core.occurrences import COL_BITS
from hlo_lsp.core.occurrences import pair_code as occ_pair_code
from hlo_lsp.core.shapes import human_size


class _Reader(AllocationsReader, ValuesReader, LiveRangeReader, ReportReader):
    """One pass over a buffer file's lines: `run` picks each line's section handler (`top`, `indented`, then the
    section readers' methods), `finish` checks what spans sections."""

    def run(self) -> BufferDoc:
        """Read every line. The loop inlines the handlers of the lines that make up nearly all of a large file
        (they mirror `ValuesReader.used_block` and `ValuesReader.used_part` for a used value's items,
        `AllocationsReader.alloc_value` for value lines, `LiveRangeReader.live_range_line` for the schedule, the
        live ranges and the peak list): a 10 MB file has a million such lines, and a method call with its regex
        lookups on each of them is paid a million times. Any line a fast path does not accept goes to them."""
        doc = self.doc
        lines = self.lines
        if "\r" in self.text_lines.text:
            lines = self.lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        instruction_use = self.instruction_use
        value_use = self.value_use
        intern = intern_str
        pos_match = POSITION.match
        use_match = USE.match
        header_match = HEADER.match
        value_match = VALUE.match
        seq_match = SEQ.match
        lr_match = LR.match
        peak_match = PEAK.match
        from_match = FROM.match
        add_peak = doc.peak_entries.add
        used = doc.used_values
        add_used = used.add
        add_assignment = doc.assignment_records.add
        add_step = doc.sequence.add
        add_live = doc.live_ranges.add
        # the occurrence table's columns, for the most frequent lines (what `instruction_use` appends)
        occ = doc.occurrences
        occ_pos, occ_end, occ_code, occ_key = occ.pos.append, occ.ends.append, occ.codes.append, occ.keys.append
        use_code = occ_pair_code("instruction", "use")
        col_bits = COL_BITS
        # whole used-value blocks are read from the text itself (offsets from its line table) when it has no \r
        block_text = None if lines is not self.text_lines_list else self.text_lines.text
        cum = self.text_lines.offsets()
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
                                if itext is not None:  # `value_names`, inlined: once per value line
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
                            continue
                    elif section == "lrs" and not self.skipping and line.startswith("    "):
                        m = lr_match(line)
                        if m is not None:
                            instr, itext, first, last = m.groups()
                            e = m.end(2) if itext is not None else m.end(1)
                            if itext is not None:  # `value_names`, inlined: once per live-range line
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
                    instr, itext, key = value_names(instr, itext)
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
        elif line == "Used values:":
            self.section = "used"
            self.saw.add("values")
        elif line.startswith("HloLiveRange"):
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
        elif line.startswith("Memory Space:"):
            self.saw.add("memory-report")
            m = MEM_SPACE.match(line)
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
            m = MEM_TOTAL.match(line)
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
        elif MEM_HEADER.match(line):
            self.section = "mem"  # recover from a lost `Memory Space:` header
            self.saw.add("memory-report")
            self.mem_line(ln, line)
        else:
            self.bad_header(ln, line, "a section header before indented lines")

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


def read_buffers(text: str | TextLines, kind_hint: str | None = None) -> BufferDoc:
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
