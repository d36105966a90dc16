"""pygls keeps each handler's future in ``_request_futures`` and removes a request's when it answers, but never
those of notifications and of the steps of its generator handlers (every didOpen/didChange/didClose runs as one):
they piled up for the whole session (752 after 250 documents opened and closed, each pinning a little of the heap).
`AnsweringProtocol` drops a future once it is done. Driven here through the server's own protocol object and its
registered handlers, in process, on small real documents."""

from __future__ import annotations

import asyncio
import json

from tests.fixtures import DATA

DOCS = sorted((DATA / "passes" / "mlp_sgd").glob("*.txt"))[:6]


class _Writer:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


def _notify(proto, method: str, params: dict) -> None:
    proto.handle_message(proto.structure_message({"jsonrpc": "2.0", "method": method, "params": params}))


async def test_notification_futures_are_dropped_once_done():
    from hlo_lsp.lsp.server import server

    proto = server.protocol
    proto.set_writer(_Writer())
    try:
        for path in DOCS:
            uri = path.resolve().as_uri()
            doc = {"uri": uri, "languageId": "plaintext", "version": 1, "text": path.read_text()}
            _notify(proto, "textDocument/didOpen", {"textDocument": doc})
            change = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": ""}
            _notify(
                proto,
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]},
            )
            _notify(proto, "textDocument/didClose", {"textDocument": {"uri": uri}})
        for _ in range(200):  # the handlers run as tasks and worker-thread jobs: let them finish
            await asyncio.sleep(0.05)
            if not any(not f.done() for f in proto._request_futures.values()):
                break
        await asyncio.sleep(0.1)
        assert proto._request_futures == {}
        published = [json.loads(b.split(b"\r\n\r\n", 1)[1]) for b in proto.writer.sent]
        assert any(m.get("method") == "textDocument/publishDiagnostics" for m in published)  # the handlers ran
    finally:
        for task in list(server._pending.values()):
            task.cancel()
        server._pending.clear()


async def test_futures_cancelled_while_pygls_iterates_over_them_are_dropped_after():
    """pygls' ``shutdown`` cancels every pending future while iterating over ``_request_futures``; a generator
    handler's future (a `concurrent.futures.Future`) runs its done callbacks inside ``cancel()``. Dropping it
    there ended the iteration ("dictionary changed size during iteration", the answer to ``shutdown`` an
    error): it is dropped a turn of the loop later."""
    import concurrent.futures

    from hlo_lsp.lsp.server import server

    proto = server.protocol
    ids = ["test-step-a", "test-step-b", "test-step-c"]
    for msg_id in ids:
        fut: concurrent.futures.Future = concurrent.futures.Future()
        proto._request_futures[msg_id] = fut
        fut.add_done_callback(lambda done, key=msg_id: proto._forget_future(key, done))
    try:
        for msg_id, fut in proto._request_futures.items():  # as pygls' lsp_shutdown does
            if msg_id in ids and not fut.done():
                fut.cancel()
        await asyncio.sleep(0)
        assert not set(ids) & set(proto._request_futures)
    finally:
        for msg_id in ids:
            proto._request_futures.pop(msg_id, None)
