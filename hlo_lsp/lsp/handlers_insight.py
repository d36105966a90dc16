"""LSP handlers of the memory-insight features: inlay hints, semantic tokens for a range (the viewport),
completion, prepareRename/rename and the chart and grouping commands (``hlo.showMemoryTimeline``,
``hlo.showHeapMap``, ``hlo.peakGroups``); code lenses and full semantic tokens, whole-document answers, are in
`handlers_document`.

Each handler unpacks params, calls one `hlo_lsp.ide` function and converts its plain records (code-point
columns to the negotiated encoding through `Converter`). Inlay hints and code lenses can be switched off with
``initializationOptions`` (``{"inlayHints": {"enabled": false}, "codeLens": {"enabled": false}}``) or the
``hlo`` section of ``workspace/configuration`` (``inlayHints.enabled``, ``codeLens.enabled``; nested objects as
VS Code sends them, or dotted keys); the server asks for that section after ``initialized`` and on every
``workspace/didChangeConfiguration``, then asks the client to refresh.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from hlo_lsp.ide import completion, inlay, lens, peak_groups, rename, semantic_tokens
from hlo_lsp.lsp.app import HloLanguageServer, safe, server
from hlo_lsp.lsp.convert import path_to_uri, uri_to_path
from hlo_lsp.lsp.handlers_document import wire_token_data

log = logging.getLogger("hlo_lsp")
REQUEST_FAILED = -32803  # LSP ErrorCodes.RequestFailed


settings = server.insight_settings


# -- settings ----------------------------------------------------------------------------------------------------

# server.py owns the initialize handler; wrap it so initializationOptions reach the settings first.
_user_initialize = server.protocol.fm.features.get(lsp.INITIALIZE)


def _initialize_with_options(params: lsp.InitializeParams):
    try:
        settings.update(params.initialization_options)
    except Exception:  # noqa: BLE001
        log.exception("reading initializationOptions failed")
    result = _user_initialize(params) if _user_initialize is not None else None
    _apply_oom_folder(server)  # after the workspace folders are known
    return result


server.protocol.fm.features[lsp.INITIALIZE] = _initialize_with_options


def _apply_oom_folder(ls: HloLanguageServer) -> None:
    """The ``oom.dumpFolder`` setting to the workspace (a relative one is under the first workspace folder); open
    out-of-memory reports are tied to their dump again, in a worker thread."""
    folder = settings.oom_dump_folder
    if folder is not None:
        folder = os.path.expanduser(folder)
        if not os.path.isabs(folder) and ls.ws.roots:
            folder = os.path.join(ls.ws.roots[0], folder)
    if folder == ls.ws.oom_dump_folder:
        return
    ls.ws.oom_dump_folder = folder
    for path in ls.ws.forget_oom_dumps():
        ls.answers.forget(path)  # links kept for this version were made with the old folder
        asyncio.ensure_future(asyncio.to_thread(ls.ws.warm, path))


def _supports_configuration(ls: HloLanguageServer) -> bool:
    caps = ls.client_capabilities.workspace if ls.client_capabilities else None
    return bool(caps and caps.configuration)


async def _pull_configuration(ls: HloLanguageServer) -> None:
    if not _supports_configuration(ls):
        return
    try:
        result = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="hlo")])
        )
    except Exception:  # noqa: BLE001 - a client that fails here keeps the defaults
        log.exception("workspace/configuration failed")
        return
    if result and settings.update(result[0]):
        _refresh(ls)
    _apply_oom_folder(ls)


def _refresh(ls: HloLanguageServer) -> None:
    ws_caps = ls.client_capabilities.workspace if ls.client_capabilities else None
    if ws_caps and ws_caps.inlay_hint and ws_caps.inlay_hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)
    if ws_caps and ws_caps.code_lens and ws_caps.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)


if lsp.INITIALIZED not in server.protocol.fm.features:

    @server.feature(lsp.INITIALIZED)
    async def on_initialized(ls: HloLanguageServer, params: lsp.InitializedParams) -> None:
        await _pull_configuration(ls)


if lsp.WORKSPACE_DID_CHANGE_CONFIGURATION not in server.protocol.fm.features:

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration(ls: HloLanguageServer, params: lsp.DidChangeConfigurationParams) -> None:
        pushed = params.settings.get("hlo") if isinstance(params.settings, dict) else None
        if isinstance(pushed, dict):
            if settings.update(pushed):
                _refresh(ls)
            _apply_oom_folder(ls)
        else:
            await _pull_configuration(ls)


# -- inlay hints and code lens -------------------------------------------------------------------------------------

_HINT_KIND = {"type": lsp.InlayHintKind.Type, "parameter": lsp.InlayHintKind.Parameter}


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
@safe
def on_inlay_hint(ls: HloLanguageServer, params: lsp.InlayHintParams):
    if not settings.inlay_hints:
        return []
    path = uri_to_path(params.text_document.uri)
    conv, lines = ls.conv, ls.lines_of(path)
    with ls.answers.short_request():  # the viewport's hints, as the range tokens
        hints = inlay.inlay_hints(ls.ws, path, params.range.start.line, params.range.end.line)
    return [
        lsp.InlayHint(
            position=conv.position(lines, h.line, h.col),
            label=h.label,
            kind=_HINT_KIND[h.kind],
            tooltip=h.tooltip or None,
            padding_left=True,
        )
        for h in hints
    ]


# -- semantic tokens -----------------------------------------------------------------------------------------------

LEGEND = lsp.SemanticTokensLegend(
    token_types=semantic_tokens.TOKEN_TYPES, token_modifiers=semantic_tokens.TOKEN_MODIFIERS
)


def _tokens(ls: HloLanguageServer, uri: str, start: int = 0, end: int | None = None) -> lsp.SemanticTokens:
    path = uri_to_path(uri)
    # packed as the full tokens are (an ASCII viewport by C iteration: the 3,488 tokens at the top of the 23 MB
    # module's buffer-assignment file, two lines of tuple shapes, took 4-5 ms of the event loop converted one column
    # at a time)
    toks = semantic_tokens.semantic_tokens(ls.ws, path, start, end)
    return lsp.SemanticTokens(data=wire_token_data(ls, path, toks).tolist())


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
@safe
def on_semantic_tokens_range(ls: HloLanguageServer, params: lsp.SemanticTokensRangeParams):
    with ls.answers.short_request():  # the viewport's colours: a long answer's fork (10 ms of GIL) waits for it
        return _tokens(ls, params.text_document.uri, params.range.start.line, params.range.end.line)


# -- completion ----------------------------------------------------------------------------------------------------

_ITEM_KIND = {
    "keyword": lsp.CompletionItemKind.Keyword,
    "variable": lsp.CompletionItemKind.Variable,
    "function": lsp.CompletionItemKind.Function,
    "property": lsp.CompletionItemKind.Property,
}


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["%", "=", "(", ",", "{"]))
@safe
def on_completion(ls: HloLanguageServer, params: lsp.CompletionParams):
    items, more = completion.completions(ls.ws, *ls.at(params))
    return lsp.CompletionList(
        is_incomplete=more,  # (the nearest names only: the editor asks again as more is typed)
        items=[
            lsp.CompletionItem(
                label=i.label, kind=_ITEM_KIND[i.kind], detail=i.detail or None, insert_text=i.insert_text
            )
            for i in items
        ],
    )


# -- rename --------------------------------------------------------------------------------------------------------


def _refuse(e: rename.RenameRefused) -> JsonRpcException:
    return JsonRpcException(message=str(e), code=REQUEST_FAILED)


@server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
async def on_prepare_rename(ls: HloLanguageServer, params: lsp.PrepareRenameParams):
    await ls.maps_ready(uri_to_path(params.text_document.uri))  # (a rename finds every use: a large module's maps)
    path, line, col = ls.at(params)
    try:
        t = rename.prepare_rename(ls.ws, path, line, col)
    except rename.RenameRefused as e:
        raise _refuse(e) from None
    except Exception:  # noqa: BLE001
        log.exception("prepareRename failed")
        return None
    return lsp.PrepareRenamePlaceholder(range=ls.conv.range_in(path, t.range), placeholder=t.name)


@server.feature(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True))
async def on_rename(ls: HloLanguageServer, params: lsp.RenameParams):
    await ls.maps_ready(uri_to_path(params.text_document.uri))
    path, line, col = ls.at(params)
    try:
        edits = rename.rename(ls.ws, path, line, col, params.new_name)
    except rename.RenameRefused as e:
        raise _refuse(e) from None
    except Exception:  # noqa: BLE001
        log.exception("rename failed")
        return None
    conv = ls.conv
    return lsp.WorkspaceEdit(
        changes={
            path_to_uri(p): [lsp.TextEdit(range=conv.range_in(p, r), new_text=text) for r, text in es]
            for p, es in edits.items()
        }
    )


# -- the memory timeline -------------------------------------------------------------------------------------------


@server.command(lens.SHOW_TIMELINE)
async def show_memory_timeline(ls: HloLanguageServer, *args):
    """Arguments: the document URI, then optionally ``"html"`` (default), ``"svg"`` or ``"png"``. Writes the
    chart into the cache dir (never beside the dump), in a worker thread, and returns its file URI."""
    return await asyncio.to_thread(_chart, ls, lens.SHOW_TIMELINE, "timeline", args)


@server.command(lens.SHOW_HEAP_MAP)
async def show_heap_map(ls: HloLanguageServer, *args):
    """Arguments as ``hlo.showMemoryTimeline``; the chart is the heap map (each value at its offset over its live
    range, per memory space, with fragmentation and padding at the peak). Returns its file URI."""
    return await asyncio.to_thread(_chart, ls, lens.SHOW_HEAP_MAP, "heap", args)


def _chart(ls: HloLanguageServer, command: str, view: str, args) -> str:
    from hlo_lsp.charts import ChartError, cached_chart_path, write_timeline

    if not args or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(message=f"{command} expects a document URI")
    path = uri_to_path(args[0])
    fmt = args[1] if len(args) > 1 and isinstance(args[1], str) else "html"
    try:
        report = lens.report_for(ls.ws.bundle(path), ls.ws.fork_locks())
        if report is None:
            raise ChartError(f"{os.path.basename(path)}: no buffer-assignment files for this module")
        out = write_timeline(report, cached_chart_path(path, fmt, view), title=os.path.basename(path), view=view)
    except ChartError as e:
        raise JsonRpcException(message=str(e), code=REQUEST_FAILED) from None
    except Exception as e:  # noqa: BLE001 - unreadable file, ...: an error answer, never a dead server
        log.exception("%s failed", command)
        raise JsonRpcInternalError(message=f"cannot chart {path}: {e}") from None
    return path_to_uri(out)


@server.command(peak_groups.PEAK_GROUPS)
async def show_peak_groups(ls: HloLanguageServer, *args):
    """Argument: the document URI. Returns ``{"title", "text"}``: the values live at XLA's peak grouped by source
    line, op_name, dtype, category and argument, every group (`ide.peak_groups`). Nothing is written."""
    if not args or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(message=f"{peak_groups.PEAK_GROUPS} expects a document URI")
    path = uri_to_path(args[0])
    try:
        report = await asyncio.to_thread(lambda: lens.report_for(ls.ws.bundle(path), ls.ws.fork_locks()))
    except Exception as e:  # noqa: BLE001 - an error answer, never a dead server
        log.exception("%s failed", peak_groups.PEAK_GROUPS)
        raise JsonRpcInternalError(message=f"cannot read {path}: {e}") from None
    if report is None or report.xla.step is None:
        raise JsonRpcException(
            message=f"{os.path.basename(path)}: no peak in this module's buffer files", code=REQUEST_FAILED
        )
    return peak_groups.groups_document(report, path)


# -- comparing dumps and ranking a folder ------------------------------------------------------------------------

PEAK_DIFF = "hlo.peakDiff"
RANK_MODULES = "hlo.rankModules"


def _link_style(args) -> str:
    return "path" if any(isinstance(a, dict) and a.get("links") == "path" for a in args) else "uri"


@server.command(PEAK_DIFF)
async def peak_diff(ls: HloLanguageServer, *args):
    """Arguments: two file URIs (any file of each module: old, new), or one folder URI (its two most recently
    written modules); then optionally ``{"links": "path"}`` (``/path:12`` links for Neovim's ``gF``; default
    ``file:///path#L12``). Returns ``{"title", "text"}``: the peak diff as a read-only document
    (`ide.peak_diff`). Nothing is written."""
    from hlo_lsp.ide.peak_diff import DiffError, diff_document, newest_pair

    uris = [a for a in args if isinstance(a, str)]
    if len(uris) not in (1, 2):
        raise JsonRpcInvalidParams(message=f"{PEAK_DIFF} expects two file URIs or one folder URI")
    paths = [uri_to_path(u) for u in uris]
    try:
        if len(paths) == 1:
            paths = list(await asyncio.to_thread(newest_pair, paths[0]))
        text = await asyncio.to_thread(diff_document, ls.ws, paths[0], paths[1], _link_style(args))
    except DiffError as e:
        raise JsonRpcException(message=str(e), code=REQUEST_FAILED) from None
    except Exception as e:  # noqa: BLE001 - an error answer, never a dead server
        log.exception("%s failed", PEAK_DIFF)
        raise JsonRpcInternalError(message=f"cannot compare {paths}: {e}") from None
    title = f"Peak diff: {os.path.basename(paths[0])} -> {os.path.basename(paths[1])}"
    return {"title": title, "text": text}


@server.command(RANK_MODULES)
async def rank_modules_command(ls: HloLanguageServer, *args):
    """Argument: a folder URI. Returns ``{"title", "text"}``: every module with buffer files under it ranked by
    XLA's peak and by reserved bytes (`core.ranking`), as ``hlo-lsp peak DIR`` prints it. Nothing is written."""
    from hlo_lsp.core.ranking import rank_modules, ranking_text

    if not args or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(message=f"{RANK_MODULES} expects a folder URI")
    folder = uri_to_path(args[0])
    if not os.path.isdir(folder):
        raise JsonRpcException(message=f"{folder}: not a folder", code=REQUEST_FAILED)
    by_peak, by_reserved, bad = await asyncio.to_thread(rank_modules, folder)
    if not by_peak and not bad:
        raise JsonRpcException(message=f"{folder}: no module with buffer files under this folder", code=REQUEST_FAILED)
    style = _link_style(args)
    text = ranking_text(folder, by_peak, by_reserved, bad, name=lambda p: p if style == "path" else Path(p).as_uri())
    return {"title": f"Modules by peak: {os.path.basename(folder)}", "text": text + "\n"}
