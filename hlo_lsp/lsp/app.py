"""The server object the handler modules register on: `HloLanguageServer` (our text-document store, the
workspace, publishing), its one instance `server`, and `safe` (a failing feature answers null, never raises).
`server` (lifecycle, documents, navigation), `handlers_document` and `handlers_insight` add its features."""

from __future__ import annotations

import asyncio
import functools
import gc
import inspect
import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcContentModified
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import lsp_method

from hlo_lsp import __version__
from hlo_lsp.core.document import Lines
from hlo_lsp.core.folder_index import FolderIndex
from hlo_lsp.core.process import turns
from hlo_lsp.core.workspace import ReadError, Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from hlo_lsp.ide.types import Location
from hlo_lsp.lsp.convert import Converter, path_to_uri, uri_to_path
from hlo_lsp.lsp.doc_answers import DocumentAnswers
from hlo_lsp.lsp.protocol import AnsweringProtocol
from hlo_lsp.lsp.settings import InsightSettings
from hlo_lsp.lsp.stdio import Intake

T = TypeVar("T")
log = logging.getLogger("hlo_lsp")

SYMBOL_KIND = {
    "module": lsp.SymbolKind.Module,
    "namespace": lsp.SymbolKind.Namespace,
    "function": lsp.SymbolKind.Function,
    "variable": lsp.SymbolKind.Variable,
    "object": lsp.SymbolKind.Object,
    "field": lsp.SymbolKind.Field,
    "event": lsp.SymbolKind.Event,
    "constant": lsp.SymbolKind.Constant,
    "key": lsp.SymbolKind.Key,
}


def pulls_diagnostics(caps: lsp.ClientCapabilities | None) -> bool:
    """The client pulls diagnostics (``textDocument/diagnostic``) and can be asked to pull again
    (``workspace/diagnostic/refresh``): VS Code. Such a client is offered pull and sent no
    ``publishDiagnostics``; every other one (Neovim 0.11 pulls but cannot be asked again, Neovim 0.7, Emacs,
    pytest-lsp's VS Code 1.65) is offered no pull and sent its diagnostics. Never both: an editor keeps pushed
    and pulled diagnostics apart (Neovim in two namespaces, VS Code in two collections) and shows each finding
    twice. Pull without refresh would hold a buffer file's first answer until its module's files are joined
    (seconds), where a push sends the file's own findings at once and the rest when joined."""
    if caps is None or caps.text_document is None or caps.text_document.diagnostic is None:
        return False
    return bool(caps.workspace and caps.workspace.diagnostics and caps.workspace.diagnostics.refresh_support)


class HloProtocol(AnsweringProtocol):
    """pygls' protocol without its text-document store: ours (`core.document.LineDocument`) applies an
    incremental change in O(lines touched), where pygls rebuilds the whole string on every keystroke. Its base
    answers the requests pygls would leave unanswered (unreadable params, requests after shutdown). Pull
    diagnostics are offered only to a client that `pulls_diagnostics`."""

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):
        result = yield from super().lsp_initialize(params)
        pulled = pulls_diagnostics(params.capabilities)
        if isinstance(self._server, HloLanguageServer):
            self._server.pulled = pulled
        if not pulled:
            result.capabilities.diagnostic_provider = None
        warm_messages(self._converter)
        return result

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


# The messages an editor exchanges with the server all session: what it sends on open, after every edit and while
# the user moves around (`CLIENT_METHODS`), and what the server sends it (`SERVER_METHODS`).
CLIENT_METHODS = (
    lsp.TEXT_DOCUMENT_DID_OPEN,
    lsp.TEXT_DOCUMENT_DID_CHANGE,
    lsp.TEXT_DOCUMENT_DID_SAVE,
    lsp.TEXT_DOCUMENT_DID_CLOSE,
    lsp.CANCEL_REQUEST,
    lsp.TEXT_DOCUMENT_HOVER,
    lsp.TEXT_DOCUMENT_DEFINITION,
    lsp.TEXT_DOCUMENT_REFERENCES,
    lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT,
    lsp.TEXT_DOCUMENT_COMPLETION,
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
    lsp.TEXT_DOCUMENT_FOLDING_RANGE,
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA,
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE,
    lsp.TEXT_DOCUMENT_CODE_LENS,
    lsp.TEXT_DOCUMENT_DOCUMENT_LINK,
    lsp.TEXT_DOCUMENT_INLAY_HINT,
    lsp.TEXT_DOCUMENT_DIAGNOSTIC,
)
SERVER_METHODS = (
    lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
    lsp.PROGRESS,
    lsp.WINDOW_WORK_DONE_PROGRESS_CREATE,
    lsp.WORKSPACE_CODE_LENS_REFRESH,
    lsp.WORKSPACE_DIAGNOSTIC_REFRESH,
)


