"""Long fuzz run (not in CI): the seeded fuzz tests of tests/robustness/test_fuzz.py, again and again with fresh
seeds, for a given time.

    python fuzz/run.py --minutes 30 [--seed N]

Each round runs ``pytest tests/robustness/test_fuzz.py`` with ``HLO_FUZZ_SEED`` set to a new seed drawn from
``--seed``: 200 mutated real dumps through every core feature and 30 through the real server over stdio (every
request, 30 s hang timeout, each document then edited into another mutation and asked again). A failing round
keeps its seed (rerun it with ``HLO_FUZZ_SEED=<seed> pytest tests/robustness/test_fuzz.py``). The summary line
is a Markdown row for fuzz/README.md.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"fuzz server run: (\d+) requests, (\d+) JSON-RPC errors, (\d+) hangs, worst latency ([\d.]+) s")


def main() -> int:
    ap = argparse.ArgumentParser(description="long fuzz run of hlo-lsp")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    deadline = time.monotonic() + args.minutes * 60
    rounds = requests = errors = hangs = 0
    worst = 0.0
    failed: list[int] = []
    while time.monotonic() < deadline:
        s = rnd.randrange(1 << 31)
        env = {**os.environ, "HLO_FUZZ_SEED": str(s)}
        r = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "tests/robustness/test_fuzz.py"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        rounds += 1
        m = LINE.search(r.stdout)
        if m:
            requests += int(m.group(1))
            errors += int(m.group(2))
            hangs += int(m.group(3))
            worst = max(worst, float(m.group(4)))
        if r.returncode != 0:
            failed.append(s)
            print(f"seed {s} failed:\n{r.stdout[-3000:]}", file=sys.stderr)
    print(
        f"| {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} | {args.minutes:g} min | --seed {args.seed} | "
        f"{rounds} rounds: {rounds * 200} core inputs, {rounds * 30} server documents | {requests} requests "
        f"({errors} JSON-RPC errors) | {len(failed)} failing rounds {failed} | {hangs} hangs | "
        f"worst request {worst:.2f} s |"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
