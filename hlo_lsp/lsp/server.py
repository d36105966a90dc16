"""The language server's lifecycle and document sync: initialize, shutdown and exit; didOpen, didChange,
didSave and didClose update the `Workspace`, and the background work they start reads the document (in a worker
thread, with progress for large ones), publishes its diagnostics (at once on open and save, after a short
debounce on change, never for a stale version), then reads its module's other files and gives memory back.

The requests are answered by the handler modules this one imports at its end (each registers its features on
`lsp.app.server`): `handlers_navigation` (hover, definition, references, symbols, call hierarchy),
`handlers_diagnostics` (pulled diagnostics, code actions), `handlers_document` (outline, folding, tokens, lenses,
links), `handlers_insight` (inlay hints, token ranges, commands) and `handlers_passes`.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import sys
import time
from collections.abc import Callable

from lsprotocol import types as lsp

from hlo_lsp.core import kinds, memos
from hlo_lsp.core.analysis import file_size
from hlo_lsp.core.diagnostics import Diagnostic
from hlo_lsp.core.process import collector, turns
from hlo_lsp.core.process.heap import release_free_memory
from hlo_lsp.core.workspace import NotReady, ReadError, Workspace
from hlo_lsp.ide import lens
from hlo_lsp.ide.diagnostics import GRAMMAR_LIMIT, document_diagnostics, run_verifier
from hlo_lsp.lsp.app import SYMBOL_KIND, HloLanguageServer, log, safe, server  # noqa: F401 - the public names
from hlo_lsp.lsp.convert import uri_to_path
from hlo_lsp.lsp.protocol import AnsweringProtocol
from hlo_lsp.lsp.stdio import ThreadedWriter, split_text

_TRACE = os.environ.get("HLO_LSP_TRACE") == "1"  # stage timings of reading and checking on stderr
DEBOUNCE_S = 0.05  # a burst of changes that need a full re-read waits this long for the next one
PROGRESS_MIN_BYTES = 4_000_000
BACKGROUND_READ_BYTES = 2_000_000  # larger documents are read in a worker thread; requests meanwhile get null
PULL_TURNS = 8  # loop turns a pull woken by a read takes to begin its answer (its wait is a task of its own)
PULL_WAIT_S = 0.05  # the longest the background work after a read waits for that answer


def _trace(stage: str, path: str) -> None:
    """With HLO_LSP_TRACE=1: one line on stderr, on the clock `benchmarks/bench_server.py` prints with it."""
    if _TRACE:
        print(f"hlo-lsp trace {time.monotonic():.3f} {stage} {os.path.basename(path)}", file=sys.stderr, flush=True)


# -- lifecycle -------------------------------------------------------------------------------------------------


@server.feature(lsp.INITIALIZE)
def initialize(ls: HloLanguageServer, params: lsp.InitializeParams) -> None:
    caps = params.capabilities
    hover_caps = caps.text_document.hover if caps.text_document else None
    formats = hover_caps.content_format if hover_caps and hover_caps.content_format else ()
    ls.plain_hover = bool(formats) and lsp.MarkupKind.Markdown not in formats
    ls.client_progress = bool(caps.window and caps.window.work_done_progress)
    folders = [uri_to_path(f.uri) for f in params.workspace_folders or ()]
    if not folders and (params.root_uri or params.root_path):
        folders = [uri_to_path(params.root_uri) if params.root_uri else params.root_path or ""]
    ls.ws.roots = [f for f in folders if f]  # where a dump's source files may be offered as locations


@server.feature(lsp.SHUTDOWN)
def on_shutdown(ls: HloLanguageServer, params) -> None:
    """Stop background work: pending reads and publications are cancelled (a worker thread already reading
    finishes on its own; its result is dropped), and nothing is published or reported from now on."""
    ls.closing = True
    for task in ls._pending.values():
        task.cancel()
    ls._pending.clear()


@server.feature(lsp.EXIT)
def on_exit(ls: HloLanguageServer, params) -> None:
    """End the process at once, quietly: the worker threads still reading are not waited for (asyncio's exit
    would join them, seconds for a large module) and nothing is written to the closed stream. The exit code
    is 0 after a shutdown request, 1 otherwise, as the protocol asks."""
    ls.closing = True
    code = 0 if getattr(ls.protocol, "_shutdown", False) else 1
    if isinstance(ls.protocol.writer, ThreadedWriter):
        ls.protocol.writer.flush(2.0)  # what is queued for the writer thread (the answer to shutdown, say)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    logging.shutdown()
    os._exit(code)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: HloLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    text = params.text_document.text
    _trace("didOpen", path)
    # a long text's line list is frozen once made (`collector.paused` with ``keep``), as its read freezes the model:
    # young, it was walked by the next young collection, 7 ms before the read of the 23 MB module could begin
    with ls.answers.memo_lock, collector.paused(keep=len(text) >= collector.KEEP_MIN_CHARS):
        ls.ws.open(path, text, params.text_document.version, split_text(text))
        ls.answers.outline_memo.pop(path, None)  # a text opened anew: no edit says what changed
    if len(text) < BACKGROUND_READ_BYTES:
        _try_analysis(ls.ws, path)  # small: read now, so the requests that follow an open find it ready
    _schedule(ls, path, params.text_document.version, delay=0.0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: HloLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    doc = ls.ws.document(path)
    if doc is None:
        return  # a change for a document never opened: nothing to apply it to
    version = params.text_document.version
    current = ls.current_version(path)
    if version is not None and current is not None and version <= current:
        log.warning("ignoring stale change %s <= %s for %s", version, current, path)
        return
    edits = []
    conv = ls.conv
    with ls.answers.memo_lock:  # an outline kept or reused meanwhile sees the text and its edits at one version
        for ch in params.content_changes:
            if isinstance(ch, lsp.TextDocumentContentChangeWholeDocument) or getattr(ch, "range", None) is None:
                edits.append(doc.replace_all(ch.text, split_text(ch.text)))
                continue
            sl, sc = conv.from_position(doc.lines, ch.range.start)
            el, ec = conv.from_position(doc.lines, ch.range.end)
            edits.append(doc.apply(sl, sc, el, ec, ch.text))
        patched = ls.ws.edited(path, version, edits)
        ls.answers.note_edits(path, edits)
    if patched:
        _publish_now(ls, path, complete=False)  # patched in place: the edited lines are checked already
        _schedule(ls, path, version, delay=1.0)  # the whole-module rules once typing pauses
    else:
        _schedule(ls, path, version, delay=DEBOUNCE_S)


def _schedule(ls: HloLanguageServer, path: str, version: int | None, delay: float) -> None:
    old = ls._pending.pop(path, None)
    if old is not None:
        old.cancel()
    task = ls._pending[path] = asyncio.ensure_future(_analyse_and_publish(ls, path, version, delay))
    task.add_done_callback(lambda _: ls.read_stepped(path))  # a pull waiting for it goes on


async def _analyse_and_publish(ls: HloLanguageServer, path: str, version: int | None, delay: float) -> None:
    """Read (in a worker thread, with progress for large documents), publish what is fast, then run the
    whole-module rules (also in a worker thread) and publish again; stale versions are never published. The
    siblings (buffer files) are read afterwards, under a progress of their own: the document is ready (complete
    diagnostics, requests answered) before they are."""
    if delay:
        await asyncio.sleep(delay)
    token = _begin_progress(ls, path, f"reading {os.path.basename(path)}")
    try:
        diags = await asyncio.to_thread(_read_checked, ls.ws, path, version, not ls.pulled)
        _trace("read", path)
        ls.read_stepped(path)  # a pull waiting for the read goes on now
        if ls.current_version(path) != version:
            return
        if diags is not None:  # read, checked and verified in one go: the complete diagnostics at once
            ls.publish(path, version, diags=diags)
            _trace("published complete", path)
        else:
            await _publish_slowly(ls, path, version, token)
    finally:
        _end_progress(ls, token)
    # background work, under a progress of its own: the users/callers maps (until built, users are found per
    # computation) and the sibling buffer files (until read, a hover says they are being read)
    # the background work begins once a pull woken by the read has answered: it takes a few loop turns to begin
    # (its wait is a task of its own), and the users map's first steps beside it held its answer 10-15 ms
    for _ in range(PULL_TURNS):
        pulled = ls.answers.running(path, "diagnostic")
        if pulled is not None:
            await asyncio.wait([pulled], timeout=PULL_WAIT_S)
            for _ in range(PULL_TURNS):  # and its handler has written it
                await asyncio.sleep(0)
            break
        await asyncio.sleep(0)
    a = ls.ws.try_analysis(path)
    token = _begin_progress(ls, path, "indexing uses and reading the buffer-assignment files", with_siblings=True)
    try:
        if a is not None and a.hlo is not None and ls.current_version(path) == version:
            await asyncio.to_thread(_in_background, a.hlo.build_maps)
            _trace("maps", path)
        # siblings read, maps built, before requests; begun once the editor's on-open answers are made: the reads
        # start with long C calls (the module's 23 MB decoded, its text copied: 13-15 ms each), and begun at once they
        # met Neovim's first hover on a buffer file (20-42 ms) in each of three rounds
        await asyncio.to_thread(_in_background, ls.ws.warm, path, first_wait=True)
        if ls.answers.waits_for_join(path, "codeLens"):
            # the editor, given the lenses of the file alone, is asked for them again once the buffer files are
            # joined: their peak report (2 s for the 23 MB benchmark module) is made now, not then; only then, as it
            # keeps ~45 MB for that module, of no use to an editor that shows no lenses
            # (made by a forked child once the messages read are handled: `handlers_document._before_fork`)
            ready = functools.partial(handlers_document._before_fork, ls)
            await asyncio.to_thread(_in_background, lens.module_report, ls.ws, path, ready)
        await _joined(ls, path, version)
        _trace("warm", path)
    finally:
        _end_progress(ls, token)
        # closed while its background work ran: what that work stored goes again
        _collect_when_idle(ls, release=not ls.ws.is_open(path))


async def _joined(ls: HloLanguageServer, path: str, version: int | None) -> None:
    """``path``'s large siblings were read and joined in the background (`Workspace.warm`): a buffer file's
    diagnostics published before that lacked the findings across its module's files (pushed again now), and a
    client given provisional lenses or pulled diagnostics is asked for them again."""
    waited = ls.answers.joined(path)
    a = ls.ws.try_analysis(path)
    if a is not None and a.buffers is not None and ls.ws.defers_siblings(path) and ls.current_version(path) == version:
        await _publish_from_thread(ls, path, version, complete=True)
    if "codeLens" in waited and handlers_document.lens_refresh(ls):
        ls.workspace_code_lens_refresh(None)
    if "diagnostic" in waited and handlers_diagnostics.diagnostic_refresh(ls):
        ls.workspace_diagnostic_refresh(None)


async def _publish_from_thread(ls: HloLanguageServer, path: str, version: int | None, complete: bool = False) -> None:
    """Diagnostics computed in a worker thread (the first structural pass over a large module takes a
    second), published from the event loop unless the document moved on meanwhile (none to a client that
    pulls them)."""
    if ls.pulled:
        return
    try:
        diags = await asyncio.to_thread(document_diagnostics, ls.ws, path, complete)
    except NotReady:
        return
    if ls.current_version(path) == version:
        ls.publish(path, version, diags=diags)


def _in_background(fn: Callable[..., object], *args, first_wait: bool = False) -> None:
    """``fn(*args)`` as background work (`process.turns`): it gives way while whole-document answers the editor
    asked for are being computed (with ``first_wait``, before it begins too). No collection walks what it makes
    meanwhile, and what survives it (the users map, the buffer files' models, the peak report: meant to live with
    the document) is frozen after it, as a large read's model is (`collector.paused`): enabled again with all of it
    young, the collector's next young collection walked it all at once (135 ms with the GIL held, after the 100 MB
    module's maps)."""
    with turns.background(), collector.paused(keep=True):
        if first_wait:
            turns.give_way()
        fn(*args)


