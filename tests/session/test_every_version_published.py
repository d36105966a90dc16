"""Every version an editor sends gets its diagnostics published, or a newer version's are (issue 15: two quick
structural edits of a module over 2 MB published nothing for either, ever; opening a module's files one after
the other left the last without diagnostics)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as lsp

from benchmarks.synth_buffers import ASSIGNMENT, DEFAULT_SRC, LIVE_RANGE, VALUES, synthesize_set
from tests.fixtures import DATA
from tests.lsp.util import open_doc, uri
from tests.session.synth import entry_line, large_module

TIMEOUT = 90


async def _published(client, u: str, version: int) -> list[lsp.Diagnostic]:
    """The diagnostics published for ``u`` at ``version``, waiting for them."""

    async def wait():
        while True:
            got = [p for p in client.published if p.uri == u and p.version == version]
            if got:
                return got[-1].diagnostics
            await asyncio.sleep(0.05)

    try:
        return await asyncio.wait_for(wait(), TIMEOUT)
    except TimeoutError:
        print(
            "DIAGS",
            {k[-50:]: len(v) for k, v in client.diagnostics.items()},
            "PUBLISHED",
            [(p.uri[-60:], p.version, len(p.diagnostics)) for p in client.published],
        )
        raise


def _insert(client, u: str, version: int, line: int, text: str) -> None:
    at = lsp.Position(line=line, character=0)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text=text)],
        )
    )


async def test_two_quick_structural_edits_of_a_large_module(client, tmp_path):
    path = tmp_path / "module_0000.jit_big.cpu_after_optimizations.txt"
    text = large_module(path)
    assert len(text) > 2_000_000
    u = open_doc(client, path, text=text)
    await _published(client, u, 1)
    at = entry_line(text) + 1
    _insert(client, u, 2, at, "  %a.1 = f32[] constant(0)\n")
    await asyncio.sleep(0.3)  # well inside the ~1.5 s a re-read of the module takes
    _insert(client, u, 3, at + 1, "  %a.2 = f32[] negate(f32[] %nosuch)\n")
    diags = await _published(client, u, 3)
    assert [(d.range.start.line, str(d.code)) for d in diags if "nosuch" in d.message] == [
        (at + 1, "undefined-operand")
    ]
    # and the client is never left with version 1's diagnostics as the last word
    last = [p for p in client.published if p.uri == u][-1]
    assert last.version == 3


@pytest.mark.parametrize(
    "stem", ["mlp_sgd/module_0000.jit_train_step", "transformer_block_f32/module_0002.jit_block_train_step_f32"]
)
async def test_a_modules_files_opened_in_a_row(client, stem):
    base = DATA / "jax-cpu"
    names = [
        f"{stem}.before_optimizations.txt",
        f"{stem}.cpu_after_optimizations-buffer-assignment-values.txt",
        f"{stem}.cpu_after_optimizations-buffer-assignment.txt",
        f"{stem}.cpu_after_optimizations-live-range.txt",
    ]
    paths = [base / n for n in names]
    for p in paths:
        open_doc(client, p)
    for p in paths:
        await _published(client, uri(p), 1)


async def test_a_large_modules_files_opened_in_a_row(client, tmp_path):
    """The same with the module and values file over 2 MB (a generated set: the module and its buffer files, the
    live-range file last, as the issue opened them): while the first file's siblings are read in the background,
    the next files open, among them files that background read is reading as siblings; each must still get its
    diagnostics."""
    paths = synthesize_set(DEFAULT_SRC, tmp_path, 2.5)
    order = [paths[""], paths[VALUES], paths[ASSIGNMENT], paths[LIVE_RANGE]]
    assert all(p.stat().st_size > 2_000_000 for p in order[:2])
    for p in order:
        open_doc(client, p)
    for p in order:
        await _published(client, uri(p), 1)


@pytest.mark.parametrize("gap", [0.08, 0.15, 0.3, 0.6])
async def test_structural_edits_landing_while_the_module_is_read_again(client, tmp_path, gap):
    """The second edit sent while the first one's re-read of a 6 MB module runs (the gap spans the read's
    window on a slow or fast machine): its version is published, and it is the last word."""
    path = tmp_path / "module_0000.jit_big.cpu_after_optimizations.txt"
    text = large_module(path, 6.0)
    u = open_doc(client, path, text=text)
    await _published(client, u, 1)
    at = entry_line(text) + 1
    _insert(client, u, 2, at, "  %a.1 = f32[] constant(0)\n")
    await asyncio.sleep(gap)
    _insert(client, u, 3, at + 1, "  %a.2 = f32[] negate(f32[] %nosuch)\n")
    diags = await _published(client, u, 3)
    assert [(d.range.start.line, str(d.code)) for d in diags if "nosuch" in d.message] == [
        (at + 1, "undefined-operand")
    ]
    await asyncio.sleep(1.0)
    last = [p for p in client.published if p.uri == u][-1]
    assert last.version == 3
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