def warm_messages(converter) -> None:
    """Make cattrs' functions for these messages now, in about 35 ms, rather than at each one's first use on the
    event loop (1-2 ms each alone, tens of ms beside busy workers): a hover sent with the editor's on-open batch
    waited 129 ms behind the making of the batch's functions. The functions that write messages are made first:
    making some of them registers a hook for a union type, which empties cattrs' cache of functions made so far;
    the functions that read the client's messages, made last, stay."""
    for method in CLIENT_METHODS:
        response = lsp.METHOD_TO_TYPES[method][1]
        if response is not None:
            converter.get_unstructure_hook(response)
    for method in SERVER_METHODS:
        converter.get_unstructure_hook(lsp.METHOD_TO_TYPES[method][0])
    for method in CLIENT_METHODS:
        converter.get_structure_hook(lsp.METHOD_TO_TYPES[method][0])
    # a result is a union (`Hover | None`, lists of locations...): the function of the class it holds is made
    # when a message first holds one; writing one of each now makes those too (a hover's answer waited 19 ms on
    # the loop for its `Hover`'s function beside the on-open batch). Twice: writing the first ones registers hooks
    # for union types that empty the cache again, the second pass makes what that emptied.
    for _ in range(2):
        for message in _sample_messages():
            converter.unstructure(message, unstructure_as=type(message))


def _sample_messages() -> list:
    """One message of each kind the server answers the editor with while the user moves around, holding what
    the handlers put in it."""
    pos = lsp.Position(line=0, character=0)
    rng = lsp.Range(start=pos, end=pos)
    loc = lsp.Location(uri="file:///x", range=rng)
    diag = lsp.Diagnostic(
        range=rng,
        message="m",
        severity=lsp.DiagnosticSeverity.Warning,
        code="c",
        source="hlo-lsp",
        related_information=[lsp.DiagnosticRelatedInformation(location=loc, message="m")],
    )
    return [
        lsp.HoverResponse(
            id=0, result=lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=""), range=rng)
        ),
        lsp.DefinitionResponse(id=0, result=[loc]),
        lsp.ReferencesResponse(id=0, result=[loc]),
        lsp.DocumentHighlightResponse(
            id=0, result=[lsp.DocumentHighlight(range=rng, kind=lsp.DocumentHighlightKind.Read)]
        ),
        lsp.InlayHintResponse(
            id=0,
            result=[lsp.InlayHint(position=pos, label="", kind=lsp.InlayHintKind.Type, tooltip="", padding_left=True)],
        ),
        lsp.SemanticTokensRangeResponse(id=0, result=lsp.SemanticTokens(data=[0, 0, 1, 0, 0])),
        lsp.CompletionResponse(
            id=0,
            result=lsp.CompletionList(
                is_incomplete=False, items=[lsp.CompletionItem(label="", kind=lsp.CompletionItemKind.Function)]
            ),
        ),
        lsp.DocumentDiagnosticResponse(id=0, result=lsp.RelatedFullDocumentDiagnosticReport(items=[diag])),
        lsp.PublishDiagnosticsNotification(params=lsp.PublishDiagnosticsParams(uri="file:///x", diagnostics=[diag])),
    ]


FULL_COLLECTION_EVERY = 1000  # young (generation-1) collections between two automatic full ones; Python's: 10