def _collect_and_trim(release: bool = False) -> None:
    """After the background reads, at an idle moment (`_collect_when_idle`): a full collection (the server's own
    garbage in cycles, a few hundred objects after opening the 23 MB module; a large module's model is frozen by
    its read already, `process.collector`), then the C heap's free pages back to the system. With ``release``
    (after closes), the objects frozen by an earlier call are collected too: a closed document's model was frozen
    with the rest, and what of it sits in reference cycles would otherwise never be freed."""
    if release:
        gc.unfreeze()
    gc.collect()
    gc.freeze()  # what survived is the documents' model: later full collections skip it (0.8 s of GIL each)
    release_free_memory()


def _read_checked(ws: Workspace, path: str, version: int | None, publish: bool = True) -> list[Diagnostic] | None:
    """`_try_analysis` in a worker thread (what it leaves to free, a large module's line snapshot, and the C heap's
    free pages wait for an idle moment: `_collect_when_idle`). When the read left the verifier little to do
    (every computation of a large module checked and summarized by the rows pass), the verifier runs here too
    and the complete diagnostics come back, for one publish (no partial set first, no further thread hop);
    None otherwise (`_publish_slowly`), and without ``publish`` (a client that pulls them: the verifier still
    runs, as the pull waits for it)."""
    _trace("reading", path)
    _try_analysis(ws, path, wait=True)  # another thread reading an older version: take over once it is done
    _trace("analysed", path)
    a = ws.try_analysis(path)
    # a buffer file's own records joined here (requests on the event loop never do it), as background work: after
    # an edit the file is patched in a few ms, and this join (0.25 s for the benchmark's assignment file) held
    # every other turn from the editor's batch of after-edit requests
    with turns.background():
        ws.prepare_bundle(path)
    if (
        a is not None
        and a.hlo is not None
        and a.checker is not None
        and a.checker.unchecked() == 0
        and a.verified is None
        and a.size > GRAMMAR_LIMIT
        and run_verifier(a, version)
        and publish
    ):
        try:
            return document_diagnostics(ws, path, complete=True)
        except ReadError:
            return None
    return None


