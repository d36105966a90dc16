"""The stdio transport (`hlo_lsp.lsp.stdio`) and the message functions made at ``initialize``
(`hlo_lsp.lsp.app.warm_messages`).

The reader frames messages as pygls does (other header lines ignored, a header block without ``Content-Length``
skipped, the end of the stream inside a message ends the input); the writer writes what it is given in order and
`flush` waits for it. After `warm_messages`, a session's answers and notifications never empty cattrs' cache of the
functions that read the client's messages, so no request makes one on the event loop. The end-to-end tests run
every request through the real transport."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time

import pytest
from lsprotocol import types as lsp
from pygls.protocol import default_converter

from hlo_lsp.core.process.pipes import PIPE_BYTES
from hlo_lsp.lsp.app import CLIENT_METHODS, warm_messages
from hlo_lsp.lsp.stdio import (
    DIRECT_MAX,
    LARGE_HOLD_S,
    Intake,
    MessageReader,
    ThreadedWriter,
    answering,
    widen_pipe,
)

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
LINUX_PIPES = hasattr(fcntl, "F_SETPIPE_SZ")  # the pipes' capacity: Linux's


def read_message(stream) -> bytes | None:
    return MessageReader(stream).next()


def _frame(body: bytes, headers: bytes = b"") -> bytes:
    return b"Content-Length: %d\r\n" % len(body) + headers + b"\r\n" + body


def test_messages_are_read_whole_and_in_order():
    bodies = [b'{"a":1}', b'{"b":"' + b"x" * 100_000 + b'"}', b"{}"]
    reader = MessageReader(io.BufferedReader(io.BytesIO(b"".join(_frame(b) for b in bodies))))
    assert [reader.next() for _ in range(4)] == [*bodies, None]


def test_other_headers_and_their_case_are_accepted():
    data = b"content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH:  3\r\n\r\n[1]"
    assert read_message(io.BytesIO(data)) == b"[1]"
    assert read_message(io.BytesIO(_frame(b"[2]", b"Content-Type: x\r\n"))) == b"[2]"


def test_a_header_block_without_length_is_skipped():
    data = b"X-Junk: 1\r\n\r\n" + b"garbage line\r\n" + _frame(b"[3]")
    assert read_message(io.BytesIO(data)) == b"[3]"


def test_the_end_of_the_stream_ends_the_input():
    assert read_message(io.BytesIO(b"")) is None
    assert read_message(io.BytesIO(b"Content-Length: 10\r\n\r\n[1]")) is None  # inside the body
    assert read_message(io.BytesIO(b"Content-Length: 10\r\n")) is None  # inside the headers


def test_endless_headers_never_hang_the_reader():
    data = b"X: 1\r\n" * 1000 + _frame(b"[4]")
    assert read_message(io.BytesIO(data)) == b"[4]"


def test_the_intake_is_caught_up_only_once_the_input_is_empty_and_every_message_read_was_handled():
    """Over a real pipe: a batch written at once is not caught up while a message of it is still in the reader's
    buffer or unhandled, and is once the reader waits for the client with every message handled; more input
    ends that."""
    fd_in, fd_out = os.pipe()
    intake = Intake()
    with os.fdopen(fd_in, "rb") as stream, os.fdopen(fd_out, "wb", buffering=0) as client:
        reader = MessageReader(stream, intake)
        client.write(_frame(b"[1]") + _frame(b"[2]"))
        assert reader.next() == b"[1]"
        intake.received()
        assert not intake.caught_up()  # [2] still in the buffer, [1] unhandled
        assert reader.next() == b"[2]"
        intake.received()
        intake.handled()
        got: list[bytes | None] = []
        third = threading.Thread(target=lambda: got.append(reader.next()))
        third.start()
        assert not intake.wait(0.2)  # the reader waits for the client, [2] is not handled yet
        intake.handled()
        assert intake.wait(5)  # the reader waits for the client, every message handled
        assert intake.unhandled == 0
        client.write(_frame(b"[3]"))
        third.join(5)
        assert got == [b"[3]"]
        intake.received()
        assert not intake.caught_up()
        intake.handled()
        assert not intake.caught_up()  # the reader has not found the input empty since [3] came


class _SlowStream(io.RawIOBase):
    """A stream that takes each write slowly, from one thread at a time (asserted)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self._in = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        assert self._in.acquire(blocking=False), "two writes at once"
        try:
            time.sleep(0.001)
            self.parts.append(bytes(b))
            return len(b)
        finally:
            self._in.release()


