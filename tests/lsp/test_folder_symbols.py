"""Workspace symbols over a whole dump folder: indexed in the background on the first query, so opening one
file reads nothing else; later queries find computations of files never opened."""

from __future__ import annotations

import asyncio
import re
import sys

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.fixtures import DATA

ROOT = DATA / "jax-cpu"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "hlo_lsp"]), scope="module")
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("neovim"),
            root_uri=ROOT.resolve().as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=ROOT.resolve().as_uri(), name="jax-cpu")],
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_folder_symbols_without_opening_files(client):
    target = next(ROOT.glob("loops_scan_while/*cpu_after_optimizations.txt"))
    lines = target.read_text().split("\n")
    name = next(re.match(r"%([^ ]+) ", x).group(1) for x in lines if x.startswith("%") and x.endswith("{"))
    uri = target.resolve().as_uri()
    for _ in range(100):  # the first query starts the background walk; poll until it has reached the file
        res = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=name))
        hits = [s for s in res or [] if s.location.uri == uri and s.name == name]
        if hits:
            break
        await asyncio.sleep(0.2)
    assert hits, f"{name} of {target.name} never appeared"
    line = hits[0].location.range.start.line
    assert lines[line].startswith(f"%{name} ")
    assert hits[0].location.range.start.character == 1  # after the `%`