async def _publish_slowly(ls: HloLanguageServer, path: str, version: int | None, token: str | None) -> None:
    """The other cases: a small document (published in full at once), or a large one whose computations the
    read could not all check (checked on the other cores; its structural errors published first, then the
    verifier's in a worker thread)."""
    a = ls.ws.try_analysis(path)
    if (
        a is not None
        and a.hlo is not None
        and a.checker is not None
        and a.checker.unchecked() > 1
        and a.size > GRAMMAR_LIMIT
    ):
        await asyncio.to_thread(a.checker.check_forked)
        _trace("checked", path)
    await _publish_from_thread(ls, path, version)
    _trace("published structural", path)
    a = ls.ws.try_analysis(path)
    if a is not None and a.hlo is not None and a.verified is None and a.size > GRAMMAR_LIMIT:
        _report_progress(ls, token, "verifier rules")
        done = await asyncio.to_thread(run_verifier, a, version)
        ls.read_stepped(path)  # verified: a pull waiting for it goes on
        if done and ls.current_version(path) == version:
            await _publish_from_thread(ls, path, version, complete=True)
            _trace("published complete", path)


def _try_analysis(ws: Workspace, path: str, wait: bool = False) -> None:
    """Read ``path`` unless it is read already; with ``wait`` (worker threads only), a read of it under way in
    another thread (an older version, or the file as a sibling) is waited for and the current text read after
    it, instead of giving up and publishing nothing for this version."""
    try:
        ws.analysis(path, wait)
    except ReadError:
        pass  # published as one unreadable-file diagnostic


