"""LSP handlers of the whole-document requests an editor sends on open and after every edit: outline
(``documentSymbol``), ``foldingRange``, ``documentLink``, ``codeLens`` and ``semanticTokens/full`` (and
``full/delta``).

Each runs its `hlo_lsp.ide` function in a worker thread through `DocumentAnswers` (kept per document version,
shared, cancellable, never sent for a stale version) and writes its answer as JSON text directly (`RawResult`):
the outline of a large module is tens of thousands of entries, which lsprotocol's objects would take seconds to
build and encode. The viewport requests (``semanticTokens/range``, ``inlayHint``) stay in `handlers_insight`:
they cost time in proportion to the lines asked for and answer on the event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import threading
from array import array
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp

from hlo_lsp.core import kinds
from hlo_lsp.core.process import collector, fork, pieces, turns
from hlo_lsp.core.workspace import ReadError, Workspace
from hlo_lsp.ide import lens, semantic_tokens, symbols, token_reuse
from hlo_lsp.lsp.app import SYMBOL_KIND, HloLanguageServer, server
from hlo_lsp.lsp.convert import all_ascii, col_to_wire, path_to_uri, uri_to_path
from hlo_lsp.lsp.doc_answers import (
    BATCH_QUIET_S,
    BATCH_WAIT_S,
    JSON_ENCODE,
    TOKEN_DATA,
    OutlineMemo,
    Provisional,
    TokenArray,
    lower_switch_interval,
    short_wait,
)
from hlo_lsp.lsp.protocol import RawResult

log = logging.getLogger("hlo_lsp")
LEGEND = lsp.SemanticTokensLegend(
    token_types=semantic_tokens.TOKEN_TYPES, token_modifiers=semantic_tokens.TOKEN_MODIFIERS
)

lower_switch_interval()


class _Wire:
    """Code-point ranges as the JSON the wire carries, in the negotiated encoding, for one document."""

    def __init__(self, ls: HloLanguageServer, path: str) -> None:
        self.encoding = ls.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        self.lines = ls.lines_of(path) or []

    def col(self, line: int, col: int) -> int:
        lines = self.lines
        return col_to_wire(lines[line], col, self.encoding) if 0 <= line < len(lines) else col

    def range(self, r) -> dict:
        sl, el = r.start_line, r.end_line
        sc, ec = self.clamped_col(sl, r.start_col), self.clamped_col(el, r.end_col)
        return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}

    def clamped_col(self, line: int, col: int) -> int:
        """Column ``col`` of ``line`` on the wire, within the line (0 .. its end); as it is past the last line.
        An ASCII line's column is the same in every encoding (most lines: tens of thousands of ranges in a large
        file's outline)."""
        lines = self.lines
        if 0 <= line < len(lines):
            t = lines[line]
            col = (col if col <= len(t) else len(t)) if col >= 0 else 0
            if not t.isascii():
                col = col_to_wire(t, col, self.encoding)
        return col


def _ready(ls: HloLanguageServer, path: str, siblings: bool = False) -> bool:
    """Wait (in the worker thread) until ``path`` is read, and with ``siblings`` its module's buffer files too,
    or an out-of-memory report's dump (read here when the background read has not got to them: an answer kept
    for this version must not be the one made without them); False when it cannot be read."""
    try:
        ls.ws.analysis(path, wait=True)
        if siblings:
            ls.ws.bundle(path, read_large=True)
            ls.ws.oom_dump(path, find=True)  # an out-of-memory report: the dump it is about
        return True
    except ReadError:
        return False


def _dumps(value: list) -> RawResult:
    return RawResult.array([JSON_ENCODE(x) for x in value])  # in pieces: a hover waits for one piece, not all


def _guarded(name: str, fn):
    """``fn`` that logs a failure and answers null (one bad request never takes the server down)."""

    def run():
        try:
            return fn()
        except Exception:  # noqa: BLE001 - the point is to survive anything
            log.exception("%s failed", name)
            return RawResult("null")

    return run


# -- outline, folding, links ---------------------------------------------------------------------------------------


