"""Sync, positions and clients: plain-text hover, UTF-16 columns with astral-plane characters, incremental
edits, sibling files re-read when they change on disk, pull diagnostics. The real server over stdio."""

from __future__ import annotations

import os
import shutil
import sys

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.fixtures import DATA, find
from tests.lsp.util import change_line, open_doc, tdp

COND = DATA / "jax-cpu" / "cond_switch"
STEM = "module_0000.jit_piecewise.cpu_after_optimizations"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "hlo_lsp"]), scope="module")
async def client(lsp_client: LanguageClient):
    """A minimal client: plain-text hovers only, UTF-16 positions, no plugin (languageId plaintext)."""
    caps = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.PlainText])
        )
    )
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps))
    yield
    await lsp_client.shutdown_session()


ASTRAL = (
    "HloModule m\n\n"
    "%c (p: f32[4]) -> f32[4] {\n"
    "  ROOT %p = f32[4]{0} parameter(0)\n"
    "}\n\n"
    "ENTRY %e (a: f32[4]) -> f32[4] {\n"
    "  %a = f32[4]{0} parameter(0)\n"
    '  ROOT %r = f32[4]{0} call(%a), metadata={op_name="\U0001d538\U0001d539 ×"}, to_apply=%c\n'
    "}\n"
)


def utf16_col(line: str, cp_col: int) -> int:
    return len(line[:cp_col].encode("utf-16-le")) // 2


async def test_plain_text_hover(client, tmp_path):
    f = tmp_path / "m.hlo"
    f.write_text(ASTRAL)
    u = open_doc(client, f)
    lines = ASTRAL.split("\n")
    ln, col = find(lines, "%a = ")
    h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, ln, col + 1)))
    assert h.contents.kind == lsp.MarkupKind.PlainText
    assert h.contents.value.startswith("parameter %a in e")
    assert "Bytes: 16 bytes" in h.contents.value and "**" not in h.contents.value


async def test_utf16_columns_after_astral_characters(client, tmp_path):
    f = tmp_path / "astral.hlo"
    f.write_text(ASTRAL)
    u = open_doc(client, f)
    lines = ASTRAL.split("\n")
    ln = next(i for i, x in enumerate(lines) if "to_apply=%c" in x)
    cp = lines[ln].index("%c", lines[ln].index("to_apply")) + 1
    wire = utf16_col(lines[ln], cp)
    assert wire == cp + 2  # two astral characters before it, each two UTF-16 units
    d = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, ln, wire)))
    assert d[0].range.start.line == 2
    # the range of a name after the astral characters comes back in UTF-16 units too
    hl = await client.text_document_document_highlight_async(lsp.DocumentHighlightParams(**tdp(u, ln, wire)))
    use = next(h for h in hl if h.range.start.line == ln)
    assert use.range.start.character == utf16_col(lines[ln], cp)  # `c`, after the `%`
    assert use.range.end.character == utf16_col(lines[ln], cp + 1)


async def test_incremental_change_updates_diagnostics(client, tmp_path):
    f = tmp_path / "edit.hlo"
    f.write_text(ASTRAL)
    u = open_doc(client, f)
    lines = ASTRAL.split("\n")
    ln, col = find(lines, "call(%a)")
    start = col + len("call(%")
    change_line(client, u, 2, ln, start, start + 1, "zz")
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    while not _problems(client.diagnostics.get(u)):
        await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    diags = _problems(client.diagnostics[u])
    assert [d.code for d in diags] == ["undefined-operand"] and diags[0].range.start.line == ln
    assert f.read_text() == ASTRAL  # the server never writes the file


def _problems(diags):
    """The diagnostics but the donation hints (advice on the module's parameter, issue 19)."""
    return [d for d in diags or () if d.code != "hlo.donation-hint"]


async def test_pull_diagnostics(client, tmp_path):
    f = tmp_path / "pull.hlo"
    f.write_text(ASTRAL.replace("parameter(0)\n  ROOT %r", "parameter(0)\n  ROOT %r").replace("%a)", "%q)"))
    u = open_doc(client, f)
    rep = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    assert [d.code for d in _problems(rep.items)] == ["undefined-operand"]


async def test_sibling_reread_when_changed_on_disk(client, tmp_path):
    for f in COND.glob(f"{STEM}*"):
        shutil.copy(f, tmp_path / f.name)
    hlo = tmp_path / f"{STEM}.txt"
    live = tmp_path / f"{STEM}-live-range.txt"
    u = open_doc(client, hlo)
    lines = hlo.read_text().split("\n")
    ln, col = find(lines, "%wrapped_convert = ")
    h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, ln, col + 2)))
    old = next(x.strip() for x in live.read_text().split("\n") if x.strip().startswith("wrapped_convert{}:"))
    s, e = old.split(":")[1].split("-")
    assert f"live [{s}, {e}]" in h.contents.value
    live.write_text(live.read_text().replace(old, f"wrapped_convert{{}}:{s}-{int(e) - 1}"))
    st = os.stat(live)
    os.utime(live, (st.st_atime, st.st_mtime + 5))  # make the change visible even on coarse mtimes
    h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, ln, col + 2)))
    assert f"live [{s}, {int(e) - 1}]" in h.contents.value
