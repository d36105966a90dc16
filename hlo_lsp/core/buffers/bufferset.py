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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from hlo_lsp.core import kinds
from hlo_lsp.core.buffers.columns import NONE, WIDE, SequenceSteps, shape_index
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.records import (
    Allocation,
    Assignment,
    LiveRange,
    MemoryTable,
    PeakEntry,
    Position,
    SequenceStep,
    Use,
    UsedValue,
)
from hlo_lsp.core.diagnostics import Diagnostic, Range, warning

#: File-name suffix of each split-set kind (the module text itself is kind ``"module"``), from `kinds`.
SPLIT_SUFFIXES: dict[str, str] = {kind: suffix for suffix, kind in kinds.SPLIT_SUFFIXES}
_KIND_ORDER = {"single": 0, "assignment": 0, "values": 1, "live-range": 2, "memory-report": 3}


class Source(NamedTuple):
    """Where a fact was read: the document's kind (``single``, ``assignment``, ...), zero-based line, name range."""

    kind: str
    line: int
    range: Range


# The kinds of record a value is joined from, numbering the per-role lists of `BufferSet`.
_ASG, _USED, _FROM, _LIVE, _PEAK = range(5)


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
    owner: BufferSet | None = field(default=None, repr=False, compare=False)
    n: int = field(default=-1, repr=False, compare=False)

    def _record(self, role: int):
        """(document kind, its column list, record number) of one role; None when no file gave that record."""
        bs = self.owner
        if bs is None:
            return None
        n = self.n
        r = bs._rec[role][n]
        if r < 0:
            return None
        kind, cols = bs._src[role][bs._doc[role][n]]
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
        return self._object(_ASG)

    @property
    def used(self) -> UsedValue | None:
        """The value's ``Used values:`` entry; None when no values file lists it."""
        return self._object(_USED)

    @property
    def live(self) -> LiveRange | None:
        return self._object(_LIVE)

    @property
    def peak(self) -> PeakEntry | None:
        return self._object(_PEAK)

    @property
    def name(self) -> str | None:
        """The name as the assignment listing printed it; None when the listing has no line for the value."""
        got = self._record(_ASG)
        if got is None:
            return None
        cols, r = got[1], got[2]
        itext = cols.index_text[r]
        return cols.instruction[r] if itext is None else cols.instruction[r] + itext

    @property
    def allocation(self) -> int | None:
        return self._number(_ASG, "allocation")

    @property
    def offset(self) -> int | None:
        return self._number(_ASG, "offset")

    @property
    def size(self) -> int | None:
        return self._number(_ASG, "size")

    @property
    def shape(self) -> str | None:
        got = self._record(_ASG)
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
        return self._source(_ASG)

    @property
    def live_range(self) -> tuple[int, int] | None:
        """(first step, last step) of the value's live range; None when no live-range file lists it."""
        got = self._record(_LIVE)
        if got is None:
            return None
        cols, r = got[1], got[2]
        return (cols.num(cols.first, "first", r), cols.num(cols.last, "last", r))

    @property
    def live_range_at(self) -> Source | None:
        return self._source(_LIVE, 4)

    @property
    def used_at(self) -> Source | None:
        return self._source(_USED)

    @property
    def peak_bytes(self) -> int | None:
        return self._number(_PEAK, "bytes")

    @property
    def peak_at(self) -> Source | None:
        return self._source(_PEAK, 4)

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
        got = self._record(_FROM)
        if got is None:
            return None
        u = got[1][got[2]]
        ln = u.from_instruction_line
        return Source(got[0], ln, u.from_instruction_range or Range(ln, 0, ln, 0))


