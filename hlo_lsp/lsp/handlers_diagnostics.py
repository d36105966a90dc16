"""LSP handlers of pulled diagnostics and code actions. A pull for a document being read waits for the complete
set (a large module's verifier runs in a worker thread, kept per version); a buffer file whose large siblings
are still being read gets its own findings at once, and the client is asked to pull again once they are joined
(`diagnostic_refresh`).
"""

from __future__ import annotations

from lsprotocol import types as lsp

from hlo_lsp.core.diagnostics import Diagnostic, Range, Severity
from hlo_lsp.core.workspace import ReadError
from hlo_lsp.ide import code_actions
from hlo_lsp.ide.diagnostics import GRAMMAR_LIMIT, document_diagnostics
from hlo_lsp.lsp.app import HloLanguageServer, safe, server
from hlo_lsp.lsp.convert import Converter, path_to_uri, uri_to_path
from hlo_lsp.lsp.doc_answers import Provisional


def diagnostic_refresh(ls: HloLanguageServer) -> bool:
    """The client can be asked to pull diagnostics again (``workspace/diagnostic/refresh``)."""
    ws_caps = ls.client_capabilities.workspace if ls.client_capabilities else None
    return bool(ws_caps and ws_caps.diagnostics and ws_caps.diagnostics.refresh_support)


@server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(inter_file_dependencies=True, workspace_diagnostics=False)
)
async def on_pull_diagnostics(ls: HloLanguageServer, params: lsp.DocumentDiagnosticParams):
    path = uri_to_path(params.text_document.uri)
    while (
        (pending := ls._pending.get(path)) is not None
        and not pending.done()
        and not _checked(ls, path)
        and not _joining(ls, path)
    ):
        # being read or checked: answer once the complete set can be made (woken when the read takes a step;
        # asked again every 50 ms all the same)
        await ls.read_step(path, 0.05)
    # the complete set may run the verifier (seconds on a large module): in a worker thread, kept per version
    return await ls.answers.answer(path, "diagnostic", lambda: _pull_report(ls, path))


def _joining(ls: HloLanguageServer, path: str) -> bool:
    """A buffer file read at its current text whose large siblings are read in the background, for a client
    that can be asked to pull again: its own diagnostics are answered now (not kept), the client asked again
    once the join is done (`_joined`)."""
    if not diagnostic_refresh(ls) or not ls.ws.has_analysis(path) or not ls.ws.defers_siblings(path):
        return False
    a = ls.ws.try_analysis(path)
    return a is not None and a.buffers is not None


def _checked(ls: HloLanguageServer, path: str) -> bool:
    """An HLO module read at its current text and verified (or small enough to verify at once): its complete
    diagnostics need nothing the background work (users maps, buffer files) still reads. Buffer files wait for
    that work: their checks join the module's files."""
    if not ls.ws.has_analysis(path):
        return False
    a = ls.ws.try_analysis(path)
    return a is not None and a.hlo is not None and (a.size <= GRAMMAR_LIMIT or a.verified is not None)


@safe
def _pull_report(ls: HloLanguageServer, path: str):
    joining = _joining(ls, path)
    if joining:
        ls.answers.wait_for_join(path, "diagnostic")  # before the bundle is made (see DocumentAnswers.joined)
    try:
        partial = joining and ls.ws.bundle(path).partial
    except ReadError:
        partial = False
    conv, lines = ls.conv, ls.lines_of(path)
    items = [conv.diagnostic(path, lines, d) for d in document_diagnostics(ls.ws, path)]
    report = lsp.RelatedFullDocumentDiagnosticReport(items=items)
    if partial:
        return Provisional(report)
    ls.answers.not_waiting(path, "diagnostic")
    return report


def _core_range(conv: Converter, lines, r: lsp.Range) -> Range:
    sl, sc = conv.from_position(lines, r.start)
    el, ec = conv.from_position(lines, r.end)
    return Range(sl, sc, el, ec)


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix], resolve_provider=False),
)
@safe
def on_code_action(ls: HloLanguageServer, params: lsp.CodeActionParams):
    path = uri_to_path(params.text_document.uri)
    conv, lines = ls.conv, ls.lines_of(path)
    sent = [
        Diagnostic(_core_range(conv, lines, d.range), Severity.ERROR, str(d.code or ""), d.message)
        for d in params.context.diagnostics
    ]
    out = []
    for a in code_actions.code_actions(ls.ws, path, _core_range(conv, lines, params.range), sent):
        changes = {
            path_to_uri(p): [lsp.TextEdit(range=conv.range_in(p, e.range), new_text=e.new_text) for e in edits]
            for p, edits in a.edits.items()
        }
        out.append(
            lsp.CodeAction(
                title=a.title,
                kind=lsp.CodeActionKind.QuickFix,
                is_preferred=a.preferred,
                diagnostics=[conv.diagnostic(path, lines, a.diagnostic)],
                edit=lsp.WorkspaceEdit(changes=changes),
            )
        )
    return out or None
