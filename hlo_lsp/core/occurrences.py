"""Every name a reader finds in a document, with its exact position: the one table that hover,
definition, references, highlight and semantic tokens look up.

A reader appends `Occurrence`s in document order (line, then column), to a list or to an `OccurrenceTable`
(the same records stored by column: a 20 MB buffer dump holds 300,000 of them, and a tuple each costs ten
times its data). `OccurrenceIndex` answers "what is under the cursor" by bisection over the packed positions,
and "where does key K occur" by bisection over the occurrence numbers sorted by key (built on the first
`find`), so every lookup is O(log n) in the document size (MLIR's AsmParserState keeps definitions and uses
the same way).

Kinds and their canonical keys:
- ``instruction``: the instruction name without ``%`` (``fusion.10``); in hand-written modules where a
  name repeats across computations the key is still the bare name and the computation disambiguates.
- ``computation``: the computation name without ``%``.
- ``value``: an HloValue, ``<instruction>{<index>}`` with the shape index always written, ``{}`` for a
  non-tuple value (``x.5{}``, ``fusion.10{0}``, ``t{1,0}``); this is how the live-range file names them.
- ``allocation``: the allocation number as a string (``"3"``).
- ``stack_frame``, ``file_location``, ``file_name``, ``function_name``: the table id as a string.
Roles: ``def`` (the defining occurrence) and ``use`` (every other mention).
"""

from __future__ import annotations

import bisect
import heapq
import sys
from array import array
from collections.abc import Iterator
from itertools import islice, repeat
from operator import and_, rshift
from typing import NamedTuple

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.process import pieces

KINDS = (
    "instruction",
    "computation",
    "value",
    "allocation",
    "stack_frame",
    "file_location",
    "file_name",
    "function_name",
)


class Occurrence(NamedTuple):
    line: int
    start: int
    end: int
    kind: str
    key: str
    role: str  # "def" | "use"

    @property
    def range(self) -> Range:
        return Range(self.line, self.start, self.line, self.end)


def value_key(instruction: str, index: str | tuple[int, ...] | None) -> str:
    """Canonical value key: ``value_key("fusion.10", (0,)) == "fusion.10{0}"``; None or () gives ``{}``."""
    if index is None:
        return instruction + "{}"
    if isinstance(index, str):
        return f"{instruction}{{{index.strip('{} ').replace(' ', '')}}}"
    return instruction + "{" + ",".join(str(i) for i in index) + "}"


COL_BITS = 24
_COL_MAX = (1 << COL_BITS) - 1


def _pack(line: int, col: int) -> int:
    """(line, column) as one int ordering like the pair; columns past 2**24 clamp (a hostile line)."""
    return (max(line, 0) << COL_BITS) | min(max(col, 0), _COL_MAX)


# (kind, role) pairs are stored as one byte each; the pair table is shared by every document (a handful of pairs)
_PAIR_CODE: dict[tuple[str, str], int] = {}
_PAIRS: list[tuple[str, str]] = []
_new = tuple.__new__
_intern = sys.intern


def occurrence_pairs() -> list[tuple[str, str]]:
    """(kind, role) of each occurrence code so far, by code."""
    return list(_PAIRS)


def pair_code(kind: str, role: str) -> int:
    code = _PAIR_CODE.get((kind, role))
    if code is None:
        if len(_PAIRS) >= 256:
            raise ValueError("too many occurrence (kind, role) pairs")
        code = _PAIR_CODE[(kind, role)] = len(_PAIRS)
        _PAIRS.append((kind, role))
    return code


class OccurrenceTable:
    """Occurrences in document order, stored by column (packed line and start, end, (kind, role) byte, key);
    reads like a list of `Occurrence` (``len``, ``[i]``, slices, iteration, ``==``). Keys are interned, so a
    name that appears in every file of a module is one string. A start column too large to pack (a hostile
    line) is kept exactly on the side."""

    __slots__ = ("pos", "ends", "codes", "keys", "wide")

    def __init__(self, occurrences=()):
        self.pos = array("q")
        self.ends = array("I")  # columns stay below 2**32: files are at most 1 GiB
        self.codes = bytearray()
        self.keys: list[str] = []
        self.wide: dict[int, int] = {}  # occurrence number -> start column, for starts >= _COL_MAX
        for o in occurrences:
            self.add(*o)

    def add(self, line: int, start: int, end: int, kind: str, key: str, role: str) -> None:
        if start >= _COL_MAX:
            self.wide[len(self.keys)] = start
        self.pos.append(_pack(line, start))
        self.ends.append(end)
        self.codes.append(pair_code(kind, role))
        self.keys.append(_intern(key))

    def append(self, o: Occurrence) -> None:
        self.add(*o)

    def adder(self, kind: str, role: str):
        """A fast ``add(line, start, end, key)`` for one (kind, role): what the readers call per occurrence.
        It does not intern ``key``: the caller passes an interned string (or one it means to keep)."""
        pos, en, codes, keys = self.pos.append, self.ends.append, self.codes.append, self.keys.append
        code = pair_code(kind, role)
        add_wide = self.add

        def add(line: int, start: int, end: int, key: str) -> None:
            if start >= _COL_MAX:
                add_wide(line, start, end, kind, key, role)
                return
            pos((line << COL_BITS) | start)
            en(end)
            codes(code)
            keys(key)

        return add

    def _start(self, i: int) -> int:
        return self.pos[i] & _COL_MAX if i not in self.wide else self.wide[i]

    def __len__(self) -> int:
        return len(self.keys)

    def _get(self, i: int) -> Occurrence:
        kind, role = _PAIRS[self.codes[i]]
        p = self.pos[i]
        start = p & _COL_MAX
        if start == _COL_MAX and i in self.wide:
            start = self.wide[i]
        return _new(Occurrence, (p >> COL_BITS, start, self.ends[i], kind, self.keys[i], role))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(len(self.keys)))]
        if i < 0:
            i += len(self.keys)
        if not 0 <= i < len(self.keys):
            raise IndexError("occurrence index out of range")
        return self._get(i)

    def __iter__(self) -> Iterator[Occurrence]:
        return map(self._get, range(len(self.keys)))

    def __eq__(self, other) -> bool:
        if isinstance(other, OccurrenceTable):
            return (
                self.pos == other.pos
                and self.wide == other.wide
                and self.ends == other.ends
                and self.keys == other.keys
                and [_PAIRS[c] for c in self.codes] == [_PAIRS[c] for c in other.codes]
            )
        if isinstance(other, list):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    # mutable, like a list: defining __eq__ leaves the class unhashable (__hash__ is None)