def _symbol_pieces(w: _Wire, s, out: list[str]) -> None:
    """``JSON_ENCODE(_symbol_json(w, s))`` as pieces appended to ``out``, a symbol at a time: a module's outline
    is one symbol holding every computation, and its JSON in one C call held the GIL 100-120 ms for the 100 MB
    module (the children are the last key, so the text is the same); its 5 MB text joined and encoded at once
    held it 22 ms more (`RawResult.joined` makes the answer of the pieces a few thousand at a time)."""
    if not s.children:
        out.append(JSON_ENCODE(_symbol_json(w, s)))
        return
    head = JSON_ENCODE(_symbol_json(w, dataclasses.replace(s, children=[])))
    out.append(head[:-1] + ',"children":[')
    for i, c in enumerate(s.children):
        if i:
            out.append(",")
            if not i & 255:
                turns.give_way()  # (a module's 84,000 computations: a hover under way goes first)
        _symbol_pieces(w, c, out)
    out.append("]}")


def _let_go(made: list, texts: list[str]) -> None:
    """An outline made in this process (above `CHILD_MAX_CHARS`) and its JSON pieces, freed a piece at a time: the
    100 MB module's 84,391 computations' entries and their texts, freed at once when the answer's function returned,
    held the GIL 8 ms (a hover waited for it)."""
    for s in made:
        pieces.release(s.children)
    pieces.release(made, texts)


def _symbol_json(w: _Wire, s) -> dict:
    out = {
        "name": s.name,
        "kind": int(SYMBOL_KIND[s.kind]),
        "range": w.range(s.range),
        "selectionRange": w.range(s.selection_range),
    }
    if s.detail:
        out["detail"] = s.detail
    if s.children:
        out["children"] = [_symbol_json(w, c) for c in s.children]
    return out


CHILD_MIN_CHARS = 2_000_000  # from this size on, a whole-document answer is computed in a forked child
# ... up to this size. A fork holds the GIL while the kernel copies the page tables, and the parent's pages are
# copied as it writes them afterwards: 4-6 ms for the 23 MB module's 170-240 MB process, 26-30 ms for the 100 MB
# module's 500-600 MB, three or four times for VS Code's on-open batch (a hover waited 110 ms behind them).
# Beyond it the answer is made in the worker thread, which hands the GIL back every 0.2 ms: the 100 MB module's
# outline and folding ranges are 0.25 and 0.2 s of work there, a tenth of the yardstick (XLA's 4-6 s parse).
CHILD_MAX_CHARS = 48_000_000
# one such answer computed here at a time: each one a busy thread more, and the event loop's share of the GIL
# went down with every one (with the tokens' thread, the background's and three answers' busy, a hover waited
# 70-130 ms for the GIL it needed at each step)
_IN_PROCESS = threading.Lock()
CHILD_TIMEOUT_S = 60.0
# how much lower the CPU priority of a child making a long answer is (the outline, folding ranges, links: the
# editor gives them half the yardstick, and 0.1 of it to the token delta, lenses and hovers that the process
# itself answers meanwhile). The process runs one thread of Python at a time, so on 2 cores the children still
# have one core to themselves. After an edit of the 23 MB module, three children beside the token delta made it
# take 150-220 ms for 20 ms of work; lowering their priority took 0.25 X to 0.20 X, and the rest went with the
# wait for the short answers before forking (`DocumentAnswers.wait_short`).
LONG_ANSWER_NICE = 10
FORK_READY_S = 0.05  # the longest a fork waits for the messages the event loop has to handle (`fork.start`)
FORK_QUIET_S = 0.001  # ... and how long the input must then stay empty (the reader's turn to read what came)


