"""Issue 21's targets on pass-by-pass dumps (``--xla_dump_hlo_pass_re=.*``), XLA's parser timed side by side.

Usage (after ``python3 benchmarks/make_inputs.py --step passes``)::

    python3 benchmarks/bench_passes.py [DIR ...] [--repeat 3] [--xla-python /tmp/jaxenv/bin/python]
                                       [--no-check] [--no-server | --server-only] [--json OUT.json]

DIR defaults to ``/tmp/bench/passes-adam3000`` and ``/tmp/bench/passes-transformer``. For each module with pass
files in a DIR, one table row:

* **XLA parse of the final module**: ``jaxlib._hlo.hlo_module_from_text`` on its ``*after_optimizations.txt``,
  best of ``--repeat``, in ``--xla-python``'s process (file read excluded), run just before ours so that both see
  the same load. Target: the history built in at most 3 times this.
* **history built**: `PassHistory` over every file of the module (before-optimizations, the numbered pass files,
  after-optimizations), best of ``--repeat`` in this process, wall clock (CPU time beside it).
* **trace**: after that (and `gc.freeze`, as the server does after its background reads), one instruction's
  history answered as ``hlo-lsp passes --trace`` answers it
  (`PassHistory.trace`, then `report.trace_json`), for up to 200 names spread over the final module and 100 over
  the before-optimizations one (those are the ones passes remove and rename); median / p95 / max. Target 20 ms.
* **check**: ``hlo-lsp check DIR`` in a subprocess (interpreter start-up included), the whole folder (its
  buffer-assignment files too), against XLA parsing every HLO module file of the folder once (one process);
  the ratio is XLA's time over ours, that is our throughput over XLA's on XLA's files while we also check the
  buffer files. Target at least 0.5.

Then the **server** (unless ``--no-server``), on the first DIR: the real server over stdio (the client of
``bench_server.py``), under an audit hook that logs every file it opens, opens the largest numbered pass file.
Reported: open -> complete diagnostics and a hover on the last instruction (``ready``), the files it opened
until then, the background work's end (the pass history built while hovers keep being answered: their p95 and
max), the files it opened in the background, then once idle the pass lenses and hovers (which carry the pass
history) p50/p95, and the server's RSS. The same file opened alone (copied into a temporary folder, so no
history) gives the baseline of ``ready``. Load averages are printed at the start and the end. Nothing is written
except the temporary copy (removed) and ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_server import (  # noqa: E402
    AUDIT_WRAPPER,
    FileFacts,
    RequestFailed,
    RssSampler,
    open_until_ready,
    pct,
    start_server,
    tree_rss_mb,
    uri,
    utf16_col,
    wait_idle,
)

from hlo_lsp.core.passes.history import PassHistory  # noqa: E402
from hlo_lsp.core.passes.names import PassFile, pass_modules  # noqa: E402
from hlo_lsp.core.passes.report import trace_json  # noqa: E402

DEFAULT_DIRS = [Path("/tmp/bench/passes-adam3000"), Path("/tmp/bench/passes-transformer")]
NAME = re.compile(r"^[ \t]+(?:ROOT[ \t]+)?%([^\s=]+)[ \t]*=[ \t]", re.M)

XLA_TIMER = """
import gc, json, sys, time
from jaxlib import _hlo
repeat, out = int(sys.argv[1]), []
for path in sys.argv[2:]:
    text = open(path, encoding="utf-8").read()
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        _hlo.hlo_module_from_text(text)
        best = min(best, time.perf_counter() - t)
    out.append(best)
print(json.dumps(out))
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def xla_times(python: str, files: list[Path], repeat: int) -> list[float]:
    """XLA's best parse time of each file (seconds), in one process of ``python``."""
    r = subprocess.run(
        [python, "-c", XLA_TIMER, str(repeat), *map(str, files)], capture_output=True, text=True, check=True
    )
    return json.loads(r.stdout)


def hlo_modules(folder: Path) -> list[Path]:
    """Every HLO module text file of the folder (what XLA's parser reads; not the buffer-assignment files)."""
    out = []
    for p in sorted(folder.glob("*.txt")):
        with open(p, encoding="utf-8", errors="replace") as f:
            if f.read(64).startswith("HloModule "):
                out.append(p)
    return out


