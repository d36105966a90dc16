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


async def test_show_heap_map_writes_into_the_cache(client):
    """hlo.showHeapMap: the heap map of the module as HTML in the cache dir (never beside the dump); its page
    names the values the dump's listing holds."""
    import re

    before = sorted(os.listdir(LIVE.parent))
    u = open_doc(client, LIVE)
    uri = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="hlo.showHeapMap", arguments=[u])
    )
    out = Path(uri[len("file://") :])
    assert out.is_file() and str(out).startswith(CACHE) and out.name.endswith("-heap.html")
    page = out.read_text()
    keys = re.findall(r"^ value: <\d+ ([^ >{]+)(\{[\d,]*\})? ", ASSIGN.read_text(), re.M)
    assert "heap map" in page and sum(1 for name, _ in keys if name in page) >= len(keys) // 2
    assert sorted(os.listdir(LIVE.parent)) == before


async def test_peak_groups_command_and_hover_on_the_peak_line(client):
    """hlo.peakGroups answers every grouping of the values live at XLA's peak; by category, the bytes the dump
    prints for each value summed by its allocation's kind (from the listing's headers). The hover of the
    'Live ranges at N (peak)' line shows the same groupings."""
    import re

    from tests.insight.util import human

    u = open_doc(client, LIVE)
    answer = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="hlo.peakGroups", arguments=[u])
    )
    text = answer["text"]
    live_text = LIVE.read_text()
    entries = re.findall(r"^    (\S+)\{[\d,]*\}: (\d+) bytes \(cumulative", live_text, re.M)
    total = sum(int(b) for _, b in entries)
    kind: dict[int, str] = {}
    value_alloc: dict[str, int] = {}
    alloc = None
    for line in ASSIGN.read_text().split("\n"):
        if m := re.match(r"allocation (\d+): size \d+(.*):$", line):
            alloc = int(m.group(1))
            rest = m.group(2)
            kind[alloc] = (
                "parameter"
                if "parameter" in rest
                else "output"
                if "maybe-live-out" in rest or "output" in rest
                else "constant"
                if "constant" in rest
                else "temporary"
            )
        elif m := re.match(r" value: <\d+ ([^ >{]+)", line):
            value_alloc[m.group(1)] = alloc
    by_kind: dict[str, int] = {}
    for name, b in entries:
        k = kind[value_alloc[name]]
        by_kind[k] = by_kind.get(k, 0) + int(b)
    section = text[text.index("By category") :].split("\n\n")[0]
    for k, b in by_kind.items():
        assert re.search(rf"^\s+{re.escape(human(b))}\s+\d+ values  {k}$", section, re.M), (k, section)
    for key in ("source line", "op_name", "dtype", "category", "argument (param)"):
        assert f"By {key} (" in text
    step = re.search(r"Live ranges at (\d+)", live_text).group(1)
    assert text.startswith(f"XLA peak at step {step} ")
    assert f"{human(total)} in {len(entries)} values" in text.split("\n")[0]
    peak_line = next(n for n, line in enumerate(live_text.split("\n")) if line.startswith("  Live ranges at "))
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=u), position=pos(peak_line, 4))
    )
    assert hover is not None and "**By category**" in hover.contents.value
    assert all(k in hover.contents.value for k in by_kind)
