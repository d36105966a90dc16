"""Whole-document answers (outline, folding, semantic tokens, code lenses, links): computed off the event loop,
kept per document version, never sent for a stale version.

An editor asks these on open and again after every edit, and cancels the ones it no longer needs while the
user types. Each is a pass over the whole document (seconds on a 23 MB module), so:

- **Off the loop.** `DocumentAnswers.answer` runs the computation in a worker thread (`asyncio.to_thread`);
  the event loop keeps reading messages, so a hover sent meanwhile is answered at once. The worker takes the
  GIL in turns with the loop; the switch interval is lowered (`SWITCH_INTERVAL`) so the loop's turn comes
  within a few ms.
- **Kept per version.** The answer is stored as the JSON text the wire carries (`RawResult`), keyed by
  (path, request key) and stamped with the document version it was computed for; asked again at that version
  it is written out as it is. Any other version misses.
- **Shared.** Two requests for the same answer at the same version share one computation.
- **Cancelled.** ``$/cancelRequest`` cancels the awaiting handler (pygls answers ``RequestCancelled``); the
  computation itself is shielded and runs on, so its answer is kept for the request that comes next when the
  version did not move (an editor that cancels a stale request asks again at once).
- **Short ones first.** The answers an editor wants within a tenth of the yardstick after an edit (the token
  delta, the lenses: `short_request`) are a few ms of work, but a fork for a long answer (outline, folding)
  while they run costs them more than that: right after a fork, every page the process writes is copied first
  (the 23 MB module's token splice took 65 ms instead of 17), and the fork itself holds the GIL. A long
  answer's child waits until the short requests under way are answered (`wait_short`, at most
  `short_wait`: `SHORT_FIRST_S`, longer on a document past `SHORT_FIRST_CHARS`) before it is forked.
- **Never stale.** When the version moved while the answer was computed, the request gets ``ContentModified``
  (the LSP's "ask again" error) instead of an answer about text the editor no longer shows.

Semantic tokens also keep the last ``data`` array per document for ``full/delta`` (`token_edits`): the new
array against the one the editor holds, as one edit between their common prefix and suffix (compared in
C-speed slices). A full answer's JSON text is made once per array, in a worker thread, and kept with it
(`TokenArray`): asked again, it is written as it is.

**Short GIL turns.** A worker never makes a multi-MB JSON text in one C call (``json.dumps`` of 1.1 M integers
holds the GIL for a quarter of a second, and a hover waits that long): `RawResult.array` and `ints_json_bytes`
encode in pieces of under a millisecond each, and the writer sends the pieces as they are.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pygls.exceptions import JsonRpcContentModified

from hlo_lsp.core.document import Edit, common_prefix, common_suffix
from hlo_lsp.core.process import turns
from hlo_lsp.ide.symbols import OutlineShape
from hlo_lsp.ide.token_reuse import TokenMemo, packed_rows, unpacked_rows
from hlo_lsp.lsp.protocol import RawResult, json_array_parts
from hlo_lsp.lsp.stdio import Intake

log = logging.getLogger("hlo_lsp")
# s: how long a worker thread may hold the GIL while the event loop waits for it. A request gives the GIL up at
# every system call (reading its message, each ``stat`` of a sibling file, writing its answer) and waits up to
# this long to get it back from a busy worker: beside one busy thread a hover on the 23 MB module, its assignment
# and live-range files took 1.4-5.0 ms (median) at 1 ms, 0.6-1.7 ms at 0.2 ms. Two CPU-bound threads taking
# turns are about 5 % slower for the extra switches (median of five runs).
SWITCH_INTERVAL = 0.0002
PACK_MIN_BYTES = 1 << 18  # a kept answer of this much JSON text or more is kept compressed (`pack_kept`)
KEEP_TOKEN_RESULTS = 2  # semantic-token arrays kept per document for full/delta (the editor holds the last)
SHORT_FIRST_S = 0.1  # the longest a long answer's fork waits for the short answers under way (`wait_short`)
BATCH_WAIT_S = 0.05  # the longest a whole-document answer waits for the rest of its batch (`wait_dispatched`)
BATCH_QUIET_S = 0.005  # ... and before it forks, how long the input must stay empty to end a batch
SHORT_FIRST_CHARS = 25_000_000  # ... for a document up to this size; a larger one waits longer in proportion


def short_wait(size: int) -> float:
    """How long a long answer's fork waits for the short answers under way on a document of ``size``
    characters: `SHORT_FIRST_S`, in proportion to the size past `SHORT_FIRST_CHARS`. The short answers are
    given a tenth of the yardstick, which grows with the text (XLA's own parse of it): on the 100 MB module the
    token delta alone is 100 ms of work, and a fork after a tenth of a second made it copy-on-write what it
    wrote (0.14 X instead of the 0.03 X it takes alone)."""
    return SHORT_FIRST_S * max(1.0, size / SHORT_FIRST_CHARS)


JSON_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode  # compact, UTF-8 kept


INT_CHUNK = 8_192  # integers per piece of `ints_json_bytes` (0.6 ms of C work each: a hover's message waits for the
# GIL at each of its steps through the reader, the loop and the writer, for whatever C call holds it then)


_SMALL_INTS = [str(i) for i in range(4096)]  # the digits of a token number (nearly all are below 4096)


def _ints_text(piece: Sequence[int]) -> str:
    """The numbers of ``piece`` written as JSON's, comma-separated: small ones looked up (a str() each was most
    of the 23 MB module's 70 ms of token JSON)."""
    if piece and 0 <= min(piece) and max(piece) < 4096:
        return ",".join(map(_SMALL_INTS.__getitem__, piece))
    return ",".join(map(str, piece))


TOKEN_DATA = "i"  # a token data array's typecode: LSP's uinteger (0 .. 2**31 - 1), four bytes an integer


class TokenArray:
    """A semantic-token ``data`` array (``array(TOKEN_DATA)``) and, once a full answer needed it, its JSON text
    (``text``: a `RawResult`'s, so that it is packed as the kept answers are, `DocumentAnswers.pack_kept`)."""

    __slots__ = ("data", "text")

    def __init__(self, data: Sequence[int]) -> None:
        self.data = data
        self.text: RawResult | None = None  # its JSON's UTF-8, in pieces (`ints_json_bytes`)

    @property
    def json(self) -> list[bytes] | None:
        """The JSON text's pieces when they are at hand: None when not made yet, or packed (`json_parts`)."""
        text = self.text
        return text.parts if text is not None and not text.packed else None

    def json_parts(self) -> list[bytes]:
        """The JSON text of ``data``: kept, else decompressed (not kept: it is kept packed), else made and
        kept. Many ms on a large document: called off the event loop."""
        text = self.text
        if text is None:
            text = self.text = RawResult(*ints_json_bytes(self.data))
        return text.unpacked().parts


def ints_json_bytes(data: Sequence[int]) -> list[bytes]:
    """``json.dumps(data)`` of a list of ints as the UTF-8 bytes a `RawResult` sends, in pieces of `INT_CHUNK`
    integers: joined, the 100 MB module's 8 MB of tokens were a join and an encoding of 8 MB, each one C call
    holding the GIL; the writer sends the pieces as they are."""
    return json_array_parts(_ints_text(data[i : i + INT_CHUNK]) for i in range(0, len(data), INT_CHUNK))


def lower_switch_interval() -> None:
    """Make a worker thread hand the GIL back to the event loop within 0.2 ms (Python's default: 5 ms), so a
    hover that arrives while a whole-document answer is computed waits for its turn only briefly."""
    if sys.getswitchinterval() > SWITCH_INTERVAL:
        sys.setswitchinterval(SWITCH_INTERVAL)


class Provisional:
    """An answer made before the document's sibling files were joined (`DocumentAnswers.answer` sends ``value``;
    it is kept only until the join is done, `DocumentAnswers.joined`, and only while the document still waits
    for it: then the client is asked again and gets the full answer)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


@dataclass
class OutlineMemo:
    """An HLO module's last outline answer, the module's shape when it was made (`symbols.outline_shape`) and the
    edits made to its text since, each (first line, lines replaced, lines put in): the next outline is this one
    while `symbols.outline_kept` says so."""

    shape: OutlineShape
    answer: RawResult
    edits: list[tuple[int, int, int]] = field(default_factory=list)


class DocumentAnswers:
    """Per-document, per-version answers of the whole-document requests (see the module docstring).

    ``version_of(path)`` gives the document's current version (None when it is not open: such answers are
    computed each time, not kept)."""

    def __init__(self, version_of: Callable[[str], int | None], intake: Intake | None = None) -> None:
        self._version_of = version_of
        # what the transport read against what the event loop handled (`stdio.Intake`; none: always caught up)
        self.intake = intake or Intake()
        self._answers: dict[str, dict[str, tuple[int | None, Any]]] = {}  # path -> key -> (version, answer)
        self._running: dict[tuple[str, str, int | None], asyncio.Future] = {}
        # path -> [(result id, data)], newest last (the older compressed: `_keep`)
        self._tokens: dict[str, list[tuple[str, Sequence[int] | bytes]]] = {}
        self.token_memo: dict[str, Any] = {}  # path -> what the next version's tokens are made from (ide.token_reuse)
        # path -> an HLO module's last outline, its shape and the edits since (`OutlineMemo`); `memo_lock` is held
        # by an edit from its first change of the line store until it is noted here, and briefly by what reads or
        # keeps one (their checks run outside it, on the version read under it)
        self.outline_memo: dict[str, OutlineMemo] = {}
        self.memo_lock = threading.Lock()
        # key -> paths whose answer may have been made before their siblings were joined (`Provisional`)
        self._waiting: dict[str, set[str]] = {}
        self._seq = 0
        self._lock = threading.Lock()
        self._computing = 0  # computations under way (event loop only); `wait_idle` waits for none
        self._idle = threading.Event()
        self._idle.set()
        self._short = 0  # short requests under way (event loop only)
        self._no_short = threading.Event()
        self._no_short.set()
        # called (event loop) whenever an answer is kept: the server packs the large ones once it is idle
        self.on_kept: Callable[[], None] = lambda: None

    def wait_idle(self, limit: float) -> bool:
        """Wait (a background thread, `process.turns.give_way`) until no whole-document answer is being
        computed and no short request (`short_request`: hovers, the viewport's requests) is under way, at most
        ``limit`` seconds; True when none is: the editor's on-open and after-edit requests are then computed
        without the background reads taking every other turn of the GIL. Short requests count too: asked again
        while a buffer file's module was read in the background, the viewport's range tokens and inlay hints
        (answers of 1-3 ms) took 40-50 ms, the read's steps taking turns with them. So do messages read and not
        yet handled (`stdio.Intake`): between the requests of a batch no short request is under way, and with
        every answer kept the read took its turns there (the batch's seventh request, the inlay hints, 30 ms)."""
        end = time.monotonic() + limit

        def left() -> float:
            return max(0.0, end - time.monotonic())

        return self._idle.wait(limit) and self.intake.wait(left()) and self._no_short.wait(left())

    def wait_short(self, limit: float = SHORT_FIRST_S) -> bool:
        """Wait (a worker thread) until no short request (`short_request`) is under way, at most ``limit``
        seconds; True when none is."""
        return self._no_short.wait(limit)

    def wait_dispatched(self, limit: float, quiet: float = 0.0) -> bool:
        """Wait (a worker thread) until the event loop has handled every message read so far and the client sends
        nothing more for now (`stdio.Intake.caught_up`), at most ``limit`` seconds; True when it has. An editor
        sends its on-open and after-edit requests in one batch, the viewport's range tokens and inlay hints after
        the outline and folding. Each whole-document answer's worker first lets the requests of its batch be
        handled (`answer`): the viewport's requests are answered on the event loop as they are handled, and the
        workers computing beside them took every other turn of the GIL (VS Code's first inlay hints on the
        benchmark's assignment file: 80 ms for a few ms of work). A long answer's fork then also waits for the
        short ones under way (`wait_short`) instead of holding the GIL while they wait. ``quiet``: and until the
        client sent nothing for that long (`stdio.Intake.wait`; before a fork, which holds the GIL while it copies
        the process's page tables).

        It is also the gate a whole-document answer's worker gives way at (`process.turns.answering`): a hover's
        or the viewport's request is handled at once, its answer written before its message counts as handled.
        Short requests under way (`short_request`) do not count: the token delta and the lenses are short
        requests that await such a worker, which would wait for its own request (the delta after an edit
        0.04 -> 0.3 X in one replay)."""
        return self.intake.wait(limit, quiet)

    @contextmanager
    def short_request(self) -> Iterator[None]:
        """Around a request handler (on the event loop) whose answer the editor wants within a tenth of the
        yardstick: long answers' forks wait for it (`wait_short`) until its answer is written. pygls writes
        a handler's answer from a callback the loop runs once the handler's task is done; the end is counted
        two loop turns later, after that callback (the loop runs its callbacks in the order they came)."""
        self._short += 1
        self._no_short.clear()
        try:
            yield
        finally:
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, self._short_done)

    def _short_done(self) -> None:
        self._short -= 1
        if self._short <= 0:
            self._short = 0
            self._no_short.set()

    def computing(self) -> bool:
        """A whole-document answer is being computed."""
        return not self._idle.is_set()

    def version_of(self, path: str) -> int | None:
        """The document's current version (None when it is not open)."""
        return self._version_of(path)

    # -- answers kept per version --------------------------------------------------------------------------------

    def cached(self, path: str, key: str) -> Any | None:
        """The answer kept for ``key`` at the document's current version; None when there is none."""
        version = self._version_of(path)
        hit = self._answers.get(path, {}).get(key)
        if hit is not None and version is not None and hit[0] == version:
            return hit[1]
        return None

    def running(self, path: str, key: str) -> asyncio.Future | None:
        """The computation of ``key`` for ``path`` at its current version under way, if one is."""
        return self._running.get((path, key, self._version_of(path)))

    async def answer(self, path: str, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` (run in a worker thread) for ``path`` at its current version, or the kept answer of
        that version. Raises ``JsonRpcContentModified`` when the document changed before it was done."""
        version = self._version_of(path)
        hit = self.cached(path, key)
        if hit is not None:
            if isinstance(hit, RawResult) and hit.packed:  # (packed while the server was idle: `pack_kept`)
                unpacked = await asyncio.to_thread(hit.unpacked)
                if self._version_of(path) != version:  # an edit came while it was decompressed
                    raise JsonRpcContentModified(message=f"{path} changed while the answer was read; ask again")
                return unpacked
            return hit.value if isinstance(hit, Provisional) else hit
        run = (path, key, version)
        fut = self._running.get(run)
        if fut is None:
            fut = asyncio.ensure_future(asyncio.to_thread(self._after_batch, compute))
            self._running[run] = fut
            self._one_more()
            fut.add_done_callback(lambda f: self._finish(run, f))
        result = await asyncio.shield(fut)  # a cancelled request leaves the computation running, to be kept
        if self._version_of(path) != version:
            raise JsonRpcContentModified(message=f"{path} changed while the answer was computed; ask again")
        return result.value if isinstance(result, Provisional) else result

    async def part_of_answer(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` in a worker thread as the last step of a whole-document answer made by `answer` (the full
        tokens' JSON, made from the array it returned): background work gives way meanwhile (`wait_idle`) and it
        gives way to the requests the event loop gets (`process.turns.answering`), as the computation did. Made
        outside both, the 100 MB module's 8 MB of token JSON (0.1 s in C pieces) and the users map's build,
        which `answer`'s end let go on, took turns of the GIL with every hover sent then."""
        self._one_more()
        try:
            return await asyncio.to_thread(self._answering, fn)
        finally:
            self._one_less()

    def _one_more(self) -> None:
        """A computation under way began (event loop): background work gives way until it ends (`wait_idle`)."""
        self._computing += 1
        self._idle.clear()

    def _one_less(self) -> None:
        """A computation under way ended (event loop)."""
        self._computing -= 1
        if self._computing <= 0:
            self._computing = 0
            self._idle.set()

    @staticmethod
    def _answering(fn: Callable[[], Any]) -> Any:
        with turns.answering():  # it gives way to the requests the event loop gets meanwhile
            return fn()

    def _after_batch(self, compute: Callable[[], Any]) -> Any:
        """``compute()`` once the requests read with it were handled (`wait_dispatched`, at most
        `BATCH_WAIT_S`)."""
        self.wait_dispatched(BATCH_WAIT_S)
        return self._answering(compute)

    def _finish(self, run: tuple[str, str, int | None], fut: asyncio.Future) -> None:
        self._one_less()
        if self._running.get(run) is fut:
            del self._running[run]
        path, key, version = run
        if fut.cancelled() or fut.exception() is not None or version is None:
            if not fut.cancelled() and fut.exception() is not None:
                log.error("%s for %s failed", key, path, exc_info=fut.exception())
            return
        if isinstance(fut.result(), Provisional) and path not in self._waiting.get(key, ()):
            return  # the join ended while it was made: the client was asked again for the full answer
        if self._version_of(path) == version:
            per_path = self._answers.setdefault(path, {})
            for k, (v, _) in list(per_path.items()):
                if v != version:
                    del per_path[k]  # answers of older versions are never asked for again
            per_path[key] = (version, fut.result())
            self.on_kept()

    def wait_for_join(self, path: str, key: str) -> None:
        """``key``'s answer for ``path`` is about to be made, maybe before its siblings are joined (called before
        looking, so that a join ending meanwhile still counts it: see `joined`)."""
        with self._lock:
            self._waiting.setdefault(key, set()).add(path)

    def waits_for_join(self, path: str, key: str) -> bool:
        """``key``'s answer for ``path`` may have been made before its siblings were joined (`wait_for_join`)."""
        with self._lock:
            return path in self._waiting.get(key, ())

    def not_waiting(self, path: str, key: str) -> None:
        """``key``'s answer for ``path`` was made with its siblings joined."""
        with self._lock:
            self._waiting.get(key, set()).discard(path)

    def joined(self, path: str) -> list[str]:
        """``path``'s siblings are joined: the keys whose answer may have been provisional (the client is to
        be asked again for them); their kept answers are dropped."""
        with self._lock:
            keys = [k for k, paths in self._waiting.items() if path in paths]
            for k in keys:
                self._waiting[k].discard(path)
        for k in keys:
            self._answers.get(path, {}).pop(k, None)
            for run in [r for r in self._running if r[0] == path and r[1] == k]:
                del self._running[run]  # a provisional one still being made: the next request starts afresh
        return keys

    def pack_kept(self) -> int:
        """Compress every kept answer (and outline memo) of `PACK_MIN_BYTES` or more of JSON text, and the token
        memos' tokens (`TokenMemo.pack`): a worker thread, once the server is idle (the editor's next request for
        one decompresses it off the event loop, in a few ms). Returns the bytes it freed."""
        answers = [a for per_path in list(self._answers.values()) for _, a in list(per_path.values())]
        answers += [m.answer for m in list(self.outline_memo.values())]
        freed = 0
        seen: set[int] = set()
        for a in answers:
            text = a.text if isinstance(a, TokenArray) else a
            if not isinstance(text, RawResult) or text.packed or id(text) in seen:
                continue
            seen.add(id(text))
            before = text.size()
            if before >= PACK_MIN_BYTES:
                text.pack()
                freed += before - text.size()
        for memo in list(self.token_memo.values()):
            if isinstance(memo, TokenMemo):
                freed += memo.pack()
        return freed

    def forget(self, path: str) -> None:
        """Drop everything kept for ``path`` (it was closed)."""
        self._answers.pop(path, None)
        self.joined(path)
        self._tokens.pop(path, None)
        self.token_memo.pop(path, None)
        self.outline_memo.pop(path, None)

    def note_edits(self, path: str, edits: Sequence[Edit]) -> None:
        """``edits`` were made to ``path``'s text (under `memo_lock`): its outline memo notes them."""
        memo = self.outline_memo.get(path)
        if memo is not None:
            memo.edits.extend((e.first, e.old_count, e.new_count) for e in edits)

    # -- semantic tokens: result ids and deltas ------------------------------------------------------------------

    def _keep(self, path: str, data: Sequence[int]) -> str:
        """Keep ``data`` for a later delta; its result id (the same id when this very array is kept already:
        an answer kept per version, sent again). The arrays kept before it are kept compressed: an editor asks a
        delta from the newest, and only after a cancelled delta from the one before (the 23 MB module's 4.35 MB
        array is 0.12 MB so, made in 5 ms, read back in 2). Compressed in a thread of its own: this runs on the
        event loop, and the 100 MB module's 14 MB array held it 20-120 ms (zlib lets go of the GIL meanwhile)."""
        with self._lock:
            kept = self._tokens.setdefault(path, [])
            for rid, d in kept:
                if d is data:
                    return rid
            self._seq += 1
            rid = str(self._seq)
            kept[:] = kept[-(KEEP_TOKEN_RESULTS - 1) :] if KEEP_TOKEN_RESULTS > 1 else []
            stale = [r for r, d in kept if isinstance(d, array)]
            kept.append((rid, data))
        if stale:
            threading.Thread(target=self._pack, args=(path, stale), name="hlo-lsp-pack", daemon=True).start()
        return rid

    def _pack(self, path: str, rids: list[str]) -> None:
        """Compress the kept token arrays of ``rids`` (`_keep`), unless they were dropped meanwhile."""
        for rid in rids:
            with self._lock:
                d = next((d for r, d in self._tokens.get(path, []) if r == rid), None)
            if not isinstance(d, array):
                continue
            packed = packed_rows(d)
            with self._lock:
                kept = self._tokens.get(path, [])
                for k, (r, cur) in enumerate(kept):
                    if r == rid and cur is d:
                        kept[k] = (r, packed)

    def tokens_result(self, path: str, tokens: TokenArray, parts: list[bytes] | None = None) -> RawResult:
        """``tokens`` as a full ``SemanticTokens`` answer with its result id, kept for a later delta; ``parts``
        its JSON text (`TokenArray.json_parts`, made off the loop by the caller; else made here)."""
        rid = self._keep(path, tokens.data)
        if parts is None:
            parts = tokens.json_parts()
        return RawResult('{"resultId":"%s","data":' % rid, *parts, b"}")

    def tokens_delta(self, path: str, previous_id: str, tokens: TokenArray) -> RawResult:
        """A ``SemanticTokensDelta`` from the array the editor holds (``previous_id``) to ``tokens``; a full
        answer when that array is no longer kept."""
        with self._lock:
            old = next((d for r, d in self._tokens.get(path, []) if r == previous_id), None)
        if old is None:
            return self.tokens_result(path, tokens)
        old = unpacked_rows(old, TOKEN_DATA) if isinstance(old, bytes) else old
        rid = self._keep(path, tokens.data)
        edit = token_edits(old, tokens.data)
        edits = [] if edit is None else [{"start": edit[0], "deleteCount": edit[1], "data": edit[2]}]
        return RawResult(json.dumps({"resultId": rid, "edits": edits}, separators=(",", ":")))


def token_edits(old: Sequence[int], new: Sequence[int]) -> tuple[int, int, list[int]] | None:
    """One edit (start, deleteCount, data) turning ``old`` into ``new``, on whole tokens (multiples of 5
    integers); None when they are equal."""
    if old == new:
        return None
    pre = common_prefix(old, new) // 5 * 5
    suf = common_suffix(old, new, min(len(old), len(new)) - pre) // 5 * 5
    return pre, len(old) - pre - suf, list(new[pre : len(new) - suf])


def apply_token_edits(old: list[int], edits: list[dict]) -> list[int]:
    """``old`` with LSP ``SemanticTokensEdit`` records applied (as a client does; for tests and benchmarks)."""
    out = list(old)
    for e in sorted(edits, key=lambda e: e["start"], reverse=True):
        out[e["start"] : e["start"] + e["deleteCount"]] = e.get("data") or []
    return out
