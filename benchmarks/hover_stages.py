"""Where each slow hover of an editor replay spent its time, from the server's own trace.

Run `bench_editor.py` with ``--json OUT`` and a server that traces (``HLO_LSP_TRACE=1``; `gil_watch/serve` sets
it, and adds the GIL watcher), then::

    python3 benchmarks/hover_stages.py OUT STDERR [--watch GIL_WATCH_OUT] [--slow-ms 20]

STDERR is the server's stderr that `bench_editor.py` keeps (``/tmp/bench_editor/<file>.<editor>.stderr``). For each
hover slower than ``--slow-ms``: from the harness's send to the server's reader thread having read it, to the
event loop having handled it (a hover is answered while handled), to the writer having written the answer, and
what the server was doing meanwhile: the trace's other lines and the GIL watcher's late wake-ups in that window.
The hovers of the trace are matched to the replay's by their order.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("replay_json")
    ap.add_argument("stderr")
    ap.add_argument("--watch", help="the GIL watcher's output (gil_watch/sitecustomize.py)")
    ap.add_argument("--slow-ms", type=float, default=20.0)
    ap.add_argument("--case", type=int, default=0, help="which case of the replay's JSON (default the first)")
    a = ap.parse_args()
    rec = json.load(open(a.replay_json))[a.case]
    t0 = rec["opened_at"]
    stages: dict[str, dict[str, float]] = defaultdict(dict)
    hovers: list[str] = []
    events: list[tuple[float, str]] = []
    for line in open(a.stderr, errors="replace"):
        p = line.split()
        if len(p) < 4 or p[:2] != ["hlo-lsp", "trace"]:
            continue
        t = float(p[2])
        if p[3] == "msg" and len(p) >= 7:
            stage, mid, method = p[4], p[5], p[6]
            stages[mid].setdefault(stage, t)
            if stage == "read" and method == "textDocument/hover":
                hovers.append(mid)
        events.append((t, " ".join(p[3:])))
    watch: list[tuple[float, list[str]]] = []
    if a.watch:
        for line in open(a.watch, errors="replace"):
            if " late " in line:
                watch.append((float(line.split()[0]), [line.rstrip()]))
            elif watch and line.strip():
                watch[-1][1].append(line.rstrip())
    fmt = lambda x, y: f"{(y - x) * 1000:7.1f}" if x is not None and y is not None else "      -"  # noqa: E731
    for (t, latency), mid in zip(rec["hovers_during"], hovers):
        if latency * 1000 < a.slow_ms:
            continue
        sent, s = t0 + t, stages[mid]
        read, handled, written = s.get("read"), s.get("handled"), s.get("written")
        print(
            f"hover {mid} at {t:.3f} s: {latency * 1000:.1f} ms | send->read {fmt(sent, read)} read->handled"
            f" {fmt(read, handled)} handled->written {fmt(handled, written)}"
        )
        end = sent + latency
        for when, what in events:
            if sent - 0.005 <= when <= end and "msg" not in what.split()[0:1]:
                print(f"    {when - t0:8.3f} {what}")
        for when, lines in watch:
            if sent <= when <= end + 0.2:
                print(f"    {when - t0:8.3f} {lines[0].split(' ', 1)[1]}")
                for ln in lines[1:]:
                    if "selectors.py" not in ln and "threading.py:3" not in ln and "thread.py:81" not in ln:
                        print("    " + ln)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
