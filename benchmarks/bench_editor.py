"""Replay what VS Code and Neovim 0.11 send on opening a large dump and after an edit, and time every answer.

Usage (after ``python3 benchmarks/make_inputs.py``)::

    python3 benchmarks/bench_editor.py [--editor vscode|neovim ...] [--file PATH ...] [--json OUT.json]

For each file (default: the adam N=3000 23 MB module, its ``-buffer-assignment``, ``-buffer-assignment-values``
and ``-live-range`` files, and the 100 MB synthetic module) and each editor, one real server (``python -m
hlo_lsp``) is started with that editor's own client capabilities (pytest-lsp's recorded ``visual-studio-code``
and ``neovim`` v0.11 profiles, which say what the editor supports: delta tokens, pulled diagnostics, ...) and:

1. **open**: ``didOpen``; once the document is read (the read itself is timed by ``bench_server.py``: here its
   first diagnostics published or, for a client that pulls them, the answer to the pull it sends at once, which
   is its "first" pulled-diagnostics time, counted from ``didOpen``, the read included), the editor's other
   on-open requests at once, as the editor sends them (VS Code: ``documentSymbol``, ``foldingRange``,
   ``semanticTokens/full`` and ``/range`` for the viewport, ``codeLens``, ``documentLink``, ``inlayHint`` for
   the viewport (the file's first 80 lines: an editor opens a file at its top), pulled diagnostics; Neovim
   0.11: ``semanticTokens/full``, ``inlayHint``; it would pull diagnostics too, but the server offers pull only
   to a client it can ask to pull again, and pushes them to Neovim: the first and last push are reported). Each
   is timed from writing it to reading its answer ("first"). While they are in flight, a hover every 100 ms at
   a random name, an instruction's or a computation's (header, call site) ("hover during": p95, max, over every
   hover of steps 1-3 and after each while the server's background work, under its ``$/progress``, goes on;
   each hover's time from ``didOpen`` and latency are in the ``--json`` output).
2. **again**: the same requests again, nothing changed; then hovers until the background work is done.
3. **after edit**: a one-line edit (a space inserted on a middle line), then the editor's after-edit requests
   (``semanticTokens/full/delta`` with the last result id, ``codeLens``, ``inlayHint`` for the 80 lines at the
   edited one, ``documentSymbol``, ``foldingRange``). The delta applied to the tokens held must equal a fresh
   ``full`` answer afterwards (checked; a mismatch is reported).
4. Hovers once the server is idle (p95), the answers' sizes (bytes of JSON) and the process tree's RSS.

X = XLA's ``hlo_module_from_text`` on the module (the 23 MB module for its buffer files), timed in a
subprocess under /tmp/jaxenv before the server starts. The table gives seconds and the ratio to X.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.bench_server import (  # noqa: E402
    REPO,
    Client,
    RequestFailed,
    encode,
    pct,
    tree_rss_mb,
    uri,
    wait_idle,
    xla_parse_seconds,
)

ADAM = Path("/tmp/bench/adam3000/module_0000.jit_adam_update.cpu_after_optimizations")
DEFAULT_FILES = [
    f"{ADAM}.txt",
    f"{ADAM}-buffer-assignment.txt",
    f"{ADAM}-buffer-assignment-values.txt",
    f"{ADAM}-live-range.txt",
    "/tmp/bench/synth/synth_100mb.txt",
]
PROFILES = {"vscode": "visual-studio-code", "neovim": "neovim"}
VIEW = 80  # lines in the viewport
TOP = 0  # the viewport's first line on open (until 2026-12-08 the middle of the file, as after the edit)
ON_OPEN = {
    "vscode": [
        "documentSymbol",
        "foldingRange",
        "semanticTokens/full",
        "semanticTokens/range",
        "codeLens",
        "documentLink",
        "inlayHint",
        "diagnostic",
    ],
    "neovim": ["semanticTokens/full", "inlayHint", "diagnostic"],
}
PULLED = "diagnostic"  # asked only when the server offers pull (its ``diagnosticProvider``), as the editors do
AFTER_EDIT = {
    "vscode": ["semanticTokens/full/delta", "codeLens", "inlayHint", "documentSymbol", "foldingRange"],
    "neovim": ["semanticTokens/full/delta", "inlayHint"],
}
NAME_LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = ")
# a computation's name where a person hovers it too: its header, and where an instruction calls it
COMPUTATION_NAME = re.compile(r"^(?:ENTRY\s+)?%([\w.\-]+) \(|(?:calls|to_apply|body|condition)=%([\w.\-]+)")


def capabilities(editor: str) -> dict:
    from lsprotocol.converters import get_converter
    from pytest_lsp import client_capabilities

    caps = client_capabilities(PROFILES[editor] if editor == "vscode" else "neovim@v0.11.0")
    out = get_converter().unstructure(caps)
    if editor == "vscode":
        # pytest-lsp's VS Code is 1.65, before pulled diagnostics; today's (vscode-languageclient 11, as the
        # extension ships) declares them and their refresh (DiagnosticFeature.fillClientCapabilities)
        out["textDocument"]["diagnostic"] = {"dynamicRegistration": True, "relatedDocumentSupport": True}
        out["workspace"]["diagnostics"] = {"refreshSupport": True}
    return out


class SizedClient(Client):
    """`Client` that also records each answer's size in bytes as read (no re-encoding by the harness)."""

    def __init__(self, proc, relay) -> None:
        self.answer_bytes: dict[int, int] = {}
        super().__init__(proc, relay)

    def _received(self, msg: dict, length: int) -> None:
        if "method" not in msg and "id" in msg:
            self.answer_bytes[msg["id"]] = length