def space_out_full_collections() -> None:
    """Make the cyclic collector's automatic full collections rare. With a large module's model in memory (millions
    of objects) each one holds the GIL for 0.1-0.3 s wherever it strikes: in the background reads and the
    whole-document answers' threads after a large open it struck a dozen times, and each time a hover waited.
    The server collects in full itself at the first idle moment after its background work, and freezes what
    survives (`server._collect_when_idle`); until then cyclic garbage waits a few seconds longer."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)


class HloLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "hlo-lsp",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=HloProtocol,
        )
        self.ws = Workspace()
        self.ws.defer_large_siblings = True  # requests never read a large sibling; the worker thread does
        # ... nor a large open document: the event loop (this thread) leaves it to the read `_schedule` started
        self.ws.loop_thread = threading.get_ident()
        self.plain_hover = False
        self.client_progress = False
        self._pending: dict[str, asyncio.Task] = {}
        self._read_waiters: dict[str, list[asyncio.Event]] = {}  # `read_step`'s waiters, per document
        self.closing = False  # after shutdown: background work publishes and reports nothing more
        self._progress_seq = 0
        self.folder_indexes: dict[str, FolderIndex] = {}
        # what the transport read against what was handled (`stdio`): long answers wait for the editor's batch
        self.intake = Intake()
        self.answers = DocumentAnswers(self.current_version, self.intake)  # whole-document answers per version
        turns.set_gate(self.answers.wait_idle)  # background reads give way while those answers are computed
        turns.set_yield_gate(self.answers.wait_dispatched)  # and those answers to the messages not yet handled
        self.insight_settings = InsightSettings()
        space_out_full_collections()
        self.pulled = False  # the client pulls its diagnostics: none is pushed (`pulls_diagnostics`)
        self.release_frozen = False  # the next idle collection collects the frozen objects too (`server`)

    def start_io(self, stdin=None, stdout=None) -> None:
        """Serve over stdio with a reader and a writer thread of our own (`hlo_lsp.lsp.stdio`), not pygls' reads
        through its thread pool and writes on the event loop."""
        from hlo_lsp.lsp import stdio

        stdio.start_io(self, stdin, stdout)

    # -- helpers ---------------------------------------------------------------------------------------------

    async def read_step(self, path: str, limit: float) -> None:
        """Wait (on the event loop) until the server's read of ``path`` has taken a step (`read_stepped`: read
        and checked, or its work ended), at most ``limit`` seconds. A pull at open waited by polling every 50 ms:
        up to that long after the read was done."""
        ev = asyncio.Event()
        waiters = self._read_waiters.setdefault(path, [])
        waiters.append(ev)
        try:
            await asyncio.wait_for(ev.wait(), limit)
        except asyncio.TimeoutError:
            pass
        finally:
            if ev in waiters:
                waiters.remove(ev)
            if not waiters and self._read_waiters.get(path) is waiters:
                del self._read_waiters[path]

    def read_stepped(self, path: str) -> None:
        """The server's read of ``path`` took a step: its `read_step` waiters go on (on the event loop)."""
        for ev in self._read_waiters.pop(path, []):
            ev.set()

    def lines_of(self, path: str) -> Lines | None:
        try:
            return self.ws.analysis(path).lines
        except ReadError:
            return None

    @property
    def conv(self) -> Converter:
        enc = self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        return Converter(enc, self.lines_of)

    def at(self, params) -> tuple[str, int, int]:
        """(path, line, code-point column) of a text-document-position request."""
        path = uri_to_path(params.text_document.uri)
        line, col = self.conv.from_position(self.lines_of(path), params.position)
        return path, line, col

    def locations(self, locs: list[Location]) -> list[lsp.Location] | None:
        conv = self.conv
        return [conv.location(x) for x in locs] or None

    def publish(self, path: str, version: int | None, complete: bool = True, diags=None) -> None:
        """Publish ``diags`` (computed here when None) for ``path`` at ``version``; nothing after shutdown, nor
        to a client that pulls them."""
        if self.closing or self.pulled:
            return
        if diags is None:
            diags = document_diagnostics(self.ws, path, complete)
        lines = self.lines_of(path)
        conv = self.conv
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=path_to_uri(path), version=version, diagnostics=[conv.diagnostic(path, lines, d) for d in diags]
            )
        )

    def current_version(self, path: str) -> int | None:
        src = self.ws.open_source(path)
        return src.version if src is not None else None

    async def off_loop(self, path: str, fn: Callable[..., T], *args) -> T:
        """``fn(*args)`` in a worker thread, for a request whose answer reads a whole computation or module
        (a call hierarchy over the 23 MB module's ENTRY: 0.4 s); ``JsonRpcContentModified`` when ``path``
        changed meanwhile."""
        version = self.current_version(path)
        got = await asyncio.to_thread(fn, *args)
        if self.current_version(path) != version:
            raise JsonRpcContentModified(message=f"{path} changed while the answer was made; ask again")
        return got

    async def maps_ready(self, path: str) -> None:
        """Before a request that reads the users or callers of ``path``'s module (references, highlights, renames)
        on the event loop: when that module is large and its maps are not built yet (the
        background build after its read takes 0.3 s for the 23 MB module, 1.2 s for the 100 MB one), wait for
        them in a worker thread, the loop answering other requests meanwhile (`Workspace.maps_at_once`).
        Raises ``JsonRpcContentModified`` when the document changed meanwhile: the request's position is stale."""
        ws = self.ws
        try:
            a = ws.analysis(path)
            bundle = ws.bundle(path) if a.hlo is None else None
        except ReadError:
            return
        mod = a.hlo if a.hlo is not None else (bundle.hlo.hlo if bundle is not None and bundle.hlo else None)
        if mod is not None and not ws.maps_at_once(mod):
            await self.off_loop(path, _wait_for_maps, mod)


server = HloLanguageServer()


def _wait_for_maps(mod) -> None:
    """``mod``'s users and callers maps, built here or by the background build under way (`HloModule._maps`)."""
    with turns.waiting_for_background():  # (the background build does not give way to the request waiting for it)
        mod.build_maps()


def safe(fn):
    """Log and answer null instead of raising: a failing feature never takes the server down (a request the
    document's change made stale still gets ``ContentModified``)."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def waiting(ls, params):
            try:
                return await fn(ls, params)
            except JsonRpcContentModified:
                raise
            except Exception:  # noqa: BLE001 - the point is to survive anything
                log.exception("%s failed", fn.__name__)
                return None

        return waiting

    @functools.wraps(fn)
    def wrapper(ls, params):
        try:
            return fn(ls, params)
        except Exception:  # noqa: BLE001 - the point is to survive anything
            log.exception("%s failed", fn.__name__)
            return None

    return wrapper
