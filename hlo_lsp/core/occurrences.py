"""Every name a reader finds in a document, with its exact position: the one table that hover,
definition, references, highlight and semantic tokens look up.

A reader appends `Occurrence`s in document order (line, then column). `OccurrenceIndex` answers
"what is under the cursor" by bisection, and "where does key K occur" through a dict, so every lookup
is O(log n) or O(1) in the document size (MLIR's AsmParserState keeps definitions and uses the same way).

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
from array import array
from typing import Iterator, NamedTuple

from hlo_lsp.core.diagnostics import Range

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


_COL_BITS = 24
_COL_MAX = (1 << _COL_BITS) - 1


def _pack(line: int, col: int) -> int:
    """(line, column) as one int ordering like the pair; columns past 2**24 clamp (a hostile line)."""
    return (max(line, 0) << _COL_BITS) | min(max(col, 0), _COL_MAX)


class OccurrenceIndex:
    """Position and key lookups over a document's occurrences (which must be in document order)."""

    __slots__ = ("_occ", "_starts", "_by_key")

    def __init__(self, occurrences: list[Occurrence]):
        self._occ = occurrences
        # (line, column) packed into one int a position, in a compact array (bisectable, 8 bytes an entry)
        self._starts = array("q", [_pack(o.line, o.start) for o in occurrences])
        self._by_key: dict[tuple[str, str], list[int]] | None = None

    def __len__(self) -> int:
        return len(self._occ)

    def __iter__(self) -> Iterator[Occurrence]:
        return iter(self._occ)

    def at(self, line: int, col: int) -> Occurrence | None:
        """The occurrence covering (line, col), its end column included; None when the cursor is on no name."""
        i = bisect.bisect_right(self._starts, _pack(line, col)) - 1
        if i < 0:
            return None
        o = self._occ[i]
        if o.line == line and o.start <= col <= o.end:
            return o
        return None

    def on_line(self, line: int) -> list[Occurrence]:
        """All occurrences on one line, in column order; [] when none."""
        lo = bisect.bisect_left(self._starts, _pack(line, 0))
        hi = bisect.bisect_left(self._starts, _pack(line + 1, 0))
        return self._occ[lo:hi]

    def find(self, kind: str, key: str) -> list[Occurrence]:
        """Every occurrence of (kind, key) in document order; [] when the key never occurs."""
        if self._by_key is None:
            by: dict[tuple[str, str], list[int]] = {}
            for i, o in enumerate(self._occ):
                by.setdefault((o.kind, o.key), []).append(i)
            self._by_key = by
        return [self._occ[i] for i in self._by_key.get((kind, key), ())]

    def definition(self, kind: str, key: str) -> Occurrence | None:
        """The first ``def`` occurrence of (kind, key); None when the document does not define it."""
        for o in self.find(kind, key):
            if o.role == "def":
                return o
        return None
