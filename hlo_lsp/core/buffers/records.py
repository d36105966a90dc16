"""The records of a buffer-assignment document, one class per kind of line (`model.BufferDoc` holds them).

Every record keeps the zero-based line it was read from and the exact `Range` of its name, so hover and
go-to-definition can point back into the text. Value identities use the canonical key of
`hlo_lsp.core.occurrences.value_key` (``fusion.10{0}``, ``x.5{}``) whatever form the file printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from hlo_lsp.core.buffers.text import FROM, POSITION, USE, from_instruction_span, parse_index, without_glued_header
from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.document import TextLines

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
        return self.records.run(self.first, self.count)

    @property
    def last_line(self) -> int:
        """The line of the allocation's last value line (its header's when it has none), without making it."""
        if self.records is None or not self.count:
            return self.line
        return self.records.line[self.first + self.count - 1]  # type: ignore[attr-defined]  # its `Assignments`

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
        flags = (self.constant, self.thread_local, self.maybe_live_out, self.preallocated_temp)
        return allocation_kinds(self.color, self.parameter, self.output_shape is not None, flags)


FLAG_LABELS = ("constant", "thread-local", "maybe-live-out", "preallocated-temp")  # an allocation's flags, in order


def allocation_kinds(color: int, parameter: int | None, output: bool, flags) -> list[str]:
    """What an allocation is, as XLA prints it, in its order: ``color N``, ``parameter N``, ``output``, then each
    flag of `FLAG_LABELS` set in ``flags`` (one truth value each, in that order)."""
    out = []
    if color:
        out.append(f"color {color}")
    if parameter is not None:
        out.append(f"parameter {parameter}")
    if output:
        out.append("output")
    out += [label for flag, label in zip(flags, FLAG_LABELS) if flag]
    return out


class Position(NamedTuple):
    """An HloPosition under ``positions:``: instruction and shape index (None when printed without)."""

    instruction: str
    # the field shadows tuple.index (a method), as the dump calls it: the record never needs that method
    index: tuple[int, ...] | None  # type: ignore[assignment]
    range: Range  # of the instruction name


class Use(NamedTuple):
    """An HloUse under ``uses:``: ``name, operand N {index}``."""

    instruction: str
    operand: int
    index: tuple[int, ...] | None  # type: ignore[assignment]  # shadows tuple.index, as in Position
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
    def last_line(self) -> int:
        """The value's last line: its `` from instruction:`` line, its own line without one (`UsedValues.spans`
        gives every value's from the columns)."""
        return self.from_instruction_line if self.from_instruction_line is not None else self.line

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
        ln = self.from_instruction_line
        if line is None or ln is None:
            return None
        s, e = from_instruction_span(line)
        return Range(ln, s, ln, e)

    def _from_line(self) -> str | None:
        ln = self.from_instruction_line
        if ln is None or self.text is None:
            return None
        line = self.text[ln]
        return without_glued_header(line[:-1] if line.endswith("\r") else line)


def _block(v: UsedValue) -> tuple[list[Position], list[Use]]:
    if v.text is None:
        return [], []
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


# The record lists, kept by column (`columns` makes the record objects of the classes above).


def used_value_block(lines, header: int) -> tuple[list[Position], list[Use]]:
    """The positions and uses of the used value whose ``<id name @color>`` header is line ``header`` of
    ``lines``, read from the lines below it exactly as the reader accepts them (its block ends at the next line
    that is not indented; lines the reader rejected are left out); ([], []) when there are none."""
    positions: list[Position] = []
    uses: list[Use] = []
    sub = None
    n = len(lines)
    ln = header + 1
    while ln < n:
        line = lines[ln]
        if line.endswith("\r"):
            line = line[:-1]
        if not line or line.isspace():
            ln += 1
            continue
        if line[0] != " ":
            break
        if line[1] != " ":
            if line == " positions:":
                sub = "positions"
            elif line == " uses:":
                sub = "uses"
            elif line.startswith(" from instruction:") and FROM.match(line):
                break  # the value ends there (the next one's header may be glued to this line's end)
        elif sub == "positions":
            m = POSITION.match(line)
            if m is not None:
                itext = m.group(2)
                try:
                    positions.append(
                        Position(m.group(1), parse_index(itext) if itext else None, Range(ln, 2, ln, m.end(1)))
                    )
                except ValueError:
                    pass  # reported by the reader
        elif sub == "uses" and line != "  (none)":
            m = USE.match(line)
            if m is not None:
                name, opnd, itext = m.group(1, 2, 3)
                try:
                    uses.append(Use(name, int(opnd), parse_index(itext) if itext else None, Range(ln, 2, ln, m.end(1))))
                except ValueError:
                    pass
        ln += 1
    return positions, uses
