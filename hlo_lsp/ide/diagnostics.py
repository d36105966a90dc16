"""All diagnostics of one document, from one implementation shared by the server and `hlo-lsp check`.

HLO text: the grammar's syntax and structural errors (it reads hand-written forms the fast reader does not);
above `GRAMMAR_LIMIT` bytes the fast reader's own syntax errors plus its structural checks stand in until the
incremental validator covers the file. Buffer files: the reader's errors, the join's problems for this file,
and the buffer-assignment rules.
"""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Diagnostic
from hlo_lsp.core.hlo_checks import structural_diagnostics
from hlo_lsp.core.workspace import Analysis, ReadError, Workspace, unreadable_diagnostic

GRAMMAR_LIMIT = 2_000_000


def analysis_diagnostics(ws: Workspace, a: Analysis) -> list[Diagnostic]:
    """Diagnostics of an analysed document, sorted by position."""
    out: list[Diagnostic] = []
    if a.hlo is not None:
        if len(a.source.text) <= GRAMMAR_LIMIT:
            from hlo_lsp.core.hlo_grammar import validate_module

            out.extend(validate_module(a.source.text).diagnostics)
        else:
            out.extend(a.read_diagnostics)
            out.extend(structural_diagnostics(a.hlo))
    elif a.buffers is not None:
        out.extend(a.read_diagnostics)
        try:
            bundle = ws.bundle(a.path)
        except ReadError:
            bundle = None
        bs = bundle.buffers if bundle is not None else None
        if bs is not None:
            out.extend(d for kind, d in bs.problems if kind == a.kind)
    return sorted(out, key=lambda d: (d.range.start_line, d.range.start_col, d.code))


def document_diagnostics(ws: Workspace, path: str) -> list[Diagnostic]:
    """Diagnostics of ``path``; one ``unreadable-file`` error when it cannot be read as text."""
    try:
        a = ws.analysis(path)
    except ReadError as e:
        return [unreadable_diagnostic(str(e))]
    return analysis_diagnostics(ws, a)
