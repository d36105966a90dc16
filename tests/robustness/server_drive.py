"""Send every request the server offers over one document and count the answers.

`drive_server` sends each request with a generous hang timeout (`HANG_S`, never a timing assertion): an answer
is a result, null, or a JSON-RPC error; a request that gets none within `HANG_S` is a hang. `Stats` counts
requests, errors and hangs and keeps the worst latency (for the report and the fuzz runner, not for asserts).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

HANG_S = 30.0


@dataclass
class Stats:
    requests: int = 0
    errors: int = 0  # JSON-RPC error answers (allowed: an answer all the same)
    hangs: list[str] = field(default_factory=list)
    worst_s: float = 0.0
    worst: str = ""

    def merge(self, other: Stats) -> None:
        self.requests += other.requests
        self.errors += other.errors
        self.hangs += other.hangs
        if other.worst_s > self.worst_s:
            self.worst_s, self.worst = other.worst_s, other.worst


async def ask(stats: Stats, what: str, coro):
    """Await one request; returns its result, or the exception for a JSON-RPC error, or None on a hang."""
    stats.requests += 1
    t0 = time.monotonic()
    try:
        return await asyncio.wait_for(coro, HANG_S)
    except asyncio.TimeoutError:
        stats.hangs.append(what)
        return None
    except JsonRpcException as e:
        stats.errors += 1
        return e
    finally:
        dt = time.monotonic() - t0
        if dt > stats.worst_s:
            stats.worst_s, stats.worst = dt, what


def _tid(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


def _pos(line: int, col: int) -> lsp.Position:
    return lsp.Position(line=line, character=col)


def cursor_positions(lines: list[str], limit: int = 6) -> list[tuple[int, int]]:
    """A few cursors: on names, at line ends, and past the end of the document."""
    n = len(lines)
    out = []
    for ln in range(0, n, max(1, n // limit)):
        text = lines[ln]
        i = text.find("%")
        out += [(ln, 0), (ln, min(len(text), i + 2 if i >= 0 else len(text) // 2)), (ln, len(text))]
    return out[: limit * 3] + [(n + 3, 0), (0, 100_000)]


async def drive_server(client, uri: str, lines: list[str], stats: Stats, limit: int = 6) -> None:
    """Every request kind on ``uri``; answers are not checked beyond arriving."""
    td = _tid(uri)
    whole = lsp.Range(start=_pos(0, 0), end=_pos(len(lines) + 5, 0))
    doc_requests = [
        ("documentSymbol", client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=td))),
        ("foldingRange", client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=td))),
        ("documentLink", client.text_document_document_link_async(lsp.DocumentLinkParams(text_document=td))),
        (
            "semanticTokens/full",
            client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=td)),
        ),
        (
            "semanticTokens/range",
            client.text_document_semantic_tokens_range_async(
                lsp.SemanticTokensRangeParams(text_document=td, range=whole)
            ),
        ),
        ("inlayHint", client.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=td, range=whole))),
        ("codeLens", client.text_document_code_lens_async(lsp.CodeLensParams(text_document=td))),
        ("diagnostic", client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=td))),
        ("workspace/symbol", client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="a"))),
        (
            "executeCommand",
            client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(command="hlo.showMemoryTimeline", arguments=[uri, "svg"])
            ),
        ),
    ]
    for what, coro in doc_requests:
        await ask(stats, what, coro)
    for line, col in cursor_positions(lines, limit):
        tdp = {"text_document": td, "position": _pos(line, col)}
        await ask(stats, "hover", client.text_document_hover_async(lsp.HoverParams(**tdp)))
        await ask(stats, "definition", client.text_document_definition_async(lsp.DefinitionParams(**tdp)))
        await ask(stats, "declaration", client.text_document_declaration_async(lsp.DeclarationParams(**tdp)))
        await ask(stats, "typeDefinition", client.text_document_type_definition_async(lsp.TypeDefinitionParams(**tdp)))
        await ask(
            stats,
            "references",
            client.text_document_references_async(
                lsp.ReferenceParams(**tdp, context=lsp.ReferenceContext(include_declaration=True))
            ),
        )
        await ask(
            stats,
            "documentHighlight",
            client.text_document_document_highlight_async(lsp.DocumentHighlightParams(**tdp)),
        )
        await ask(stats, "completion", client.text_document_completion_async(lsp.CompletionParams(**tdp)))
        await ask(stats, "prepareRename", client.text_document_prepare_rename_async(lsp.PrepareRenameParams(**tdp)))
        await ask(stats, "rename", client.text_document_rename_async(lsp.RenameParams(**tdp, new_name="x.1")))
        items = await ask(
            stats,
            "prepareCallHierarchy",
            client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(**tdp)),
        )
        if isinstance(items, list):
            for it in items[:1]:
                await ask(
                    stats,
                    "incomingCalls",
                    client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=it)),
                )
                await ask(
                    stats,
                    "outgoingCalls",
                    client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(item=it)),
                )


async def alive(client, stats: Stats) -> bool:
    """True when the server still answers a request (workspace/symbol with an empty query)."""
    r = await ask(stats, "alive", client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="")))
    return not isinstance(r, JsonRpcException) and "alive" not in stats.hangs