class Session:
    """One server with one editor's capabilities, one open document."""

    def __init__(self, client: Client, path: Path, text: str) -> None:
        self.client, self.path, self.doc = client, path, uri(path)
        self.lines = text.split("\n")
        self.version = 1
        self.tokens: list[int] | None = None
        self.result_id: str | None = None
        self.sizes: dict[str, int] = {}
        self.delta_ok: bool | None = None
        self.opened = time.monotonic()  # set again at didOpen
        # hovered: the names instructions define, and computations' names (headers, call sites)
        self.names = [(i, m.start(1)) for i, x in enumerate(self.lines) if (m := NAME_LINE.match(x))]
        self.names += [
            (i, m.start(m.lastindex or 1))
            for i, x in enumerate(self.lines)
            if "%" in x
            for m in COMPUTATION_NAME.finditer(x)
        ]
        self.names = self.names or [(i, 0) for i in range(0, len(self.lines), max(1, len(self.lines) // 1000))]

    def params(self, method: str, mid: int) -> dict:
        td = {"textDocument": {"uri": self.doc}}
        view = {"start": {"line": mid, "character": 0}, "end": {"line": mid + VIEW, "character": 0}}
        if method in ("semanticTokens/range", "inlayHint"):
            return {**td, "range": view}
        if method == "semanticTokens/full/delta":
            return {**td, "previousResultId": self.result_id or ""}
        return td

    async def ask(self, method: str, mid: int) -> float | None:
        rid = self.client._next_id + 1
        try:
            result, secs = await self.client.request("textDocument/" + method, self.params(method, mid), timeout=300)
        except RequestFailed as exc:
            print(f"  {method}: {exc}", flush=True)
            return None
        self.sizes[method] = self.client.answer_bytes.pop(rid, 0)
        if method == "semanticTokens/full" and isinstance(result, dict):
            self.tokens, self.result_id = result.get("data"), result.get("resultId")
        elif method == "semanticTokens/full/delta" and isinstance(result, dict):
            if "edits" in result and self.tokens is not None:
                from hlo_lsp.lsp.doc_answers import apply_token_edits

                self.tokens = apply_token_edits(self.tokens, result["edits"])
            elif "data" in result:
                self.tokens = result["data"]
            self.result_id = result.get("resultId")
        return secs

    async def hover(self) -> float | None:
        ln, col = random.choice(self.names)
        try:
            _, secs = await self.client.request(
                "textDocument/hover",
                {"textDocument": {"uri": self.doc}, "position": {"line": ln, "character": col + 1}},
                timeout=120,
            )
        except RequestFailed:
            return None
        return secs

    async def hovers_until(self, done: Callable[[], bool], hovers: list[tuple[float, float]]) -> None:
        """A hover every 100 ms until ``done()``; each answered one as (seconds since didOpen, latency)."""
        while not done():
            await asyncio.sleep(0.1)
            sent = time.monotonic() - self.opened
            h = await self.hover()
            if h is not None:
                hovers.append((round(sent, 3), h))

    async def requests_with_hovers(self, methods: list[str], mid: int, hovers: list[tuple[float, float]]) -> dict:
        """All ``methods`` at once (as an editor sends them), a hover every 100 ms until they are answered."""
        tasks = {m: asyncio.ensure_future(self.ask(m, mid)) for m in methods}
        p = asyncio.ensure_future(self.hovers_until(lambda: all(t.done() for t in tasks.values()), hovers))
        times = {m: await t for m, t in tasks.items()}
        await p
        return times

    def reading(self) -> bool:
        """A ``$/progress`` begun since ``didOpen`` (the server's reads, its background work) has not ended."""
        begun = {tok for t, tok, kind in self.client.progress if t >= self.opened and kind == "begin"}
        ended = {tok for t, tok, kind in self.client.progress if kind == "end"}
        return bool(begun - ended)

    async def idle_with_hovers(self, hovers: list[tuple[float, float]]) -> None:
        """A hover every 100 ms while the server's background work goes on (its ``$/progress``), then wait until
        the server is idle (`wait_idle`, without hovers: they alone keep it from looking idle)."""
        await self.hovers_until(lambda: not self.reading(), hovers)
        await wait_idle(self.client, max_wait=120)

    async def edit(self, line: int) -> None:
        self.version += 1
        col = len(self.lines[line])
        self.lines[line] += " "
        await self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": self.doc, "version": self.version},
                "contentChanges": [
                    {
                        "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col}},
                        "text": " ",
                    }
                ],
            },
        )


SERVER_CMD = [sys.executable, "-m", "hlo_lsp"]  # --server-cmd replaces it (a profiler's wrapper, another build)


async def start(editor: str, root: Path, log: Path) -> Client:
    """A server initialized with ``editor``'s capabilities; ``client.pulls``: it offered pulled diagnostics."""
    client = await SizedClient.start(SERVER_CMD, log, str(REPO))
    init, _ = await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": uri(root),
            "capabilities": capabilities(editor),
            "workspaceFolders": [{"uri": uri(root), "name": root.name}],
        },
        timeout=60,
    )
    await client.notify("initialized", {})
    client.pulls = isinstance(init, dict) and bool((init.get("capabilities") or {}).get("diagnosticProvider"))
    return client


