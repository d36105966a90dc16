"""No crash, no hang (real server over stdio): every hostile input of issue 8 opened in the server, every
request sent on it, and the server still answering afterwards.

`server_drive.drive_server` sends each request kind at a few cursors with a 30 s hang timeout; an answer may be
a result, null or a JSON-RPC error. Documents are also read from disk as siblings of an open file (NUL bytes,
invalid UTF-8, random bytes), and an unreadable document asked for by URI gets one diagnostic.
"""

from __future__ import annotations

import shutil

import pytest
from lsprotocol import types as lsp

from tests.lsp.util import uri
from tests.robustness.cases import SPLIT_SUFFIXES, disk_cases, split_files, text_cases
from tests.robustness.server_drive import Stats, alive, ask, drive_server

CASES = text_cases()
STATS = Stats()


def _open(client, path, text: str, version: int = 1) -> str:
    u = uri(path)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=u, language_id="plaintext", version=version, text=text)
        )
    )
    return u


def _close(client, u: str) -> None:
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))


@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
async def test_every_request_answers_on_hostile_text(client, tmp_path, name, text):
    stats = Stats()
    for doc in ("m.cpu_after_optimizations.txt", "m.cpu_after_optimizations-buffer-assignment.txt"):
        path = tmp_path / doc
        u = _open(client, path, text)
        await drive_server(client, u, text.split("\n"), stats, limit=3)
        _close(client, u)
    STATS.merge(stats)
    assert stats.hangs == [], f"{name}: no answer to {stats.hangs}"
    assert await alive(client, stats)


@pytest.mark.parametrize("name,data", disk_cases(), ids=[c[0] for c in disk_cases()])
async def test_bad_bytes_on_disk_as_siblings_and_unopened_documents(client, tmp_path, name, data):
    """The split set copied, one sibling replaced by bad bytes; requests on the open HLO file and on the bad file
    by URI (never opened: the server reads it from disk)."""
    for _suffix, src in split_files().items():
        shutil.copy(src, tmp_path / src.name)
    files = {s: tmp_path / p.name for s, p in split_files().items()}
    bad = files[SPLIT_SUFFIXES[1]]
    bad.write_bytes(data)
    stats = Stats()
    hlo = files[""]
    u = _open(client, hlo, hlo.read_text())
    await drive_server(client, u, hlo.read_text().split("\n"), stats, limit=3)
    await drive_server(client, uri(bad), [""], stats, limit=1)
    _close(client, u)
    STATS.merge(stats)
    assert stats.hangs == [], f"{name}: no answer to {stats.hangs}"
    assert await alive(client, stats)


@pytest.mark.parametrize(
    "name,data",
    [c for c in disk_cases() if c[0] in ("random-bytes", "nul-bytes", "invalid-utf8", "utf16")],
    ids=lambda x: x if isinstance(x, str) else "",
)
async def test_unreadable_document_gets_one_diagnostic(client, tmp_path, name, data):
    path = tmp_path / "m.cpu_after_optimizations.txt"
    path.write_bytes(data)
    stats = Stats()
    report = await ask(
        stats,
        "diagnostic",
        client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri(path)))
        ),
    )
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport), report
    assert len(report.items) == 1, report.items
    message = report.items[0].message
    assert path.name in message and any(w in message for w in ("UTF-8", "binary", "NUL")), message


async def test_missing_document_by_uri(client, tmp_path):
    stats = Stats()
    await drive_server(client, uri(tmp_path / "gone.cpu_after_optimizations.txt"), [""], stats, limit=1)
    assert stats.hangs == []
    report = await ask(
        stats,
        "diagnostic",
        client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri(tmp_path / "gone.txt")))
        ),
    )
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport) and len(report.items) == 1
    assert "gone.txt" in report.items[0].message


def test_summary():
    """Not a check of its own: prints the counts of this module's run (pytest -s shows them)."""
    print(
        f"\nhostile server run: {STATS.requests} requests, {STATS.errors} JSON-RPC errors, "
        f"{len(STATS.hangs)} hangs, worst latency {STATS.worst_s:.2f} s ({STATS.worst})"
    )
    assert STATS.hangs == []