def _in_child(ls: HloLanguageServer, path: str, fn: Callable[[], Any], long_answer: bool = False) -> Any:
    """``fn()``, computed in a forked child when ``path`` is large (`CHILD_MIN_CHARS`): the child works on the
    other core from the model as it is (copy-on-write, nothing sent on the way in) and sends back the answer's
    JSON text, while this process's one GIL stays with the requests and the background reads; in a thread it
    took turns with both (a hover waited behind it, and it behind the reading of the siblings). ``fn`` must be
    pure: what it stores in the child is lost (so its caller prepares here what is kept: the document read, a
    bundle's peak report, the answers' bookkeeping). Computed here when forking is off or the child fails.
    ``long_answer``: one the editor gives half the yardstick (outline, folding, links): its fork waits for the
    short answers under way (`DocumentAnswers.wait_short`) and the child runs at `LONG_ANSWER_NICE`."""
    try:
        size = ls.ws.analysis(path).size
    except ReadError:
        size = 0
    if CHILD_MIN_CHARS < size <= CHILD_MAX_CHARS:
        # the fork holds the GIL while it copies the page tables (10 ms at 280 MB): the rest of the batch is
        # read and handled first (`wait_dispatched`, again, as messages may have come while the document was
        # read; until the input stayed empty a moment, as an editor writes a batch a request at a time)
        ls.answers.wait_dispatched(BATCH_WAIT_S, BATCH_QUIET_S)
        if long_answer:  # and a fork now would make the short answers under way copy what they write
            ls.answers.wait_short(short_wait(size))
        nice = LONG_ANSWER_NICE if long_answer else 0
        locks = [*ls.ws.fork_locks(), *lens.fork_locks()]
        child = fork.start(
            lambda _: fn(),
            None,
            locks=locks,
            timeout=CHILD_TIMEOUT_S,
            freeze=False,
            nice=nice,
            ready=lambda: _before_fork(ls),
        )
        got = fork.result(child)
        if got is not None:
            return got
    if size > CHILD_MAX_CHARS:
        with _IN_PROCESS, collector.paused():
            return fn()
    return fn()


def _before_fork(ls: HloLanguageServer) -> None:
    """Right before a fork (`fork.start`'s ``ready``): a message the client sent is read and handled first, and
    the GIL is let go a moment (`FORK_QUIET_S`) so that the reader thread takes any message waiting on the pipe
    (a fork right after the one before took the GIL first, and a hover sent meanwhile was read only after it:
    22 ms); at most `FORK_READY_S` in all."""
    ls.answers.wait_dispatched(FORK_READY_S, FORK_QUIET_S)


def document_symbols_json(ls: HloLanguageServer, path: str) -> RawResult:
    if not _ready(ls, path):
        return RawResult("[]")
    kept = _kept_outline(ls, path)
    if kept is not None:
        return kept
    version = ls.answers.version_of(path)

    def answer() -> RawResult:
        w = _Wire(ls, path)
        a = ls.ws.try_analysis(path)
        if a is not None and a.buffers is not None and a.buffers.allocations:
            return _buffer_outline_json(w, a)
        made = symbols.document_symbols(ls.ws, path)
        texts = ["["]
        for i, s in enumerate(made):
            if i:
                texts.append(",")
            _symbol_pieces(w, s, texts)
        texts.append("]")
        got = RawResult.joined(texts)
        if not fork.in_child():  # (a child ends without freeing anything)
            _let_go(made, texts)
        return got

    got = _in_child(ls, path, answer, long_answer=True)
    _keep_outline(ls, path, version, got)
    return got


def _kept_outline(ls: HloLanguageServer, path: str) -> RawResult | None:
    """An HLO module's last outline when the edits since left it as it was (`symbols.outline_kept`: after an edit
    in the middle of the 23 MB module the outline was made again whole, a fork and 0.25 s of work, for the same
    answer); the memo then stands for this version. The check (5-25 ms: the module's shape made again) runs
    outside the lock an edit takes on the event loop, on the version and edits read under it; an edit meanwhile
    moves the version, and the memo is not used."""
    answers = ls.answers
    with answers.memo_lock:
        memo = answers.outline_memo.get(path)
        version = answers.version_of(path)
        edits = list(memo.edits) if memo is not None else []
    a = ls.ws.try_analysis(path)
    if memo is None or a is None or a.hlo is None or not symbols.outline_kept(a.hlo, memo.shape, edits):
        return None
    with answers.memo_lock:
        if answers.outline_memo.get(path) is not memo or answers.version_of(path) != version or memo.edits != edits:
            return None
        memo.edits.clear()
        answer = memo.answer
    return answer.unpacked()  # (kept packed once the server was idle: decompressed here, off the event loop)