def _begin_progress(ls: HloLanguageServer, path: str, message: str, with_siblings: bool = False) -> str | None:
    """Start a `$/progress` bar for reading a large document (``with_siblings``: a document whose module's files
    together are large: the background work reads them all) when the client shows them; its token or None."""
    if not ls.client_progress or ls.closing:
        return None
    siblings = [str(p) for p in kinds.sibling_paths(path).values()] if with_siblings and os.path.isabs(path) else []
    if sum(file_size(p) for p in {path, *siblings}) < PROGRESS_MIN_BYTES:
        src = ls.ws.open_source(path)
        if src is None or len(src.doc.lines) < PROGRESS_MIN_BYTES // 100:
            return None
    ls._progress_seq += 1
    token = f"hlo-lsp/read/{ls._progress_seq}"
    # the creation request without a result callback: at shutdown pygls cancels the pending request, and a
    # callback would raise (and print) CancelledError from it
    ls.protocol.send_request(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE, lsp.WorkDoneProgressCreateParams(token=token))
    ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title="hlo-lsp", message=message, cancellable=False))
    return token


def _report_progress(ls: HloLanguageServer, token: str | None, message: str) -> None:
    if token is not None and not ls.closing:
        ls.work_done_progress.report(token, lsp.WorkDoneProgressReport(message=message))


def _end_progress(ls: HloLanguageServer, token: str | None) -> None:
    if token is not None and not ls.closing:
        ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))


def _publish_now(ls: HloLanguageServer, path: str, complete: bool = True) -> None:
    try:
        ls.publish(path, ls.current_version(path), complete)
    except NotReady:
        pass  # the reading thread publishes when it is done
    except Exception:  # noqa: BLE001
        log.exception("publishing diagnostics for %s failed", path)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: HloLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    for path in ls.ws.open_paths():  # a saved sibling can change another open file's buffer facts
        _publish_now(ls, path)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: HloLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    orphans = ls.ws.close(path)
    ls.answers.forget(path)  # whole-document answers kept per version (handlers_document)
    for key in (path, _WARM + path):
        task = ls._pending.pop(key, None)
        if task is not None:
            task.cancel()
    for p in orphans:
        _warm_again(ls, p)
    if not ls.ws.open_paths():
        memos.clear_all()  # the last document closed: the memo tables go too (memory follows what is open)
    if not ls.pulled:
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))
    _collect_when_idle(ls, release=True, delay=1.0)


