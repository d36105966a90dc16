"""Diagnostics that need a module's files joined, for a buffer file whose siblings are large (issue 14): the
server reads such siblings in the background after the file's own diagnostics are out; once they are joined, the
cross-file findings must reach the editor, pushed (``publishDiagnostics``) and pulled (``textDocument/diagnostic``,
after ``workspace/diagnostic/refresh``).

Real server over stdio, a generated dump set whose module and values file are over the server's 2 MB "large"
size; one value line is taken out of the assignment file, so ``Used values`` lists a value no allocation holds:
XLA writes both from the same assignment, and ``buffer.used-values-mismatch`` says so on the values file."""

from __future__ import annotations

import asyncio
import re
import sys
import time

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from benchmarks.synth_buffers import ASSIGNMENT, DEFAULT_SRC, VALUES, synthesize_set
from tests.lsp.util import open_doc
from tests.server_client import record_published

SERVER = [sys.executable, "-m", "hlo_lsp"]
SIZE_MB = 4.0
CODE = "buffer.used-values-mismatch"


def _drop_one_value(paths) -> str:
    """Take the last value line of the first allocation with two or more out of the assignment file; its key."""
    lines = paths[ASSIGNMENT].read_text().split("\n")
    values = [i for i, x in enumerate(lines) if x.startswith(" value: <")]
    i = next(i for a, i in zip(values, values[1:]) if i == a + 1)
    m = re.match(r" value: <\d+ ([\w.\-]+(?:\{[\d,]*\})?)", lines[i])
    assert m is not None, lines[i]
    del lines[i]
    paths[ASSIGNMENT].write_text("\n".join(lines))
    return m.group(1)


async def test_cross_file_findings_are_pushed_once_the_siblings_are_joined(client, tmp_path):
    paths = synthesize_set(DEFAULT_SRC, tmp_path, SIZE_MB)
    key = _drop_one_value(paths)
    u = open_doc(client, paths[VALUES])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        mine = [p for p in client.published if p.uri == u]
        if mine and any(d.code == CODE and key in d.message for d in mine[-1].diagnostics):
            break
        await asyncio.sleep(0.5)
    else:
        raise AssertionError(f"no {CODE} for {key} pushed; last: {[d.message for d in mine[-1].diagnostics][:5]}")
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def pulling(lsp_client: LanguageClient):
    """A client that pulls diagnostics and can be asked to pull again (VS Code's capabilities)."""
    lsp_client.refreshed = asyncio.Event()

    original = lsp_client.protocol.fm.features[lsp.WORKSPACE_DIAGNOSTIC_REFRESH]  # pytest-lsp's own handler

    def refresh(params):
        lsp_client.refreshed.set()
        return original(params)

    lsp_client.protocol.fm.features[lsp.WORKSPACE_DIAGNOSTIC_REFRESH] = refresh
    record_published(lsp_client)

    caps = client_capabilities("visual-studio-code")  # pytest-lsp's copy predates pull diagnostics
    assert caps.workspace is not None and caps.text_document is not None
    caps.text_document.diagnostic = lsp.DiagnosticClientCapabilities(dynamic_registration=True)  # as VS Code says
    caps.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    init = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps))
    assert init.capabilities.diagnostic_provider is not None
    yield
    await lsp_client.shutdown_session()


async def test_pulled_diagnostics_answer_at_once_then_again_after_the_join(pulling, tmp_path):
    paths = synthesize_set(DEFAULT_SRC, tmp_path, SIZE_MB)
    key = _drop_one_value(paths)
    u = open_doc(pulling, paths[VALUES])
    params = lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    first = await pulling.text_document_diagnostic_async(params)  # the file's own: the join takes seconds
    assert not any(d.code == CODE for d in first.items), first.items[:3]
    await asyncio.wait_for(pulling.refreshed.wait(), 100)
    again = await pulling.text_document_diagnostic_async(params)
    assert any(d.code == CODE and key in d.message for d in again.items), again.items[:5]
    assert await pulling.text_document_diagnostic_async(params) == again  # kept now: the join is done
    assert not [p for p in pulling.published if p.uri == u]  # a pulling client is sent none (shown twice)
    pulling.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
