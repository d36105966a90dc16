"""One module's buffer facts joined across its dump files (or read from one old single file).

Algorithm: `BufferSet.from_docs` walks the documents once each, in a fixed kind order (assignment listing,
used values, live ranges, peak list, memory report), and merges every fact into one `BufferValue` per
canonical value key (``fusion.10{0}``, ``x.5{}``) with dict lookups, so the join is linear in the number of
facts and every later lookup is O(1). Each fact keeps a `Source` (document kind, line, range) so the IDE can
jump from a value to where each file mentions it. Facts that disagree between files (a value id that differs,
a value with a live range but no allocation) become `problems`, never exceptions.

`split_siblings(path)` finds the files of one module's split set by exact stem in the file's own folder:
``<stem>-buffer-assignment.txt``, ``-buffer-assignment-values.txt``, ``-live-range.txt`` and
``-memory-usage-report.txt`` belong to ``<stem>.txt`` (the after-optimizations module text).
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from hlo_lsp.core.buffers_columns import NONE, shape_index
from hlo_lsp.core.buffers_model import (
    Allocation,
    Assignment,
    LiveRange,
    BufferDoc,
    MemoryTable,
    PeakEntry,
    Position,
    SequenceStep,
    Use,
    UsedValue,
)
from hlo_lsp.core import kinds
from hlo_lsp.core.diagnostics import Diagnostic, Range, warning

#: File-name suffix of each split-set kind (the module text itself is kind ``"module"``), from `kinds`.
SPLIT_SUFFIXES: dict[str, str] = {kind: suffix for suffix, kind in kinds.SPLIT_SUFFIXES}
_KIND_ORDER = {"single": 0, "assignment": 0, "values": 1, "live-range": 2, "memory-report": 3}


class Source(NamedTuple):
    """Where a fact was read: the document's kind (``single``, ``assignment``, ...), zero-based line, name range."""

    kind: str
    line: int
    range: Range


_ROLES = ("assignment", "used", "from", "live", "peak")


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
    owner: "BufferSet | None" = field(default=None, repr=False, compare=False)
    n: int = field(default=-1, repr=False, compare=False)

    def _record(self, role: str):
        """(document kind, its column list, record number) of one role; None when no file gave that record."""
        bs = self.owner
        if bs is None:
            return None
        r = bs._rec[role][self.n]
        if r < 0:
            return None
        return bs._src[bs._doc[role][self.n]][role] + (r,)

    def _number(self, role: str, column: str) -> int | None:
        got = self._record(role)
        if got is None:
            return None
        cols, r = got[1], got[2]
        return cols.num(getattr(cols, column), column, r)

    @property
    def assignment(self) -> Assignment | None:
        """The value's line in the allocation listing; None when the listing has none."""
        got = self._record("assignment")
        return got[1][got[2]] if got is not None else None

    @property
    def used(self) -> UsedValue | None:
        """The value's ``Used values:`` entry; None when no values file lists it."""
        got = self._record("used")
        return got[1][got[2]] if got is not None else None

    @property
    def live(self) -> LiveRange | None:
        got = self._record("live")
        return got[1][got[2]] if got is not None else None

    @property
    def peak(self) -> PeakEntry | None:
        got = self._record("peak")
        return got[1][got[2]] if got is not None else None

    @property
    def name(self) -> str | None:
        """The name as the assignment listing printed it; None when the listing has no line for the value."""
        got = self._record("assignment")
        if got is None:
            return None
        cols, r = got[1], got[2]
        itext = cols.index_text[r]
        return cols.instruction[r] if itext is None else cols.instruction[r] + itext

    @property
    def allocation(self) -> int | None:
        return self._number("assignment", "allocation")

    @property
    def offset(self) -> int | None:
        return self._number("assignment", "offset")

    @property
    def size(self) -> int | None:
        return self._number("assignment", "size")

    @property
    def shape(self) -> str | None:
        got = self._record("assignment")
        return got[1].shape[got[2]] if got is not None else None

    @property
    def assignment_at(self) -> Source | None:
        got = self._record("assignment")
        if got is None:
            return None
        kind, cols, r = got
        ln = cols.line[r]
        return Source(kind, ln, Range(ln, cols.start[r], ln, cols.end[r]))

    @property
    def live_range(self) -> tuple[int, int] | None:
        """(first step, last step) of the value's live range; None when no live-range file lists it."""
        got = self._record("live")
        if got is None:
            return None
        cols, r = got[1], got[2]
        return (cols.num(cols.first, "first", r), cols.num(cols.last, "last", r))

    @property
    def live_range_at(self) -> Source | None:
        got = self._record("live")
        if got is None:
            return None
        kind, cols, r = got
        ln = cols.line[r]
        return Source(kind, ln, Range(ln, 4, ln, cols.end[r]))

    @property
    def used_at(self) -> Source | None:
        got = self._record("used")
        if got is None:
            return None
        kind, cols, r = got
        ln = cols.line[r]
        return Source(kind, ln, Range(ln, cols.start[r], ln, cols.end[r]))

    @property
    def peak_bytes(self) -> int | None:
        return self._number("peak", "bytes")

    @property
    def peak_at(self) -> Source | None:
        got = self._record("peak")
        if got is None:
            return None
        kind, cols, r = got
        ln = cols.line[r]
        return Source(kind, ln, Range(ln, 4, ln, cols.end[r]))

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
        got = self._record("from")
        if got is None:
            return None
        u = got[1][got[2]]
        ln = u.from_instruction_line
        return Source(got[0], ln, u.from_instruction_range or Range(ln, 0, ln, 0))


