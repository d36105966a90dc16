"""A day of editing, compressed: the real server over stdio, driven at typing pace (issue 15).

Part 1 (``edits``): open the 23 MB Adam module, then N edits at typing pace (a character typed into an
``op_name`` most of the time, a structural line inserted and removed again now and then), a hover or a
document-highlight between edits. Checked: every version published or superseded by a newer published one
(the last version is published), the final diagnostics equal a fresh server's for the final text, and RSS at
the end against RSS after the open.

Part 2 (``many``): open N HLO files of the many-files dump one after the other (each waited for), close them
all, and compare RSS with a fresh server that opened one of them.

Usage::

    python benchmarks/soak.py [--module PATH] [--edits 2000] [--pace 0.1] [--pause-every N --pause S]
                              [--tokens] [--folder DIR] [--docs 250]

``--module`` may be a buffer file too (its ``from instruction:`` lines hold the ``op_name`` typed into; no
structural edits). ``--pause-every``: the user stops typing for ``--pause`` seconds every N edits, so that the
server's idle-time collection runs between bursts, as it does in a real session. ``--tokens``: after each edit,
ask for the semantic tokens as VS Code and Neovim do (``full/delta`` from the last answer's result id, ``full`` at
first), each answer waited for before the next edit's request; every delta applied to the tokens held must equal
a fresh server's ``full`` for the final text.

The load (`uptime`) is printed beside the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

ADAM = "/tmp/bench/adam3000/module_0000.jit_adam_update.cpu_after_optimizations.txt"
MANY = "/tmp/bench/manyfiles"


class Server:
    """The real server process over stdio, with a reader thread that keeps every message."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hlo_lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.published: list[dict] = []
        self.answers: dict[int, dict] = {}
        self.lock = threading.Lock()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.append(self.proc.stderr.read()), daemon=True).start()
        self.next_id = 1
        tokens = {
            "requests": {"full": {"delta": True}},
            "tokenTypes": [],
            "tokenModifiers": [],
            "formats": ["relative"],
        }
        self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": {
                    "window": {"workDoneProgress": True},
                    "textDocument": {"semanticTokens": tokens},
                },
            },
        )
        self.notify("initialized", {})

    def _read(self) -> None:
        f = self.proc.stdout
        while True:
            head = b""
            while not head.endswith(b"\r\n\r\n"):
                c = f.read(1)
                if not c:
                    return
                head += c
            n = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
            m = json.loads(f.read(n))
            with self.lock:
                if m.get("method") == "textDocument/publishDiagnostics":
                    self.published.append(m["params"])
                elif "id" in m and "method" in m:  # a request to the client (progress creation): answer it
                    self._send({"jsonrpc": "2.0", "id": m["id"], "result": None})
                elif "id" in m:
                    self.answers[m["id"]] = m

    def _send(self, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        with self.lock:
            self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict, wait: bool = True, timeout: float = 120) -> dict | None:
        with self.lock:
            i = self.next_id
            self.next_id += 1
            self._send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        if not wait:
            return None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if i in self.answers:
                return self.answers.pop(i)
            time.sleep(0.005)
        return None

    def rss_mb(self) -> float:
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6  # MB (10^6 bytes), as `bench_server.tree_rss_mb`
        return 0.0

    def stable_rss_mb(self, quiet: float = 5.0, timeout: float = 120) -> float:
        """RSS once it has moved by under 2% for ``quiet`` seconds (background reads and trims done)."""
        end = time.monotonic() + timeout
        last, since = self.rss_mb(), time.monotonic()
        while time.monotonic() < end:
            time.sleep(0.5)
            now = self.rss_mb()
            if abs(now - last) > 0.02 * last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since > quiet:
                return now
        return self.rss_mb()

    def wait_published(self, uri: str, version: int, timeout: float = 300) -> dict | None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                got = [p for p in self.published if p["uri"] == uri and p.get("version") == version]
            if got:
                return got[-1]
            time.sleep(0.02)
        return None

    def settle(self, uri: str, quiet: float = 4.0, timeout: float = 300) -> dict | None:
        """The last publication for ``uri`` once none has come for ``quiet`` seconds."""
        end = time.monotonic() + timeout
        last_n, since = -1, time.monotonic()
        while time.monotonic() < end:
            with self.lock:
                mine = [p for p in self.published if p["uri"] == uri]
            if len(mine) != last_n:
                last_n, since = len(mine), time.monotonic()
            elif time.monotonic() - since > quiet:
                return mine[-1] if mine else None
            time.sleep(0.1)
        return None

    def close(self) -> float:
        t0 = time.monotonic()
        self.request("shutdown", None, timeout=30)
        self.notify("exit", None)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return time.monotonic() - t0


