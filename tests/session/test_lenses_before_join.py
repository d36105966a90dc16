"""Code lenses of a buffer file whose large siblings are still being read (issue 14): the first codeLens used to
wait for the whole join (2.5-7 X on the benchmark dump). A client that can be asked again
(``workspace/codeLens/refresh``) gets the lenses of the file's own text at once, then a refresh once the join is
done, then the full lenses; a client that cannot gets the full lenses in one answer, as before.

Real server over stdio; a generated dump set whose module and values file are over the server's 2 MB "large" size
(the join takes seconds), and its real-shaped assignment file opened alone."""

from __future__ import annotations

import asyncio
import sys

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from benchmarks.synth_buffers import ASSIGNMENT, DEFAULT_SRC, VALUES, synthesize_set
from tests.lsp.util import open_doc

SERVER = [sys.executable, "-m", "hlo_lsp"]
SIZE_MB = 6.0
FULL = "in use at the allocated peak"


def _caps(refresh: bool) -> lsp.ClientCapabilities:
    caps = client_capabilities("visual-studio-code")
    assert caps.workspace is not None and caps.workspace.code_lens is not None
    caps.workspace.code_lens.refresh_support = refresh
    return caps


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def client(lsp_client: LanguageClient):
    lsp_client.refreshed = asyncio.Event()

    @lsp_client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(params):
        lsp_client.refreshed.set()

    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=_caps(refresh=True)))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def plain_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=_caps(refresh=False)))
    yield
    await lsp_client.shutdown_session()


async def _titles(client, u: str) -> list[str]:
    got = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    return [x.command.title for x in got if x.command is not None]


def _allocations(path) -> int:
    return sum(1 for x in path.read_text().split("\n") if x.startswith("allocation "))


async def test_lenses_of_the_file_first_then_a_refresh_then_the_full_lenses(client, tmp_path):
    paths = synthesize_set(DEFAULT_SRC, tmp_path, SIZE_MB)
    assert all(paths[suffix].stat().st_size > 2_000_000 for suffix in ("", VALUES))
    u = open_doc(client, paths[ASSIGNMENT])
    first = await _titles(client, u)  # asked at once, as an editor does on open: the join takes seconds
    n = _allocations(paths[ASSIGNMENT])
    assert len(first) == n and all(" of total, " in t and FULL not in t for t in first), first[:3]
    await asyncio.wait_for(client.refreshed.wait(), 120)
    full = await _titles(client, u)
    assert len(full) == n and all(FULL in t for t in full), full[:3]
    assert [t.split(", ")[:2] for t in full] == [t.split(", ")[:2] for t in first]  # the same shares and counts
    # an edit (a value line loses its last character): the file's own lenses of the new text at once, without
    # waiting for the join of the edited file, then a refresh once it is joined again, then the full lenses
    lines = paths[ASSIGNMENT].read_text().split("\n")
    ln = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith(" value: "))
    client.refreshed.clear()
    end = lsp.Position(line=ln, character=len(lines[ln]))
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=2),
            content_changes=[
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(start=lsp.Position(line=ln, character=len(lines[ln]) - 1), end=end), text=""
                )
            ],
        )
    )
    edited = await _titles(client, u)
    assert len(edited) == n and all(FULL not in t for t in edited), edited[:3]
    await asyncio.wait_for(client.refreshed.wait(), 120)
    again = await _titles(client, u)
    assert len(again) == n and all(FULL in t for t in again), again[:3]
    # the value line cut short is reported and left out: one value fewer in its allocation's count
    counts = [int(t.split(", ")[1].split()[0]) for t in again]
    assert sum(counts) == sum(int(t.split(", ")[1].split()[0]) for t in full) - 1
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))


async def test_a_client_that_cannot_be_asked_again_gets_the_full_lenses_at_once(plain_client, tmp_path):
    paths = synthesize_set(DEFAULT_SRC, tmp_path, SIZE_MB)
    u = open_doc(plain_client, paths[ASSIGNMENT])
    full = await _titles(plain_client, u)
    assert len(full) == _allocations(paths[ASSIGNMENT]) and all(FULL in t for t in full), full[:3]
    plain_client.text_document_did_close(
        lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
