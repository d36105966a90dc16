"""One value of a module's buffer files, as `bufferset.BufferSet` joins it: `BufferValue` reads each fact from the
record it was joined from (assignment line, used value, its ``from instruction:`` entry, live range, peak entry),
and `Source` says where a fact was read."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from hlo_lsp.core.buffers.columns import WIDE
from hlo_lsp.core.buffers.records import Allocation, Assignment, LiveRange, PeakEntry, Position, Use, UsedValue
from hlo_lsp.core.diagnostics import Range


class Source(NamedTuple):
    """Where a fact was read: the document's kind (``single``, ``assignment``, ...), zero-based line, name range."""

    kind: str
    line: int
    range: Range


class AllocationSources(Mapping[int, "Source"]):
    """Allocation index -> the `Source` of its header line (``allocation N``), a mapping whose values are made when
    asked: a dict of them for the benchmark's 23,576 allocations took 30 ms of its join, and the IDE asks for one
    at a time. Later documents win, as in the join."""

    __slots__ = ("_by_index",)

    def __init__(self) -> None:
        self._by_index: dict[int, tuple[str, Allocation]] = {}

    def add(self, kind: str, allocations: Iterable[Allocation]) -> None:
        """The allocations of a document of ``kind``."""
        self._by_index.update((a.index, (kind, a)) for a in allocations)

    def get(self, index: int) -> Source | None:  # type: ignore[override]  # no default: None
        got = self._by_index.get(index)
        if got is None:
            return None
        kind, a = got
        return Source(kind, a.line, a.range)

    def kind(self, index: int) -> str | None:
        """The kind of the document that lists allocation ``index``, making no `Source`."""
        got = self._by_index.get(index)
        return None if got is None else got[0]

    def __getitem__(self, index: int) -> Source:
        got = self.get(index)
        if got is None:
            raise KeyError(index)
        return got

    def __contains__(self, index: object) -> bool:
        return index in self._by_index

    def __iter__(self) -> Iterator[int]:
        return iter(self._by_index)

    def __len__(self) -> int:
        return len(self._by_index)


# The kinds of record a value is joined from, numbering the per-role lists of `BufferSet`.
ASG, USED, FROM, LIVE, PEAK = range(5)
ROLES = 5


class Roles:
    """The per-role lists of a `BufferSet`, filled by its join: for each kind of record, the record each value
    was joined from and its document, and per document its (kind, column list). The values read their facts
    through them. A value holds these and not its set: the set holds its values, and a value pointing back
    at it made every join a reference cycle, which reference counting never frees. The server freezes what
    survives its idle-time collections (`gc.freeze`), the join with it, and a join dropped by an edit was then
    never freed at all (16 MB an edit of the benchmark's values file, for as long as the file stayed open)."""

    __slots__ = ("records", "docs", "sources")

    def __init__(self, size: int = 0) -> None:
        """Lists for ``size`` values, none joined from any record yet."""
        self.records: list[array] = [array("q", [-1]) * size for _ in range(ROLES)]  # the record number (-1: none)
        self.docs: list[bytearray] = [bytearray(size) for _ in range(ROLES)]  # the document holding that record
        self.sources: list[list[tuple[str, object]]] = [[] for _ in range(ROLES)]  # (kind, column list) a document


