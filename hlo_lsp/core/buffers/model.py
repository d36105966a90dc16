"""The model of one buffer-assignment document (any of XLA's buffer files), as `read_buffers` fills it: its
records (`records`), the long lists kept by column (`columns`).

Every record keeps the zero-based line it was read from and the exact `Range` of its name, so hover and
go-to-definition can point back into the text. Value identities use the canonical key of
`hlo_lsp.core.occurrences.value_key` (``fusion.10{0}``, ``x.5{}``) whatever form the file printed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hlo_lsp.core.buffers import columns as _columns
from hlo_lsp.core.buffers.records import Assignment, MemoryTable, StackNode
from hlo_lsp.core.diagnostics import Diagnostic
from hlo_lsp.core.occurrences import OccurrenceTable

_SERIALS = itertools.count(1)


@dataclass(slots=True)
class BufferDoc:
    """One buffer file's model. The record lists read like lists of records (see `columns`)."""

    kind: str
    allocations: _columns.Allocations = field(default_factory=lambda: _columns.Allocations())
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
    assignment_records: _columns.Assignments = field(
        default_factory=lambda: _columns.Assignments()
    )  # every allocation's value lines
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # What patching the model for an edit needs (`patch`): how many of ``diagnostics`` the pass over the lines
    # made (`finish` appends the rest; -1 for a model no reader made), the sections seen and the live-range
    # subsections read by the end of the pass, whether the text holds a ``\r``, and the model's serial number
    # (with, for a patched model, the serial it was patched from and where its occurrences changed:
    # `patch.Patched`)
    read_count: int = -1
    end_saw: frozenset = frozenset()
    end_lr_parts: frozenset = frozenset()
    has_cr: bool = False
    serial: int = field(default_factory=lambda: next(_SERIALS), compare=False)
    patched: object = field(default=None, repr=False, compare=False)
    # a patched model's new block, as read (section, its lines, its model): the old block of the next patch when
    # that edit is in the same block (`patch._kept_block`)
    kept_block: tuple | None = field(default=None, repr=False, compare=False)

    def assignments(self) -> list[Assignment]:
        """Every value line of every allocation, in document order."""
        return list(self.assignment_records)