def sample_names(files: list[PassFile]) -> list[str]:
    final = Path(files[-1].path).read_text(encoding="utf-8")
    first = Path(files[0].path).read_text(encoding="utf-8")
    names = NAME.findall(final)
    kept = set(names)
    early = [n for n in NAME.findall(first) if n not in kept] or NAME.findall(first)
    out = names[:: max(1, len(names) // 200)][:200] + early[:: max(1, len(early) // 100)][:100]
    return list(dict.fromkeys(out))


def history_row(folder: Path, module: tuple[str, str], files: list[PassFile], args) -> dict:
    paths = [Path(f.path) for f in files]
    rec: dict = {
        "module": f"module_{module[0]}.{module[1]}",
        "files": len(files),
        "mb": round(sum(p.stat().st_size for p in paths) / 1e6, 1),
        "final_mb": round(paths[-1].stat().st_size / 1e6, 2),
    }
    (rec["xla_final_s"],) = xla_times(args.xla_python, [paths[-1]], args.repeat)
    best, cpu, h = float("inf"), float("inf"), None
    for _ in range(args.repeat):
        h = None
        t, c = time.perf_counter(), time.process_time()
        h = PassHistory(files)
        best, cpu = min(best, time.perf_counter() - t), min(cpu, time.process_time() - c)
    assert h is not None
    gc.collect()
    gc.freeze()  # as the server does once a document's background reads are done: no full collection walks it
    rec.update(history_s=best, history_cpu_s=cpu, ratio=best / rec["xla_final_s"])
    times = []
    for n in sample_names(files):
        t = time.perf_counter()
        json.dumps(trace_json(h, n, h.trace(n)))
        times.append((time.perf_counter() - t) * 1000)
    rec.update(trace_n=len(times), trace_p50_ms=statistics.median(times), trace_p95_ms=pct(times, 95))
    rec["trace_max_ms"] = max(times)
    gc.unfreeze()
    return rec


def check_row(folder: Path, args) -> dict:
    modules = hlo_modules(folder)
    every = [p for p in folder.glob("*.txt")]
    xla = xla_times(args.xla_python, modules, 1)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "hlo_lsp", "check", str(folder)], capture_output=True, text=True)
    ours = time.perf_counter() - t
    return {
        "check_files": len(every),
        "check_mb": round(sum(p.stat().st_size for p in every) / 1e6, 1),
        "xla_files": len(modules),
        "xla_mb": round(sum(p.stat().st_size for p in modules) / 1e6, 1),
        "xla_all_s": sum(xla),
        "check_s": ours,
        "check_exit": r.returncode,
        "check_findings": len(r.stdout.splitlines()),
        "check_ratio": sum(xla) / ours,
    }


# -- the server ----------------------------------------------------------------------------------------------------


async def open_pass_file(folder: Path, path: Path, args, log_dir: Path, name: str) -> dict:
    """Open ``path`` in a fresh server rooted at ``folder``; what it read and when, hovers, lenses, RSS."""
    rng = random.Random(21)
    audit = log_dir / f"{name}.opens.tsv"
    audit.write_text("")
    cmd = [sys.executable, "-c", AUDIT_WRAPPER, str(audit), str(folder.resolve())]
    client, _ = await start_server(cmd, folder, log_dir, name)
    rec: dict = {"file": path.name, "mb": round(path.stat().st_size / 1e6, 1)}
    try:
        await wait_idle(client)
        text = path.read_text(encoding="utf-8")
        facts = FileFacts(text)
        rss = RssSampler(client.pid).start()
        t0 = time.monotonic()
        rec["open"] = await open_until_ready(client, path, text, facts, rng)
        rec["idle_s"] = round(time.monotonic() - t0, 2)
        rss.stop()
        rec["rss_peak_mb"], rec["rss_after_mb"] = round(rss.peak), round(tree_rss_mb(client.pid))
        doc = uri(path)
        t = time.monotonic()
        lenses, _ = await client.request("textDocument/codeLens", {"textDocument": {"uri": doc}}, timeout=120)
        rec["lens_s"] = round(time.monotonic() - t, 3)
        titles = [x["command"]["title"] for x in lenses or () if x.get("command")]
        rec["pass_lens"] = next((x for x in titles if x.startswith("pass file ")), None)
        rec["instruction_lenses"] = sum(x.startswith(("made by", "in the input")) for x in titles)
        hovers, with_passes = [], 0
        for ln in rng.sample(facts.instruction_lines, min(60, len(facts.instruction_lines))):
            col = utf16_col(facts.lines[ln], facts.tokens(ln)[0][0])
            params = {"textDocument": {"uri": doc}, "position": {"line": ln, "character": col}}
            try:
                result, s = await client.request("textDocument/hover", params)
            except RequestFailed:
                continue
            hovers.append(s * 1000)
            with_passes += "Passes" in json.dumps(result or {})
        rec.update(hover_p50_ms=pct(hovers, 50), hover_p95_ms=pct(hovers, 95), hover_with_history=with_passes)
        rec["hovers"] = len(hovers)
    finally:
        rec["failures"] = client.failures
        await client.shutdown()
    ready = t0 + (rec["open"]["ready_s"] or rec["open"]["last_diagnostics_s"] or 0)
    before, after = set(), set()
    for row in audit.read_text(encoding="utf-8").splitlines():
        at, event, p = row.split("\t", 2)
        if event == "open" and float(at) >= t0 and not os.path.isdir(p):
            (before if float(at) <= ready else after).add(p)
    rec["opened_until_ready"] = sorted(os.path.basename(p) for p in before)
    rec["opened_in_background"] = len(after - before)
    rec["opened_in_background_mb"] = round(sum(os.path.getsize(p) for p in after - before) / 1e6, 1)
    return rec