def _keep_outline(ls: HloLanguageServer, path: str, version: int | None, got: Any) -> None:
    """Keep an HLO module's outline made for ``version`` with the module's shape, unless an edit came since."""
    a = ls.ws.try_analysis(path)
    if version is None or not isinstance(got, RawResult) or a is None or a.hlo is None:
        return
    shape = symbols.outline_shape(a.hlo)  # outside the lock: an edit meanwhile moves the version, checked below
    with ls.answers.memo_lock:
        if ls.answers.version_of(path) == version and ls.ws.try_analysis(path) is a:
            ls.answers.outline_memo[path] = OutlineMemo(shape, got)
        else:
            ls.answers.outline_memo.pop(path, None)


_ALLOCATION_SYMBOL = (
    '{"name":"%s","kind":%d,'
    '"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":%d}},'
    '"selectionRange":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":%d}},"detail":"%s"}'
)


def _buffer_outline_json(w: _Wire, a) -> RawResult:
    """The outline of a buffer file (`symbols.document_symbols`) with each allocation's entry that lists no
    values written straight as text: the benchmark's 23,576 allocations took 0.3 s as `Symbol`s, then dicts,
    then JSON, and take 0.12 s so. Its name and detail hold digits, letters, ``,``, ``·`` and spaces only
    (nothing JSON escapes), and the ``allocation N`` token is ASCII from column 0: its end is the same column in
    every encoding."""
    budget = symbols.outline_budget()
    fmt, kind, end_col = _ALLOCATION_SYMBOL, int(SYMBOL_KIND["object"]), w.clamped_col
    parts = [
        fmt % (name, kind, ln, last, end_col(last, last_end), ln, ln, name_end, detail)
        if not children
        else JSON_ENCODE(_symbol_json(w, e.symbol()))
        for e in symbols.allocation_entries(a, budget)
        for name, ln, last, last_end, name_end, detail, children in (e,)
    ]
    parts += [JSON_ENCODE(_symbol_json(w, s)) for s in symbols.buffer_sections(a, budget)]
    return RawResult.array(parts)


def folding_json(ls: HloLanguageServer, path: str) -> RawResult:
    if not _ready(ls, path):
        return RawResult("[]")

    caps = ls.client_capabilities.text_document if ls.client_capabilities else None
    limit = caps.folding_range.range_limit if caps and caps.folding_range else None

    def answer() -> RawResult:
        fmt = '{"startLine":%d,"endLine":%d,"kind":"region"}'
        spans = symbols.within_limit(symbols.folding_spans(ls.ws, path), limit)
        return RawResult.array([fmt % span for span in spans])

    return _in_child(ls, path, answer, long_answer=True)


def links_json(ls: HloLanguageServer, path: str) -> RawResult:
    """Links from a buffer file's peak list and an out-of-memory report's labels; an HLO module has none, so
    it never waits for its siblings. A buffer file whose large siblings are still being read gets its links
    from its own text at once, each target resolved when the editor asks (``documentLink/resolve``): waiting
    for the join held the first answer for seconds."""
    if not _ready(ls, path):
        return RawResult("[]")
    try:
        kind = ls.ws.analysis(path).kind
    except ReadError:
        return RawResult("[]")
    if kind not in kinds.BUFFER_KINDS and kind != kinds.OOM:
        return RawResult("[]")
    later = kind in kinds.BUFFER_KINDS and ls.ws.defers_siblings(path) and ls.ws.bundle(path).partial
    if not later and not _ready(ls, path, siblings=True):
        return RawResult("[]")
    version = ls.answers.version_of(path)

    def answer() -> RawResult:
        w = _Wire(ls, path)
        links = symbols.document_links(ls.ws, path, later)
        return _dumps([_link_json(ls, w, link, path, version) for link in links])

    return _in_child(ls, path, answer, long_answer=True)


def _link_json(ls: HloLanguageServer, w: _Wire, link, path: str, version: int | None) -> dict:
    out: dict[str, object] = {"range": w.range(link.range), "tooltip": link.tooltip}
    if link.target is None:
        out["data"] = {"uri": path_to_uri(path), "index": link.index, "version": version}
        return out
    target = ls.conv.location(link.target)
    out["target"] = f"{target.uri}#L{target.range.start.line + 1},{target.range.start.character + 1}"
    return out


