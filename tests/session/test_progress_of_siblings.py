"""A buffer file that is small on its own but whose module's files are large gets a progress bar for the
background work that reads them (issue 14): the 3.97 MB live-range file of the benchmark dump was opened with no
progress at all while the server read its 23 MB module and the other buffer files for seconds, because the bar
was decided by the opened file's size alone.

Real server over stdio; a generated dump set whose module and values file are large and whose assignment file,
opened here, is under the server's 4 MB progress threshold."""

from __future__ import annotations

import asyncio
import sys

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from benchmarks.synth_buffers import ASSIGNMENT, DEFAULT_SRC, VALUES, synthesize_set
from hlo_lsp.lsp.server import PROGRESS_MIN_BYTES
from tests.lsp.util import open_doc

SERVER = [sys.executable, "-m", "hlo_lsp"]
BACKGROUND = "reading the buffer-assignment files"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


def _bars(client) -> list[list]:
    return [r for r in client.progress_reports.values() if r and isinstance(r[0], lsp.WorkDoneProgressBegin)]


async def test_a_small_buffer_file_of_a_large_module_shows_the_background_reads(client, tmp_path):
    paths = synthesize_set(DEFAULT_SRC, tmp_path, 6.0)
    small = paths[ASSIGNMENT]
    assert small.stat().st_size < PROGRESS_MIN_BYTES < sum(p.stat().st_size for p in paths.values())
    assert paths[VALUES].stat().st_size > 2_000_000
    open_doc(client, small)

    def background() -> list:
        return [r for r in _bars(client) if BACKGROUND in (r[0].message or "")]

    for _ in range(600):
        if any(isinstance(r[-1], lsp.WorkDoneProgressEnd) for r in background()):
            break
        await asyncio.sleep(0.1)
    bars = background()
    assert len(bars) == 1 and isinstance(bars[0][-1], lsp.WorkDoneProgressEnd), [r[0].message for r in _bars(client)]