def _by_key(keys: list[str]) -> array:
    """Occurrence numbers sorted by key, document order within a key (a stable sort by key): pieces of
    `pieces.PIECE` sorted in C, then merged by `heapq.merge`, which takes a Python step per item, a piece at a
    time. One sort of the values file's 182,000 occurrences held the GIL for 20-30 ms (made in the background,
    beside the hovers)."""
    get = keys.__getitem__
    n = len(keys)
    step = pieces.PIECE
    if n <= step:
        return array("I", sorted(range(n), key=get))
    # each piece's sort and each piece of the merge giving way (`pieces.starts`): made in the background when a
    # buffer file is opened, it held the editor's viewport requests of the on-open batch (5 -> 13-22 ms)
    runs = [sorted(range(i, min(i + step, n)), key=get) for i in pieces.starts(0, n, step)]
    merged = heapq.merge(*runs, key=get)  # stable: on equal keys, the earlier run's first
    out = array("I")
    for _ in pieces.starts(0, n, step):
        out.extend(islice(merged, step))
    return out


class OccurrenceIndex:
    """Position and key lookups over a document's occurrences (which must be in document order): a list of
    `Occurrence` or an `OccurrenceTable`."""

    __slots__ = ("_occ", "_by_key")

    def __init__(self, occurrences: list[Occurrence] | OccurrenceTable):
        self._occ = occurrences if isinstance(occurrences, OccurrenceTable) else OccurrenceTable(occurrences)
        # occurrence numbers sorted by key (document order within one key), built by the first `find`
        self._by_key: array | None = None

    def __len__(self) -> int:
        return len(self._occ)

    def __iter__(self) -> Iterator[Occurrence]:
        return iter(self._occ)

    def at(self, line: int, col: int) -> Occurrence | None:
        """The occurrence covering (line, col), its end column included; None when the cursor is on no name."""
        occ = self._occ
        i = bisect.bisect_right(occ.pos, _pack(line, col)) - 1
        if i < 0:
            return None
        if occ.pos[i] >> COL_BITS == line and occ._start(i) <= col <= occ.ends[i]:
            return occ._get(i)
        return None

    def on_line(self, line: int) -> list[Occurrence]:
        """All occurrences on one line, in column order; [] when none."""
        pos = self._occ.pos
        lo = bisect.bisect_left(pos, _pack(line, 0))
        hi = bisect.bisect_left(pos, _pack(line + 1, 0))
        return self._occ[lo:hi]

    def all_spans(self, lo: int = 0, hi: int | None = None) -> Iterator[tuple[int, int, int, str, bool]]:
        """(line, start, end, kind, is definition) of every occurrence (of occurrences ``lo .. hi - 1``), in
        document order, read from the columns (no `Occurrence` made)."""
        occ = self._occ
        pairs = [(kind, role == "def") for kind, role in _PAIRS]
        pos, end = occ.pos, occ.ends
        wide = occ.wide
        codes = occ.codes if lo == 0 and hi is None else occ.codes[lo:hi]
        for i, code in enumerate(codes, lo):
            p = pos[i]
            start = p & _COL_MAX
            if start == _COL_MAX and i in wide:
                start = wide[i]
            kind, is_def = pairs[code]
            yield p >> COL_BITS, start, end[i], kind, is_def

    def columns(self) -> tuple[array, array, array, bytes] | None:
        """(lines, starts, ends, (kind, role) codes) of every occurrence as arrays, made by C iterators; None when
        a start is too large to pack (`OccurrenceTable.wide`: read them with `all_spans`)."""
        occ = self._occ
        if occ.wide:
            return None
        pos = occ.pos
        lines = array("q", map(rshift, pos, repeat(COL_BITS)))
        starts = array("q", map(and_, pos, repeat(_COL_MAX)))
        return lines, starts, occ.ends, bytes(occ.codes)

    def find(self, kind: str, key: str) -> list[Occurrence]:
        """Every occurrence of (kind, key) in document order; [] when the key never occurs."""
        occ = self._occ
        keys = occ.keys
        order = self._by_key
        if order is None:
            order = self._by_key = _by_key(keys)
        out = []
        n = len(order)
        j = bisect.bisect_left(order, key, key=keys.__getitem__)
        codes = occ.codes
        while j < n:
            i = order[j]
            if keys[i] != key:
                break
            if _PAIRS[codes[i]][0] == kind:
                out.append(occ._get(i))
            j += 1
        return out

    def definition(self, kind: str, key: str) -> Occurrence | None:
        """The first ``def`` occurrence of (kind, key); None when the document does not define it."""
        for o in self.find(kind, key):
            if o.role == "def":
                return o
        return None