async def server_case(folder: Path, args) -> dict:
    (files,) = [v for v in pass_modules(str(folder)).values()][:1]
    path = max((Path(f.path) for f in files if f.seq is not None), key=lambda p: p.stat().st_size)
    log_dir = Path(tempfile.mkdtemp(prefix="bench_passes."))
    try:
        print(f"server: opening {path.name} in {folder} (load {load()})", flush=True)
        with_history = await open_pass_file(folder, path, args, log_dir, "history")
        alone_dir = log_dir / "alone"
        alone_dir.mkdir()
        shutil.copy(path, alone_dir / path.name)
        print(f"server: the same file alone in a folder (load {load()})", flush=True)
        alone = await open_pass_file(alone_dir, alone_dir / path.name, args, log_dir, "alone")
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    return {"with_history": with_history, "alone": alone}


# -- report ---------------------------------------------------------------------------------------------------------


def fmt(x, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def tables(rows: list[dict], server: dict | None) -> str:
    out = [
        "| module | files (MB) | XLA parse of final (s) | history built: wall / CPU (s) | ratio (≤ 3) |"
        " trace p50 / p95 / max (ms, ≤ 20) | `check` folder: files (MB), s | XLA on its HLO files: files (MB), s |"
        " throughput ratio (≥ 0.5) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        check = (
            f"{r['check_files']} ({r['check_mb']}), {r['check_s']:.1f} | {r['xla_files']} ({r['xla_mb']}), "
            f"{r['xla_all_s']:.1f} | {r['check_ratio']:.2f}"
            if "check_s" in r
            else "— | — | —"
        )
        out.append(
            f"| {r['module']} | {r['files']} ({r['mb']}) | {r['xla_final_s']:.3f} | {r['history_s']:.2f} / "
            f"{r['history_cpu_s']:.2f} | {r['ratio']:.2f} | {r['trace_p50_ms']:.2f} / {r['trace_p95_ms']:.2f} / "
            f"{r['trace_max_ms']:.2f} | {check} |"
        )
    if server:
        h, a = server["with_history"], server["alone"]
        out += [
            "",
            f"Server, opening `{h['file']}` ({h['mb']} MB) of the dump, and the same file alone in a folder:",
            "",
            "| | ready (s) | files opened until ready | background done (s) | files opened in the background (MB) |"
            " hovers meanwhile p95 / max (ms) | pass lens once idle | hover once idle p50 / p95 (ms), with the"
            " pass history | RSS peak / after (MB) |",
            "|---|---:|---|---:|---:|---:|---|---:|---:|",
        ]
        for label, s in (("in its pass dump", h), ("alone", a)):
            o = s["open"]
            out.append(
                f"| {label} | {fmt(o['ready_s'])} | {len(s['opened_until_ready'])}"
                f" ({', '.join(s['opened_until_ready'])[:60] or 'none'}) | {fmt(o['background_done_s'])} |"
                f" {s['opened_in_background']} ({s['opened_in_background_mb']}) |"
                f" {fmt(o['probe_p95_ms'], 0)} / {fmt(o['probe_max_ms'], 0)} | {s['pass_lens'] or 'none'} |"
                f" {fmt(s['hover_p50_ms'])} / {fmt(s['hover_p95_ms'])}, {s['hover_with_history']} of {s['hovers']} |"
                f" {s['rss_peak_mb']} / {s['rss_after_mb']} |"
            )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=DEFAULT_DIRS)
    ap.add_argument("--xla-python", default="/tmp/jaxenv/bin/python")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-check", action="store_true", help="skip `hlo-lsp check` over the folders")
    ap.add_argument("--no-server", action="store_true", help="skip the server on the first folder")
    ap.add_argument("--server-only", action="store_true", help="only the server on the first folder")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    for d in args.dirs:
        if not d.is_dir():
            ap.error(f"{d}: no such folder (python3 benchmarks/make_inputs.py --step passes makes it)")
    started = load()
    print(f"load average at start: {started}", flush=True)
    rows = []
    for d in [] if args.server_only else args.dirs:
        for module, files in pass_modules(str(d)).items():
            print(f"{d}: module_{module[0]}.{module[1]}, {len(files)} files (load {load()})", flush=True)
            rec = history_row(d, module, files, args)
            rec["folder"] = str(d)
            rows.append(rec)
        if not args.no_check and rows:
            print(f"{d}: hlo-lsp check and XLA over the folder (load {load()})", flush=True)
            rows[-1].update(check_row(d, args))
    server = None if args.no_server else asyncio.run(server_case(args.dirs[0], args))
    ended = load()
    print()
    print(tables(rows, server))
    print(f"\nload average (1, 5, 15 min): {started} at the start, {ended} at the end")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "server": server, "load": [started, ended]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