def _key(p: dict) -> list:
    return sorted(
        (d["range"]["start"]["line"], d["range"]["start"]["character"], d.get("code"), d["message"])
        for d in p["diagnostics"]
    )


class Tokens:
    """The semantic tokens an editor holds, kept up to date as it does: ``full`` first, then ``full/delta``."""

    def __init__(self, server: Server, uri: str) -> None:
        self.s, self.uri = server, uri
        self.data: list[int] | None = None
        self.result_id: str | None = None
        self.deltas = 0

    def update(self) -> None:
        doc = {"textDocument": {"uri": self.uri}}
        if self.result_id is None:
            got = self.s.request("textDocument/semanticTokens/full", doc, timeout=300)
            result = (got or {}).get("result")
            if result:
                self.data, self.result_id = list(result["data"]), result.get("resultId")
            return
        got = self.s.request(
            "textDocument/semanticTokens/full/delta", {**doc, "previousResultId": self.result_id}, timeout=300
        )
        result = (got or {}).get("result")
        if not result:
            return
        if "edits" in result:
            assert self.data is not None
            for e in sorted(result["edits"], key=lambda e: e["start"], reverse=True):
                self.data[e["start"] : e["start"] + e["deleteCount"]] = e.get("data", [])
            self.deltas += 1
        else:
            self.data = list(result["data"])
        self.result_id = result.get("resultId")


def edits(
    module: str, n: int, pace: float, seed: int = 1, pause_every: int = 0, pause: float = 0.0, tokens: bool = False
) -> dict:
    rnd = random.Random(seed)
    text = Path(module).read_text()
    lines = text.split("\n")
    uri = Path(module).resolve().as_uri()
    s = Server()
    t0 = time.monotonic()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "hlo", "version": 1, "text": text}})
    assert s.wait_published(uri, 1) is not None
    open_s = time.monotonic() - t0
    held = Tokens(s, uri) if tokens else None
    if held is not None:
        held.update()
    s.settle(uri, quiet=3)
    rss_open = s.stable_rss_mb()  # its buffer-assignment siblings read too
    targets = [i for i, x in enumerate(lines) if 'op_name="' in x]  # a buffer file's `from instruction:` lines too
    # the structural edits go after the ENTRY line; a buffer file (no ENTRY) gets the typing only
    entry = next((i + 1 for i, x in enumerate(lines) if x.startswith("ENTRY")), None)
    inserted = False
    version = 1
    for k in range(n):
        version += 1
        if entry is not None and k % 100 == 50 and not inserted:  # a structural edit: a whole instruction line in
            change = {
                "range": {"start": {"line": entry, "character": 0}, "end": {"line": entry, "character": 0}},
                "text": f"  %soak.{k} = f32[] constant(0)\n",
            }
            lines.insert(entry, f"  %soak.{k} = f32[] constant(0)")
            inserted = True
        elif entry is not None and k % 100 == 52 and inserted:  # and out again
            change = {
                "range": {"start": {"line": entry, "character": 0}, "end": {"line": entry + 1, "character": 0}},
                "text": "",
            }
            del lines[entry]
            inserted = False
        else:
            ln = rnd.choice(targets) + (1 if inserted and entry is not None and rnd.choice(targets) >= entry else 0)
            ln = min(ln, len(lines) - 1)
            col = lines[ln].find('op_name="') + len('op_name="')
            if col < len('op_name="'):
                col = 0
            change = {
                "range": {"start": {"line": ln, "character": col}, "end": {"line": ln, "character": col}},
                "text": "x",
            }
            lines[ln] = lines[ln][:col] + "x" + lines[ln][col:]
        s.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
        )
        if k % 10 == 5:  # a request between edits, answered or not, never waited on for long
            ln = rnd.randrange(len(lines))
            s.request(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": ln, "character": 4}},
                wait=False,
            )
        if held is not None:
            held.update()  # as the editor does after each edit (its time counts against the pace)
        time.sleep(pace)
        if pause_every and k % pause_every == pause_every - 1:
            time.sleep(pause)  # the user stops to read: the server is idle (its idle-time collection runs)
    s.wait_published(uri, version, timeout=600)
    final = s.settle(uri)
    versions = {p.get("version") for p in s.published if p["uri"] == uri}
    rss_end = s.stable_rss_mb()
    final_text = "\n".join(lines)
    s.close()
    fresh = Server()
    fresh.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "hlo", "version": 1, "text": final_text}}
    )
    fresh.wait_published(uri, 1)
    ref = fresh.settle(uri)
    tokens_ok = None
    if held is not None:
        got = fresh.request("textDocument/semanticTokens/full", {"textDocument": {"uri": uri}}, timeout=300)
        tokens_ok = held.data == ((got or {}).get("result") or {}).get("data")
    fresh.close()
    return {
        "edits": n,
        "pace_s": pace,
        "pauses": f"{pause} s every {pause_every} edits" if pause_every else None,
        "open_s": round(open_s, 1),
        "versions": version,
        "versions_published": len(versions),
        "last_version_published": final is not None and final.get("version") == version,
        "final_equals_fresh": final is not None and ref is not None and _key(final) == _key(ref),
        "final_diagnostics": len(final["diagnostics"]) if final else None,
        "rss_open_mb": round(rss_open),
        "rss_end_mb": round(rss_end),
        "rss_ratio": round(rss_end / rss_open, 2),
        "tracebacks": sum(b.count(b"Traceback") for b in s.stderr),
        "token_deltas": held.deltas if held is not None else None,
        "tokens_equal_fresh": tokens_ok,
    }