async def run_case(path: Path, editor: str, xla: float | None, log_dir: Path) -> dict:
    text = path.read_text()
    client = await start(editor, path.parent, log_dir / f"{path.name}.{editor}.stderr")
    s = Session(client, path, text)
    rec: dict = {"file": path.name, "editor": editor, "mb": len(text.encode()) / 1e6, "xla_s": xla}
    on_open = [m for m in ON_OPEN[editor] if m != PULLED or client.pulls]
    try:
        mid = len(s.lines) // 2
        # the message made before the clock starts, as every request's is: this harness's JSON encoding of the
        # 23 MB text (50-150 ms) is no time of the server's (until 2026-11-27 it was counted in the pull at open)
        opening = encode(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": s.doc, "languageId": "hlo", "version": 1, "text": text}},
            }
        )
        first_diag = client.wait_diagnostics(lambda r: r[1] == s.doc) if not client.pulls else None
        t0 = s.opened = time.monotonic()
        await client._send(opening)
        del opening
        if first_diag is not None:
            await asyncio.wait_for(first_diag, 300)
            rec["first_diagnostics_s"] = round(client.diagnostics[0][0] - t0, 2)
        else:  # VS Code pulls at once on open; the pull is answered once the document is read
            asked = time.monotonic()
            pulled = await s.ask(PULLED, mid)
            # until its answer's last byte left the server (the relay's stamp), as for every other request
            rec["read_s"] = round(asked + pulled - t0, 2) if pulled is not None else None
        during: list[tuple[float, float]] = []  # (sent, seconds) of every hover from the first diagnostics on
        # the viewport: the file's first lines on open and asked again (an editor opens a file at its top: the
        # 23 MB module's first line, its header, is 812,781 characters), the middle, where the edit is, after it
        first = await s.requests_with_hovers([m for m in on_open if m != PULLED], TOP, during)
        if client.pulls and rec.get("read_s") is not None:
            first[PULLED] = rec["read_s"]  # from didOpen, the read included
        again = await s.requests_with_hovers(on_open, TOP, during)
        await s.idle_with_hovers(during)
        idle_hovers = [h for h in [await s.hover() for _ in range(40)] if h is not None]
        await s.edit(mid + 1)
        after = await s.requests_with_hovers(AFTER_EDIT[editor], mid, during)
        if "semanticTokens/full/delta" in after and s.tokens is not None:
            held = s.tokens
            await s.ask("semanticTokens/full", mid)
            s.delta_ok = held == s.tokens
        await s.idle_with_hovers(during)
        hover_secs = [h for _, h in during]
        pushed = [r[0] for r in client.diagnostics if r[1] == s.doc and r[2] in (1, None)]
        rec.update(
            last_diagnostics_s=round(pushed[-1] - t0, 2) if pushed else None,
            pushed_to_pulling=client.pulls and bool(client.diagnostics and any(r[3] for r in client.diagnostics)),
            first=first,
            again=again,
            after_edit=after,
            sizes=s.sizes,
            delta_ok=s.delta_ok,
            hover_during_p95=pct(hover_secs, 95),
            hover_during_max=max(hover_secs, default=None),
            hover_during_n=len(hover_secs),
            hovers_during=during,
            opened_at=round(t0, 4),  # time.monotonic() at didOpen: hovers_during's zero, to line up with server traces
            hover_idle_p95=pct(idle_hovers, 95),
            rss_mb=round(tree_rss_mb(client.pid), 0),
            # provisional lenses and pulled diagnostics (a buffer file whose large siblings are joined in the
            # background) are asked for again when the server sends these: the complete answers' time
            refresh_s={
                m: round(at - t0, 2)
                for m, at in client.server_request_at.items()
                if m in ("workspace/codeLens/refresh", "workspace/diagnostic/refresh")
            },
            failures=list(client.failures),
        )
    finally:
        await client.shutdown()
    return rec