def test_the_writer_writes_everything_in_order_and_flush_waits_for_it():
    stream = _SlowStream()
    w = ThreadedWriter(stream)  # type: ignore[arg-type]
    # small answers (written at once while nothing is queued) among large ones (queued for the writer thread)
    sent = [b"%d" % i if i % 7 else b"%d:" % i + b"x" * (DIRECT_MAX + 1) for i in range(200)]
    for i in range(0, 200, 50):  # from several threads, each its own run in order
        t = threading.Thread(target=lambda a=i: [w.write(x) for x in sent[a : a + 50]])
        t.start()
        t.join()
    assert w.flush(10)
    assert stream.parts == sent
    w.close()


def test_a_small_answer_goes_before_the_large_messages_queued_and_the_rest_keeps_its_order():
    """While a large message is being written, a small answer to a request goes before the messages still
    queued; every other message (notifications, the server's requests, large answers) keeps its order."""

    class Gated(io.RawIOBase):
        def __init__(self) -> None:
            self.parts: list[bytes] = []
            self.gate = threading.Event()
            self.writing = threading.Event()

        def writable(self) -> bool:
            return True

        def write(self, b) -> int:
            self.writing.set()
            self.gate.wait(10)  # the client reads the first large message slowly
            self.parts.append(bytes(b))
            return len(b)

    big = b"x" * (DIRECT_MAX + 1)
    stream = Gated()
    w = ThreadedWriter(stream)  # type: ignore[arg-type]
    w.write(b"outline:" + big)
    assert stream.writing.wait(10)  # in flight
    w.write(b"folding:" + big)  # an answer, but large: queued in order
    w.write(b"diagnostics-1")  # a notification: queued in order
    with answering():
        w.write(b"hover")
    w.write(b"diagnostics-2")
    with answering():
        w.write(b"range")
        w.write(b"tokens:" + big)
    stream.gate.set()
    assert w.flush(10)
    assert [p.split(b":")[0] for p in stream.parts] == [
        b"outline",
        b"hover",
        b"range",
        b"folding",
        b"diagnostics-1",
        b"diagnostics-2",
        b"tokens",
    ]
    w.close()
    with answering():  # with nothing queued, a small answer is written at once
        ThreadedWriter(s := _SlowStream()).write(b"now")  # type: ignore[arg-type]
    assert s.parts == [b"now"]