def code_lens_json(ls: HloLanguageServer, path: str) -> RawResult | Provisional:
    """The lenses of ``path``; while its large siblings are still being read in the background, the lenses of
    its own text at once (`lens.file_lenses`, kept until the join is done), and the client is asked again then
    (the server's `_joined`), rather than holding the answer for seconds."""
    if not _ready(ls, path, siblings=not lens_refresh(ls)):  # a client that cannot be asked again waits
        return RawResult("[]")
    if ls.ws.passes.is_history_file(path) and ls.ws.passes.get(path) is None:
        if not lens_refresh(ls):
            ls.ws.passes.get(path, build=True)  # a client that cannot be asked again waits for the pass history
        else:
            ls.answers.wait_for_join(path, "codeLens")  # the server's `_joined` asks again once it is built
            if ls.ws.passes.get(path) is None:
                return Provisional(_lenses_in_child(ls, path, lens.code_lenses))
    if lens_refresh(ls) and ls.ws.defers_siblings(path):
        ls.answers.wait_for_join(path, "codeLens")  # before looking (see DocumentAnswers.joined)
        # not joined yet (being read, or edited since): the file's own lenses now, without waiting for any join
        # (a request making the join of the file's own records waited 0.2 s for it after an edit)
        if not ls.ws.joined_bundle_kept(path):
            # a pass over the file's allocations: in this process (a fork costs more than the work, and its
            # copy-on-write faults slowed the other answers of the batch)
            return Provisional(_file_lens_json(ls, path))
    ls.answers.not_waiting(path, "codeLens")
    if lens.module_report(ls.ws, path) is None and not ls.ws.passes.is_history_file(path):
        # no buffer files and no pass history: no lens to make, and a fork would cost the GIL for nothing
        return _lens_json(ls, path, lens.code_lenses(ls.ws, path))
    # the peak report is kept with the bundle: made above, never in a child
    return _lenses_in_child(ls, path, lens.code_lenses)


def _lenses_in_child(ls: HloLanguageServer, path: str, make: Callable[[Workspace, str], list[lens.Lens]]) -> RawResult:
    return _in_child(ls, path, lambda: _lens_json(ls, path, make(ls.ws, path)))


def lens_refresh(ls: HloLanguageServer) -> bool:
    """The client can be asked for the lenses again (``workspace/codeLens/refresh``)."""
    ws_caps = ls.client_capabilities.workspace if ls.client_capabilities else None
    return bool(ws_caps and ws_caps.code_lens and ws_caps.code_lens.refresh_support)


_ALLOCATION_LENS = (
    '{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":%d}},'
    '"command":{"title":"%s","command":""}}'
)


def _file_lens_json(ls: HloLanguageServer, path: str) -> RawResult:
    """`lens.file_lenses` as JSON; a file of allocations alone written straight as text (the 23,576 lenses of the
    benchmark's assignment file: 20 ms, against 0.2 s as `Lens` objects, then dicts, then JSON). The
    ``allocation N`` token is ASCII from column 0, so its end is the same column in every position encoding, and
    a title needs no escaping (`lens.allocation_titles`)."""
    a = ls.ws.try_analysis(path)
    doc = a.buffers if a is not None else None
    if doc is None or doc.peak_step is not None:
        return _lens_json(ls, path, lens.file_lenses(ls.ws, path))
    fmt = _ALLOCATION_LENS
    return RawResult("[" + ",".join([fmt % (ln, ln, end, t) for ln, end, t in lens.allocation_titles(doc)]) + "]")


def _lens_json(ls: HloLanguageServer, path: str, lenses: list[lens.Lens]) -> RawResult:
    w = _Wire(ls, path)
    out = []
    for x in lenses:
        cmd: dict[str, object] = {"title": x.title, "command": x.command}
        if x.arguments:
            cmd["arguments"] = [path_to_uri(a) if isinstance(a, str) else a for a in x.arguments]
        out.append({"range": w.range(x.range), "command": cmd})
    return _dumps(out)


