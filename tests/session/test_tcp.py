"""`hlo-lsp --tcp`: one session per server (issue 15: a second connection took over the first client's answers,
and any connection closing, even an empty connect or garbage, shut the server down for everyone)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from tests.fixtures import DATA

DOC = DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations.txt"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _send(sock: socket.socket, payload: dict) -> None:
    body = json.dumps(payload).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)


_BUFFERS: dict[int, bytes] = {}


def _recv(sock: socket.socket, timeout: float = 30) -> dict | None:
    """The next message, None when the server closed the connection."""
    sock.settimeout(timeout)
    buf = _BUFFERS.pop(sock.fileno(), b"")

    def more() -> bool:
        nonlocal buf
        chunk = sock.recv(65536)
        buf += chunk
        return bool(chunk)

    while b"\r\n\r\n" not in buf:
        if not more():
            return None
    head, _, rest = buf.partition(b"\r\n\r\n")
    n = int(next(x for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")).split(b":")[1])
    while len(rest) < n:
        buf = rest
        if not more():
            return None
        rest = buf
    _BUFFERS[sock.fileno()] = rest[n:]
    return json.loads(rest[:n])


def _answer(sock: socket.socket, msg_id: int) -> dict | None:
    while True:
        m = _recv(sock)
        if m is None or m.get("id") == msg_id and "method" not in m:
            return m


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        while sock.recv(65536):
            pass
    except ConnectionError:
        pass
    return True


@pytest.fixture
def tcp_server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hlo_lsp", "--tcp", f"127.0.0.1:{port}"], stderr=subprocess.PIPE, text=True
    )
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()  # an empty connect, closed at once
            break
        except OSError:
            time.sleep(0.05)
    yield port, proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    proc.stderr.close()


def _initialize(sock, msg_id=1):
    _send(
        sock,
        {
            "jsonrpc": "2.0",
            "id": msg_id,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        },
    )
    return _answer(sock, msg_id)


def test_one_session_garbage_and_second_clients_end_only_themselves(tcp_server):
    port, proc = tcp_server
    connect = lambda: socket.create_connection(("127.0.0.1", port), timeout=10)  # noqa: E731
    for garbage in (
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"x" * 100_000,
        b"Content-Length: 99999999999999\r\n\r\n{}",
        b"\x00\xff" * 50 + b"\r\n",
    ):
        with connect() as g:
            g.sendall(garbage)
            assert _closed(g)
        assert proc.poll() is None  # the server is still there
    a = connect()
    init = _initialize(a)
    assert init is not None and "capabilities" in init["result"]
    b = connect()
    refused = (
        _answer(b, 1)
        if _send(
            b, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}}
        )
        is None
        else None
    )
    assert refused is not None and "one session per server" in refused["error"]["message"]
    assert _closed(b)
    b.close()
    # the first client is served as before: its hover answer comes to it
    _send(a, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    uri = DOC.resolve().as_uri()
    _send(
        a,
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "hlo", "version": 1, "text": DOC.read_text()}},
        },
    )
    lines = DOC.read_text().split("\n")
    ln = next(i for i, x in enumerate(lines) if x.strip().startswith("ROOT %"))
    col = lines[ln].index("%") + 1
    _send(
        a,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": ln, "character": col}},
        },
    )
    hover = _answer(a, 2)
    name = lines[ln].split("%")[1].split(" ")[0]
    assert hover is not None and name in json.dumps(hover["result"])
    _send(a, {"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    assert _answer(a, 3) is not None
    _send(a, {"jsonrpc": "2.0", "method": "exit"})
    assert proc.wait(15) == 0
    err = proc.stderr.read()
    assert "Traceback" not in err, err
    a.close()
