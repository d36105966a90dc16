"""Each client gets its diagnostics one way, never both: an editor keeps pushed (``publishDiagnostics``) and
pulled (``textDocument/diagnostic``) diagnostics apart (Neovim 0.11 in two namespaces, VS Code in two
collections) and showed every finding twice while the server did both.

- A client that pulls and can be asked to pull again (today's VS Code) is offered pull and sent no push.
- Every other one is offered no pull and gets pushes: pytest-lsp's VS Code 1.65 (before pull existed), and
  Neovim 0.11, which pulls but cannot be asked again (a buffer file's answer would wait for its module's files).

The real server over stdio with each client's recorded capabilities; the broken hand-written module of the
tests' data."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.lsp.util import open_doc, pos
from tests.server_client import record_published

SERVER = [sys.executable, "-m", "hlo_lsp"]
BROKEN = Path(__file__).resolve().parents[1] / "data" / "handwritten" / "invalid" / "i01_undefined_operand.hlo"


def _vscode_today() -> lsp.ClientCapabilities:
    """VS Code with vscode-languageclient 9+ (what the extension ships): pull diagnostics and their refresh."""
    caps = client_capabilities("visual-studio-code")
    assert caps.text_document is not None and caps.workspace is not None
    caps.text_document.diagnostic = lsp.DiagnosticClientCapabilities(dynamic_registration=True)
    caps.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


def _fixture(caps):
    @pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
    async def client(lsp_client: LanguageClient):
        record_published(lsp_client)
        lsp_client.init_result = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps()))
        yield
        await lsp_client.shutdown_session()

    return client


vscode_today = _fixture(_vscode_today)
vscode_1_65 = _fixture(lambda: client_capabilities("visual-studio-code"))
neovim_0_11 = _fixture(lambda: client_capabilities("neovim@v0.11.0"))


async def _open_and_settle(client) -> str:
    """Open the broken module, save it (a push client is sent its diagnostics then, at the latest) and wait for a
    hover's answer: whatever the server pushes for the open and the save is on the wire before it."""
    assert BROKEN.exists(), BROKEN
    u = open_doc(client, BROKEN)
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
    await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=u), position=pos(0, 0))
    )
    return u


def _errors(items) -> list[str]:
    return [d.message for d in items if d.severity == lsp.DiagnosticSeverity.Error]


async def test_a_client_that_pulls_and_refreshes_is_offered_pull_and_sent_no_push(vscode_today):
    assert vscode_today.init_result.capabilities.diagnostic_provider is not None
    u = await _open_and_settle(vscode_today)
    report = await vscode_today.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    assert _errors(report.items), report.items
    await _open_and_settle(vscode_today)  # anything the pull set off is on the wire too
    assert not [p for p in vscode_today.published if p.uri == u]


async def _pushed_only(client) -> None:
    assert client.init_result.capabilities.diagnostic_provider is None
    u = await _open_and_settle(client)
    mine = [p for p in client.published if p.uri == u]
    assert mine and _errors(mine[-1].diagnostics), mine


async def test_vscode_before_pull_is_offered_no_pull_and_sent_its_diagnostics(vscode_1_65):
    await _pushed_only(vscode_1_65)


async def test_neovim_which_cannot_be_asked_to_pull_again_gets_pushes(neovim_0_11):
    caps = client_capabilities("neovim@v0.11.0")
    assert caps.text_document is not None and caps.text_document.diagnostic is not None  # it would pull
    await _pushed_only(neovim_0_11)