async def _answer(ls: HloLanguageServer, params, key: str, fn):
    path = uri_to_path(params.text_document.uri)
    return await ls.answers.answer(path, key, _guarded(key, lambda: fn(ls, path)))


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
async def on_document_symbol(ls: HloLanguageServer, params: lsp.DocumentSymbolParams):
    return await _answer(ls, params, "documentSymbol", document_symbols_json)


@server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
async def on_folding(ls: HloLanguageServer, params: lsp.FoldingRangeParams):
    return await _answer(ls, params, "foldingRange", folding_json)


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_LINK, lsp.DocumentLinkOptions(resolve_provider=True))
async def on_document_link(ls: HloLanguageServer, params: lsp.DocumentLinkParams):
    return await _answer(ls, params, "documentLink", links_json)


@server.feature(lsp.DOCUMENT_LINK_RESOLVE)
async def on_document_link_resolve(ls: HloLanguageServer, link: lsp.DocumentLink) -> lsp.DocumentLink:
    """The target of a peak-list link sent without one (`links_json`), found once the module's files are read
    (in a worker thread: it waits for them); the link as it came when its document moved on or it is not ours."""
    data = link.data if isinstance(link.data, dict) else {}
    uri, index = data.get("uri"), data.get("index")
    if not isinstance(uri, str) or not isinstance(index, int) or link.target is not None:
        return link
    path = uri_to_path(uri)
    if ls.answers.version_of(path) != data.get("version"):
        return link

    def resolve():
        if not _ready(ls, path, siblings=True):
            return None
        return symbols.resolve_link(ls.ws, path, index)

    found = await asyncio.to_thread(resolve)
    if found is None or found.target is None:
        return link
    target = ls.conv.location(found.target)
    link.target = f"{target.uri}#L{target.range.start.line + 1},{target.range.start.character + 1}"
    return link


@server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)
async def on_code_lens(ls: HloLanguageServer, params: lsp.CodeLensParams):
    if ls.insight_settings.code_lens:
        with ls.answers.short_request():
            return await _answer(ls, params, "codeLens", code_lens_json)
    return []


# -- semantic tokens -----------------------------------------------------------------------------------------------


def token_data(ls: HloLanguageServer, path: str) -> array[int]:
    """The encoded ``data`` of a full request (`semantic_tokens.document_tokens`), in wire columns."""
    if not _ready(ls, path):
        return array(TOKEN_DATA)
    version = ls.answers.version_of(path)
    w = _Wire(ls, path)
    try:
        a = ls.ws.analysis(path)
    except ReadError:
        return array(TOKEN_DATA)
    # a long module or buffer file after an edit: the previous version's tokens and wire data outside the edited
    # lines (ide.token_reuse): only the edited lines' tokens are made and encoded
    encoding = str(w.encoding)
    enc = _encoder(w)
    memo = ls.answers.token_memo.get(path)
    nxt = token_reuse.reuse_encoded(memo, a, encoding, enc) or token_reuse.reuse_buffer_encoded(memo, a, encoding, enc)
    rows = _long_rows(w, a) if nxt is None else None
    if nxt is not None:
        data = nxt.data
    elif rows is not None:  # a long document's names, packed from its columns: no tuple per token
        data = semantic_tokens.encode_rows(rows, TOKEN_DATA)
        nxt = token_reuse.memo_of_rows(a, rows, data, encoding) or token_reuse.buffer_memo_of(a, data, encoding)
    else:
        toks = semantic_tokens.document_tokens(ls.ws, path)
        data = enc(toks, 0)
        nxt = token_reuse.memo_of(a, toks, data, encoding) or token_reuse.buffer_memo_of(a, data, encoding)
        if isinstance(toks, list):
            pieces.release(toks)
    if version is not None and ls.answers.version_of(path) == version:  # no edit landed meanwhile
        replaced = ls.answers.token_memo.get(path)
        ls.answers.token_memo[path] = nxt
        del memo
        # the memo this one replaced, when nothing else holds it (a computation for another version may), lets go
        # of its copy of the lines a piece at a time: freed at once, the 100 MB module's two million references
        # held the GIL about 12 ms (measured in isolation) after each edit's token delta
        if isinstance(replaced, token_reuse.TokenMemo) and sys.getrefcount(replaced) == pieces.ONE_NAME_REFS:
            pieces.release(replaced.lines)
    return data


