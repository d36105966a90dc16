"""Shutdown and exit while the server works in the background (issue 15: a client with workDoneProgress that
shut down 0.3 s after the first diagnostics of a large module got 9.4 MB of chained CancelledError / `I/O
operation on closed file` tracebacks on stderr and waited 3.9 s for the exit)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

from tests.session.synth import large_module


def _frame(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _messages(stream, out: list, first_publish: threading.Event) -> None:
    """Read the server's messages into ``out`` until the stream ends."""
    while True:
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            c = stream.read(1)
            if not c:
                return
            head += c
        n = int(head.split(b":")[1].split(b"\r\n")[0])
        m = json.loads(stream.read(n))
        out.append(m)
        if m.get("method") == "textDocument/publishDiagnostics":
            first_publish.set()
        if m.get("method") == "window/workDoneProgress/create" and "id" in m:
            pass  # answered by the main thread below


def test_exit_during_background_work_is_quiet_and_quick(tmp_path):
    path = tmp_path / "module_0000.jit_big.cpu_after_optimizations.txt"
    text = large_module(path, size_mb=4.5)  # above the size the server reports progress for
    proc = subprocess.Popen(
        [sys.executable, "-m", "hlo_lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    got: list[dict] = []
    published = threading.Event()
    reader = threading.Thread(target=_messages, args=(proc.stdout, got, published), daemon=True)
    reader.start()
    err: list[bytes] = []
    errs = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    errs.start()

    def send(p: dict) -> None:
        proc.stdin.write(_frame(p))
        proc.stdin.flush()

    send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {"window": {"workDoneProgress": True}}},
        }
    )
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": path.as_uri(), "languageId": "hlo", "version": 1, "text": text}},
        }
    )
    deadline = time.monotonic() + 120
    answered: set = set()
    while not published.is_set() and time.monotonic() < deadline:
        for m in list(got):  # answer progress creation, as a client does
            if m.get("method") == "window/workDoneProgress/create" and m["id"] not in answered:
                answered.add(m["id"])
                send({"jsonrpc": "2.0", "id": m["id"], "result": None})
        time.sleep(0.02)
    assert published.is_set()
    time.sleep(0.3)
    t0 = time.monotonic()
    send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    send({"jsonrpc": "2.0", "method": "exit"})
    proc.stdin.close()
    code = proc.wait(30)
    took = time.monotonic() - t0
    errs.join(10)
    stderr = err[0].decode(errors="replace") if err else ""
    assert code == 0
    assert "Traceback" not in stderr and "Error" not in stderr, stderr[:3000]
    assert took < 2.0, took
