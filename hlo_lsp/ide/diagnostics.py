"""All diagnostics of one document, from one implementation shared by the server and `hlo-lsp check`.

HLO text: the grammar's syntax and structural errors (it reads hand-written forms the fast reader does not);
above `GRAMMAR_LIMIT` bytes, and in the files of a pass-by-pass dump that read as machine-written (`_by_grammar`),
the fast reader's own syntax errors plus its structural checks stand in until the incremental validator covers the
file; then the verifier-level rules (`hlo_lsp.core.hlo.rules.verifier`; for large modules their last run, see
`run_verifier`) and the donation hints (`hlo_lsp.core.hlo.rules.donation`), minus any on a line that already has
an error. Buffer files: the reader's errors, the join's problems for this file, and the buffer-assignment rules
(`hlo_lsp.core.buffers.rules`) run once per module on its joined files, each finding reported on the document
holding its line, related locations in sibling files given their path.
"""

from __future__ import annotations

from hlo_lsp.core.buffers.rules import Finding, buffer_findings
from hlo_lsp.core.diagnostics import Diagnostic, Related, Severity
from hlo_lsp.core.hlo.rules.donation import donation_diagnostics, entry_summary, read_donation_diagnostics
from hlo_lsp.core.hlo.rules.verifier import verify
from hlo_lsp.core.workspace import Analysis, ModuleBundle, NotReady, ReadError, Workspace, unreadable_diagnostic

GRAMMAR_LIMIT = 2_000_000


def run_verifier(a: Analysis, version: int | None = None) -> bool:
    """Run the whole-module verifier-level rules on ``a`` and keep the result, unless the document moved past
    ``version`` meanwhile (then nothing is kept and False is returned); False for a document that is no module."""
    if a.hlo is None:
        return False
    summaries = a.checker.summaries() if a.checker is not None else None
    found = verify(a.hlo, summaries)
    # with the verifier's run, not per publish (made by the read where it read the entry, unless edited since);
    # the entry's summary spares a pass over its lines
    hints = read_donation_diagnostics(a.hlo, bool(a.edited_lines))
    if hints is None:
        hints = donation_diagnostics(a.hlo, entry_summary(a.hlo, summaries))
    if a.checker is not None and a.size > GRAMMAR_LIMIT:
        a.checker.forget_summaries()  # memory of a large module at rest; a later run makes them again
    if version is not None and a.source.version != version:
        return False
    a.verified = found
    a.donations = hints
    a.edited_lines.clear()
    return True


def _by_grammar(ws: Workspace, a: Analysis) -> bool:
    """A small module is checked by the grammar, except a file of a pass-by-pass dump (its module's numbered
    pass files beside it, `PassHistories.is_history_file`) that the fast reader read as machine-written (every
    line a row): XLA wrote it, and such a dump holds one module per pass that changed it (thousands of files;
    `hlo-lsp check` over the folder then reads at XLA's pace), so the reader's own checks stand in, as they do
    for large modules."""
    return not (a.hlo is not None and a.hlo.rows_read and ws.passes.is_history_file(a.path))


def analysis_diagnostics(ws: Workspace, a: Analysis, complete: bool = True, hints: bool = True) -> list[Diagnostic]:
    """Diagnostics of an analysed document, sorted by position.

    Small HLO modules: the grammar and the verifier rules, run in full. Large ones: the reader's errors and the
    incremental structural checks, plus the last verifier run minus the lines edited since; ``complete`` runs
    the verifier first when it has not run (the server does that in a worker thread, publishing the fast part
    first); ``hints``: the donation hints too (advice, which `hlo-lsp check` prints only with ``--hints``)."""
    out: list[Diagnostic] = []
    if a.hlo is not None:
        if a.size <= GRAMMAR_LIMIT:
            if _by_grammar(ws, a):
                from hlo_lsp.core.hlo.grammar import validate_module

                out.extend(validate_module(a.source.text).diagnostics)
            else:
                out.extend(a.read_diagnostics)
                if a.checker is not None:
                    out.extend(a.checker.diagnostics())
            # a machine-written module's summaries were made by the rows pass of its read: not made again
            verified = verify(a.hlo, a.checker.summaries() if a.checker is not None and a.hlo.rows_read else None)
        else:
            out.extend(a.read_diagnostics)
            if a.checker is not None:  # every HLO analysis has its incremental checker
                out.extend(a.checker.diagnostics())
            if a.verified is None and complete:
                run_verifier(a)
            verified = [d for d in a.verified or () if d.range.start_line not in a.edited_lines]
        error_lines = {d.range.start_line for d in out if d.severity >= Severity.ERROR}
        out.extend(d for d in verified if d.range.start_line not in error_lines)
        if hints:  # advice (`hlo-lsp check` leaves it out unless asked: then it is not made)
            advice = donation_diagnostics(a.hlo) if a.size <= GRAMMAR_LIMIT else a.donations or ()
            out.extend(d for d in advice if d.range.start_line not in error_lines | a.edited_lines)
    elif a.buffers is not None:
        out.extend(a.read_diagnostics)
        try:
            bundle = ws.bundle(a.path)
        except ReadError:
            bundle = None
        if bundle is not None and bundle.buffers is not None:
            out.extend(d for kind, d in bundle.buffers.problems if kind == a.kind)
            out.extend(_buffer_rule_diagnostics(bundle, a.kind))
    else:
        out.extend(a.read_diagnostics)  # a companion file: what it is
    return sorted(out, key=lambda d: (d.range.start_line, d.range.start_col, d.code))


def _findings(bundle: ModuleBundle) -> list[Finding]:
    """The buffer rules' findings of a bundle, computed once per bundle (kept in its `memo` and released with
    it; a module-wide cache kept up to 32 superseded buffer sets alive)."""
    found = bundle.memo.get("buffer_findings")
    if found is None:
        if bundle.buffers is None:
            return []
        lines = {kind: d.source.doc.lines for kind, d in bundle.buffer_docs.items()}
        found = bundle.memo["buffer_findings"] = buffer_findings(bundle.buffers, lines)
    return found


def _buffer_rule_diagnostics(bundle: ModuleBundle, kind: str | None) -> list[Diagnostic]:
    """The findings on the document of ``kind``, related locations in other files carrying their path."""
    out = []
    for f in _findings(bundle):
        if f.kind != kind:
            continue
        d = f.diagnostic
        if f.related_kinds and any(k != kind for k in f.related_kinds):
            rel = []
            for r, k in zip(d.related, f.related_kinds):
                if k == kind:
                    rel.append(r)
                elif k in bundle.buffer_docs:
                    rel.append(Related(r.range, r.message, bundle.buffer_docs[k].path))
            d = Diagnostic(d.range, d.severity, d.code, d.message, tuple(rel), d.fixes, d.source)
        out.append(d)
    return out


def document_diagnostics(ws: Workspace, path: str, complete: bool = True) -> list[Diagnostic]:
    """Diagnostics of ``path``; one ``unreadable-file`` error when it cannot be read as text."""
    try:
        a = ws.analysis(path)
    except NotReady:
        raise
    except ReadError as e:
        return [unreadable_diagnostic(str(e))]
    return analysis_diagnostics(ws, a, complete)