def _long_rows(w: _Wire, a) -> array | None:
    """The full tokens of a long document packed (`semantic_tokens.definition_rows`), when its code-point columns
    are wire columns (UTF-32, or ASCII lines: every line of a machine-written dump); None otherwise."""
    if len(a.lines) <= semantic_tokens.LIGHT_LINES:
        return None
    rows = semantic_tokens.definition_rows(a)
    if rows is None or not rows:
        return None
    if w.encoding == lsp.PositionEncodingKind.Utf32 or all_ascii(w.lines, rows[0], rows[-5] + 1):
        return rows
    return None


def wire_token_data(ls: HloLanguageServer, path: str, toks) -> array:
    """The wire data of ``path``'s tokens ``toks`` (code-point columns) in the negotiated encoding, as every token
    answer makes it (`_encoder`): the viewport's (`handlers_insight`) as the full and delta tokens'."""
    return _encoder(_Wire(ls, path))(toks, 0)


def _encoder(w: _Wire) -> token_reuse.Encoder:
    """Tokens (code-point columns) -> their wire data in ``w``'s encoding, the first token's line delta
    counted from a given line (`semantic_tokens.encode`), packed (`TOKEN_DATA`): the data of a long document is
    a million integers, kept per version and spliced after each edit; as a list, each new one was walked twice
    by the cyclic collector (its young collections during the splice, 20 ms on the 11 MB values file)."""

    def encode(toks, prev_line: int) -> array:
        if not toks:
            return array(TOKEN_DATA)
        lines = w.lines
        first, last = toks[0][0], toks[-1][0]
        if w.encoding == lsp.PositionEncodingKind.Utf32 or all_ascii(lines, first, last + 1):
            # code points are wire columns (every line of a machine-written dump is ASCII): no per-token conversion
            data = semantic_tokens.encode_spans(toks, TOKEN_DATA)
        else:
            col = w.col
            wire = []
            for line, start, end, typ, mods in toks:
                s = col(line, start)
                wire.append((line, s, col(line, end) - s, typ, mods))
            flat = semantic_tokens.encode(wire)
            data = pieces.int_array(TOKEN_DATA, flat)
            pieces.release(flat, wire)
        data[0] -= prev_line
        return data

    return encode


def _token_data_guarded(ls: HloLanguageServer, path: str):
    def run():
        try:
            # its lists of tuples are freed by reference counting; what survives (the data, the memo the next
            # version's tokens are spliced from) is frozen with it when the document is large (`process.collector`)
            src = ls.ws.open_source(path)
            large = src is not None and getattr(src.doc, "chars", 0) >= collector.KEEP_MIN_CHARS
            with collector.paused(keep=large):
                return TokenArray(token_data(ls, path))
        except Exception:  # noqa: BLE001
            log.exception("semantic tokens failed")
            return TokenArray(array(TOKEN_DATA))

    return run


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
async def on_semantic_tokens_full(ls: HloLanguageServer, params: lsp.SemanticTokensParams):
    path = uri_to_path(params.text_document.uri)
    tokens = await ls.answers.answer(path, "semanticTokens", _token_data_guarded(ls, path))
    parts = tokens.json
    if parts is None:  # made once per array, off the loop, and kept with it for the next full request (packed once
        parts = await ls.answers.part_of_answer(tokens.json_parts)  # the server is idle: then decompressed here)
    return ls.answers.tokens_result(path, tokens, parts)


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA)
async def on_semantic_tokens_delta(ls: HloLanguageServer, params: lsp.SemanticTokensDeltaParams):
    path = uri_to_path(params.text_document.uri)
    with ls.answers.short_request():
        tokens = await ls.answers.answer(path, "semanticTokens", _token_data_guarded(ls, path))
        return ls.answers.tokens_delta(path, params.previous_result_id, tokens)