def test_a_message_given_as_parts_is_written_whole_and_in_its_place():
    """A large answer made in pieces (`RawResult`) reaches the writer as its list of parts, never joined on the
    event loop: its bytes go out consecutively, in the order of the messages, and a small answer still goes before
    it when it is queued."""
    big = [b"tokens:", b"1," * (DIRECT_MAX // 2), b"2"]
    stream = _SlowStream()
    w = ThreadedWriter(stream)  # type: ignore[arg-type]
    w.write(b"first:" + b"x" * (DIRECT_MAX + 1))  # large: queued for the writer thread
    w.write(big)
    with answering():
        w.write([b"ho", b"ver"])  # a small message given as parts: one answer
    w.write(b"last")
    assert w.flush(10)
    written = b"".join(stream.parts)
    assert written.index(b"hover") < written.index(b"tokens:")
    assert b"tokens:" + b"1," * (DIRECT_MAX // 2) + b"2" in written  # whole, nothing between its parts
    assert written.endswith(b"last")
    w.close()


def _through_a_pipe(*messages: bytes | list[bytes]) -> bytes:
    """What a reader of a real pipe gets when a `ThreadedWriter` on its other end writes ``messages``."""
    r, wfd = os.pipe()
    out = os.fdopen(wfd, "wb")
    w = ThreadedWriter(out)
    got = bytearray()

    def read() -> None:
        while chunk := os.read(r, 1 << 16):
            got.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    for message in messages:
        w.write(message)
    assert w.flush(30)
    w.close()
    out.close()
    reader.join(30)
    os.close(r)
    return bytes(got)


def test_a_message_in_parts_goes_through_a_pipe_whole():
    """On a real pipe the parts go out by ``writev`` (several at a time, a write ending inside a part resumed
    there): the reader gets every byte, in order, of messages far larger than the pipe's buffer."""
    parts = [b"%d:" % i + b"x" * (i * 97 % 5000) for i in range(3000)]  # ~7 MB in 3,000 parts
    assert _through_a_pipe(parts, b"after") == b"".join(parts) + b"after"


def test_a_message_in_parts_is_resumed_where_a_short_write_ended(monkeypatch):
    """A ``writev`` that writes less than it was given (a signal, a non-blocking pipe) ends anywhere, inside a
    part or between two: the rest goes next, from that byte on, and nothing is written twice."""
    real = os.writev
    sizes = iter([1, 7, 1000, 3, 65536, 2] * 1000)

    def short(fd, buffers):  # at most the next size's bytes, cut across the buffers given
        budget = next(sizes)
        taken = []
        for b in buffers:
            view = memoryview(b)[:budget]
            taken.append(view)
            budget -= len(view)
            if not budget:
                break
        return real(fd, taken)

    monkeypatch.setattr(os, "writev", short)
    parts = [b"", b"a" * 5, b"%d," % 7, b"b" * 70000, b"", b"c" * 3] + [b"%d;" % i for i in range(2000)]
    assert _through_a_pipe(parts) == b"".join(parts)


def test_a_writer_whose_client_went_away_drops_the_rest():
    class Broken(io.RawIOBase):
        def writable(self) -> bool:
            return True

        def write(self, b) -> int:
            raise BrokenPipeError

    w = ThreadedWriter(Broken())  # type: ignore[arg-type]
    w.write(b"x")
    assert w.flush(5) and w.broken
    w.write(b"y")  # no error, nothing queued
    assert w.flush(1)


def _reads_made(conv) -> int:
    return conv._structure_func.dispatch.cache_info().misses  # cattrs' made reading functions (a private API)


def test_after_warming_a_session_makes_no_function_to_read_a_request():
    conv = default_converter()
    warm_messages(conv)
    made = _reads_made(conv)
    where = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=1))
    # what a session writes: answers of every kind the server writes through cattrs, and its notifications
    conv.unstructure(lsp.HoverResponse(id=1, result=lsp.Hover(contents=lsp.MarkupContent(kind="markdown", value="x"))))
    conv.unstructure(lsp.DefinitionResponse(id=2, result=[lsp.Location(uri="file:///a", range=where)]))
    conv.unstructure(lsp.InlayHintResponse(id=3, result=[lsp.InlayHint(position=where.start, label="x")]))
    conv.unstructure(
        lsp.PublishDiagnosticsNotification(
            params=lsp.PublishDiagnosticsParams(uri="file:///a", diagnostics=[lsp.Diagnostic(range=where, message="m")])
        )
    )
    for method in CLIENT_METHODS:
        conv.get_structure_hook(lsp.METHOD_TO_TYPES[method][0])
    hover = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": "file:///a"}, "position": {"line": 0, "character": 0}},
    }
    assert conv.structure(hover, lsp.HoverRequest).params.position.line == 0
    assert _reads_made(conv) == made


def test_unwarmed_the_same_session_makes_them_on_first_use():
    """The test above can fail: without `warm_messages` the same reads make new functions."""
    conv = default_converter()
    made = _reads_made(conv)
    for method in CLIENT_METHODS:
        conv.get_structure_hook(lsp.METHOD_TO_TYPES[method][0])
    assert _reads_made(conv) > made


def _writes_made(conv) -> int:
    return conv._unstructure_func.dispatch.cache_info().misses  # cattrs' made writing functions (a private API)