@dataclass(slots=True)
class BufferValue:
    """Everything the module's buffer files say about one HloValue. Facts a file did not give are None/empty.

    The value is number ``n`` of its `BufferSet`, which keeps, for each kind of record (assignment line, used
    value, its ``from instruction:`` entry, live range, peak entry), the record the value was joined from (the
    last one, as later lines win) by number in its document's columns; each fact is read from there when asked
    for. One small object a value instead of a copy of every fact and a `Source` tuple each."""

    key: str
    instruction: str
    index: tuple[int, ...] | None
    value_id: int | None = None
    phi: bool = False
    color: int | None = None
    roles: Roles | None = field(default=None, repr=False, compare=False)  # its set's (`Roles`)
    n: int = field(default=-1, repr=False, compare=False)

    def _record(self, role: int):
        """(document kind, its column list, record number) of one role; None when no file gave that record."""
        roles = self.roles
        if roles is None:
            return None
        n = self.n
        r = roles.records[role][n]
        if r < 0:
            return None
        kind, cols = roles.sources[role][roles.docs[role][n]]
        return kind, cols, r

    def _number(self, role: int, column: str) -> int | None:
        got = self._record(role)
        if got is None:
            return None
        cols, r = got[1], got[2]
        values = getattr(cols, column)
        v = values[r]
        return v if v > WIDE else cols.num(values, column, r)

    def _object(self, role: int):
        """The record of one role as its object; None when no file gave that record."""
        got = self._record(role)
        return got[1][got[2]] if got is not None else None

    @property
    def assignment(self) -> Assignment | None:
        """The value's line in the allocation listing; None when the listing has none."""
        return self._object(ASG)

    @property
    def used(self) -> UsedValue | None:
        """The value's ``Used values:`` entry; None when no values file lists it."""
        return self._object(USED)

    @property
    def live(self) -> LiveRange | None:
        return self._object(LIVE)

    @property
    def peak(self) -> PeakEntry | None:
        return self._object(PEAK)

    @property
    def name(self) -> str | None:
        """The name as the assignment listing printed it; None when the listing has no line for the value."""
        got = self._record(ASG)
        if got is None:
            return None
        cols, r = got[1], got[2]
        itext = cols.index_text[r]
        return cols.instruction[r] if itext is None else cols.instruction[r] + itext

    @property
    def allocation(self) -> int | None:
        return self._number(ASG, "allocation")

    @property
    def offset(self) -> int | None:
        return self._number(ASG, "offset")

    @property
    def size(self) -> int | None:
        return self._number(ASG, "size")

    @property
    def shape(self) -> str | None:
        got = self._record(ASG)
        return got[1].shape[got[2]] if got is not None else None

    def _source(self, role: int, col: int | None = None) -> Source | None:
        """Where the record of one role was read: its line and the range of its name (from column ``col`` in
        the files that write names there, else from the record's own start column); None when no file gave it."""
        got = self._record(role)
        if got is None:
            return None
        kind, cols, r = got
        ln = cols.line[r]
        return Source(kind, ln, Range(ln, cols.start[r] if col is None else col, ln, cols.end[r]))

    @property
    def assignment_at(self) -> Source | None:
        return self._source(ASG)

    @property
    def live_range(self) -> tuple[int, int] | None:
        """(first step, last step) of the value's live range; None when no live-range file lists it."""
        got = self._record(LIVE)
        if got is None:
            return None
        cols, r = got[1], got[2]
        return (cols.num(cols.first, "first", r), cols.num(cols.last, "last", r))

    @property
    def live_range_at(self) -> Source | None:
        return self._source(LIVE, 4)

    @property
    def used_at(self) -> Source | None:
        return self._source(USED)

    @property
    def peak_bytes(self) -> int | None:
        return self._number(PEAK, "bytes")

    @property
    def peak_at(self) -> Source | None:
        return self._source(PEAK, 4)

    @property
    def positions(self) -> list[Position]:
        u = self.used
        return u.positions if u is not None else []

    @property
    def uses(self) -> list[Use]:
        u = self.used
        return u.uses if u is not None else []

    @property
    def from_instruction(self) -> str | None:
        u = self.used
        return u.from_instruction if u is not None else None

    @property
    def from_instruction_at(self) -> Source | None:
        """Where the ``from instruction:`` line names the instruction; None when no entry has that line."""
        got = self._record(FROM)
        if got is None:
            return None
        u = got[1][got[2]]
        ln = u.from_instruction_line
        return Source(got[0], ln, u.from_instruction_range or Range(ln, 0, ln, 0))
