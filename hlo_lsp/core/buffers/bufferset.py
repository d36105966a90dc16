"""One module's buffer facts joined across its dump files (or read from one old single file).

Algorithm: `BufferSet.from_docs` walks the documents once each, in a fixed kind order (assignment listing,
used values, live ranges, peak list, memory report), and merges every fact into one `BufferValue` (`value`) per
canonical value key (``fusion.10{0}``, ``x.5{}``) with dict lookups, so the join is linear in the number of
facts and every later lookup is O(1). Each fact keeps a `Source` (document kind, line, range) so the IDE can
jump from a value to where each file mentions it. Facts that disagree between files (a value id that differs,
a value with a live range but no allocation) become `problems`, never exceptions.

`siblings` finds the files of one module's split set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hlo_lsp.core.buffers.columns import (
    SequenceSteps,
)
from hlo_lsp.core.buffers.join import join_docs
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.records import Allocation, MemoryTable, PeakEntry, SequenceStep
from hlo_lsp.core.buffers.value import AllocationSources, BufferValue, Roles, Source
from hlo_lsp.core.diagnostics import Diagnostic
from hlo_lsp.core.process import pieces


@dataclass(slots=True)
class BufferSet:
    """A module's buffer facts joined from its files: values by key (and by id, by instruction), allocations, the
    schedule, the peak list and the report, each with where it was read, and what the files disagree on."""

    values_by_key: dict[str, BufferValue] = field(default_factory=dict)
    _by_id: dict[int, BufferValue] | None = None  # see `values_by_id`
    allocations: list[Allocation] = field(default_factory=list)
    allocation_at: AllocationSources = field(default_factory=AllocationSources)
    sequence: Sequence[SequenceStep] = field(default_factory=list)
    sequence_at: str | None = None  # kind of the document holding the sequence
    peak_step: int | None = None
    peak_entries: Sequence[PeakEntry] = field(default_factory=list)
    peak_at: Source | None = None
    total_bytes_used: int | None = None
    total_at: Source | None = None
    live_range_max: int | None = None
    memory_report: list[MemoryTable] = field(default_factory=list)
    docs: dict[str, BufferDoc] = field(default_factory=dict)
    problems: list[tuple[str, Diagnostic]] = field(default_factory=list)  # (document kind, diagnostic)
    # Maps made on first use (a large module's would cost megabytes for one lookup now and then):
    _by_instruction: dict[str, BufferValue | list[BufferValue]] | None = None  # one value or several
    _step_of: dict[str, int] | None = None
    # per role (`value.ASG` ...): the record number of each value (-1: none), which document it is in, and per
    # document its (kind, column list); `BufferValue` reads its facts through them
    roles: Roles = field(default_factory=Roles)

    # ------------------------------------------------------------------ lookups (O(1))
    def value(self, key: str) -> BufferValue | None:
        """The value with canonical key ``key`` (``x.5{}``); None when no file names it."""
        return self.values_by_key.get(key)

    def values_of(self, instruction: str) -> list[BufferValue]:
        """The values an instruction defines, ordered by shape index (``{}`` first); [] when none."""
        got = self._instruction_map().get(instruction)
        if got is None:
            return []
        if isinstance(got, BufferValue):
            return [got]
        return sorted(got, key=lambda v: v.index or ())

    def _instruction_map(self) -> dict[str, BufferValue | list[BufferValue]]:
        """Instruction name -> the value it defines, or the list of them; made on first use, `pieces.PIECE`
        values at a time (a background thread gives way between them: `warm`)."""
        by = self._by_instruction
        if by is not None:
            return by
        by = {}
        values = list(self.values_by_key.values())
        for start in pieces.starts(0, len(values)):
            for v in values[start : start + pieces.PIECE]:
                same = by.get(v.instruction)
                if same is None:
                    by[v.instruction] = v  # most instructions define one value: no list for it
                elif isinstance(same, BufferValue):
                    by[v.instruction] = [same, v]
                else:
                    same.append(v)
        self._by_instruction = by
        return by

    def warm(self) -> None:
        """Make the map every hover on an instruction reads (`values_of`) now, in the background after the join:
        made by the first hover, it took the event loop 20-40 ms on the benchmark's 23 MB module (Neovim's hovers
        after the first answers, GIL watcher)."""
        self._instruction_map()

    def step_of(self, instruction: str) -> int | None:
        """The instruction's position in the schedule (``InstructionSequence``); None when not scheduled here."""
        if self._step_of is None:
            S = self.sequence
            if isinstance(S, SequenceSteps):
                self._step_of = dict(zip(S.name, (S.req(S.step, "step", i) for i in range(len(S)))))
            else:
                self._step_of = {s.name: s.step for s in S}
        return self._step_of.get(instruction)

    @property
    def values_by_id(self) -> dict[int, BufferValue]:
        """Values by their id (the first value listed with an id, when a broken dump gives one id twice)."""
        if self._by_id is None:
            by: dict[int, BufferValue] = {}
            for v in self.values_by_key.values():
                if v.value_id is not None:
                    by.setdefault(v.value_id, v)
            self._by_id = by
        return self._by_id

    def allocation(self, index: int) -> Allocation | None:
        """Allocation ``index``; None when the listing has no such allocation."""
        if 0 <= index < len(self.allocations) and self.allocations[index].index == index:
            return self.allocations[index]
        for a in self.allocations:
            if a.index == index:
                return a
        return None

    # ------------------------------------------------------------------ building
    @classmethod
    def from_docs(cls, docs: list[BufferDoc]) -> BufferSet:
        """Join one old single file, or the split files of one module (any subset, any order): see `join`."""
        return join_docs(cls(), docs)


__all__ = ["BufferSet", "BufferValue", "Source"]
