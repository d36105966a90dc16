"""The JSON-RPC protocol of the server: pygls's, plus an answer for every request it would leave unanswered.

pygls drops two kinds of request without a reply, which leaves the editor waiting forever: a request whose
params cannot be read (the exception escapes `structure_message` into the read loop, which only logs it) and any
request after ``shutdown`` (logged, then ignored). Here the first is answered with InvalidParams and the second
with InvalidRequest, as the LSP specification asks; everything else is pygls's behaviour unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
import zlib
from collections.abc import Iterable
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol

from hlo_lsp.core.process import turns
from hlo_lsp.lsp.stdio import DIRECT_MAX, ThreadedWriter, answering

log = logging.getLogger("hlo_lsp")
EXIT = "exit"


class _Answered:
    """Stands for a message already answered while it was being read; `handle_message` skips it."""

    jsonrpc = None


ANSWERED = _Answered()


class RawResult:
    """A request's result already encoded as JSON, sent as it is: a references answer of 6,000 locations costs
    55 ms as lsprotocol objects (attrs validation, then unstructuring and encoding) and a few ms written straight
    as text (`hlo_lsp.lsp.convert.Converter.spans_json`). Kept as UTF-8 bytes in ``parts``, encoded where the
    answer is made (a worker thread or the forked child): encoding a kept 5.8 MB outline again each time it was
    asked held the event loop for 27 ms, and the requests behind it waited."""

    __slots__ = ("_parts", "_packed")

    def __init__(self, *parts: str | bytes):
        self._parts: list[bytes] | None = [p if isinstance(p, bytes) else p.encode("utf-8") for p in parts]
        self._packed: bytes | None = None  # the parts compressed, once `pack` let them go

    @property
    def parts(self) -> list[bytes]:
        """The JSON text's UTF-8 in pieces; a packed answer's decompressed anew at each use (in one C call
        that lets go of the GIL; the answers keep it packed: `unpacked` does it off the event loop)."""
        parts = self._parts
        if parts is not None:
            return parts
        return [_unpack(self._packed)]

    @parts.setter
    def parts(self, parts: list[bytes]) -> None:
        self._parts, self._packed = parts, None

    @property
    def packed(self) -> bool:
        return self._parts is None

    def size(self) -> int:
        """Bytes of JSON text (compressed, once packed)."""
        parts = self._parts
        return sum(map(len, parts)) if parts is not None else len(self._packed or b"")

    def pack(self) -> None:
        """Keep the text compressed from now on (see `pack_parts`); nothing when it is packed already. Safe
        while another thread sends it: the parts it took stay whole, and a later look finds the packed text."""
        parts = self._parts
        if parts is not None:
            self._packed = pack_parts(parts)
            self._parts = None

    def unpacked(self) -> RawResult:
        """This answer with its text decompressed, as a new one (itself when it is not packed)."""
        if self._parts is not None:
            return self
        return RawResult(_unpack(self._packed))

    @classmethod
    def array(cls, items: list[str]) -> RawResult:
        """The JSON array of ``items`` (each one element's JSON text), joined and encoded `ITEMS_A_PIECE` at a
        time: one join, one concatenation and one encoding of the 100 MB module's 5 MB outline were three C
        calls holding the GIL, one of them 22 ms with a hover waiting (a GIL watcher found it)."""
        answer = cls()
        answer.parts = json_array_parts(
            ",".join(items[lo : lo + ITEMS_A_PIECE]) for lo in range(0, len(items), ITEMS_A_PIECE)
        )
        return answer

    @classmethod
    def joined(cls, pieces: list[str]) -> RawResult:
        """The answer whose JSON text is ``"".join(pieces)``, joined and encoded `ITEMS_A_PIECE` at a time."""
        answer = cls()
        answer.parts = [
            "".join(pieces[lo : lo + ITEMS_A_PIECE]).encode("utf-8") for lo in range(0, len(pieces), ITEMS_A_PIECE)
        ]
        return answer


def pack_parts(parts: list[bytes]) -> bytes:
    """``parts`` joined and compressed (zlib, level 1, a part at a time: each call lets go of the GIL). A kept
    answer is packed once the server is idle (`DocumentAnswers.pack_kept`): the 23 MB module's 4.8 MB outline
    and 2.3 MB of token text kept for the editor's next request took 7 MB of the session's memory."""
    c = zlib.compressobj(1)
    out = [c.compress(p) for p in parts]
    out.append(c.flush())
    return b"".join(out)


def _unpack(packed: bytes | None) -> bytes:
    return zlib.decompress(packed) if packed is not None else b""


def json_array_parts(texts: Iterable[str]) -> list[bytes]:
    """The UTF-8 parts of a JSON array whose elements, in order, are the comma-separated ``texts`` (each
    non-empty: one or more elements' JSON), encoded one text at a time."""
    parts = [b"["]
    for text in texts:
        turns.give_way()  # (an answer's worker: the hovers and the viewport's requests first)
        if len(parts) > 1:
            parts.append(b",")
        parts.append(text.encode("utf-8"))
    parts.append(b"]")
    return parts


ITEMS_A_PIECE = 2_048  # elements of `RawResult.array` a join: about 0.1 MB of outline, well under a millisecond


class AnsweringProtocol(LanguageServerProtocol):
    last_heard = 0.0  # `time.monotonic()` when the last message from the client was handled

    def quiet_for(self) -> float:
        """Seconds since the client's last message."""
        return time.monotonic() - self.last_heard

    def structure_message(self, data: dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            msg_id = data.get("id") if isinstance(data, dict) else None
            if msg_id is None or "method" not in data:
                raise  # a notification or response: nobody waits for an answer
            error = JsonRpcInvalidParams(message=f"cannot read the params of {data.get('method')!r}: {e}")
            self._send_response(msg_id, None, error.to_response_error())
            return ANSWERED

    def _send_response(self, msg_id, result=None, error=None):
        with answering():  # a small answer may go before the large messages queued (`stdio.ThreadedWriter`)
            if error is None and isinstance(result, RawResult):
                self._result_types.pop(msg_id, None)
                head = b'{"id": %s, "jsonrpc": "2.0", "result": ' % json.dumps(msg_id).encode()
                self._send_raw([head, *result.parts, b"}"])
                return
            super()._send_response(msg_id, result, error)

    def _send_raw(self, parts: list[bytes]) -> None:
        """`_send_data` for a body that is JSON already, as UTF-8 bytes in ``parts`` (pygls' framing and writer):
        a large body's parts are given to our writer as they are (`stdio.ThreadedWriter` sends them by ``writev``;
        joined, the 100 MB module's 8 MB of tokens were one copy on the event loop), another writer gets them
        joined in one copy."""
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        size = sum(map(len, parts))
        if self._include_headers:
            header = f"Content-Length: {size}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            parts = [header.encode(self.CHARSET), *parts]
        writer = self.writer
        if isinstance(writer, ThreadedWriter) and size > DIRECT_MAX:
            writer.write(parts)
            return
        res = writer.write(b"".join(parts))
        if inspect.isawaitable(res):
            asyncio.ensure_future(res)

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        """pygls's, then the handler's future dropped from ``_request_futures`` once it is done. pygls removes
        a request's future when it answers, but never the futures of notifications and of the steps of its
        own generator handlers (each `didOpen`/`didChange`/`didClose` runs as one): they piled up for the
        whole session, a few hundred bytes per notification scattered over the heap, pinning freed arenas
        (issue 15: 752 futures after 250 documents opened and closed)."""
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(lambda done, key=msg_id: self._forget_future(key, done))

    def _forget_future(self, msg_id, future) -> None:
        """Drop ``future`` from ``_request_futures`` one turn of the event loop later (at once off the loop). A
        generator handler's future is a `concurrent.futures.Future`, whose done callbacks run inside
        ``cancel()``: pygls' ``shutdown`` cancels the pending futures while it iterates over the dict, and a
        deletion from here then ended that iteration with "dictionary changed size during iteration" (a
        ``didOpen`` still under way when the client shut the server down)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            loop.call_soon(self._drop_future, msg_id, future)
        else:
            self._drop_future(msg_id, future)

    def _drop_future(self, msg_id, future) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    def handle_message(self, message):
        self.last_heard = time.monotonic()
        if message is ANSWERED:
            return
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if self._shutdown and method not in (None, EXIT) and msg_id is not None:
            error = JsonRpcInvalidRequest(message=f"{method}: the server is shut down")
            self._send_response(msg_id, None, error.to_response_error())
            return
        super().handle_message(message)
