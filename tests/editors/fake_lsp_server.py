"""A tiny language server for tests/editors/test_nvim.py: it offers inlay hints and code lenses
(which the real server may not have yet) and records what the client sent, so the test can check
how the Neovim plugin wires `hlo.inlayHints.enabled` / `hlo.codeLens.enabled`.

Usage: python fake_lsp_server.py RECORD.jsonl  -- one JSON object per line:
  {"event": "initialize", "initializationOptions": ...}
  {"event": "configuration", "result": ...}       (answer to workspace/configuration, section "hlo")
  {"event": "textDocument/inlayHint"} / {"event": "textDocument/codeLens"}
"""

from __future__ import annotations

import json
import sys

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer

RECORD = sys.argv[1]
server = LanguageServer("fake-hlo-lsp", "0")


def record(event: str, **data) -> None:
    with open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps({"event": event, **data}, default=str) + "\n")


@server.feature(T.INITIALIZE)
def initialize(ls: LanguageServer, params: T.InitializeParams) -> None:
    record("initialize", initializationOptions=params.initialization_options)


@server.feature(T.INITIALIZED)
async def initialized(ls: LanguageServer, params: T.InitializedParams) -> None:
    try:
        result = await ls.workspace_configuration_async(
            T.ConfigurationParams(items=[T.ConfigurationItem(section="hlo")])
        )
    except Exception as e:  # a client without workspace/configuration
        result = f"error: {e}"
    record("configuration", result=result)


@server.feature(T.TEXT_DOCUMENT_INLAY_HINT)
def inlay_hint(ls: LanguageServer, params: T.InlayHintParams) -> list[T.InlayHint]:
    record("textDocument/inlayHint")
    return [T.InlayHint(position=T.Position(line=0, character=0), label="hint")]


@server.feature(T.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: LanguageServer, params: T.CodeLensParams) -> list[T.CodeLens]:
    record("textDocument/codeLens")
    return [
        T.CodeLens(
            range=T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=1)),
            command=T.Command(title="lens", command=""),
        )
    ]


if __name__ == "__main__":
    server.start_io()
