"""Commands over a pass-by-pass dump (`ide.passes`): show a pass file or an instruction's other version
(``window/showDocument``; the location is also the answer, for clients that jump themselves), the diff of what a
pass did and an instruction's history as read-only documents, and a module's files in pass order. Each builds
the history in a worker thread when the background read has not yet."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from hlo_lsp.core.passes.history import Version
from hlo_lsp.ide import passes
from hlo_lsp.lsp.app import HloLanguageServer, server
from hlo_lsp.lsp.convert import path_to_uri, uri_to_path

log = logging.getLogger("hlo_lsp")
REQUEST_FAILED = -32803  # LSP ErrorCodes.RequestFailed
PASS_NEIGHBOR = "hlo.passNeighbor"
PASS_FILES = "hlo.passFiles"


async def _history_path(ls: HloLanguageServer, args, name: str) -> str:
    if not args or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(message=f"{name} expects a file URI first")
    path = uri_to_path(args[0])
    if await asyncio.to_thread(ls.ws.passes.get, path, True) is None:
        raise JsonRpcException(
            message=f"{path}: not a file of a pass-by-pass dump (XLA writes them with --xla_dump_hlo_pass_re=.*)",
            code=REQUEST_FAILED,
        )
    return path


def _line_arg(args, k: int, name: str) -> int:
    if len(args) <= k or not isinstance(args[k], int) or args[k] < 0:
        raise JsonRpcInvalidParams(message=f"{name} expects a 0-based line as argument {k + 1}")
    return args[k]


async def _show(ls: HloLanguageServer, path: str, line: int) -> dict:
    """Ask the client to show ``path`` at ``line`` when it can; the location either way."""
    uri = path_to_uri(path)
    pos = lsp.Position(line=line, character=0)
    caps = ls.client_capabilities.window if ls.client_capabilities else None
    if caps is not None and caps.show_document and caps.show_document.support:
        params = lsp.ShowDocumentParams(uri=uri, take_focus=True, selection=lsp.Range(start=pos, end=pos))
        asyncio.ensure_future(ls.window_show_document_async(params))
    return {"uri": uri, "line": line}


def _version_json(v: Version | None) -> dict | None:
    if v is None:
        return None
    return {"uri": path_to_uri(v.file.path), "line": v.line, "label": v.file.label(), "change": v.change}


def _failed(name: str, e: Exception) -> JsonRpcException:
    if isinstance(e, passes.PassError):
        return JsonRpcException(message=str(e), code=REQUEST_FAILED)
    log.exception("%s failed", name)
    return JsonRpcInternalError(message=f"{name}: {e}")


@server.command(passes.SHOW_PASS_FILE)
async def show_pass_file(ls: HloLanguageServer, *args):
    """Arguments: a file URI and a 0-based line. Shows it (the lenses' ◀ ▶ between pass files)."""
    if not args or not isinstance(args[0], str):
        raise JsonRpcInvalidParams(message=f"{passes.SHOW_PASS_FILE} expects a file URI")
    line = args[1] if len(args) > 1 and isinstance(args[1], int) else 0
    return await _show(ls, uri_to_path(args[0]), line)


@server.command(passes.SHOW_PREVIOUS)
async def show_previous_version(ls: HloLanguageServer, *args):
    """Arguments: a pass file's URI and an instruction's 0-based line. Shows the instruction's previous version."""
    return await _neighbor(ls, passes.SHOW_PREVIOUS, [*args[:2], "previous"], show=True)


@server.command(PASS_NEIGHBOR)
async def pass_neighbor(ls: HloLanguageServer, *args):
    """Arguments: a pass file's URI, an instruction's 0-based line, ``"previous"`` or ``"next"``. Returns
    ``{"uri", "line", "label", "change"}`` of that version (line null where it was removed), or null."""
    return await _neighbor(ls, PASS_NEIGHBOR, list(args), show=False)


async def _neighbor(ls: HloLanguageServer, name: str, args: list, show: bool):
    path = await _history_path(ls, args, name)
    line = _line_arg(args, 1, name)
    direction = args[2] if len(args) > 2 else "previous"
    if direction not in ("previous", "next"):
        raise JsonRpcInvalidParams(message=f"{name}: direction must be 'previous' or 'next', not {direction!r}")
    try:
        v = await asyncio.to_thread(passes.neighbor, ls.ws, path, line, direction)
    except Exception as e:  # noqa: BLE001 - an error answer, never a dead server
        raise _failed(name, e) from None
    if v is None:
        if show:
            ls.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Info, message=f"No {direction} version of this instruction")
            )
        return None
    if show:
        await _show(ls, v.file.path, v.line or 0)
    return _version_json(v)


@server.command(passes.PASS_DIFF)
async def pass_diff(ls: HloLanguageServer, *args):
    """Argument: a pass file's URI, then optionally ``{"links": "path"}`` (each line as ``/path:12`` for Neovim's
    ``gF``). Returns ``{"title", "text"}``: what its pass did (`core.passes.report`)."""
    path = await _history_path(ls, args, passes.PASS_DIFF)
    paths = any(isinstance(a, dict) and a.get("links") == "path" for a in args)
    try:
        title, text = await asyncio.to_thread(passes.diff_document, ls.ws, path, paths)
    except Exception as e:  # noqa: BLE001
        raise _failed(passes.PASS_DIFF, e) from None
    return {"title": title, "text": text}


@server.command(passes.PASS_TRACE)
async def pass_trace(ls: HloLanguageServer, *args):
    """Arguments: a pass file's URI and an instruction's 0-based line (or its name). Returns ``{"title", "text"}``:
    the instruction's history through every file."""
    path = await _history_path(ls, args, passes.PASS_TRACE)
    if len(args) > 1 and isinstance(args[1], str):
        name = args[1].lstrip("%")
    else:
        line = _line_arg(args, 1, passes.PASS_TRACE)
        a = ls.ws.try_analysis(path)
        ins = a.hlo.instruction_at_line(line) if a is not None and a.hlo is not None else None
        if ins is None:
            raise JsonRpcException(message=f"no instruction on line {line + 1}", code=REQUEST_FAILED)
        name = ins.name
    try:
        title, text = await asyncio.to_thread(passes.trace_document, ls.ws, path, name)
    except Exception as e:  # noqa: BLE001
        raise _failed(passes.PASS_TRACE, e) from None
    return {"title": title, "text": text}


@server.command(PASS_FILES)
async def pass_files(ls: HloLanguageServer, *args):
    """Argument: a pass file's URI. Returns ``{"index", "files": [{"uri", "label"}]}``: its module's files in
    pass order and where it stands (VS Code's *compare with previous pass* opens the two in its diff editor)."""
    path = await _history_path(ls, args, PASS_FILES)
    h = ls.ws.passes.get(path)
    assert h is not None  # built by _history_path
    return {
        "index": h.index_of(path),
        "files": [{"uri": path_to_uri(s.file.path), "label": s.file.label()} for s in h.steps],
    }
