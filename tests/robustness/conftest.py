"""The real server over stdio for the robustness tests: one module-scoped client (like tests/lsp), with the
server's chart cache pointed at a temporary folder so nothing lands in the user's home during tests."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "hlo_lsp"]
CACHE = tempfile.mkdtemp(prefix="hlo-lsp-robustness-cache-")
SERVER_ENV = {**os.environ, "XDG_CACHE_HOME": CACHE}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=SERVER_ENV), scope="module")
async def client(lsp_client: LanguageClient):
    lsp_client.init_result = await lsp_client.initialize_session(
        lsp.InitializeParams(capabilities=client_capabilities("visual-studio-code"))
    )
    yield
    await lsp_client.shutdown_session()
