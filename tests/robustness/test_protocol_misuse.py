"""Protocol misuse: each handled without crashing, each with a test, against the real server over stdio.

Every test ends by checking the server still answers (`alive`). Malformed messages are sent as plain dicts so
the client library cannot correct them; an answer may be a result, null or a JSON-RPC error, never silence.
"""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import threading
import uuid

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from hlo_lsp.lsp import stdio
from tests.lsp.util import uri
from tests.robustness.cases import HLO_SEED, split_files
from tests.robustness.conftest import SERVER, SERVER_ENV
from tests.robustness.server_drive import HANG_S, Stats, alive, ask, drive_server

HLO = split_files()[""]
TEXT = HLO.read_text()


def _tid(u: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=u)


def _open(client, u: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=u, language_id="plaintext", version=version, text=text)
        )
    )


def _change(client, u: str, version: int, changes) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=version), content_changes=changes
        )
    )


def _edit(l0: int, c0: int, l1: int, c1: int, text: str) -> lsp.TextDocumentContentChangePartial:
    return lsp.TextDocumentContentChangePartial(
        range=lsp.Range(start=lsp.Position(line=l0, character=c0), end=lsp.Position(line=l1, character=c1)), text=text
    )


def send_raw(client, method: str, params, msg_id: str | None = None):
    """Send a request exactly as given (no client-side typing); an awaitable of its answer."""
    from concurrent.futures import Future

    msg_id = msg_id or f"raw-{uuid.uuid4()}"
    fut: Future = Future()
    client.protocol._request_futures[msg_id] = fut
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return asyncio.wrap_future(fut)


async def _hover(client, stats: Stats, u: str, line: int = 3, col: int = 5):
    return await ask(
        stats,
        "hover",
        client.text_document_hover_async(
            lsp.HoverParams(text_document=_tid(u), position=lsp.Position(line=line, character=col))
        ),
    )


async def test_did_change_for_a_document_never_opened(client, tmp_path):
    stats = Stats()
    u = uri(tmp_path / "never-opened.cpu_after_optimizations.txt")
    _change(client, u, 2, [_edit(0, 0, 0, 0, "garbage")])
    _change(client, u, 3, [lsp.TextDocumentContentChangeWholeDocument(text=TEXT)])
    await drive_server(client, u, [""], stats, limit=1)
    assert stats.hangs == [] and await alive(client, stats)


async def test_stale_and_out_of_order_versions(client, tmp_path):
    stats = Stats()
    path = tmp_path / HLO.name
    u = uri(path)
    _open(client, u, TEXT, version=10)
    _change(client, u, 3, [_edit(0, 0, 0, 0, "// stale\n")])  # older than the open
    _change(client, u, 12, [_edit(1, 0, 1, 0, "x")])
    _change(client, u, 11, [_edit(1, 0, 1, 1, "")])  # out of order
    _change(client, u, 12, [_edit(2, 0, 2, 0, "y")])  # repeated version
    _change(client, u, 2**31 - 1, [_edit(0, 0, 0, 0, "")])
    await drive_server(client, u, TEXT.split("\n"), stats, limit=2)
    assert stats.hangs == [] and await alive(client, stats)


async def test_ranges_past_the_end_and_reversed(client, tmp_path):
    stats = Stats()
    path = tmp_path / HLO.name
    u = uri(path)
    _open(client, u, TEXT)
    n = len(TEXT.split("\n"))
    edits = [
        _edit(n + 100, 0, n + 200, 5, "tail\n"),
        _edit(0, 10_000, 0, 20_000, "x"),
        _edit(5, 3, 2, 1, "reversed"),
        _edit(3, 2**31 - 1, 3, 2**31 - 1, "z"),
        _edit(0, 0, 2**31 - 1, 0, "HloModule replaced\n"),
    ]
    for v, e in enumerate(edits, start=2):
        _change(client, u, v, [e])
        assert await _hover(client, stats, u, line=n + 50, col=2**31 - 1) is None or True
    await drive_server(client, u, ["x"] * (n + 3), stats, limit=2)
    assert stats.hangs == [] and await alive(client, stats)


async def test_open_twice_close_unopened_save_unopened(client, tmp_path):
    stats = Stats()
    u = uri(tmp_path / HLO.name)
    _open(client, u, TEXT)
    _open(client, u, "garbage", version=1)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_tid(u)))
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_tid(u)))
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(text_document=_tid(uri(tmp_path / "none.txt"))))
    await _hover(client, stats, u)
    assert stats.hangs == [] and await alive(client, stats)


