"""What every buffer rule shares: the `Finding` it yields, the `Context` it reads (the joined facts, the files'
lines, which files were cut), and the helpers that build a finding."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import NamedTuple

from hlo_lsp.core.buffers.bufferset import BufferSet, Source
from hlo_lsp.core.buffers.columns import Assignments
from hlo_lsp.core.buffers.records import Allocation
from hlo_lsp.core.diagnostics import Diagnostic, Range, Related
from hlo_lsp.core.document import Lines


class Finding(NamedTuple):
    """A diagnostic for the document of kind ``kind``; ``related_kinds[i]`` is the kind of ``related[i]``."""

    kind: str
    diagnostic: Diagnostic
    related_kinds: tuple[str, ...] = ()


class Listing(NamedTuple):
    """Every allocation's value lines as one run of one document's columns: allocation k's records follow
    allocation k - 1's, from record 0 to the last, as the reader writes them (see `Context.listing`)."""

    cols: Assignments
    allocations: list[Allocation]  # `BufferSet.allocations`, in reading order


@dataclass(slots=True)
class Context:
    bs: BufferSet
    lines: dict[str, Lines]  # document kind -> its lines, for facts the model keeps no line of
    broken: frozenset[str] = frozenset()  # kinds whose reader reported errors (cut or corrupted files)
    _listing: Listing | None | bool = False  # False: not looked at yet

    def listing(self) -> Listing | None:
        """The allocations' value lines as one `Listing` when they are one (always so as read; a patched or
        joined set may not be), for a rule to test a whole column in one C-level pass before it looks at an
        allocation's records one by one (the per-record loops took 0.1 s of the benchmark assignment file's
        pull); None when they are not, or when a number is too large for its column. A rule whose test finds
        nothing has nothing to report: the tests ask no more than the per-record checks."""
        got = self._listing
        if got is False:
            got = self._listing = _listing(self.bs)
        return got  # type: ignore[return-value]

    def complete(self, *kinds: str) -> bool:
        """True when none of the given document kinds (nor an old single file) had reader errors: rules that
        compare whole sections stay silent on a cut file, whose reader error already says so."""
        return not (self.broken & {*kinds, "single"})


def finding(at: Source, diag: Diagnostic, related: tuple[tuple[Source, str], ...] = ()) -> Finding:
    rel = tuple(Related(s.range, msg) for s, msg in related)
    if rel:
        diag = Diagnostic(diag.range, diag.severity, diag.code, diag.message, rel, diag.fixes, diag.source)
    return Finding(at.kind, diag, tuple(s.kind for s, _ in related))


def report(
    severity: Callable[[Range, str, str], Diagnostic],
    at: Source,
    code: str,
    message: str,
    related: tuple[tuple[Source, str], ...] = (),
) -> Finding:
    """A finding at ``at`` (its range is the diagnostic's) of ``severity`` (`error`, `warning` or `info`)."""
    return finding(at, severity(at.range, code, message), related)


def value_runs(
    ctx: Context, allocations: Iterable[Allocation] | None = None
) -> Iterator[tuple[Allocation, str, Assignments, range]]:
    """(allocation, document kind, the document's value-line columns, the allocation's record numbers in them) for
    every allocation with value lines (of ``allocations``, a rule's choice among the set's; all by default), in
    reading order. A rule reads the columns it checks (`Records.req` for a number) and makes a record
    (`Assignments._make`) only for a finding: a record made for each of the 37,000 value lines of the benchmark
    dump took 0.3 s of every check."""
    kind_of = ctx.bs.allocation_at.kind
    for alloc in ctx.bs.allocations if allocations is None else allocations:
        cols = alloc.records
        if not isinstance(cols, Assignments) or not alloc.count:
            continue
        first = alloc.first
        yield alloc, kind_of(alloc.index) or "assignment", cols, range(first, first + alloc.count)


def source(kind: str, record) -> Source:
    """Where ``record`` (anything with a ``line`` and the ``range`` of its name) was read in the document of
    ``kind``."""
    return Source(kind, record.line, record.range)


def _listing(bs: BufferSet) -> Listing | None:
    allocations = bs.allocations
    if not allocations:
        return None
    cols = allocations[0].records
    if not isinstance(cols, Assignments) or cols.wide or any(a.records is not cols for a in allocations):
        return None
    counts = [a.count for a in allocations]
    if [a.first for a in allocations] != list(accumulate(counts, initial=0))[:-1] or sum(counts) != len(cols):
        return None
    return Listing(cols, allocations)
