"""The real server over stdio with VS Code's capabilities; it may ask for lenses again
(pytest-lsp's client keeps the documents it was asked to show in ``shown_documents``)."""

import sys

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "hlo_lsp"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def client(lsp_client: LanguageClient):
    @lsp_client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(params):  # the server asks again once a pass history is built
        return None

    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()