@pytest.mark.parametrize(
    "odd_uri",
    [
        "untitled:Untitled-1",
        "file:///",
        "file:///../../etc/passwd",
        "file:///tmp/%00nul.txt",
        "file:///tmp/a%2F..%2F..%2Fb.txt",
        "http://example.com/m.hlo",
        "not a uri",
        "file://host/share/m.hlo",
        "",
    ],
)
async def test_odd_uris(client, odd_uri):
    stats = Stats()
    _open(client, odd_uri, TEXT)
    await drive_server(client, odd_uri, TEXT.split("\n"), stats, limit=1)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_tid(odd_uri)))
    assert stats.hangs == [] and await alive(client, stats)


async def test_unknown_methods_and_notifications(client):
    stats = Stats()
    r = await ask(stats, "unknown", client.protocol.send_request_async("hlo/doesNotExist", {"x": 1}))
    assert isinstance(r, JsonRpcException), r
    client.protocol.notify("hlo/unknownNotification", {"y": [1, 2]})
    client.protocol.notify("$/unknownDollar", None)
    r = await ask(stats, "textDocument/unknown", client.protocol.send_request_async("textDocument/unknown", None))
    assert isinstance(r, JsonRpcException), r
    assert stats.hangs == [] and await alive(client, stats)


@pytest.mark.parametrize(
    "args",
    [
        None,
        [],
        [42],
        [None],
        ["not a uri"],
        ["file:///nonexistent/x.txt"],
        [uri(HLO_SEED), "pdf"],
        [uri(HLO.parent)],
        [{"uri": 1}],
        ["x"] * 100,
    ],
)
async def test_execute_command_with_bad_arguments(client, args):
    stats = Stats()
    await ask(
        stats,
        "executeCommand",
        client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="hlo.showMemoryTimeline", arguments=args)
        ),
    )
    assert stats.hangs == [] and await alive(client, stats)


async def test_unknown_command(client):
    stats = Stats()
    r = await ask(
        stats,
        "executeCommand",
        client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="hlo.noSuchCommand", arguments=[1])),
    )
    assert isinstance(r, JsonRpcException) or r is None, r
    assert stats.hangs == [] and await alive(client, stats)


@pytest.mark.parametrize(
    "method,params",
    [
        ("textDocument/hover", {}),
        ("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": -1, "character": "x"}}),
        ("textDocument/definition", {"textDocument": {"uri": "file:///x.hlo"}, "position": None}),
        ("textDocument/rename", {"textDocument": {"uri": "file:///x.hlo"}, "position": {"line": 0, "character": 0}}),
        ("textDocument/semanticTokens/range", {"textDocument": {"uri": "file:///x.hlo"}, "range": [1, 2]}),
        (
            "textDocument/inlayHint",
            {
                "textDocument": {"uri": "file:///x.hlo"},
                "range": {"start": {"line": 9, "character": 0}, "end": {"line": 0, "character": 0}},
            },
        ),
        ("callHierarchy/incomingCalls", {"item": {"uri": "file:///x.hlo"}}),
        ("workspace/symbol", {"query": None}),
        ("textDocument/completion", [1, 2, 3]),
        ("textDocument/documentSymbol", "just a string"),
    ],
)
async def test_malformed_params_get_an_answer(client, method, params):
    stats = Stats()
    await ask(stats, method, send_raw(client, method, params))
    assert stats.hangs == [] and await alive(client, stats)


async def test_request_without_params_or_with_odd_ids(client):
    stats = Stats()
    await ask(stats, "no params", send_raw(client, "textDocument/hover", None))
    client.protocol._send_data({"jsonrpc": "2.0", "method": "textDocument/didOpen"})  # notification, no params
    client.protocol._send_data({"jsonrpc": "2.0", "id": None, "method": "workspace/symbol", "params": {"query": ""}})
    client.protocol._send_data({"jsonrpc": "1.0", "id": 7, "result": 3})  # a response nobody asked for
    assert stats.hangs == [] and await alive(client, stats)


async def test_cancel_request_storm(client, tmp_path):
    """500 requests cancelled as soon as sent, 500 cancels for ids that never existed, interleaved with edits;
    every request that is not cancelled still gets its answer."""
    stats = Stats()
    u = uri(tmp_path / HLO.name)
    _open(client, u, TEXT)
    futures = []
    for i in range(500):
        f = client.protocol.send_request(
            lsp.TEXT_DOCUMENT_HOVER,
            lsp.HoverParams(text_document=_tid(u), position=lsp.Position(line=i % 40, character=i % 30)),
        )
        client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=f"never-{i}"))
        client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=i))
        futures.append(f)
        if i % 50 == 0:
            _change(client, u, i + 2, [_edit(0, 0, 0, 0, "")])
    ids = list(client.protocol._request_futures)
    for msg_id in ids:
        client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
    done, pending = await asyncio.wait([asyncio.wrap_future(f) for f in futures], timeout=HANG_S * 4)
    # cancelled requests may be answered with an error, a result, or (once cancelled) not at all: pygls drops
    # the response of a request it cancelled, which is what $/cancelRequest allows
    for f in futures:
        if not f.done():
            f.cancel()
    assert await alive(client, stats)
    await _hover(client, stats, u)  # a request after the storm gets its answer
    assert stats.hangs == []


