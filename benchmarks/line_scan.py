"""Time a bare per-line regex scan of dump files: the floor any Python parser of ours pays.

Usage::

    python3 benchmarks/line_scan.py FILE... [--repeat 3] [--json]

For each file the text is read once, then ``for line in text.splitlines(): rx.match(line)`` is timed
``--repeat`` times (best run kept, file read excluded), with ``rx`` matching the start of an HLO
instruction (``[ROOT] %name = ``). Nothing is built from the matches, so a real parser that also has to
split lines and look at each one cannot beat this figure in pure Python. Throughput is in MB/s with
MB = 10^6 bytes of file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

INSTRUCTION_START = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*")


def time_scan(text: str, repeat: int) -> tuple[float, int]:
    """Return (best seconds over ``repeat`` scans, number of lines matched)."""
    best, matched = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        matched = 0
        for line in text.splitlines():
            if INSTRUCTION_START.match(line):
                matched += 1
        best = min(best, time.perf_counter() - start)
    return best, matched


def measure(path: Path, repeat: int) -> dict:
    """Return a result record for one file: path, mb, seconds, mb_per_s and matched line count."""
    text = path.read_text(encoding="utf-8")
    mb = len(text.encode("utf-8")) / 1e6
    seconds, matched = time_scan(text, repeat)
    return {
        "file": str(path),
        "mb": round(mb, 3),
        "seconds": round(seconds, 4),
        "mb_per_s": round(mb / seconds, 2),
        "matched_lines": matched,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=3, help="timed scans per file (best is kept)")
    ap.add_argument("--json", action="store_true", help="print one JSON list instead of a table")
    args = ap.parse_args(argv)
    records = [measure(path, max(1, args.repeat)) for path in args.files]
    if args.json:
        print(json.dumps(records, indent=1))
    else:
        for r in records:
            print(f"{r['file']}: {r['mb']:.2f} MB  {r['seconds']:.3f} s  {r['mb_per_s']:.1f} MB/s (line scan)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
