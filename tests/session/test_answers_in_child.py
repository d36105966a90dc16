"""Whole-document answers of a large document are computed in a forked child (issue 14: the server's one GIL then
stays with the requests and the background reads): the outline, folding ranges, code lenses and document links
it answers that way equal those of a server that computes them in-process (``HLO_LSP_NO_FORK=1``), on a
generated set over the 2 MB size where the child is used (the module, its values and assignment files)."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from benchmarks.synth_buffers import ASSIGNMENT, DEFAULT_SRC, LIVE_RANGE, VALUES, synthesize_set
from tests.lsp.util import open_doc

SERVER = [sys.executable, "-m", "hlo_lsp"]
SIZE_MB = 3.0


def _caps() -> lsp.ClientCapabilities:
    """VS Code's, without codeLens refresh: the lenses come whole in one answer (no provisional first)."""
    caps = client_capabilities("visual-studio-code")
    assert caps.workspace is not None and caps.workspace.code_lens is not None
    caps.workspace.code_lens.refresh_support = False
    return caps


async def _start(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=_caps()))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def forking(lsp_client: LanguageClient):
    await _start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER, server_env={**os.environ, "HLO_LSP_NO_FORK": "1"}),
    scope="module",
)
async def in_process(lsp_client: LanguageClient):
    await _start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def dump_set(tmp_path_factory):
    return synthesize_set(DEFAULT_SRC, tmp_path_factory.mktemp("set"), SIZE_MB)


async def _answers(client, path) -> dict:
    u = open_doc(client, path)
    td = lsp.TextDocumentIdentifier(uri=u)
    symbols, folding, lenses, links = await asyncio.gather(
        client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=td)),
        client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=td)),
        client.text_document_code_lens_async(lsp.CodeLensParams(text_document=td)),
        client.text_document_document_link_async(lsp.DocumentLinkParams(text_document=td)),
    )
    for k in links or ():
        k.data = None  # the version stamped in an unresolved link's data is the client's, equal on both
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=td))
    return {"symbols": symbols, "folding": folding, "lenses": lenses, "links": links}


@pytest.mark.parametrize("suffix", ["", VALUES, ASSIGNMENT, LIVE_RANGE])
async def test_answers_from_a_child_equal_answers_made_in_process(forking, in_process, dump_set, suffix):
    path = dump_set[suffix]
    assert os.path.getsize(dump_set[""]) > 2_000_000  # the module at least is past the size the child is used at
    got, want = await asyncio.gather(_answers(forking, path), _answers(in_process, path))
    assert got["symbols"] and got["folding"]
    for key in want:
        assert got[key] == want[key], key