@dataclass(slots=True)
class BufferSet:
    values_by_key: dict[str, BufferValue] = field(default_factory=dict)
    values_by_id: dict[int, BufferValue] = field(default_factory=dict)
    allocations: list[Allocation] = field(default_factory=list)
    allocation_at: dict[int, Source] = field(default_factory=dict)
    sequence: list[SequenceStep] = field(default_factory=list)
    sequence_at: str | None = None  # kind of the document holding the sequence
    peak_step: int | None = None
    peak_entries: list[PeakEntry] = field(default_factory=list)
    peak_at: Source | None = None
    total_bytes_used: int | None = None
    total_at: Source | None = None
    live_range_max: int | None = None
    memory_report: list[MemoryTable] = field(default_factory=list)
    docs: dict[str, BufferDoc] = field(default_factory=dict)
    problems: list[tuple[str, Diagnostic]] = field(default_factory=list)  # (document kind, diagnostic)
    _by_instruction: dict[str, BufferValue | list[BufferValue]] = field(default_factory=dict)  # one or several
    _step_of: dict[str, int] = field(default_factory=dict)
    # per role: the record number of each value (-1: none) and which source (document) it is in
    _rec: dict[str, array] = field(default_factory=lambda: {r: array("q") for r in _ROLES})
    _doc: dict[str, bytearray] = field(default_factory=lambda: {r: bytearray() for r in _ROLES})
    _src: list[dict[str, tuple[str, object]]] = field(default_factory=list)  # per document: role -> (kind, cols)

    # ------------------------------------------------------------------ lookups (O(1))
    def value(self, key: str) -> BufferValue | None:
        """The value with canonical key ``key`` (``x.5{}``); None when no file names it."""
        return self.values_by_key.get(key)

    def values_of(self, instruction: str) -> list[BufferValue]:
        """The values an instruction defines, ordered by shape index (``{}`` first); [] when none."""
        got = self._by_instruction.get(instruction)
        if got is None:
            return []
        if isinstance(got, BufferValue):
            return [got]
        return sorted(got, key=lambda v: v.index or ())

    def step_of(self, instruction: str) -> int | None:
        """The instruction's position in the schedule (``InstructionSequence``); None when not scheduled here."""
        return self._step_of.get(instruction)

    def allocation(self, index: int) -> Allocation | None:
        """Allocation ``index``; None when the listing has no such allocation."""
        if 0 <= index < len(self.allocations) and self.allocations[index].index == index:
            return self.allocations[index]
        for a in self.allocations:
            if a.index == index:
                return a
        return None

    # ------------------------------------------------------------------ building
    def _get(self, key: str, instruction: str, index: tuple[int, ...] | None) -> BufferValue:
        v = self.values_by_key.get(key)
        if v is None:
            v = BufferValue(key, instruction, index, None, False, None, self, len(self.values_by_key))
            self.values_by_key[key] = v
            for role in _ROLES:
                self._rec[role].append(-1)
                self._doc[role].append(0)
            same = self._by_instruction.get(instruction)
            if same is None:
                self._by_instruction[instruction] = v  # most instructions define one value: no list for it
            elif isinstance(same, BufferValue):
                self._by_instruction[instruction] = [same, v]
            else:
                same.append(v)
        elif v.index is None and index is not None:
            v.index = index
        return v

    def _set_id(self, v: BufferValue, value_id: int, kind: str, cols, r: int) -> None:
        if v.value_id is None:
            v.value_id = value_id
            self.values_by_id.setdefault(value_id, v)
        elif v.value_id != value_id:
            ln = cols.line[r]
            rng = Range(ln, cols.start[r], ln, cols.end[r])
            self.problems.append((kind, warning(rng, "bufferset.id-mismatch",
                                                f"{v.key} has id {value_id} here but {v.value_id} elsewhere")))

    def _join(self, role: str, v: BufferValue, d: int, r: int) -> None:
        self._rec[role][v.n] = r
        self._doc[role][v.n] = d

    @classmethod
    def from_docs(cls, docs: list[BufferDoc]) -> "BufferSet":
        """Join one old single file, or the split files of one module (any subset, any order)."""
        bs = cls()
        if len(docs) > 255:
            docs = docs[:255]  # one byte names a value's document
        get, set_id, join = bs._get, bs._set_id, bs._join
        for d, doc in enumerate(sorted(docs, key=lambda d: _KIND_ORDER.get(d.kind, 9))):
            kind = doc.kind
            bs.docs.setdefault(kind, doc)
            A, U, L, P = doc.assignment_records, doc.used_values, doc.live_ranges, doc.peak_entries
            bs._src.append({"assignment": (kind, A), "used": (kind, U), "from": (kind, U), "live": (kind, L),
                            "peak": (kind, P)})
            for alloc in doc.allocations:
                bs.allocations.append(alloc)
                bs.allocation_at[alloc.index] = Source(kind, alloc.line, alloc.range)
            num = A.num
            for r in range(len(A)):
                v = get(A.key[r], A.instruction[r], shape_index(A.index_text[r]))
                set_id(v, num(A.value_id, "value_id", r), kind, A, r)
                v.phi, v.color = bool(A.phi[r]), num(A.color, "color", r)
                join("assignment", v, d, r)
            if doc.total_bytes_used is not None:
                bs.total_bytes_used = doc.total_bytes_used
                ln = doc.total_bytes_used_line or 0
                start = len("Total bytes used: ")  # the range covers the number
                bs.total_at = Source(kind, ln, Range(ln, start, ln, start + len(str(doc.total_bytes_used))))
            num = U.num
            for r in range(len(U)):
                v = get(U.key[r], U.instruction[r], shape_index(U.index_text[r]))
                set_id(v, num(U.value_id, "value_id", r), kind, U, r)
                v.phi = v.phi or bool(U.phi[r])
                if v.color is None:
                    v.color = num(U.color, "color", r)
                join("used", v, d, r)
                if U.from_line[r] != NONE:
                    join("from", v, d, r)
            if doc.live_range_max is not None:
                bs.live_range_max = doc.live_range_max
            if doc.sequence:
                bs.sequence = doc.sequence
                bs.sequence_at = kind
                S = doc.sequence
                bs._step_of = dict(zip(S.name, (S.num(S.step, "step", i) for i in range(len(S)))))
            for r in range(len(L)):
                join("live", get(L.key[r], L.instruction[r], shape_index(L.index_text[r])), d, r)
            if doc.peak_step is not None:
                bs.peak_step = doc.peak_step
                ln = doc.peak_line or 0
                start = len("  Live ranges at ")  # the range covers the step number
                bs.peak_at = Source(kind, ln, Range(ln, start, ln, start + len(str(doc.peak_step))))
                bs.peak_entries = doc.peak_entries
                for r in range(len(P)):
                    key = P.key(r)
                    if key is not None:
                        join("peak", get(key, P.instruction[r], None), d, r)
            if doc.memory_report:
                bs.memory_report = doc.memory_report
        if bs.allocations:
            asg, live = bs._rec["assignment"], bs._rec["live"]
            for v in bs.values_by_key.values():
                if asg[v.n] < 0 and live[v.n] >= 0:
                    at = v.live_range_at
                    bs.problems.append((at.kind, warning(at.range, "bufferset.no-allocation",
                                                         f"{v.key} has a live range but no allocation")))
        return bs


