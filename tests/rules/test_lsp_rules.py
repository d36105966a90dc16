"""End-to-end over stdio: the rules' diagnostics reach the editor through publishDiagnostics and pull
diagnostics (one implementation with `hlo-lsp check`), related locations included, and quick fixes through
textDocument/codeAction. Faults are injected in the didOpen text only; nothing is written to disk."""

from __future__ import annotations

import asyncio
import re

import pytest
from lsprotocol import types as lsp

from tests.fixtures import DATA
from tests.lsp.util import uri
from tests.rules.dumps import modules
from tests.rules.faults import missing_used_value, moved_onto_live
from tests.rules.hlo_faults import gte_out_of_range, read
from tests.rules.test_code_actions import _typo_in_operand

MODULES = [m for m in modules() if not m.single]


def open_and_wait(client, path, text: str, version: int):
    """Open ``path`` with ``text``; returns (uri, a coroutine giving the first diagnostics published for it).
    pytest-lsp keeps the last publication per URI; it is cleared first, so what appears is this open's (waiting
    on notifications one at a time could miss one that arrives in the same read as another document's)."""
    u = uri(path)
    client.diagnostics.pop(u, None)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=u, language_id="plaintext", version=version, text=text)
        )
    )

    async def wait():
        for _ in range(3600):  # 90 s: generous, the shared cores are often busy
            got = client.diagnostics.get(u)
            if got is not None:
                return got
            await asyncio.sleep(0.025)
        raise AssertionError(f"no diagnostics published for {u}")

    return u, wait()


async def close(client, u: str) -> None:
    """Close ``u`` and wait for the server's clearing publication, so that it cannot arrive after the next
    test's `open_and_wait` has cleared the URI's entry (and be taken for that open's diagnostics)."""
    client.diagnostics.pop(u, None)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
    for _ in range(3600):
        if client.diagnostics.get(u) is not None:
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"no clearing publication after closing {u}")


def _first(gen, mods):
    for m in mods:
        for f in gen(m):
            if f.expected:
                return f
    raise AssertionError(f"no module offers {gen.__name__}")


async def test_overlap_published_and_pulled_with_both_values_related(client):
    f = _first(moved_onto_live, MODULES)
    u, task = open_and_wait(client, f.path, f.text, version=3)
    diags = await task
    lines = f.text.split("\n")
    got = {(d.code, d.range.start.line) for d in diags}
    assert got == {(code, ln) for _p, code, ln in f.expected}
    d = next(d for d in diags if d.code == "buffer.overlap")
    assert d.severity == lsp.DiagnosticSeverity.Warning
    rel = d.related_information
    assert len(rel) == 2 and all(r.location.uri == u for r in rel)
    names = [
        lines[r.location.range.start.line][r.location.range.start.character : r.location.range.end.character]
        for r in rel
    ]
    assert all(n and n in d.message for n in names)
    pulled = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    assert {(x.code, x.range.start.line) for x in pulled.items} == got
    await close(client, u)


async def test_cross_file_finding_lands_on_the_assignment_file(client):
    """A value deleted from Used values (in the open -values.txt) is reported on its assignment line, in the
    assignment file the editor pulls next."""
    f = _first(missing_used_value, MODULES)
    [(ba_path, code, ln)] = sorted(f.expected)
    u, task = open_and_wait(client, f.path, f.text, version=2)
    await task
    pulled = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri(ba_path)))
    )
    assert [(x.code, x.range.start.line) for x in pulled.items] == [(code, ln)]
    assert pulled.items[0].severity == lsp.DiagnosticSeverity.Error
    await close(client, u)


async def test_verifier_warning_published(client):
    path = next(
        p
        for p in sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))
        if gte_out_of_range(p, p.read_text(), read(p.read_text()))
    )
    f = gte_out_of_range(path.resolve(), path.read_text(), read(path.read_text()))[0]
    u, task = open_and_wait(client, f.path, f.text, version=5)
    diags = await task
    hints = [d for d in diags if d.code == "hlo.donation-hint"]  # information, on parameters (issue 19)
    assert all(d.severity == lsp.DiagnosticSeverity.Information for d in hints)
    assert [(d.code, d.range.start.line, d.severity) for d in diags if d not in hints] == [
        ("verifier.tuple-index", f.line, lsp.DiagnosticSeverity.Warning)
    ]
    await close(client, u)


async def test_quick_fix_over_code_action(client):
    caps = client.init_result.capabilities
    if not caps.code_action_provider:
        pytest.skip("the server does not register textDocument/codeAction yet (the lead wires code_actions)")
    path = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))[0].resolve()
    original = path.read_text()
    text, n, col, name = _typo_in_operand(original)
    u, task = open_and_wait(client, path, text, version=7)
    diags = await task
    d = next(d for d in diags if d.code == "undefined-operand")
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=u),
            range=d.range,
            context=lsp.CodeActionContext(diagnostics=[d]),
        )
    )
    assert all(isinstance(a, lsp.CodeAction) and a.kind == lsp.CodeActionKind.QuickFix for a in actions)
    best = actions[0]  # the closest name comes first
    assert best.is_preferred and best.title == f"Rename `{name[0] + name}` to `{name}`"
    # only the closest rename is preferred (VS Code auto-fixes only with a single preferred action)
    assert [a.is_preferred for a in actions] == [True] + [False] * (len(actions) - 1)
    edits = best.edit.changes[u]
    assert len(edits) == 1 and edits[0].range.start.line == n
    line = text.split("\n")[n]
    e = edits[0]
    fixed = line[: e.range.start.character] + e.new_text + line[e.range.end.character :]
    assert fixed == original.split("\n")[n]
    await close(client, u)


async def test_written_shape_quick_fix_over_code_action(client):
    """Old-style seed 001: a written operand shape edited; the quick fix writes the definition's shape back."""
    path = next(DATA.glob("seeds/001_*.txt")).resolve()
    original = path.read_text()
    lines = original.split("\n")
    n, m = next(
        (n, m)
        for n, line in enumerate(lines)
        if " parameter(" not in line and (m := re.search(r"\((\w+)\[(\d+)([\d,]*)\](\{[^}]*\})? %", line))
    )
    lines[n] = lines[n][: m.start(2)] + str(int(m.group(2)) + 1) + lines[n][m.end(2) :]
    u, wait = open_and_wait(client, path, "\n".join(lines), version=9)
    diags = await wait
    d = next(d for d in diags if d.code == "operand-shape-mismatch")
    assert d.range.start.line == n
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=u),
            range=d.range,
            context=lsp.CodeActionContext(diagnostics=[d]),
        )
    )
    assert len(actions) == 1
    [e] = actions[0].edit.changes[u]
    fixed = lines[n][: e.range.start.character] + e.new_text + lines[n][e.range.end.character :]
    assert fixed == original.split("\n")[n]
    await close(client, u)
