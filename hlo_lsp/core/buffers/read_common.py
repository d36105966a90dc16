"""What every section reader shares: the reader's state (`ReaderState`: the document being filled, the
section state machine's fields, diagnostics), the diagnostic codes, and value-name helpers.

Each section reader holds both ways of reading its lines: a *fast loop* over the lines that make up nearly all of a
large file (a 10 MB file has a million of them, and a method call with its regex lookups per line would be paid a
million times), which returns at the first line it does not take; and the per-line handlers the dispatcher
(`reader`) calls for every other line, which for an item line the fast loop declined only say what is wrong."""

from __future__ import annotations

import re
import sys

from hlo_lsp.core.buffers.columns import shape_index
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.records import Allocation, MemoryTable
from hlo_lsp.core.diagnostics import Range, error
from hlo_lsp.core.document import TextLines

new_record = tuple.__new__  # builds NamedTuples without their Python-level __new__ (hot path)
intern_str = sys.intern  # names, keys and shapes repeat across a module's files: one string each
# lines (a mask) between two `turns.give_way` in a reader's fast loops: about 4 ms of reading; between them a
# background read takes turns of the GIL with a request, at them it waits while requests are being answered
GIVE_WAY_LINES = 1023

CODE_SYNTAX = "buffers.syntax"
CODE_STRUCTURE = "buffers.structure"
CODE_TOTAL = "buffers.total"
CODE_INTERNAL = "buffers.internal"


def value_names(instr: str, itext: str | None) -> tuple[str, str | None, str]:
    """A value's instruction name, index text and key (``name{1,0}``, or ``name{}`` without an index), each
    interned (names and keys repeat across a module's files); raises ValueError for a malformed index text, as
    the reader's parse of it does."""
    if itext is not None:
        shape_index(itext)
        itext = intern_str(itext)
    instr = intern_str(instr)
    return instr, itext, intern_str(instr + itext if itext is not None else instr + "{}")


def spaced_int(text: str) -> int:
    return int(text.replace(" ", ""))


def without_cr(lines: list[str]) -> list[str]:
    """``lines`` as the reader holds those of a text with a ``\r`` in it: each line's ending ``\r`` dropped."""
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class ReaderState:
    """The state one pass of `reader._Reader` fills; the section readers add their line handlers to it."""

    def __init__(self, text: str | TextLines, kind_hint: str | None):
        self.text_lines = text if isinstance(text, TextLines) else TextLines(text)
        self.lines = self.text_lines.split()  # transient: the records keep line numbers, not line strings
        self.doc = BufferDoc(kind=kind_hint or "")
        self.doc.has_cr = "\r" in self.text_lines.text
        if self.doc.has_cr:
            self.lines = without_cr(self.lines)
            self.block_text: str | None = None  # the blocks' offsets would count the \r: line by line
        else:
            self.block_text = self.text_lines.text  # whole used-value blocks are matched in the text itself
        self.line_offsets = self.text_lines.offsets()  # where each line starts in it, less its line number
        self.doc.used_values.text = self.text_lines
        self.doc.allocations.records = self.doc.assignment_records
        self.doc.allocations.text = self.text_lines
        self.section: str | None = None  # alloc | used | seq | lr | peak | stack | mem | lr-none
        self.sub: str | None = None  # positions | uses (inside a used value)
        self.alloc: Allocation | None = None
        self.value: int | None = None  # the number of the used value being read, in doc.used_values
        self.table: MemoryTable | None = None
        self.space: tuple[int, str, int | None] | None = None
        self.stack_parents: list[int] = []
        self.saw: set[str] = set()
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
    def finish_value(self) -> None:  # pragma: no cover - `read_values.ValuesReader` defines it
        """Close the used value being read (one section reader calls it on another's state)."""
        raise NotImplementedError

    def finish_alloc(self) -> None:  # pragma: no cover - `read_allocations.AllocationsReader` defines it
        """Close the allocation being read (one section reader calls it on another's state)."""
        raise NotImplementedError

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

    def bad_header(self, ln: int, line: str, what: str) -> None:
        """`bad_line` for a header: the indented lines under it are skipped (they belong to what was not read)."""
        self.bad_line(ln, line, what)
        self.skipping = True

    def header(self, ln: int, line: str, pattern: re.Pattern[str], what: str) -> re.Match[str] | None:
        """``pattern``'s match of a header line, or None after `bad_header`."""
        m = pattern.match(line)
        if m is None:
            self.bad_header(ln, line, what)
        return m

    def internal_error(self, ln: int, line: str, exc: Exception) -> None:
        """A handler raised on line ``ln`` (a reader bug, or a number or index `int` would not read): reported
        on the line, and reading goes on with the next one."""
        self.err(ln, 0, len(line), f"internal reader error: {type(exc).__name__}: {exc}", CODE_INTERNAL)