def many(folder: str, n: int) -> dict:
    files = sorted(p for p in Path(folder).glob("*.txt"))[:n]
    s = Server()
    uris = []
    for p in files:
        uri = p.resolve().as_uri()
        s.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "hlo", "version": 1, "text": p.read_text()}},
        )
        s.wait_published(uri, 1, timeout=60)
        uris.append(uri)
    rss_peak = s.stable_rss_mb()
    for uri in uris:
        s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    rss_closed = s.stable_rss_mb()
    s.close()
    one = Server()
    uri = files[0].resolve().as_uri()
    one.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "hlo", "version": 1, "text": files[0].read_text()}},
    )
    one.wait_published(uri, 1)
    rss_one = one.stable_rss_mb()
    one.close()
    return {
        "documents": len(files),
        "rss_all_open_mb": round(rss_peak),
        "rss_all_closed_mb": round(rss_closed),
        "rss_fresh_one_mb": round(rss_one),
        "ratio_closed_to_fresh": round(rss_closed / rss_one, 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default=ADAM)
    ap.add_argument("--edits", type=int, default=2000)
    ap.add_argument("--pace", type=float, default=0.1)
    ap.add_argument("--pause-every", type=int, default=0, help="edits between two pauses (0: no pauses)")
    ap.add_argument("--pause", type=float, default=3.0, help="seconds of each pause")
    ap.add_argument("--folder", default=MANY)
    ap.add_argument("--docs", type=int, default=250)
    ap.add_argument("--part", choices=("edits", "many", "both"), default="both")
    ap.add_argument("--tokens", action="store_true", help="semantic tokens after each edit, as editors ask")
    a = ap.parse_args()
    print("load:", os.getloadavg())
    if a.part in ("many", "both"):
        print("many:", json.dumps(many(a.folder, a.docs)), flush=True)
    if a.part in ("edits", "both"):
        got = edits(a.module, a.edits, a.pace, pause_every=a.pause_every, pause=a.pause, tokens=a.tokens)
        print("edits:", json.dumps(got), flush=True)
    print("load:", os.getloadavg())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