_COLLECT = ""  # the key of the pending `_collect_when_idle` in `_pending` (no document has it)
_PACK = "pack:"  # the key of the pending `_pack_when_idle` in `_pending`
_WARM = "warm:"  # the key of a document's `_warm_again` task in `_pending` (document paths are absolute)


def _warm_again(ls: HloLanguageServer, path: str) -> None:
    """Join ``path``'s siblings again in a worker thread: closing a document it shared a bundle with (VS Code
    sends `didClose` some time after the tab went away, often after the next file opened) dropped the join,
    and a request never reads a large sibling itself, so without this its hovers would say "still loading"
    for good."""
    old = ls._pending.pop(_WARM + path, None)
    if old is not None:
        old.cancel()

    async def warm() -> None:
        token = _begin_progress(ls, path, "reading the buffer-assignment files again", with_siblings=True)
        try:
            await asyncio.to_thread(_in_background, ls.ws.warm, path)
            await _joined(ls, path, ls.current_version(path))
            _trace("warm again", path)
        finally:
            _end_progress(ls, token)

    ls._pending[_WARM + path] = asyncio.ensure_future(warm())


IDLE_S = 0.5  # the client silent this long and no whole-document answer being computed: the server is idle
IDLE_WAIT_LIMIT_S = 30.0  # a client that never falls silent this long still gets its memory collected


def _idle_for(ls: HloLanguageServer) -> float:
    """How long the server has been idle: the time since the client's last message, 0 while a whole-document
    answer is being computed."""
    if ls.answers.computing():
        return 0.0
    protocol = ls.protocol  # always an AnsweringProtocol (`HloProtocol`)
    return protocol.quiet_for() if isinstance(protocol, AnsweringProtocol) else IDLE_S


def _collect_when_idle(ls: HloLanguageServer, release: bool = False, delay: float = 0.0) -> None:
    """Once the server is idle (`IDLE_S`, waiting at most `IDLE_WAIT_LIMIT_S`), after ``delay``: forget what no
    open document uses, then `_collect_and_trim` in a worker thread; with ``release`` (after closes, or once
    asked so by a call this one replaces), the frozen objects too, so memory follows what is open.

    The full collection holds the GIL 0.1-0.2 s after a large read (the new model is walked; it found a few
    hundred objects of garbage there), and made right after the background reads it struck the hovers and the
    requests the editor sends on open; at an idle moment nobody waits for it."""
    old = ls._pending.pop(_COLLECT, None)
    if old is not None:
        old.cancel()
    ls.release_frozen = ls.release_frozen or release

    async def later():
        await asyncio.sleep(delay)
        await _until_idle(ls)
        ls.ws.sweep()  # what background reads for documents closed meanwhile stored after their close
        if not ls.ws.open_paths():
            memos.clear_all()
        release, ls.release_frozen = ls.release_frozen, False
        await asyncio.to_thread(ls.ws.release_dropped)  # what edits dropped, off the event loop
        await asyncio.to_thread(_collect_and_trim, release)

    ls._pending[_COLLECT] = asyncio.ensure_future(later())


def _pack_when_idle(ls: HloLanguageServer) -> None:
    """Once the server is idle (`IDLE_S`, waiting at most `IDLE_WAIT_LIMIT_S`): the large answers kept for the
    editor's next request compressed (`DocumentAnswers.pack_kept`, in a worker thread), and the C heap's free
    pages given back. Scheduled whenever an answer is kept; a later call replaces a pending one."""
    old = ls._pending.pop(_PACK, None)
    if old is not None:
        old.cancel()

    async def later():
        await _until_idle(ls)
        if await asyncio.to_thread(ls.answers.pack_kept):
            await asyncio.to_thread(release_free_memory)

    ls._pending[_PACK] = asyncio.ensure_future(later())


server.answers.on_kept = lambda: _pack_when_idle(server)


async def _until_idle(ls: HloLanguageServer) -> None:
    """Return once the server has been idle for `IDLE_S`, or after `IDLE_WAIT_LIMIT_S` of waiting."""
    waited = 0.0
    while waited < IDLE_WAIT_LIMIT_S and (idle := _idle_for(ls)) < IDLE_S:
        step = max(IDLE_S - idle, 0.05)
        await asyncio.sleep(step)
        waited += step


from hlo_lsp.lsp import (  # noqa: E402,F401  register their features
    handlers_diagnostics,
    handlers_document,
    handlers_insight,
    handlers_navigation,
    handlers_passes,
)
