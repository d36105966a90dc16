"""Reader for XLA's buffer-assignment dumps: the old single file and each file of the current split set.

Algorithm: one pass over the lines with a small section state machine. Where the current section has a fast loop
(its section reader's `value_lines`, `used_lines` or `live_range_items`: the lines that make up nearly all of a
large file), that loop reads on until a line it does not take; that line goes to the dispatcher, where its first
characters pick the handler (top-level headers start in column 0, allocation values with `` value:``, used-value
parts with one space, list items with two or four spaces). Each line is matched by one precompiled, anchored
regex without nested quantifiers, so a line costs O(its length) and a garbled line can never make the reader
backtrack. Any line no handler accepts becomes an error `Diagnostic` over that line's text and reading goes on
with the next line; an unexpected exception is caught the same way, so `read_buffers` never raises.

Sections (all files use the same machinery, so the old single file is just all sections in one document):
``BufferAssignment:`` + ``allocation N: ...:`` + `` value: ...`` (the `-buffer-assignment.txt` listing),
``Total bytes used:`` + ``Used values:`` + ``<id name @c>`` blocks (`-buffer-assignment-values.txt`),
``HloLiveRange (max N):`` with ``InstructionSequence:``, ``BufferLiveRange:``, ``Live ranges at N (peak):``
and the ``Stack trace breakdown`` tree (`-live-range.txt`), and ``Memory Space:`` + tables
(`-memory-usage-report.txt`). Formats follow xla/service/buffer_assignment.cc, hlo_value.cc and
hlo_live_range.cc, checked against the seeds and the jax-cpu corpus.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.read_allocations import AllocationsReader
from hlo_lsp.core.buffers.read_common import CODE_STRUCTURE
from hlo_lsp.core.buffers.read_live_range import LiveRangeReader
from hlo_lsp.core.buffers.read_report import MEM_HEADER, ReportReader
from hlo_lsp.core.buffers.read_values import ValuesReader
from hlo_lsp.core.diagnostics import Diagnostic, Range, error, info
from hlo_lsp.core.kinds import SPLIT_SUFFIXES
from hlo_lsp.core.process import turns

_LR_SUBSECTIONS = ("  InstructionSequence:", "  BufferLiveRange:", "  Live ranges at ", "  Stack trace")


class _Reader(AllocationsReader, ValuesReader, LiveRangeReader, ReportReader):
    """One pass over a buffer file's lines: `run` alternates between the current section's fast loop and the
    per-line dispatch (`top` for a line in column 0, `indented` for the others), `finish` checks what spans
    sections."""

    def run(self, finish: bool = True, close: bool = True) -> BufferDoc:
        """Read every line (without the checks of the whole text when ``finish`` is False: a fragment read by
        `patch`; without closing the last record when ``close`` is False: a fragment that ends inside one).
        Where the section has a fast loop (the value lines of the listing, the used values, the schedule, the live
        ranges and the peak list: nearly all of a large file), it reads on until a line it does not take; that
        line goes through the dispatcher, which may start another section."""
        fast = {
            "alloc": self.value_lines,
            "used": self.used_lines,
            "seq": self.live_range_items,
            "lrs": self.live_range_items,
            "peak": self.live_range_items,
        }
        lines = self.lines
        n = len(lines)
        ln = 0
        while ln < n:
            turns.give_way()  # between runs of lines: a background read lets the requests under way go first
            loop = fast.get(self.section)  # type: ignore[arg-type]
            if loop is not None:
                ln = loop(ln)
                if ln >= n:
                    break
            line = lines[ln]
            if line:
                try:
                    if line[0] == " ":
                        self.indented(ln, line)
                    else:
                        self.top(ln, line)
                except Exception as exc:  # a reader bug must not take the server down: report it on the line
                    self.internal_error(ln, line, exc)
            ln += 1
        if close:
            self.finish_value()
            self.finish_alloc()
        doc = self.doc
        doc.read_count = len(doc.diagnostics)
        doc.end_saw = frozenset(self.saw)
        doc.end_lr_parts = frozenset(self.lr_parts)
        if finish:
            self.finish()
        return doc

    def top(self, ln: int, line: str) -> None:
        """A line in column 0: a section header, or a line of a section whose lines start there."""
        if line.isspace():
            return
        self.skipping = False
        c = line[0]
        if c == "<":
            self.value_header(ln, line)
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
        handler = self._headers.get(line)
        if handler is None:
            handler = next((h for prefix, h in self._header_prefixes if line.startswith(prefix)), None)
        if handler is None:
            self.bad_line(ln, line, "a section header (`BufferAssignment:`, `Used values:`, `HloLiveRange`, ...)")
        else:
            handler(self, ln, line)

    # the section headers, each read by its section's reader
    _headers: dict[str, Callable[[Any, int, str], None]] = {
        "BufferAssignment:": AllocationsReader.listing_header,
        "Used values:": ValuesReader.values_header,
        "Allocations sorted by size:": ReportReader.old_report,
        "Allocations sorted by size with their values:": ReportReader.old_report,
    }
    _header_prefixes: tuple[tuple[str, Callable[[Any, int, str], None]], ...] = (
        ("Total bytes used:", AllocationsReader.total_used),
        ("HloLiveRange", LiveRangeReader.live_range_header),
        ("Memory Space:", ReportReader.memory_space),
        ("Total bytes:", ReportReader.space_total),
    )

    def indented(self, ln: int, line: str) -> None:
        """An indented line no fast loop took: handed to its section's reader."""
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
        elif line.startswith(_LR_SUBSECTIONS):
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
        """The document's kind (when no hint gave it) and the checks that span sections or the whole text."""
        doc = self.doc
        lines = self.lines
        if not doc.kind:
            doc.kind = kind_of(self.saw, bool(doc.used_values))
        if not self.saw:
            doc.diagnostics.append(
                error(
                    Range(0, 0, 0, len(lines[0]) if lines else 0),
                    CODE_STRUCTURE,
                    "no buffer-assignment section found (empty or not an XLA buffer dump)",
                )
            )
        self.finish_listing()
        self.finish_live_range()
        if lines and lines[-1]:
            ln = len(lines) - 1
            doc.diagnostics.append(
                info(
                    Range(ln, 0, ln, len(lines[ln])),
                    "buffers.truncated",
                    "the file ends in the middle of a line (XLA ends dumps with a newline): is it truncated?",
                )
            )
        if doc.live_range_available is False:
            ln = doc.live_range_line or 0
            doc.diagnostics.append(
                info(
                    Range(ln, 0, ln, len(lines[ln])),
                    "buffers.no-live-range",
                    "XLA wrote no live ranges for this module",
                )
            )


def kind_of(saw: set[str], has_values: bool) -> str:
    """The kind of a document by the sections it held (``saw``), when no file name said it."""
    if "assignment" in saw:
        return "single" if "values" in saw or "live-range" in saw else "assignment"
    if "memory-report" in saw and not has_values:
        return "memory-report"
    for section in ("values", "live-range", "memory-report"):
        if section in saw:
            return section
    return "assignment"


def kind_from_path(path: str) -> str | None:
    """The document kind a dump file's name implies; None when the name is not a split-set name."""
    for suffix, kind in SUFFIX_KINDS:
        if path.endswith(suffix):
            return kind
    return None


SUFFIX_KINDS = SPLIT_SUFFIXES  # (suffix, kind), longest suffix first: the one table, in `kinds`

__all__ = ["kind_from_path", "SUFFIX_KINDS", "Diagnostic"]