def test_after_warming_the_answers_of_a_session_make_no_function_to_write_them():
    """A result is a union (`Hover | None`): the function of the class it holds was made at the first answer
    holding one, on the event loop beside the on-open batch; `warm_messages` writes one of each first."""
    from hlo_lsp.lsp.app import _sample_messages

    conv = default_converter()
    warm_messages(conv)
    made = _writes_made(conv)
    for message in _sample_messages():
        conv.unstructure(message, unstructure_as=type(message))
    assert _writes_made(conv) == made


def test_unwarmed_the_answers_make_their_functions_on_first_use():
    from hlo_lsp.lsp.app import _sample_messages

    conv = default_converter()
    made = _writes_made(conv)
    for message in _sample_messages():
        conv.unstructure(message, unstructure_as=type(message))
    assert _writes_made(conv) > made


def test_a_large_message_is_held_while_the_requests_read_before_it_are_handled():
    """Before it begins a large message the writer asks `hold_large`: while that says no, the small answers given
    meanwhile go first (a large message whose writing has begun cannot be overtaken); once it says yes the large
    message goes, and it never waits longer than `LARGE_HOLD_S` for it."""
    stream = _SlowStream()
    w = ThreadedWriter(stream)  # type: ignore[arg-type]
    batch_handled = threading.Event()
    w.hold_large = batch_handled.is_set
    big = b"x" * (DIRECT_MAX + 1)
    with answering():
        w.write(b"outline:" + big)  # a cached answer, given first
        time.sleep(0.01)  # the writer thread has seen it
        w.write(b"range")  # the viewport's answers of the same batch, handled after it
        w.write(b"hints")
    deadline = time.monotonic() + 5  # (under load the writer thread may take its time: wait for it, not 5 ms)
    while len(stream.parts) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert stream.parts == [b"range", b"hints"]  # written while the outline is held
    batch_handled.set()
    assert w.flush(10)
    assert [p.split(b":")[0] for p in stream.parts] == [b"range", b"hints", b"outline"]

    w.hold_large = lambda: False  # never ready: held for LARGE_HOLD_S at most
    t = time.monotonic()
    w.write(b"tokens:" + big)
    assert w.flush(10)
    assert LARGE_HOLD_S * 0.9 <= time.monotonic() - t < 5
    assert stream.parts[-1].startswith(b"tokens:")
    w.close()


@pytest.mark.skipif(not LINUX_PIPES, reason="F_SETPIPE_SZ is Linux's")
def test_a_pipe_is_widened_and_anything_else_is_left_alone(tmp_path):
    r, w = os.pipe()
    try:
        with os.fdopen(r, "rb", closefd=False) as stream:
            assert fcntl.fcntl(r, fcntl.F_GETPIPE_SZ) < PIPE_BYTES  # 64 kB as made
            assert widen_pipe(stream) == PIPE_BYTES
            assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) == PIPE_BYTES  # one pipe: both ends see it
    finally:
        os.close(r)
        os.close(w)
    path = tmp_path / "f"
    path.write_bytes(b"x")
    with path.open("rb") as f:
        assert widen_pipe(f) is None
    assert widen_pipe(io.BytesIO(b"x")) is None


@pytest.mark.skipif(not LINUX_PIPES, reason="F_SETPIPE_SZ is Linux's")
def test_the_server_widens_the_pipes_to_and_from_its_client():
    """The real server over stdio: once it answers ``initialize``, the pipes the client writes to and reads from
    hold `PIPE_BYTES` (a 23 MB ``didOpen`` crosses them in 23 turns of 1 MB, not 360 of 64 kB)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hlo_lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        assert fcntl.fcntl(proc.stdin.fileno(), fcntl.F_GETPIPE_SZ) < PIPE_BYTES
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        proc.stdin.write(_frame(body.encode()))
        proc.stdin.flush()
        answer = MessageReader(proc.stdout).next()
        assert answer is not None and json.loads(answer)["id"] == 1
        assert fcntl.fcntl(proc.stdin.fileno(), fcntl.F_GETPIPE_SZ) == PIPE_BYTES
        assert fcntl.fcntl(proc.stdout.fileno(), fcntl.F_GETPIPE_SZ) == PIPE_BYTES
    finally:
        proc.kill()
        proc.wait(30)
