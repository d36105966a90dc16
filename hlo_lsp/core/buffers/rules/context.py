"""What every buffer rule shares: the `Finding` it yields, the `Context` it reads (the joined facts, the files'
lines, which files were cut), and the helpers that build a finding."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
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


@dataclass(slots=True)
class Context:
    bs: BufferSet
    lines: dict[str, Lines]  # document kind -> its lines, for facts the model keeps no line of
    broken: frozenset[str] = frozenset()  # kinds whose reader reported errors (cut or corrupted files)

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


def value_runs(ctx: Context) -> Iterator[tuple[Allocation, str, Assignments, range]]:
    """(allocation, document kind, the document's value-line columns, the allocation's record numbers in them) for
    every allocation with value lines, in reading order. A rule reads the columns it checks (`Records.req` for a
    number) and makes a record (`Assignments._make`) only for a finding: a record made for each of the 37,000
    value lines of the benchmark dump took 0.3 s of every check."""
    for alloc in ctx.bs.allocations:
        cols = alloc.records
        if not isinstance(cols, Assignments) or not alloc.count:
            continue
        at = ctx.bs.allocation_at.get(alloc.index)
        yield alloc, at.kind if at is not None else "assignment", cols, range(alloc.first, alloc.first + alloc.count)


def source(kind: str, record) -> Source:
    """Where ``record`` (anything with a ``line`` and the ``range`` of its name) was read in the document of
    ``kind``."""
    return Source(kind, record.line, record.range)
