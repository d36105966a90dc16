"""Time XLA's own HLO text parser on dump files: the reference speed for our parser.

Usage (needs jaxlib, e.g. the scratch venv made by make_inputs.py)::

    /tmp/jaxenv/bin/python benchmarks/xla_parse_time.py FILE... [--repeat 3] [--json]

For each file the text is read once, then ``jaxlib._hlo.hlo_module_from_text(text)`` is timed ``--repeat``
times (best run kept; the file read is excluded, the str-to-C++ conversion is included). Throughput is
reported in MB/s with MB = 10^6 bytes of file. A file XLA rejects is reported with its error instead.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path


def time_parse(text: str, repeat: int) -> tuple[float, str]:
    """Return (best seconds over ``repeat`` parses, module name). Raises what XLA raises on bad text."""
    from jaxlib import _hlo  # noqa: PLC0415  (optional dependency, imported only when timing)

    best, name = float("inf"), ""
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        module = _hlo.hlo_module_from_text(text)
        best = min(best, time.perf_counter() - start)
        name = module.name
        del module
    return best, name


def measure(path: Path, repeat: int) -> dict:
    """Return a result record for one file: path, mb, and seconds/mb_per_s/module, or error."""
    text = path.read_text(encoding="utf-8")
    mb = len(text.encode("utf-8")) / 1e6
    record: dict = {"file": str(path), "mb": round(mb, 3)}
    try:
        seconds, name = time_parse(text, repeat)
    except ImportError as exc:
        raise SystemExit(f"error: jaxlib is needed (run with /tmp/jaxenv/bin/python): {exc}") from exc
    except Exception as exc:  # noqa: BLE001  (XLA raises its own runtime error type)
        record["error"] = str(exc).splitlines()[0]
        return record
    record.update(seconds=round(seconds, 4), mb_per_s=round(mb / seconds, 2), module=name)
    return record


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns 1 if XLA rejected any file, else 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=3, help="timed parses per file (best is kept)")
    ap.add_argument("--json", action="store_true", help="print one JSON list instead of a table")
    args = ap.parse_args(argv)
    records = [measure(path, max(1, args.repeat)) for path in args.files]
    if args.json:
        print(json.dumps(records, indent=1))
    else:
        for r in records:
            if "error" in r:
                print(f"{r['file']}: {r['mb']:.2f} MB  XLA error: {r['error']}")
            else:
                print(f"{r['file']}: {r['mb']:.2f} MB  {r['seconds']:.3f} s  {r['mb_per_s']:.1f} MB/s (XLA)")
    return 1 if any("error" in r for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
