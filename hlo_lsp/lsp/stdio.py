"""The server's stdio transport: one thread reads whole messages from stdin, one thread writes answers to stdout;
the event loop only handles them.

pygls reads stdin through its thread pool one piece at a time: each header line and then the body is a round trip
from the event loop to a pool thread and back, each way a hand-over of the GIL. While worker threads compute (an
outline, the tokens, the background reads), every hand-over waits for a busy thread to let go, and a hover spent
up to 31 ms between its ``Content-Length`` line being read and its handling (the 23 MB module with VS Code's
on-open requests under way; its handling itself took 10 ms). Here a reader thread takes a whole message in one go
(the header lines and the body come from the reader's buffer without a system call when they arrived together)
and hands its body to the loop in one call; the loop parses and handles it as pygls does.

pygls also writes each answer on the event loop, blocking it until the client has taken the bytes: a 0.9 MB folding
answer held the loop for 10 ms. Here a large answer is queued for a writer thread (`ThreadedWriter`); a small one
is written at once while nothing is queued. Messages go in the order given, except that a small answer goes before
the large messages still queued.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import logging
import os
import re
import select
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from json.decoder import scanstring  # type: ignore[attr-defined]  # (json's own string decoder, in C)
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException

from hlo_lsp.core.process import pipes
from hlo_lsp.lsp.workers import use_started_workers

log = logging.getLogger("hlo_lsp")
TRACE = os.environ.get("HLO_LSP_TRACE") == "1"  # each message's way through the server on stderr (`trace_message`)
_ID_METHOD = re.compile(rb'"id"\s*:\s*(\d+|"[^"]*")|"method"\s*:\s*"([^"]*)"')


def trace_collections() -> None:
    """With HLO_LSP_TRACE=1: a line on stderr for each collection of the cyclic collector over 2 ms, ``hlo-lsp
    trace <end time> gc <generation> <ms> <objects collected>`` (it holds the GIL throughout)."""
    if not TRACE:
        return
    began: list[float] = [0.0]

    def watch(phase: str, info: dict) -> None:
        now = time.monotonic()
        if phase == "start":
            began[0] = now
        elif now - began[0] > 0.002:
            ms = (now - began[0]) * 1000
            print(
                f"hlo-lsp trace {now:.4f} gc {info.get('generation')} {ms:.1f} {info.get('collected')}", file=sys.stderr
            )

    import gc

    gc.callbacks.append(watch)


def trace_message(stage: str, body: bytes | StreamedBody | BadText) -> None:
    """With HLO_LSP_TRACE=1: one line on stderr, ``hlo-lsp trace <time.monotonic()> msg <stage> <id> <method>``, for
    a message at a stage of its way (``read`` by the reader thread, ``handled`` by the event loop, ``written`` by
    the writer: an answer carries its request's id), to line a slow answer up with what the server did then."""
    data = body if isinstance(body, bytes) else body.head()
    head = data[:4096] if len(data) > 4096 else data
    found = dict.fromkeys(("id", "method"), "-")
    for m in _ID_METHOD.finditer(head):
        if m.group(1) is not None and found["id"] == "-":
            found["id"] = m.group(1).decode("utf-8", "replace").strip('"')
        elif m.group(2) is not None and found["method"] == "-":
            found["method"] = m.group(2).decode("utf-8", "replace")
    print(
        f"hlo-lsp trace {time.monotonic():.4f} msg {stage} {found['id']} {found['method']}", file=sys.stderr, flush=True
    )


MAX_HEADER_LINES = 64  # more header lines than this before a blank line: not a message; skipped


READ_CHUNK = 1 << 20  # bytes asked of the input at a time (a pipe gives what it holds, up to this)


def widen_pipe(stream: BinaryIO, size: int = pipes.PIPE_BYTES) -> int | None:
    """`pipes.widen` of the pipe behind ``stream`` (None when it has no file descriptor). An editor's ``didOpen``
    of the 23 MB benchmark module crossed a 64 kB pipe in 360 turns of writer and reader, 35-57 ms of the pull at
    open; with 1 MB, 14-30 ms. A large answer (the 4.8 MB outline) goes out in as many fewer turns."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return pipes.widen(fd, size)


# A message body at least this long whose "text" key (a document's text: `didOpen`, a whole-document `didChange`)
# comes within its first `STREAM_HEAD` bytes has that text decoded from JSON as its bytes arrive
# (`MessageReader._streamed`): the 23 MB benchmark module's decode (24 ms) runs in part while the editor still
# writes it, and no copy of the whole body is made: its `didOpen` handled 56-58 ms after the editor began to write
# it, against 65-66 ms read whole and then decoded (the transfer goes at the reader's pace: overlap is partial).
STREAM_MIN = 1 << 20
STREAM_HEAD = 1 << 16
_TEXT_KEY = re.compile(rb'[{,][ \t\r\n]*"text"[ \t\r\n]*:[ \t\r\n]*"')
# stands for the text in the rest of the message's JSON (`StreamedBody.loads` puts the text back)
PLACEHOLDER = "\x00hlo-lsp: streamed text\x00"
_PLACEHOLDER_JSON = json.dumps(PLACEHOLDER)[1:-1]


class BadText:
    """A message body whose document text, decoded as its bytes arrived (`MessageReader._streamed`), proved no
    valid JSON string after some of them were let go: the bytes before the text, and the decoder's error, which
    the server reports as it reports a body ``json.loads`` cannot parse."""

    __slots__ = ("head_bytes", "error")

    def __init__(self, head_bytes: bytes, error: ValueError) -> None:
        self.head_bytes, self.error = head_bytes, error

    def head(self) -> bytes:
        return self.head_bytes[:4096]


class StreamedBody:
    """A message body whose document text was decoded as it arrived (`MessageReader._streamed`): the rest of its
    JSON, `PLACEHOLDER` standing for the text, the text, and its lines split as the pieces came (None when it holds
    a carriage return: split where the document is made, by its own rule)."""

    __slots__ = ("json", "text", "lines")

    def __init__(self, json_text: str, text: str, lines: list[str] | None = None) -> None:
        self.json, self.text, self.lines = json_text, text, lines

    def head(self) -> bytes:
        return self.json[:4096].encode("utf-8", "replace")

    def loads(self, object_hook: Callable[[dict], Any]) -> Any:
        """The message, as ``json.loads`` of the whole body with ``object_hook`` gives it."""
        text: list[str] = [self.text]
        global _split
        _split = (self.text, self.lines) if self.lines is not None else None  # (for the handler: `split_text`)

        def hook(d: dict) -> Any:
            if text and d.get("text") == PLACEHOLDER:
                d["text"] = text.pop()
            return object_hook(d)

        return json.loads(self.json, object_hook=hook)


# the text of the last streamed message and its lines (`StreamedBody.loads`), until its handler takes them
_split: tuple[str, list[str]] | None = None


def split_text(text: str) -> list[str] | None:
    """The lines of ``text`` when it is the document text of the message being handled and they were split as it
    arrived (the reader thread, while the editor was still writing it), else None. Taken once."""
    got = _split
    forget_split()
    return got[1] if got is not None and got[0] is text else None


def forget_split() -> None:
    """Let go of a streamed text's lines its handler did not take (a message other than a document's text)."""
    global _split
    _split = None


class _Lines:
    """A text's lines made from its pieces as they are decoded: each piece split at once (one C call), its last
    line carried to the next piece. Gives up (``lines`` None) at a carriage return, which the document's own
    split treats as a line end."""

    __slots__ = ("lines", "_carry")

    def __init__(self) -> None:
        self.lines: list[str] | None = []
        self._carry = ""

    def add(self, piece: str) -> None:
        lines = self.lines
        if lines is None:
            return
        if "\r" in piece:
            self.lines = None
            return
        parts = piece.split("\n")
        if self._carry:
            parts[0] = self._carry + parts[0]
        self._carry = parts.pop()
        lines += parts

    def end(self) -> list[str] | None:
        if self.lines is not None:
            self.lines.append(self._carry)
        return self.lines


class Intake:
    """What the transport has read against what the event loop has handled: caught up (`caught_up`) when every
    message read was handled and the input holds nothing more, i.e. the reader waits for the client.

    An editor sends its on-open and after-edit requests as one batch (VS Code: outline, folding, tokens, the
    viewport's range tokens and inlay hints, lenses, links, the pull). The long answers' workers first wait for
    the batch to be handled (`hlo_lsp.lsp.doc_answers.DocumentAnswers.wait_dispatched`), so that the viewport's
    requests, answered on the event loop as they are handled, do not take turns of the GIL with them; "handled"
    alone was not enough: the outline's worker found the loop idle when the reader had not yet handed it the
    rest of the batch, and its fork (9 ms of GIL) went before all of them. Counted from the reader thread
    (`arrived`, `drained`, `received`) and the event loop (`handled`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._received = 0  # messages the reader handed to the loop
        self._handled = 0  # ... and the loop handled
        self._drained = True  # the reader found the input empty and waits for more
        self._caught_up = threading.Event()
        self._caught_up.set()

    def arrived(self) -> None:
        """Input came after the reader had found it empty."""
        with self._lock:
            self._drained = False
            self._caught_up.clear()

    def drained(self) -> None:
        """The reader found the input empty (or ended): it waits for the client now."""
        with self._lock:
            self._drained = True
            self._update()

    def received(self) -> None:
        """The reader handed a message to the event loop."""
        with self._lock:
            self._received += 1
            self._caught_up.clear()

    def handled(self) -> None:
        """The event loop handled a message (its handler took its first step)."""
        with self._lock:
            self._handled += 1
            self._update()

    def _update(self) -> None:
        if self._drained and self._handled >= self._received:
            self._caught_up.set()

    @property
    def unhandled(self) -> int:
        """Messages handed to the event loop and not handled yet."""
        return self._received - self._handled

    def caught_up(self) -> bool:
        """Every message read was handled and the reader waits for the client."""
        return self._caught_up.is_set()

    def wait(self, limit: float, quiet: float = 0.0) -> bool:
        """Wait until `caught_up`, at most ``limit`` seconds; True when it is. ``quiet``: and until no message
        came for that long (an editor writes a batch's requests one by one, and the input is empty for a moment
        between them: caught up after the first of VS Code's batch on open, the outline's fork held the GIL for
        10 ms, the reader waited that long to read the rest, and the batch's inlay hints took 30 ms)."""
        end = time.monotonic() + limit
        while True:
            if not self._caught_up.wait(max(0.0, end - time.monotonic())):
                return False
            left = end - time.monotonic()
            if quiet <= 0 or left <= 0:
                return True
            seen = self._received
            time.sleep(min(quiet, left))
            if self._received == seen and self._caught_up.is_set():
                return True


def _input_empty(fd: int | None) -> bool:
    """Nothing to read on ``fd`` now (True when that cannot be told: no descriptor, or one ``select`` does not
    take, as a pipe on Windows)."""
    if fd is None:
        return True
    try:
        return not select.select([fd], [], [], 0)[0]
    except (OSError, ValueError):
        return True


class MessageReader:
    """Message bodies framed by the LSP base protocol from a binary stream, read through a buffer of its own so
    that it knows when the input is empty (`Intake.drained`): it asks the stream for more only when the buffer
    holds no whole message. Header lines other than ``Content-Length`` are ignored, and a header block without
    one is skipped, as pygls does."""

    def __init__(self, stream: BinaryIO, intake: Intake | None = None) -> None:
        # read1: what a buffered stream holds, else one read of the input (never waits for a whole chunk)
        self._read = getattr(stream, "read1", None) or stream.read
        try:
            fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        self._fd = None if sys.platform == "win32" else fd
        self._buf = bytearray()
        self._pos = 0
        self._intake = intake

    def next(self) -> bytes | StreamedBody | BadText | None:
        """The body of the next message (blocking); None at the end of the input."""
        while True:
            length = None
            for _ in range(MAX_HEADER_LINES):
                line = self._line()
                if line is None:
                    return None
                if not line.strip():
                    if length is not None:
                        break
                    continue  # a blank line before any Content-Length: keep looking
                name, sep, value = line.partition(b":")
                if sep and name.strip().lower() == b"content-length" and value.strip().isdigit():
                    length = int(value.strip())
            else:
                log.warning("stdin: %d header lines without a body; skipped", MAX_HEADER_LINES)
                continue
            if length is None:
                continue
            return self._streamed(length) if length >= STREAM_MIN else self._exactly(length)

    def _more(self) -> bool:
        """More input into the buffer (blocking); False at its end."""
        empty = _input_empty(self._fd)
        if empty and self._intake is not None:
            self._intake.drained()
        chunk = self._read(READ_CHUNK)
        if empty and self._intake is not None and chunk:
            self._intake.arrived()
        if not chunk:
            return False
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        self._buf += chunk
        return True

    def _line(self) -> bytes | None:
        while (end := self._buf.find(b"\n", self._pos)) < 0:
            if not self._more():
                return None
        line = bytes(self._buf[self._pos : end + 1])
        self._pos = end + 1
        return line

    def _streamed(self, n: int) -> bytes | StreamedBody | BadText | None:
        """The next ``n`` bytes, a body, as a `StreamedBody` when a "text" key's string begins in its first
        `STREAM_HEAD` bytes: that string decoded a piece at a time as the bytes arrive, as ``json.loads`` would
        decode it. A piece ends after a backslash and ``n`` (a newline's escape, the end of a document's line: no
        escape or UTF-8 sequence is cut there), its next byte lent for the closing quote the decoder stops at (no
        copy of the piece). A piece's bytes are let go once it is decoded: kept until the body was whole (for the
        error of a text that is no valid JSON), the 23 MB benchmark module's were 5,900 more fresh pages (of the
        30,000 its open touched while it arrived: 2 us each on this machine) and the 100 MB module's 19,000. A
        string that is no valid JSON (or never ends) gives the body's bytes as `_exactly` gives them, for the usual
        parse and its error, when none were let go yet, else a `BadText` with the decoder's error; the body's
        other bytes are read to its end either way. None when the input ends first."""
        while len(self._buf) - self._pos < min(n, STREAM_HEAD):
            if not self._more():
                return None
        found = _TEXT_KEY.search(self._buf, self._pos, self._pos + min(n, STREAM_HEAD))
        if found is None:
            return self._exactly(n)
        at = found.end() - self._pos  # the body's offset of the bytes not decoded yet (`_more` moves _pos)
        head_bytes = bytes(self._buf[self._pos : self._pos + at])
        head = head_bytes.decode("utf-8", "replace")
        whole = n  # (``n`` counts the bytes not let go)
        buf = self._buf
        pieces: list[str] = []
        lines = _Lines()  # (split here a piece at a time, not on the event loop once the text is whole)
        dropped = False  # some of the body's bytes were let go
        try:
            while True:
                have = min(len(buf) - self._pos, n)
                start = self._pos + at
                q = buf.rfind(b"\\n", start, self._pos + have - 1) if have < n else -1
                if q >= 0:
                    cut = q + 2
                    kept = buf[cut]
                    buf[cut] = 0x22  # the closing quote the decoder stops at, for this piece
                    try:
                        with memoryview(buf) as view, view[start : cut + 1] as piece:
                            s = codecs.utf_8_decode(piece, "strict", True)[0]
                    finally:
                        buf[cut] = kept
                elif have == n:  # the last piece
                    cut = self._pos + n
                    s = bytes(buf[start:cut]).decode("utf-8") + '"'
                elif self._more():
                    continue
                else:
                    return None
                part, end = scanstring(s, 0, True)
                pieces.append(part)
                lines.add(part)
                if end < len(s):  # its closing quote came before the piece's end: the string ends here
                    tail = s[end:-1]
                    at = cut - self._pos
                    break
                if have == n:
                    raise ValueError("the text's string does not end in its message")
                del buf[self._pos : cut]  # (the body's bytes before the piece's end: decoded)
                n -= cut - self._pos
                at = 0
                dropped = True
            while len(buf) - self._pos < n:
                if not self._more():
                    return None
            tail += bytes(buf[self._pos + at : self._pos + n]).decode("utf-8")
        except ValueError as exc:  # (UnicodeDecodeError too) not valid JSON: the usual parse, or the error itself
            if not dropped:
                return self._exactly(n)
            return None if self._exactly(n) is None else BadText(head_bytes, exc)
        self._pos += n
        self._let_go(whole)
        return StreamedBody(head + _PLACEHOLDER_JSON + '"' + tail, "".join(pieces), lines.end())

    def _exactly(self, n: int) -> bytes | None:
        while len(self._buf) - self._pos < n:
            if not self._more():
                return None  # the input ended inside the body
        body = bytes(memoryview(self._buf)[self._pos : self._pos + n])
        self._pos += n
        self._let_go(n)
        return body

    def _let_go(self, n: int) -> None:
        """After a body of ``n`` bytes, at least `STREAM_MIN`: the buffer without it at once (else it stays until
        more input is wanted, and a document's 23 MB were still there when its read forked)."""
        if n >= STREAM_MIN:
            del self._buf[: self._pos]
            self._pos = 0


WRITEV_PARTS = 512  # parts of a message a `writev` (below every system's IOV_MAX)
DIRECT_MAX = 65_536  # bytes: an answer up to this size (a pipe's buffer) is written at once when nothing is queued
# the longest the writer holds back a large message while the messages read before it are handled
# (`ThreadedWriter.hold_large`)
LARGE_HOLD_S = 0.03


_local = threading.local()


@contextmanager
def answering() -> Iterator[None]:
    """Around the writing of a request's answer (`protocol.AnsweringProtocol._send_response`): a small one may
    go before the large messages queued (`ThreadedWriter`)."""
    _local.answer = True
    try:
        yield
    finally:
        _local.answer = False


class ThreadedWriter:
    """pygls' writer interface over a binary stream, without the event loop waiting for the client to read a
    large answer: a message over `DIRECT_MAX`, and anything given while one is queued, is written by a thread of
    its own; a small one with nothing queued is written at once (a hover's answer then goes out without waiting
    for the writer thread's turn of the GIL).

    Messages are written in the order given, except that a small answer to a request (written inside
    `answering`) goes before the messages still queued: an editor's batch of requests on open gets several MB of
    outline, folding and tokens back, and a viewport request or a hover answered meanwhile waited until the
    client had read all of them (JSON-RPC matches answers to requests by id, in any order). Notifications and
    the server's own requests keep their order among everything (a newer ``publishDiagnostics`` never goes
    before an older one, nor a refresh request before the provisional answer it refreshes).

    A small answer cannot go before a large message whose writing has begun: the client reads it first (the
    5.8 MB outline of the benchmark's assignment file, asked again with nothing changed, is written at once,
    and the viewport's range tokens and inlay hints of the same batch, 1-3 ms of work, reached the client
    40-50 ms later). So before it begins a large message the writer asks `hold_large` (set by the server: the
    messages read so far are handled) and waits while it says no, at most
    `LARGE_HOLD_S`; the small answers given meanwhile go first."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._answers: deque[bytes | list[bytes]] = deque()  # small answers, before ...
        self._others: deque[bytes | list[bytes]] = deque()  # ... everything else, in order
        self._closed = False
        self._pending = 0  # queued and not yet written
        self._lock = threading.Lock()  # orders the writes given from several threads
        # signalled when a message is queued (the writer thread waits for one) and when the queue empties (`flush`)
        self._changed = threading.Condition(self._lock)
        self.broken = False
        # True when a large message may be written now (called from the writer thread); None: at once
        self.hold_large: Callable[[], bool] | None = None
        self._thread = threading.Thread(target=self._run, name="hlo-lsp-writer", daemon=True)
        self._thread.start()

    def write(self, data: bytes | list[bytes]) -> None:
        """Write one message: its bytes, or a list of the parts it is made of (a large answer made in pieces,
        `protocol.RawResult`: sent by `_write_parts`, never joined into one copy on the event loop)."""
        if self.broken:
            return
        small = _size(data) <= DIRECT_MAX
        with self._lock:
            if self._pending == 0 and small:
                self._put(data)
                return
            (self._answers if small and getattr(_local, "answer", False) else self._others).append(data)
            self._pending += 1
            self._changed.notify_all()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything queued is written (at most ``timeout`` s); False when it was not."""
        with self._changed:
            return self._changed.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._closed = True
            self._changed.notify_all()

    def _put(self, data: bytes | list[bytes]) -> None:
        try:
            if not self.broken:
                if isinstance(data, bytes):
                    self._stream.write(data)
                else:
                    self._write_parts(data)
                self._stream.flush()
                if TRACE:
                    body = data if isinstance(data, bytes) else b"".join(data[:3])
                    trace_message("written", body[body.find(b"{") :])
        except (OSError, ValueError):  # the client went away: nothing more can reach it
            self.broken = True

    def _write_parts(self, parts: list[bytes]) -> None:
        """One message's parts, written by ``writev`` (a system call for up to `WRITEV_PARTS` parts, the GIL
        released once for each): a write per part of the 23 MB module's 300-part token answer took the GIL
        back 300 times from the busy background threads, and "asked again" went from 0.03 to 0.13 X. A stream
        with no file descriptor (tests) gets the parts one by one."""
        stream = self._stream
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            fd = -1
        if fd < 0 or not hasattr(os, "writev"):  # (Windows has no writev)
            for part in parts:
                stream.write(part)
            return
        stream.flush()
        views = [memoryview(p) for p in parts if p]
        i = 0
        while i < len(views):
            n = os.writev(fd, views[i : i + WRITEV_PARTS])
            while n and i < len(views):  # a write may end inside a part: the rest of it goes next
                if n >= len(views[i]):
                    n -= len(views[i])
                    i += 1
                else:
                    views[i] = views[i][n:]
                    n = 0

    def _run(self) -> None:
        hold_until: float | None = None  # while the large message first in `_others` is held back (`hold_large`)
        while True:
            with self._lock:
                while not self._answers and not self._others and not self._closed:
                    self._changed.wait()
                if self._answers:
                    data = self._answers.popleft()
                elif self._others:
                    if _size(self._others[0]) > DIRECT_MAX and self._holds(hold_until):
                        if hold_until is None:
                            hold_until = time.monotonic() + LARGE_HOLD_S
                        self._changed.wait(0.001)  # a small answer given meanwhile wakes it
                        continue
                    data = self._others.popleft()
                    hold_until = None
                else:
                    return  # closed, and everything written
            self._put(data)
            del data  # not held while the thread waits for the next one (an 8 MB token answer stayed all idle)
            with self._lock:
                self._pending -= 1
                if self._pending == 0:
                    self._changed.notify_all()

    def _holds(self, until: float | None) -> bool:
        """The large message first in `_others` is held back: `hold_large` says not yet, and its hold (begun at
        ``until`` - `LARGE_HOLD_S`; not yet when None) has not run out. Called under the lock."""
        ready = self.hold_large
        if ready is None or self._closed or (until is not None and time.monotonic() >= until):
            return False
        try:
            return not ready()
        except Exception:  # noqa: BLE001 - the writer thread must go on writing
            log.exception("hold_large failed")
            return False


def _size(data: bytes | list[bytes]) -> int:
    return len(data) if isinstance(data, bytes) else sum(map(len, data))


def start_io(ls, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve ``ls`` (a pygls server) over stdin and stdout until the input ends or the client says ``exit``."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    for stream in (stdin, stdout):
        widen_pipe(stream)
    writer = ThreadedWriter(stdout)
    trace_collections()
    intake = getattr(ls, "intake", None) or Intake()
    writer.hold_large = intake.caught_up
    ls.protocol.set_writer(writer)
    ls._stop_event = threading.Event()
    try:  # (a client gone away ends the input or breaks the writer: no BrokenPipeError comes out of here)
        asyncio.run(_serve(ls, stdin, intake))
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        writer.flush()
        ls.shutdown()


async def _serve(ls, stdin: BinaryIO, intake: Intake) -> None:
    loop = asyncio.get_running_loop()
    use_started_workers(loop)
    bodies: asyncio.Queue[bytes | StreamedBody | BadText | None] = asyncio.Queue()
    protocol = ls.protocol
    messages = MessageReader(stdin, intake)

    def read() -> None:
        try:
            while not ls._stop_event.is_set():
                body = messages.next()
                if body is None:
                    break
                intake.received()
                if TRACE:
                    trace_message("read", body)
                loop.call_soon_threadsafe(bodies.put_nowait, body)
        except (OSError, ValueError) as exc:
            log.error("stdin: %s", exc)
        except RuntimeError:
            return  # the loop is closed: the server ended meanwhile
        finally:
            intake.drained()  # no more input
        try:
            loop.call_soon_threadsafe(bodies.put_nowait, None)
        except RuntimeError:
            pass

    threading.Thread(target=read, name="hlo-lsp-reader", daemon=True).start()
    while (body := await bodies.get()) is not None and not ls._stop_event.is_set():
        try:
            if isinstance(body, StreamedBody):
                message = body.loads(protocol.structure_message)
            elif isinstance(body, BadText):
                raise body.error  # (reported as a body json.loads cannot parse)
            else:
                message = json.loads(body, object_hook=protocol.structure_message)
            protocol.handle_message(message)
            if TRACE:
                trace_message("handled", body)
        except Exception as exc:  # noqa: BLE001 - as pygls: a message that fails is logged and reported
            log.exception("Unable to handle message")
            ls._report_server_error(exc, JsonRpcException)
        # one turn of the loop before the next message: the handler a message started (an async one runs as a
        # task) takes its first step first, so a request after a `didChange` sees the change applied, as it did
        # when each message took pygls several turns to read
        await asyncio.sleep(0)
        forget_split()  # (its handler's first step, which takes them, has run)
        intake.handled()