# ---------------------------------------------------------------------------------------- split sets

def split_stem(name: str) -> tuple[str, str] | None:
    """(stem, kind) of a dump file name: ``m-live-range.txt`` -> (``m``, ``live-range``), ``m.txt`` -> (``m``,
    ``module``); None when the name ends in neither."""
    for kind, suffix in SPLIT_SUFFIXES.items():
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], kind
    if name.endswith(".txt") and len(name) > 4:
        return name[:-4], "module"
    return None


def _inside(path: Path, folder_real: str) -> bool:
    """True when ``path`` is a regular file whose real location is directly in ``folder_real``."""
    try:
        if not path.is_file():
            return False
        return os.path.dirname(os.path.realpath(path)) == folder_real
    except OSError:
        return False


def split_siblings(path: str | os.PathLike) -> dict[str, Path]:
    """The existing files of ``path``'s split set, by kind (``module``, ``assignment``, ``values``,
    ``live-range``, ``memory-report``), looked up by exact stem in ``path``'s own folder only; a symlink whose
    target lies outside that folder is left out. {} when the name is not a dump file name."""
    p = Path(path)
    parsed = split_stem(p.name)
    if parsed is None:
        return {}
    stem = parsed[0]
    folder = p.parent
    try:
        folder_real = os.path.realpath(folder)
    except OSError:
        return {}
    out: dict[str, Path] = {}
    candidates = {"module": stem + ".txt", **{k: stem + s for k, s in SPLIT_SUFFIXES.items()}}
    for kind, name in candidates.items():
        c = folder / name
        if _inside(c, folder_real):
            out[kind] = c
    return out


def split_sets(folder: str | os.PathLike) -> dict[str, dict[str, Path]]:
    """Every split set in one folder (not its subfolders): stem -> kind -> path, for stems with at least one
    buffer file; {} when none or the folder cannot be listed."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    stems: set[str] = set()
    for name in names:
        parsed = split_stem(name)
        if parsed is not None and parsed[1] != "module":
            stems.add(parsed[0])
    out: dict[str, dict[str, Path]] = {}
    for stem in sorted(stems):
        sib = split_siblings(Path(folder) / (stem + SPLIT_SUFFIXES["assignment"]))
        if any(k != "module" for k in sib):
            out[stem] = sib
    return out
