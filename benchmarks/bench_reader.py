"""Reader throughput: our HLO and buffer-assignment readers beside XLA's parser and the bare line-scan floor.

Usage::

    python3 benchmarks/bench_reader.py [FILES...] [--repeat 3] [--json OUT.json] [--no-xla] [--bench-dir /tmp/bench]

Without FILES it measures the largest corpus files in ``tests/data/jax-cpu`` (the three largest HLO modules and
the three largest buffer-assignment files), the synthetic 20 MB module ``<bench-dir>/synth/synth_20mb.txt``
(generated with ``synth_module.py`` when missing) and the adam N=3000 dump files when ``make_inputs.py`` made them.

For each file the text is read once, then the reader (``hlo_lsp.core.hlo.read.read_hlo(text, check=False)``, the
index alone, for module text,
``hlo_lsp.core.buffers.read_buffers`` for buffer-assignment files, chosen by ``kinds.detect_kind``) is timed
``--repeat`` times after a ``gc.collect()``; the best run is kept (file read excluded). Beside it:

* XLA's ``hlo_module_from_text`` on the same HLO text, run by ``xla_parse_time.py`` with ``/tmp/jaxenv/bin/python``
  in a subprocess (skipped when that interpreter is missing, or with ``--no-xla``);
* the bare per-line regex scan of ``line_scan.py`` (the floor a pure-Python reader cannot beat).
* for module text also ``read_hlo(text)``, the server's read: the index plus the structural checks and the
  verifier summary of every computation (the rows pass of ``bulk``), column "read + checks".

Prints one Markdown table (MB = 10^6 bytes) and the issue-2 target (reader >= 60 MB/s on the 20 MB synthetic
module); ``--json`` also writes every record. Exit status 0, or 1 when the target is measured and missed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import line_scan  # noqa: E402  (sibling script)

from hlo_lsp.core import kinds  # noqa: E402
from hlo_lsp.core.buffers import read_buffers  # noqa: E402
from hlo_lsp.core.diagnostics import Severity  # noqa: E402
from hlo_lsp.core.hlo.read import read_hlo

JAX_PYTHON = Path("/tmp/jaxenv/bin/python")
TARGET_MB_S = 60.0
ADAM_STEM = "module_0000.jit_adam_update."
ADAM_SUFFIXES = (
    "before_optimizations.txt",
    "cpu_after_optimizations.txt",
    "cpu_after_optimizations-buffer-assignment.txt",
    "cpu_after_optimizations-buffer-assignment-values.txt",
    "cpu_after_optimizations-live-range.txt",
    "cpu_after_optimizations-memory-usage-report.txt",
)


def default_files(bench_dir: Path) -> list[Path]:
    """Largest corpus files, the synthetic 20 MB module (generated if missing) and the adam files present."""
    corpus = sorted((REPO / "tests/data/jax-cpu").glob("*/*.txt"), key=lambda p: -p.stat().st_size)
    hlo = [p for p in corpus if kinds.detect_kind(str(p), "") == kinds.HLO][:3]
    buf = [p for p in corpus if kinds.detect_kind(str(p), "") in kinds.BUFFER_KINDS][:3]
    synth = bench_dir / "synth" / "synth_20mb.txt"
    if not synth.exists():
        synth.parent.mkdir(parents=True, exist_ok=True)
        print(f"generating {synth} ...", file=sys.stderr)
        subprocess.run([sys.executable, str(HERE / "synth_module.py"), str(synth), "--size-mb", "20"], check=True)
    adam = [bench_dir / "adam3000" / (ADAM_STEM + s) for s in ADAM_SUFFIXES]
    return hlo + buf + [synth] + [p for p in adam if p.exists()]


def time_reader(path: Path, text: str, repeat: int) -> dict:
    """Best-of-``repeat`` seconds of our reader on ``text``, with the kind and what it found."""
    kind = kinds.detect_kind(str(path), text[:65536]) or kinds.HLO
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = read_hlo(text, check=False) if kind == kinds.HLO else read_buffers(text, kind)
        best = min(best, time.perf_counter() - start)
    record = {"kind": kind, "reader_s": round(best, 4)}
    if kind == kinds.HLO:  # the server's read: the index plus every computation's checks and verifier summary
        checked = float("inf")
        for _ in range(repeat):
            gc.collect()
            start = time.perf_counter()
            read_hlo(text)
            checked = min(checked, time.perf_counter() - start)
        record["checked_s"] = round(checked, 4)
        record.update(instructions=len(result.instructions), computations=len(result.computations))
    else:
        record.update(
            allocations=len(result.allocations), values=len(result.used_values), live_ranges=len(result.live_ranges)
        )
    record["reader_errors"] = sum(1 for d in result.diagnostics if d.severity == Severity.ERROR)
    return record


def xla_times(files: list[Path], repeat: int) -> dict[str, dict]:
    """XLA's parse record per HLO file path (see xla_parse_time.py); empty when jaxlib is unavailable."""
    if not files or not JAX_PYTHON.exists():
        return {}
    cmd = [str(JAX_PYTHON), str(HERE / "xla_parse_time.py"), *map(str, files), "--repeat", str(repeat), "--json"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        return {r["file"]: r for r in json.loads(out.stdout)}
    except (subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as exc:
        print(f"warning: XLA timing failed: {exc}", file=sys.stderr)
        return {}


def measure(files: list[Path], repeat: int, with_xla: bool) -> list[dict]:
    records = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        mb = len(text.encode("utf-8")) / 1e6
        rec = {"file": str(path), "mb": round(mb, 3)}
        rec.update(time_reader(path, text, repeat))
        rec["reader_mb_s"] = round(mb / rec["reader_s"], 1) if rec["reader_s"] else None
        rec["checked_mb_s"] = round(mb / rec["checked_s"], 1) if rec.get("checked_s") else None
        scan_s, _ = line_scan.time_scan(text, repeat)
        rec["scan_mb_s"] = round(mb / scan_s, 1)
        records.append(rec)
        del text
    if with_xla:
        hlo_files = [Path(r["file"]) for r in records if r["kind"] == kinds.HLO]
        by_file = xla_times(hlo_files, repeat)
        for r in records:
            x = by_file.get(r["file"])
            if x is None:
                continue
            if "error" in x:
                r["xla_error"] = x["error"]
            else:
                r["xla_s"], r["xla_mb_s"] = x["seconds"], x["mb_per_s"]
                r["reader_vs_xla"] = round(r["reader_mb_s"] / x["mb_per_s"], 2)
    return records


def short(path: str) -> str:
    p = Path(path)
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return p.name if p.parent.name != "synth" else f"synth/{p.name}"


def table(records: list[dict]) -> str:
    rows = [
        "| file | kind | MB | reader s | reader MB/s | read + checks MB/s | XLA MB/s | reader / XLA | "
        "line-scan MB/s | errors |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records:
        xla = r.get("xla_mb_s", "rejected" if "xla_error" in r else "n/a")
        rows.append(
            f"| {short(r['file'])} | {r['kind']} | {r['mb']:.2f} | {r['reader_s']:.3f} | {r['reader_mb_s']} "
            f"| {r.get('checked_mb_s') or 'n/a'} | {xla} | {r.get('reader_vs_xla', 'n/a')} | {r['scan_mb_s']} "
            f"| {r['reader_errors']} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per file (best is kept)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the records as JSON")
    ap.add_argument("--no-xla", action="store_true", help="skip XLA's parser")
    ap.add_argument("--bench-dir", type=Path, default=Path(os.environ.get("HLO_BENCH_DIR", "/tmp/bench")))
    args = ap.parse_args(argv)
    files = args.files or default_files(args.bench_dir)
    records = measure(files, max(1, args.repeat), not args.no_xla)
    print(
        f"Reader throughput, best of {max(1, args.repeat)} (MB = 10^6 bytes; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)\n"
    )
    print(table(records))
    synth = [r for r in records if Path(r["file"]).name == "synth_20mb.txt"]
    status = 0
    if synth:
        ok = synth[0]["reader_mb_s"] >= TARGET_MB_S
        status = 0 if ok else 1
        print(
            f"\nTarget (issue 2): read_hlo >= {TARGET_MB_S:.0f} MB/s on synth_20mb.txt: "
            f"{synth[0]['reader_mb_s']} MB/s -> {'met' if ok else 'MISSED'}"
        )
    if args.json:
        args.json.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
