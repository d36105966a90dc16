"""`hlo-lsp check` reports the rules through the same aggregator as the server: a faulted copy of a real split
set (in a temporary folder) gives the finding on the right file and line; the real dumps exit clean."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from tests.fixtures import DATA
from tests.rules.dumps import modules
from tests.rules.faults import duplicate_step, moved_onto_live


def _check(*paths, fail_on="warning"):
    return subprocess.run(
        [sys.executable, "-m", "hlo_lsp", "check", "--format", "json", "--fail-on", fail_on, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _copy(m, tmp_path):
    for p in set(m.paths.values()):
        shutil.copy(p, tmp_path / p.name)
    hlo = next(iter(m.paths.values())).name.split("-buffer-assignment")[0]
    src = next(iter(m.paths.values())).with_name(hlo + ".txt")
    if src.exists():
        shutil.copy(src, tmp_path / src.name)
    return {k: tmp_path / p.name for k, p in m.paths.items()}


def test_check_reports_injected_faults_on_their_file_and_line(tmp_path):
    m = next(m for m in modules() if not m.single and moved_onto_live(m) and duplicate_step(m))
    paths = _copy(m, tmp_path)
    for gen in (moved_onto_live, duplicate_step):
        f = gen(m)[0]
        target = paths[next(k for k, p in m.paths.items() if p == f.path)]
        target.write_text(f.text)
        r = _check(*sorted(tmp_path.iterdir()))
        assert r.returncode == 1, r.stderr
        got = {
            (d["path"].split("/")[-1], d["code"], d["line"] - 1)
            for d in json.loads(r.stdout)
            if d["severity"] in ("error", "warning")
        }
        want = {(p.name, code, ln) for p, code, ln in f.expected}
        assert got == want, (f.name, got, want)
        target.write_text(f.path.read_text())  # restore the copy for the next fault


def test_check_real_dumps_clean():
    files = sorted(DATA.glob("seeds/*.txt")) + sorted((DATA / "jax-cpu" / "loops_scan_while").glob("*.txt"))
    r = _check(*files)
    assert r.returncode == 0, r.stdout[:2000]
