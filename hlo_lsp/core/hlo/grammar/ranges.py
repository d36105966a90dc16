"""The ranges the grammar's checks report on: a token's, a name's, or columns of one line (never empty)."""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Range

from .model import Name, Tok


def rng(line: int, start: int, end: int) -> Range:
    return Range(line, start, line, max(end, start + 1))


def tok_range(t: Tok | None) -> Range:
    """The range of ``t``; the start of the document for a problem that names no token."""
    return rng(t.line, t.col, t.end) if t is not None else rng(0, 0, 0)


def name_range(n: Name) -> Range:
    return rng(n.line, n.start, n.end)
