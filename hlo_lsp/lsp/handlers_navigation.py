"""LSP handlers of the requests that look one thing up: hover, definition, declaration, type definition,
references, highlights, workspace symbols and the call hierarchy. Each unpacks its params, asks `hlo_lsp.ide`
and converts the answer (`Converter`: UTF-16 columns); each answers on the event loop in a few ms.
"""

from __future__ import annotations

import asyncio
import os

from lsprotocol import types as lsp

from hlo_lsp.core.folder_index import FolderIndex
from hlo_lsp.ide import calls, hover, navigation, oom, symbols
from hlo_lsp.ide.types import CallItem
from hlo_lsp.lsp.app import SYMBOL_KIND, HloLanguageServer, safe, server
from hlo_lsp.lsp.convert import Converter, path_to_uri, uri_to_path
from hlo_lsp.lsp.protocol import RawResult


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
@safe
def on_hover(ls: HloLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    path, line, col = ls.at(params)
    # a short request: long answers' forks wait for it, and background reads give way to it (`DocumentAnswers`)
    with ls.answers.short_request():
        h = oom.oom_hover(ls.ws, path, line, col) or hover.hover(ls.ws, path, line, col)
    if h is None:
        return None
    kind, value = (lsp.MarkupKind.PlainText, h.plain) if ls.plain_hover else (lsp.MarkupKind.Markdown, h.markdown)
    return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value=value), range=ls.conv.range_in(path, h.range))


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
@safe
def on_definition(ls: HloLanguageServer, params: lsp.DefinitionParams):
    at = ls.at(params)
    with ls.answers.short_request():  # as a hover
        return ls.locations(oom.oom_definition(ls.ws, *at) or navigation.definition(ls.ws, *at))


@server.feature(lsp.TEXT_DOCUMENT_DECLARATION)
@safe
def on_declaration(ls: HloLanguageServer, params: lsp.DeclarationParams):
    return ls.locations(navigation.definition(ls.ws, *ls.at(params)))


@server.feature(lsp.TEXT_DOCUMENT_TYPE_DEFINITION)
@safe
def on_type_definition(ls: HloLanguageServer, params: lsp.TypeDefinitionParams):
    return ls.locations(navigation.type_definition(ls.ws, *ls.at(params)))


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
@safe
async def on_references(ls: HloLanguageServer, params: lsp.ReferenceParams):
    await ls.maps_ready(uri_to_path(params.text_document.uri))  # (a large module's users: its maps)
    groups = navigation.reference_spans(ls.ws, *ls.at(params), params.context.include_declaration)
    return RawResult(ls.conv.spans_json(groups)) if groups else None  # thousands of locations for a busy name


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@safe
async def on_highlight(ls: HloLanguageServer, params: lsp.DocumentHighlightParams):
    path = uri_to_path(params.text_document.uri)
    await ls.maps_ready(path)
    conv = ls.conv
    lines = ls.lines_of(path)
    kinds = {"write": lsp.DocumentHighlightKind.Write, "read": lsp.DocumentHighlightKind.Read}
    return [
        lsp.DocumentHighlight(range=conv.range(lines, h.range), kind=kinds[h.kind])
        for h in navigation.highlights(ls.ws, *ls.at(params))
    ] or None


def _folder_indexes(ls: HloLanguageServer) -> list[FolderIndex]:
    """One background index per workspace folder, started on the first workspace-symbol query."""
    roots = [uri_to_path(f.uri) for f in ls.workspace.folders.values()] or (
        [ls.workspace.root_path] if ls.workspace.root_path else []
    )
    for root in roots:
        if root not in ls.folder_indexes and os.path.isdir(root):
            ls.folder_indexes[root] = FolderIndex(root)
            ls.folder_indexes[root].start()
    return list(ls.folder_indexes.values())


@server.feature(lsp.WORKSPACE_SYMBOL)
@safe
async def on_workspace_symbol(ls: HloLanguageServer, params: lsp.WorkspaceSymbolParams):
    """Answered in a worker thread: a query over the 23 MB module's 200,000 names takes 25-40 ms (the 100 MB
    module's four times that), and an editor sends one per keystroke in its symbol search."""
    indexes = _folder_indexes(ls)  # (started here, on the loop)
    return await asyncio.to_thread(_workspace_symbols, ls, params.query, ls.ws.open_paths(), indexes)


