"""Clear errors: `hlo-lsp check` on a missing, unreadable, binary or non-UTF-8 file prints one line naming the
file and the problem and exits 2 (never a traceback); the server's one diagnostic for such documents is tested
in test_hostile_server (`test_unreadable_document_gets_one_diagnostic`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.robustness.cases import HLO_SEED


def _check(*paths: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hlo_lsp", "check", *paths], capture_output=True, text=True, timeout=120
    )


def _bad_file(tmp_path, kind: str) -> tuple[str, tuple[str, ...]]:
    """(path, words one of which the message must contain)."""
    p = tmp_path / "m.cpu_after_optimizations.txt"
    if kind == "missing":
        return str(tmp_path / "nope.hlo"), ("no such file",)
    if kind == "unreadable":  # a path through a regular file: unreadable even for root
        p.write_text("x")
        return str(p / "inner.hlo"), ("cannot read", "no such file", "not a directory")
    if kind == "fifo":
        os.mkfifo(tmp_path / "pipe.hlo")
        return str(tmp_path / "pipe.hlo"), ("cannot read", "not a regular file", "special")
    if kind == "directory-as-file":
        (tmp_path / "d.hlo").mkdir()
        return str(tmp_path / "d.hlo"), ("directory", "not an XLA dump", "no dump")
    if kind == "binary":
        p.write_bytes(HLO_SEED.read_bytes()[:2000] + b"\x00\x01\x02" * 100)
    elif kind == "non-utf8":
        p.write_bytes(HLO_SEED.read_bytes()[:2000] + b"\xff\xfe\xfa")
    elif kind == "utf16":
        p.write_bytes(HLO_SEED.read_text()[:2000].encode("utf-16"))
    return str(p), ("binary", "UTF-8", "NUL")


@pytest.mark.parametrize("kind", ["missing", "unreadable", "binary", "non-utf8", "utf16", "fifo"])
def test_check_bad_file_is_one_line_and_exit_2(tmp_path, kind):
    path, words = _bad_file(tmp_path, kind)
    r = _check(path)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    assert path in lines[0] and any(w.lower() in lines[0].lower() for w in words), lines[0]
    assert "Traceback" not in r.stderr + r.stdout


def test_bad_files_beside_good_ones_each_get_their_line(tmp_path):
    bad, _ = _bad_file(tmp_path, "binary")
    r = _check(str(HLO_SEED), bad, str(tmp_path / "gone.txt"))
    assert r.returncode == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 2 and bad in lines[0] + lines[1] and "gone.txt" in lines[0] + lines[1], r.stderr
    assert "Traceback" not in r.stderr