def fmt(x, xla) -> str:
    if x is None:
        return "—"
    return f"{x:.2f} s ({x / xla:.2f} X)" if xla else f"{x:.2f} s"


def table(results: list[dict]) -> str:
    out = []
    for r in results:
        xla = r.get("xla_s")
        out.append(
            f"\n**{r['file']}** ({r['mb']:.1f} MB, {r['editor']}), X = {xla:.2f} s; "
            + (
                f"read (diagnostics pulled at open) {fmt(r.get('read_s'), xla)}"
                if r.get("read_s") is not None
                else f"diagnostics pushed first {fmt(r.get('first_diagnostics_s'), xla)}, last "
                f"{fmt(r.get('last_diagnostics_s'), xla)}"
            )
            + ("; PUSHED TO A PULLING CLIENT" if r.get("pushed_to_pulling") else "")
            + f"; hover during requests p95 {fmt(r.get('hover_during_p95'), None)}"
            f" (max {fmt(r.get('hover_during_max'), None)}, n={r.get('hover_during_n')}), idle p95 "
            f"{fmt(r.get('hover_idle_p95'), None)}; RSS {r.get('rss_mb')} MB "
            f"({(r.get('rss_mb') or 0) / r['mb']:.1f}× file); delta = fresh full: {r.get('delta_ok')}"
            + "".join(f"; {m.split('/')[1]} refresh at {t} s" for m, t in sorted(r.get("refresh_s", {}).items()))
            + "\n"
        )
        out.append("| request | first | again | after edit | answer size |")
        out.append("|---|---|---|---|---|")
        methods = list(dict.fromkeys(list(r.get("first", {})) + list(r.get("after_edit", {}))))
        for m in methods:
            size = r.get("sizes", {}).get(m)
            out.append(
                f"| {m} | {fmt(r.get('first', {}).get(m), xla)} | {fmt(r.get('again', {}).get(m), xla)} | "
                f"{fmt(r.get('after_edit', {}).get(m), xla)} | "
                f"{'—' if size is None else f'{size / 1e3:,.0f} kB'} |"
            )
        if r.get("failures"):
            out.append(f"\nfailures: {r['failures']}")
    return "\n".join(out)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--editor", action="append", choices=sorted(PROFILES))
    ap.add_argument("--file", action="append")
    ap.add_argument("--json")
    ap.add_argument("--xla-repeat", type=int, default=3)
    ap.add_argument("--server-cmd", nargs="+", help="the server's command line (default: this Python -m hlo_lsp)")
    args = ap.parse_args()
    if args.server_cmd:
        SERVER_CMD[:] = args.server_cmd
    os.environ.setdefault("PYTHON", sys.executable)  # the Python a wrapper (gil_watch/serve) runs the server with
    files = [Path(f) for f in (args.file or DEFAULT_FILES) if Path(f).exists()]
    log_dir = Path("/tmp/bench_editor")
    log_dir.mkdir(exist_ok=True)
    xla_cache: dict[Path, float | None] = {}
    results = []
    for path in files:
        module = (
            path
            if not re.search(r"-(buffer-assignment(-values)?|live-range)\.txt$", path.name)
            else path.with_name(re.sub(r"-(buffer-assignment(-values)?|live-range)\.txt$", ".txt", path.name))
        )
        if module not in xla_cache:
            xla_cache[module] = xla_parse_seconds(module, args.xla_repeat).get("seconds")
        for editor in args.editor or ["vscode", "neovim"]:
            print(f"[bench_editor] {path.name} ({editor}) X={xla_cache[module]}", flush=True)
            results.append(await run_case(path, editor, xla_cache[module], log_dir))
            print(table(results[-1:]), flush=True)
    print("\n" + table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
