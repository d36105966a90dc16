"""Plain diagnostic records shared by every reader and checker.

Positions are zero-based lines and columns counted in Unicode code points (Python string indices);
the LSP layer converts columns to UTF-16, the CLI prints them one-based.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple


class Range(NamedTuple):
    """A zero-based, end-exclusive range: lines and code-point columns."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    @staticmethod
    def on_line(line: int, start: int, end: int) -> Range:
        return Range(line, start, line, end)

    def moved(self, lines: int) -> Range:
        """The same columns ``lines`` lines further down (up when negative)."""
        return Range(self.start_line + lines, self.start_col, self.end_line + lines, self.end_col)

    def contains(self, line: int, col: int) -> bool:
        """True when (line, col) lies inside, the end column included (a cursor just after a word)."""
        if line < self.start_line or line > self.end_line:
            return False
        if line == self.start_line and col < self.start_col:
            return False
        if line == self.end_line and col > self.end_col:
            return False
        return True


class Severity(enum.IntEnum):
    """Ordered so that a larger value is more severe."""

    HINT = 1
    INFORMATION = 2
    WARNING = 3
    ERROR = 4

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Related:
    """A secondary location of a diagnostic; ``path`` is None for the same document."""

    range: Range
    message: str
    path: str | None = None


@dataclass(frozen=True, slots=True)
class TextEdit:
    range: Range
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A quick fix: edits to the diagnostic's own document."""

    title: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    range: Range
    severity: Severity
    code: str
    message: str
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = field(default=())
    source: str = "hlo-lsp"


def moved(d: Diagnostic, lines: int) -> Diagnostic:
    """``d`` with its range and its related places in the same document ``lines`` lines further down (its fixes
    as they are)."""
    if lines == 0:
        return d
    related = tuple(Related(x.range.moved(lines), x.message, x.path) for x in d.related)
    return Diagnostic(d.range.moved(lines), d.severity, d.code, d.message, related, d.fixes, d.source)


def error(range_: Range, code: str, message: str, **kw) -> Diagnostic:
    return Diagnostic(range_, Severity.ERROR, code, message, **kw)


def warning(range_: Range, code: str, message: str, **kw) -> Diagnostic:
    return Diagnostic(range_, Severity.WARNING, code, message, **kw)


def info(range_: Range, code: str, message: str, **kw) -> Diagnostic:
    return Diagnostic(range_, Severity.INFORMATION, code, message, **kw)
