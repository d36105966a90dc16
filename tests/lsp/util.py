"""Small helpers for the end-to-end tests."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp


def uri(path: Path) -> str:
    return path.resolve().as_uri()


def open_doc(client, path: Path, language: str = "plaintext", text: str | None = None, version: int = 1) -> str:
    u = uri(path)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=u, language_id=language, version=version, text=path.read_text() if text is None else text
            )
        )
    )
    return u


def pos(line: int, col: int) -> lsp.Position:
    return lsp.Position(line=line, character=col)


def tdp(u: str, line: int, col: int) -> dict:
    return {"text_document": lsp.TextDocumentIdentifier(uri=u), "position": pos(line, col)}


def change_line(client, u: str, version: int, line: int, start: int, end: int, text: str) -> None:
    """didChange to ``version``: columns ``start``..``end`` of ``line`` replaced by ``text`` (one incremental
    change)."""
    at = lsp.Range(start=pos(line, start), end=pos(line, end))
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=at, text=text)],
        )
    )