@dataclass(slots=True)
class BufferSet:
    values_by_key: dict[str, BufferValue] = field(default_factory=dict)
    _by_id: dict[int, BufferValue] | None = None  # see `values_by_id`
    allocations: list[Allocation] = field(default_factory=list)
    allocation_at: dict[int, Source] = field(default_factory=dict)
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
    # per role (_ASG ...): the record number of each value (-1: none), which document it is in, and per
    # document its (kind, column list)
    _rec: list[array] = field(default_factory=lambda: [array("q") for _ in range(5)])
    _doc: list[bytearray] = field(default_factory=lambda: [bytearray() for _ in range(5)])
    _src: list[list[tuple[str, object]]] = field(default_factory=lambda: [[] for _ in range(5)])

    # ------------------------------------------------------------------ lookups (O(1))
    def value(self, key: str) -> BufferValue | None:
        """The value with canonical key ``key`` (``x.5{}``); None when no file names it."""
        return self.values_by_key.get(key)

    def values_of(self, instruction: str) -> list[BufferValue]:
        """The values an instruction defines, ordered by shape index (``{}`` first); [] when none."""
        by = self._by_instruction
        if by is None:
            by = {}
            for v in self.values_by_key.values():
                same = by.get(v.instruction)
                if same is None:
                    by[v.instruction] = v  # most instructions define one value: no list for it
                elif isinstance(same, BufferValue):
                    by[v.instruction] = [same, v]
                else:
                    same.append(v)
            self._by_instruction = by
        got = by.get(instruction)
        if got is None:
            return []
        if isinstance(got, BufferValue):
            return [got]
        return sorted(got, key=lambda v: v.index or ())

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
    def _get(self, key: str, instruction: str, index: tuple[int, ...] | None) -> BufferValue:
        v = self.values_by_key.get(key)
        if v is None:
            n = len(self.values_by_key)
            v = BufferValue(key, instruction, index, None, False, None, self, n)
            self.values_by_key[key] = v
            if n >= len(self._rec[0]):  # `from_docs` sizes the role columns ahead
                for role in range(5):
                    self._rec[role].append(-1)
                    self._doc[role].append(0)
        elif v.index is None and index is not None:
            v.index = index
        return v

    def _set_id(self, v: BufferValue, value_id: int, kind: str, cols, r: int) -> None:
        if v.value_id is None:
            v.value_id = value_id
        elif v.value_id != value_id:
            ln = cols.line[r]
            rng = Range(ln, cols.start[r], ln, cols.end[r])
            self.problems.append(
                (
                    kind,
                    warning(rng, "bufferset.id-mismatch", f"{v.key} has id {value_id} here but {v.value_id} elsewhere"),
                )
            )

    def _join(self, role: int, v: BufferValue, d: int, r: int) -> None:
        self._rec[role][v.n] = r
        self._doc[role][v.n] = d

    @classmethod
    def from_docs(cls, docs: list[BufferDoc]) -> BufferSet:
        """Join one old single file, or the split files of one module (any subset, any order)."""
        bs = cls()
        if len(docs) > 255:
            docs = docs[:255]  # one byte names a value's document
        get, set_id, join = bs._get, bs._set_id, bs._join
        most = sum(
            len(d.assignment_records) + len(d.used_values) + len(d.live_ranges) + len(d.peak_entries) for d in docs
        )  # at most one value per record: the role columns are made at that size once
        bs._rec = [array("q", [-1]) * most for _ in range(5)]
        bs._doc = [bytearray(most) for _ in range(5)]
        for d, doc in enumerate(sorted(docs, key=lambda d: _KIND_ORDER.get(d.kind, 9))):
            kind = doc.kind
            bs.docs.setdefault(kind, doc)
            A, U, L, P = doc.assignment_records, doc.used_values, doc.live_ranges, doc.peak_entries
            for role, cols in ((_ASG, A), (_USED, U), (_FROM, U), (_LIVE, L), (_PEAK, P)):
                bs._src[role].append((kind, cols))
            for alloc in doc.allocations:
                bs.allocations.append(alloc)
                bs.allocation_at[alloc.index] = Source(kind, alloc.line, alloc.range)
            # the loops below are `_get`, `_set_id` and `_join` written out: they run once per record
            by_key = bs.values_by_key
            rec, src = bs._rec[_ASG], bs._doc[_ASG]
            num = A.num
            for r, (key, itext, vid, color) in enumerate(zip(A.key, A.index_text, A.value_id, A.color)):
                v = by_key.get(key)
                if v is None or v.index is None and itext is not None:
                    v = get(key, A.instruction[r], shape_index(itext))
                if vid <= WIDE:
                    vid = num(A.value_id, "value_id", r)
                if v.value_id is None:
                    v.value_id = vid
                elif v.value_id != vid:
                    set_id(v, vid, kind, A, r)
                v.phi, v.color = bool(A.phi[r]), (color if color > WIDE else num(A.color, "color", r))
                rec[v.n] = r
                src[v.n] = d
            if doc.total_bytes_used is not None:
                bs.total_bytes_used = doc.total_bytes_used
                ln = doc.total_bytes_used_line or 0
                start = len("Total bytes used: ")  # the range covers the number
                bs.total_at = Source(kind, ln, Range(ln, start, ln, start + len(str(doc.total_bytes_used))))
            rec, src, rec_from, src_from = bs._rec[_USED], bs._doc[_USED], bs._rec[_FROM], bs._doc[_FROM]
            num = U.num
            for r, (key, itext, vid, from_line) in enumerate(zip(U.key, U.index_text, U.value_id, U.from_line)):
                v = by_key.get(key)
                if v is None or v.index is None and itext is not None:
                    v = get(key, U.instruction[r], shape_index(itext))
                if vid <= WIDE:
                    vid = num(U.value_id, "value_id", r)
                if v.value_id is None:
                    v.value_id = vid
                elif v.value_id != vid:
                    set_id(v, vid, kind, U, r)
                if U.phi[r]:
                    v.phi = True
                if v.color is None:
                    v.color = num(U.color, "color", r)
                n = v.n
                rec[n] = r
                src[n] = d
                if from_line != NONE:
                    rec_from[n] = r
                    src_from[n] = d
            if doc.live_range_max is not None:
                bs.live_range_max = doc.live_range_max
            if doc.sequence:
                bs.sequence = doc.sequence
                bs.sequence_at = kind
                bs._step_of = None
            rec, src = bs._rec[_LIVE], bs._doc[_LIVE]
            for r, (key, itext) in enumerate(zip(L.key, L.index_text)):
                v = by_key.get(key)
                if v is None or v.index is None and itext is not None:
                    v = get(key, L.instruction[r], shape_index(itext))
                rec[v.n] = r
                src[v.n] = d
            if doc.peak_step is not None:
                bs.peak_step = doc.peak_step
                ln = doc.peak_line or 0
                start = len("  Live ranges at ")  # the range covers the step number
                bs.peak_at = Source(kind, ln, Range(ln, start, ln, start + len(str(doc.peak_step))))
                bs.peak_entries = doc.peak_entries
                for r in range(len(P)):
                    peak_key = P.key(r)
                    if peak_key is not None:
                        join(_PEAK, get(peak_key, P.instruction[r], None), d, r)
            if doc.memory_report:
                bs.memory_report = doc.memory_report
        n = len(bs.values_by_key)
        for role in range(5):
            del bs._rec[role][n:]
            del bs._doc[role][n:]
        if bs.allocations:
            asg, live = bs._rec[_ASG], bs._rec[_LIVE]
            for v in bs.values_by_key.values():
                if asg[v.n] < 0 and live[v.n] >= 0 and (at := v.live_range_at) is not None:
                    bs.problems.append(
                        (
                            at.kind,
                            warning(at.range, "bufferset.no-allocation", f"{v.key} has a live range but no allocation"),
                        )
                    )
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
