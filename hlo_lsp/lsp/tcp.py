"""``hlo-lsp --tcp HOST:PORT``: the language server for one editor over a TCP connection.

One TCP server serves one session, as one stdio process does: the first connection that sends a well-framed
message becomes the session; a second connection while it lasts is answered with an error naming the problem
(start another ``hlo-lsp --tcp`` for a second editor) and closed, so it never takes over the first client's
answers. A connection that closes at once or sends garbage (no ``Content-Length``, a header line over
MAX_HEADER_LINE bytes, more than MAX_HEADERS header lines, a body over MAX_BODY bytes) is closed alone; the
server keeps listening. The session's own connection ending ends the server, as stdio's end does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading

from hlo_lsp.lsp.workers import use_started_workers

log = logging.getLogger("hlo_lsp")

MAX_HEADER_LINE = 8192
MAX_HEADERS = 16
MAX_BODY = (1 << 30) + (1 << 20)  # the largest document the server reads (1 GiB) plus its JSON envelope
REFUSAL = (
    "hlo-lsp: this TCP server already serves an editor (one session per server); "
    "start another `hlo-lsp --tcp HOST:PORT` for a second one"
)


class BadFraming(Exception):
    """A connection that does not speak the LSP base protocol; the message says how."""


async def read_message(reader: asyncio.StreamReader) -> bytes | None:
    """The next message body; None at the end of the stream before a header. Raises BadFraming."""
    length = None
    for n in range(MAX_HEADERS + 1):
        try:
            line = await reader.readline()
        except (ValueError, asyncio.LimitOverrunError):
            raise BadFraming(f"a header line longer than {MAX_HEADER_LINE} bytes") from None
        if not line:
            if n == 0:
                return None
            raise BadFraming("the stream ended inside a header")
        if line in (b"\r\n", b"\n"):
            break
        name, sep, value = line.partition(b":")
        if not sep:
            raise BadFraming("a header line without `:`")
        if name.strip().lower() == b"content-length":
            v = value.strip()
            if not v.isdigit() or len(v) > 12:
                raise BadFraming("a Content-Length that is not a number")
            length = int(v)
    else:
        raise BadFraming(f"more than {MAX_HEADERS} header lines")
    if length is None:
        raise BadFraming("a message without Content-Length")
    if length > MAX_BODY:
        raise BadFraming(f"a message of {length} bytes (at most {MAX_BODY})")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        raise BadFraming("the stream ended inside a message body") from None


def _frame(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _refuse(writer: asyncio.StreamWriter, first: bytes) -> None:
    """Answer a second client's first message with an error (and a message to show), before closing it."""
    try:
        msg_id = json.loads(first).get("id")
    except (ValueError, AttributeError):
        msg_id = None
    writer.write(_frame({"jsonrpc": "2.0", "method": "window/showMessage", "params": {"type": 1, "message": REFUSAL}}))
    if msg_id is not None:
        writer.write(_frame({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32600, "message": REFUSAL}}))


async def serve(ls, host: str, port: int) -> int:
    """Serve ``ls`` (a pygls LanguageServer) to the first client connecting to (host, port); see the module.
    Returns the exit code (0 after shutdown and exit, 1 when the client went away without them)."""
    use_started_workers(asyncio.get_running_loop())
    ended = asyncio.Event()
    owner: list[asyncio.StreamWriter] = []
    exit_code: list[int] = []

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        try:
            body = await read_message(reader)
            if body is None:
                return
            if owner:
                log.warning("tcp %s: refused, a session is under way", peer)
                _refuse(writer, body)
                await writer.drain()
                return
            owner.append(writer)
            ls.protocol.set_writer(writer)
            ls._stop_event = threading.Event()
            while body is not None and not ls._stop_event.is_set():
                try:
                    message = json.loads(body, object_hook=ls.protocol.structure_message)
                except ValueError as e:
                    log.warning("tcp %s: a message that is not JSON (%s), skipped", peer, e)
                else:
                    try:
                        ls.protocol.handle_message(message)
                    except SystemExit as e:  # `exit`: pygls ends the process; here the session (and server) ends
                        exit_code.append(e.code if isinstance(e.code, int) else 0)
                        return
                body = await read_message(reader)
        except BadFraming as e:
            log.warning("tcp %s: %s; connection closed", peer, e)
        except (ConnectionError, OSError) as e:
            log.info("tcp %s: %s", peer, e)
        finally:
            if owner and owner[0] is writer:
                ended.set()
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - already closed by exit
                pass

    server = await asyncio.start_server(connection, host, port, limit=MAX_HEADER_LINE)
    log.info("serving on %s", ", ".join(str(s.getsockname()) for s in server.sockets))
    async with server:
        await ended.wait()
    return exit_code[0] if exit_code else 1
