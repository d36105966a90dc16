"""What every buffer rule shares: the `Finding` it yields, the `Context` it reads (the joined facts, the files'
lines, which files were cut), and the helpers that build a finding."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from hlo_lsp.core.buffers.bufferset import BufferSet, Source
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
    _runs: list | None = None  # (allocation, kind, its assignments), made once for the rules that need them

    def runs(self) -> list:
        """(allocation, document kind, its value lines as a list) for every allocation, in reading order. The
        records are made once here: the model keeps them by column and makes one on each access."""
        if self._runs is None:
            out = []
            for alloc in self.bs.allocations:
                at = self.bs.allocation_at.get(alloc.index)
                out.append((alloc, at.kind if at is not None else "assignment", list(alloc.assignments)))
            self._runs = out
        return self._runs

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


def assignments(ctx: Context):
    """(allocation, assignment, kind) for every value line of every allocation, in reading order."""
    for alloc, kind, assignments in ctx.runs():
        for a in assignments:
            yield alloc, a, kind


def source(kind: str, record) -> Source:
    """Where ``record`` (anything with a ``line`` and the ``range`` of its name) was read in the document of
    ``kind``."""
    return Source(kind, record.line, record.range)
