"""The client fixture of the end-to-end tests: the real server (``python -m hlo_lsp``) over stdio, one per test
module, initialized with VS Code's capabilities (the answer kept as ``client.init_result``). A test package's
conftest makes its ``client`` with `vscode_client`, adding what its tests need around the initialize request."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "hlo_lsp"]

Hook = Callable[[LanguageClient], None]


def vscode_client(
    server_env: Mapping[str, str] | None = None,
    before: Hook | None = None,
    after: Hook | None = None,
    capabilities: Callable[[lsp.ClientCapabilities], None] | None = None,
):
    """A module-scoped ``client`` fixture; ``server_env`` replaces the server's environment, ``before`` and
    ``after`` run on the client around its initialize request, ``capabilities`` changes VS Code's before it."""
    config = ClientServerConfig(server_command=SERVER, **({"server_env": dict(server_env)} if server_env else {}))

    @pytest_lsp.fixture(config=config, scope="module")
    async def client(lsp_client: LanguageClient):
        if before is not None:
            before(lsp_client)
        caps = client_capabilities("visual-studio-code")
        if capabilities is not None:
            capabilities(caps)
        lsp_client.init_result = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps))
        if after is not None:
            after(lsp_client)
        yield
        await lsp_client.shutdown_session()

    return client


def record_published(lsp_client: LanguageClient) -> None:
    """Record every publishDiagnostics in ``lsp_client.published`` (pytest-lsp keeps only the latest per
    document)."""
    lsp_client.published = []  # type: ignore[attr-defined]
    original = lsp_client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params):
        lsp_client.published.append(params)  # type: ignore[attr-defined]
        return original(params)

    lsp_client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