def _workspace_symbols(ls: HloLanguageServer, query: str, paths: list[str], indexes: list[FolderIndex]):
    conv = ls.conv
    out = []
    seen = set()
    for s in symbols.workspace_symbols(ls.ws, query, paths):
        loc = conv.location(s.location)
        out.append(
            lsp.WorkspaceSymbol(name=s.name, kind=SYMBOL_KIND[s.kind], location=loc, container_name=s.container or None)
        )
        seen.add((loc.uri, loc.range.start.line, s.name))
    for index in indexes:
        for fs in index.query(query):
            uri = path_to_uri(fs.path)
            if (uri, fs.line, fs.name) in seen:
                continue
            seen.add((uri, fs.line, fs.name))
            # folder files are not read for this answer: their names are ASCII in XLA dumps, so columns agree
            rng = lsp.Range(
                start=lsp.Position(line=fs.line, character=fs.col),
                end=lsp.Position(line=fs.line, character=fs.col + len(fs.name)),
            )
            out.append(
                lsp.WorkspaceSymbol(
                    name=fs.name,
                    kind=SYMBOL_KIND[fs.kind],
                    location=lsp.Location(uri=uri, range=rng),
                    container_name=fs.container or None,
                )
            )
    return out[: symbols.MAX_WORKSPACE_SYMBOLS]


def _call_item(conv: Converter, item: CallItem) -> lsp.CallHierarchyItem:
    return lsp.CallHierarchyItem(
        name=item.name,
        kind=lsp.SymbolKind.Function,
        uri=path_to_uri(item.location.path),
        detail=item.detail,
        range=conv.range_in(item.location.path, item.location.range),
        selection_range=conv.range_in(item.location.path, item.selection),
        data={"path": item.location.path, "line": item.location.range.start_line},
    )


def _from_call_item(ls: HloLanguageServer, it: lsp.CallHierarchyItem) -> CallItem | None:
    path = uri_to_path(it.uri)
    items = calls.prepare(
        ls.ws,
        path,
        it.selection_range.start.line,
        ls.conv.from_position(ls.lines_of(path), it.selection_range.start)[1],
    )
    return items[0] if items else None


@server.feature(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
@safe
def on_prepare_calls(ls: HloLanguageServer, params: lsp.CallHierarchyPrepareParams):
    conv = ls.conv
    return [_call_item(conv, i) for i in calls.prepare(ls.ws, *ls.at(params))] or None


@server.feature(lsp.CALL_HIERARCHY_INCOMING_CALLS)
@safe
async def on_incoming(ls: HloLanguageServer, params: lsp.CallHierarchyIncomingCallsParams):
    # (a large module's callers: its maps, built or waited for in the worker thread like the rest of the answer)
    return await ls.off_loop(uri_to_path(params.item.uri), _incoming, ls, params.item)


def _incoming(ls: HloLanguageServer, it: lsp.CallHierarchyItem) -> list[lsp.CallHierarchyIncomingCall] | None:
    item = _from_call_item(ls, it)
    if item is None:
        return None
    conv = ls.conv
    return [
        lsp.CallHierarchyIncomingCall(
            from_=_call_item(conv, c.item), from_ranges=[conv.range_in(c.item.location.path, r) for r in c.ranges]
        )
        for c in calls.incoming(ls.ws, item)
    ]


@server.feature(lsp.CALL_HIERARCHY_OUTGOING_CALLS)
@safe
async def on_outgoing(ls: HloLanguageServer, params: lsp.CallHierarchyOutgoingCallsParams):
    # (every call of the computation, each line parsed: 0.4 s for the 23 MB module's ENTRY)
    return await ls.off_loop(uri_to_path(params.item.uri), _outgoing, ls, params.item)


def _outgoing(ls: HloLanguageServer, it: lsp.CallHierarchyItem) -> list[lsp.CallHierarchyOutgoingCall] | None:
    item = _from_call_item(ls, it)
    if item is None:
        return None
    conv = ls.conv
    return [
        lsp.CallHierarchyOutgoingCall(
            to=_call_item(conv, c.item), from_ranges=[conv.range_in(item.location.path, r) for r in c.ranges]
        )
        for c in calls.outgoing(ls.ws, item)
    ]
