"""Inlay hints and code lens switched by initializationOptions and workspace/configuration, and the
hlo.showMemoryTimeline command (chart written into the cache dir, never beside the dump)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.fixtures import DATA
from tests.lsp.util import open_doc, pos

CACHE = tempfile.mkdtemp(prefix="hlo-lsp-test-cache-")
ENV = {**os.environ, "XDG_CACHE_HOME": CACHE}
SERVER = [sys.executable, "-m", "hlo_lsp"]
LIVE = DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations-live-range.txt"
ASSIGN = LIVE.with_name("module_0002.jit_predict.cpu_after_optimizations-buffer-assignment.txt")
CONFIG: dict = {"codeLens": {"enabled": False}}
REFRESHED: list[str] = []


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV), scope="module")
async def client(lsp_client: LanguageClient):
    lsp_client.set_configuration(CONFIG, section="hlo")  # pytest-lsp answers workspace/configuration from this

    @lsp_client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(params):
        REFRESHED.append("codeLens")

    @lsp_client.feature(lsp.WORKSPACE_INLAY_HINT_REFRESH)
    def hint_refresh(params):
        REFRESHED.append("inlayHint")

    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"inlayHints": {"enabled": False}},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _lenses(client, u):
    return await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )


async def _hints(client, u):
    return await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(
            text_document=lsp.TextDocumentIdentifier(uri=u), range=lsp.Range(start=pos(0, 0), end=pos(200, 0))
        )
    )


async def test_switches(client):
    u = open_doc(client, ASSIGN)
    assert list(await _hints(client, u)) == []  # off through initializationOptions
    for _ in range(50):  # the server pulls the `hlo` section after `initialized`
        if not await _lenses(client, u):
            break
        await asyncio.sleep(0.1)
    assert list(await _lenses(client, u)) == []
    # a pushed change (the `hlo` section, as VS Code sends dotted keys) turns both back on
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"hlo": {"inlayHints.enabled": True, "codeLens.enabled": True}})
    )
    for _ in range(50):
        if await _lenses(client, u):
            break
        await asyncio.sleep(0.1)
    assert len(await _lenses(client, u)) > 0
    assert len(await _hints(client, u)) > 0
    # refresh is asked only for what the client declared: these capabilities have codeLens refresh, no inlayHint
    caps = client_capabilities("visual-studio-code").workspace
    assert caps.code_lens.refresh_support and caps.inlay_hint is None
    assert "codeLens" in REFRESHED and "inlayHint" not in REFRESHED
    # a change without settings makes the server ask again: the client's answer turns lenses off again
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    for _ in range(50):
        if not await _lenses(client, u):
            break
        await asyncio.sleep(0.1)
    assert list(await _lenses(client, u)) == []


async def test_show_memory_timeline_writes_into_the_cache(client):
    before = sorted(os.listdir(LIVE.parent))
    u = open_doc(client, LIVE)
    for fmt, magic in (("html", b"<html"), ("svg", b"<svg"), ("png", b"\x89PNG")):
        uri = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="hlo.showMemoryTimeline", arguments=[u, fmt])
        )
        assert uri.startswith("file://")
        out = Path(uri[len("file://") :])
        assert out.is_file() and str(out).startswith(CACHE) and out.suffix == "." + fmt
        assert magic in out.read_bytes()[:4096]
    assert sorted(os.listdir(LIVE.parent)) == before


async def test_show_memory_timeline_without_buffer_files_is_an_error(client):
    import pytest
    from pygls.exceptions import JsonRpcException

    before = LIVE.with_name("module_0002.jit_predict.before_optimizations.txt")
    u = open_doc(client, before)
    with pytest.raises(JsonRpcException, match="no buffer-assignment files"):
        await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="hlo.showMemoryTimeline", arguments=[u])
        )
    with pytest.raises(JsonRpcException):
        await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="hlo.showMemoryTimeline", arguments=[])
        )