# -- requests after shutdown: their own server process, spoken to in raw JSON-RPC ----------------------------


class RawServer:
    """The server as a subprocess with Content-Length framing; `request` waits (bounded) for the answer."""

    def __init__(self):
        self.proc = subprocess.Popen(
            SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=SERVER_ENV
        )
        self.answers: queue.Queue = queue.Queue()
        self.notices: queue.Queue = queue.Queue()  # the server's notifications
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n"):
                    break
            msg = json.loads(out.read(length))
            if "id" in msg and "method" not in msg:
                self.answers.put(msg)
            elif "id" not in msg:
                self.notices.put(msg)

    def send(self, method: str, params=None, msg_id=None) -> None:
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if msg_id is not None:
            msg["id"] = msg_id
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params=None) -> dict | None:
        """The answer (a dict with result or error); None when none came within HANG_S."""
        self.next_id += 1
        self.send(method, params, self.next_id)
        deadline = HANG_S
        while True:
            try:
                msg = self.answers.get(timeout=deadline)
            except queue.Empty:
                return None
            if msg.get("id") == self.next_id:
                return msg

    def close(self) -> int | None:
        try:
            self.send("exit")
            return self.proc.wait(timeout=HANG_S)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            return None


def test_requests_after_shutdown(tmp_path):
    server = RawServer()
    try:
        assert "result" in server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        server.send("initialized", {})
        u = uri(tmp_path / HLO.name)
        server.send(
            "textDocument/didOpen", {"textDocument": {"uri": u, "languageId": "hlo", "version": 1, "text": TEXT}}
        )
        pos = {"textDocument": {"uri": u}, "position": {"line": 3, "character": 5}}
        assert server.request("textDocument/hover", pos) is not None
        shut = server.request("shutdown")
        assert shut is not None and "result" in shut and shut["result"] is None, shut
        after = [
            server.request("textDocument/hover", pos),
            server.request("textDocument/documentSymbol", {"textDocument": {"uri": u}}),
            server.request("hlo/unknown", {}),
            server.request("shutdown"),
        ]
        server.send("textDocument/didChange", {"textDocument": {"uri": u, "version": 2}, "contentChanges": []})
        # LSP: "requests after shutdown should error with InvalidRequest"; above all, each gets an answer
        assert all(a is not None for a in after), after
        assert all(a.get("error", {}).get("code") == -32600 for a in after), after
    finally:
        code = server.close()
    assert code == 0, code  # exit after shutdown: a clean exit


def test_a_large_open_whose_text_is_no_valid_json_further_on_is_reported_and_the_server_goes_on(tmp_path):
    """A ``didOpen`` of 2 MB whose text breaks JSON (an escape JSON has not) after its first MB: the text's
    first pieces were decoded and let go as they arrived (`stdio.MessageReader._streamed`), so the message is
    reported as one that cannot be parsed; nothing is opened, and the messages after it are answered."""
    server = RawServer()
    try:
        assert "result" in server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        server.send("initialized", {})
        bad_uri = uri(tmp_path / "bad.hlo")
        good = json.dumps(
            {"textDocument": {"uri": bad_uri, "languageId": "hlo", "version": 1, "text": TEXT * 800}}
        ).encode()
        cut = good.index(b"\\n", len(good) // 2) + 2
        body = (
            b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": ' + good[:cut] + b"\\q" + good[cut:] + b"}"
        )
        assert len(body) > 2 * stdio.STREAM_MIN
        with pytest.raises(ValueError):
            json.loads(body)
        server.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body))
        for i in range(0, len(body), 1 << 18):  # (in pieces, as an editor's write reaches a pipe)
            server.proc.stdin.write(body[i : i + (1 << 18)])
            server.proc.stdin.flush()
        u = uri(tmp_path / HLO.name)
        server.send(
            "textDocument/didOpen", {"textDocument": {"uri": u, "languageId": "hlo", "version": 1, "text": TEXT}}
        )
        opened = server.request("textDocument/documentSymbol", {"textDocument": {"uri": u}})
        assert opened is not None and opened.get("result"), opened  # the open after it was handled
        symbols = server.request("textDocument/documentSymbol", {"textDocument": {"uri": bad_uri}})
        assert symbols is not None and not symbols.get("result"), symbols  # never opened
        shown = []
        while not server.notices.empty():
            m = server.notices.get_nowait()
            if m.get("method") == "window/showMessage":
                shown.append(m["params"])
        assert any(p["type"] == 1 and "Invalid \\escape" in p["message"] for p in shown), shown
        assert server.request("shutdown") is not None
    finally:
        code = server.close()
    assert code == 0, code
