"""The model of one buffer-assignment document (any of XLA's buffer files), as `read_buffers` fills it.

Every record keeps the zero-based line it was read from and the exact `Range` of its name, so hover and
go-to-definition can point back into the text. Value identities use the canonical key of
`hlo_lsp.core.occurrences.value_key` (``fusion.10{0}``, ``x.5{}``) whatever form the file printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from hlo_lsp.core.diagnostics import Diagnostic, Range
from hlo_lsp.core.document import TextLines
from hlo_lsp.core.occurrences import OccurrenceTable

KINDS = ("single", "assignment", "values", "live-range", "memory-report")


@dataclass(slots=True)
class Assignment:
    """One ``value: <id name @color> (size=..,offset=..): shape`` line of an allocation."""

    value_id: int
    name: str  # as printed: ``fusion.10{0}`` or ``x.5``
    key: str  # canonical value key: ``fusion.10{0}`` or ``x.5{}``
    instruction: str
    index: tuple[int, ...] | None  # None when printed without braces (a non-tuple instruction)
    phi: bool
    color: int | None  # the ``@N`` memory color, None when not printed
    size: int
    offset: int
    shape: str
    allocation: int
    line: int
    range: Range  # of the printed name


@dataclass(slots=True)
class Allocation:
    """One ``allocation N: ...:`` header with its assigned values (records ``first .. first + count - 1`` of the
    document's value lines)."""

    index: int
    size: int
    line: int
    name_end: int  # the column where the ``allocation N`` token ends
    address: str | None = None  # ``0x7f56c8061d90`` in old dumps
    color: int = 0
    parameter: int | None = None
    parameter_shape: str | None = None
    parameter_shape_index: tuple[int, ...] | None = None
    output_shape: str | None = None
    constant: bool = False
    thread_local: bool = False
    maybe_live_out: bool = False
    preallocated_temp: bool = False
    records: object = field(default=None, repr=False, compare=False)  # the document's `Assignments`
    first: int = 0
    count: int = 0
    text: TextLines | list[str] | None = field(default=None, repr=False, compare=False)  # the document's lines

    @property
    def range(self) -> Range:
        """The range of the ``allocation N`` token."""
        return Range(self.line, 0, self.line, self.name_end)

    @property
    def assignments(self):
        """The allocation's value lines (`Assignment`s), a list-like view; [] when it has none."""
        if self.records is None:
            return []
        from hlo_lsp.core.buffers.columns import AssignmentRun

        return AssignmentRun(self.records, self.first, self.count)

    @property
    def header(self) -> str:
        """The whole ``allocation N: ...:`` line ("" without the document's lines)."""
        if self.text is None:
            return ""
        line = self.text[self.line]
        return line[:-1] if line.endswith("\r") else line

    @property
    def is_parameter(self) -> bool:
        return self.parameter is not None

    def kinds(self) -> list[str]:
        """The flags as XLA prints them, in its order (``parameter 2``, ``maybe-live-out``...)."""
        out = []
        if self.color:
            out.append(f"color {self.color}")
        if self.parameter is not None:
            out.append(f"parameter {self.parameter}")
        if self.output_shape is not None:
            out.append("output")
        for flag, label in (
            (self.constant, "constant"),
            (self.thread_local, "thread-local"),
            (self.maybe_live_out, "maybe-live-out"),
            (self.preallocated_temp, "preallocated-temp"),
        ):
            if flag:
                out.append(label)
        return out


class Position(NamedTuple):
    """An HloPosition under ``positions:``: instruction and shape index (None when printed without)."""

    instruction: str
    index: tuple[int, ...] | None
    range: Range  # of the instruction name


class Use(NamedTuple):
    """An HloUse under ``uses:``: ``name, operand N {index}``."""

    instruction: str
    operand: int
    index: tuple[int, ...] | None
    range: Range


@dataclass(slots=True)
class UsedValue:
    """One value of the ``Used values:`` section (old single file or ``-buffer-assignment-values.txt``).

    Its positions, uses and ``from instruction:`` text are read from the document's lines when asked for (a
    large dump has 100,000 of them and the IDE shows those of one value at a time); ``text`` is those lines."""

    value_id: int
    name: str
    key: str
    instruction: str
    index: tuple[int, ...] | None
    phi: bool
    color: int | None
    line: int
    range: Range
    from_instruction_line: int | None = None
    text: TextLines | list[str] | None = field(default=None, repr=False, compare=False)

    @property
    def positions(self) -> list[Position]:
        """The ``positions:`` items, in order; [] when none (or no text)."""
        return _block(self)[0]

    @property
    def uses(self) -> list[Use]:
        """The ``uses:`` items, in order; [] for ``(none)``."""
        return _block(self)[1]

    @property
    def from_instruction(self) -> str | None:
        """The instruction text after ``from instruction:``; None when the value has no such line."""
        line = self._from_line()
        if line is None:
            return None
        return line[19:] if line[18:19] == " " else line[18:]

    @property
    def from_instruction_range(self) -> Range | None:
        """The range of the instruction name after ``from instruction: %``; None without that line."""
        line = self._from_line()
        if line is None:
            return None
        from hlo_lsp.core.buffers.reader import from_instruction_span

        s, e = from_instruction_span(line)
        ln = self.from_instruction_line
        return Range(ln, s, ln, e)

    def _from_line(self) -> str | None:
        ln = self.from_instruction_line
        if ln is None or self.text is None:
            return None
        from hlo_lsp.core.buffers.reader import without_glued_header

        line = self.text[ln]
        return without_glued_header(line[:-1] if line.endswith("\r") else line)


def _block(v: UsedValue) -> tuple[list[Position], list[Use]]:
    if v.text is None:
        return [], []
    from hlo_lsp.core.buffers.reader import used_value_block

    return used_value_block(v.text, v.line)


class SequenceStep(NamedTuple):
    """``N:name`` of ``InstructionSequence:``."""

    step: int
    name: str
    line: int
    range: Range


@dataclass(slots=True)
class LiveRange:
    """``name{index}:start-end`` of ``BufferLiveRange:``."""

    key: str
    name: str
    instruction: str
    index: tuple[int, ...] | None
    start: int
    end: int
    line: int
    range: Range


@dataclass(slots=True)
class PeakEntry:
    """A line of ``Live ranges at N (peak):``. Current dumps print values (``x.5{}``, ``key`` set); old dumps print
    bare instruction names (``key`` None)."""

    name: str
    key: str | None
    instruction: str
    bytes: int
    cumulative: int | None
    line: int
    range: Range


@dataclass(slots=True)
class StackNode:
    """A node of the ``Stack trace breakdown for peak usage`` tree; ``parent`` indexes `BufferDoc.stack_trace`."""

    name: str
    depth: int
    percent: float
    total: int
    current: int
    remaining: int
    parent: int | None
    line: int
    range: Range


@dataclass(slots=True)
class MemoryRow:
    """A row of a memory-usage-report table (one distinct slice of an allocation). Its shapes list, often long,
    is read from the document's lines (``text``) when asked for."""

    cumulative: str  # human size as printed
    percent: int
    size_text: str
    offset: int
    n_values: int
    line: int
    text: TextLines | list[str] | None = field(default=None, repr=False, compare=False)

    @property
    def shapes(self) -> str:
        """The row's ``shapes_list`` as printed (stripped); "" without the document's lines."""
        if self.text is None:
            return ""
        parts = self.text[self.line].split(";", 4)
        return parts[4].strip() if len(parts) == 5 else ""


@dataclass(slots=True)
class MemoryTable:
    """One table of ``-memory-usage-report.txt`` (one allocation), with its memory space's header facts."""

    color: int
    memory_space: str
    total_bytes: int | None
    line: int
    rows: list[MemoryRow] = field(default_factory=list)
    allocation: int | None = None  # set by the older report layout, which names each table's allocation


# The record lists, kept by column (`buffers_columns` makes the record objects of the classes above).
from hlo_lsp.core.buffers import columns as _columns  # noqa: E402


@dataclass(slots=True)
class BufferDoc:
    """One buffer file's model. The record lists read like lists of records (see `buffers_columns`)."""

    kind: str
    allocations: list[Allocation] = field(default_factory=list)
    total_bytes_used: int | None = None
    total_bytes_used_line: int | None = None
    used_values: _columns.UsedValues = field(default_factory=lambda: _columns.UsedValues())
    live_range_available: bool | None = None  # False for ``HloLiveRange not available ...``
    live_range_max: int | None = None
    live_range_line: int | None = None
    sequence: _columns.SequenceSteps = field(default_factory=lambda: _columns.SequenceSteps())
    live_ranges: _columns.LiveRanges = field(default_factory=lambda: _columns.LiveRanges())
    peak_step: int | None = None
    peak_line: int | None = None
    peak_entries: _columns.PeakEntries = field(default_factory=lambda: _columns.PeakEntries())
    peak_breakdown_total: int | None = None
    stack_trace: list[StackNode] = field(default_factory=list)
    memory_report: list[MemoryTable] = field(default_factory=list)
    occurrences: OccurrenceTable = field(default_factory=OccurrenceTable)
    assignment_records: _columns.Assignments = field(default_factory=lambda: _columns.Assignments())  # every allocation's value lines
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def assignments(self) -> list[Assignment]:
        """Every value line of every allocation, in document order."""
        return list(self.assignment_records)
