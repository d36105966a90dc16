"""`hlo-lsp check`: gcc-style text and JSON output, exit codes, folders, and one-line I/O errors. Every real dump
folder checks clean."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.fixtures import DATA, IN_CI, SHARED

INVALID = DATA / "handwritten" / "invalid" / "i01_undefined_operand.hlo"


def run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "hlo_lsp", "check", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


@pytest.mark.parametrize("folder", ["seeds", "jax-cpu"])
def test_real_folders_check_clean(folder):
    r = run("--fail-on", "warning", DATA / folder)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "" and r.stderr == ""


def test_shared_folders_check_clean():
    if not SHARED.is_dir():
        if IN_CI:
            pytest.fail(f"{SHARED} not found (CI=true: a wrong path must not pass)")
        pytest.skip(f"{SHARED} is not here")
    r = run("--fail-on", "warning", SHARED / "seeds", SHARED / "corpus")
    assert r.returncode == 0, r.stdout[:2000] + r.stderr
    assert r.stdout == ""


def test_text_format_and_exit_code():
    r = run(INVALID)
    lines = INVALID.read_text().split("\n")
    assert r.returncode == 1
    (out,) = r.stdout.splitlines()
    path, line, col, sev, rest = out.split(":", 4)
    assert path == str(INVALID) and sev == " error" and rest.endswith("[undefined-operand]")
    assert lines[int(line) - 1][int(col) - 1] == "z"  # 1-based, at the undefined name


def test_json_format_and_fail_on():
    r = run("--format", "json", INVALID)
    assert r.returncode == 1
    (d,) = json.loads(r.stdout)
    assert set(d) == {"path", "line", "column", "end_line", "end_column", "severity", "code", "message"}
    assert d["severity"] == "error" and d["code"] == "undefined-operand"
    assert d["end_column"] - d["column"] == 1
    clean = run("--format", "json", DATA / "seeds" / "001_2b3b731b0feb0bfe.txt")
    assert clean.returncode == 0 and json.loads(clean.stdout) == []


def test_columns_are_code_points(tmp_path):
    f = tmp_path / "astral.hlo"
    f.write_text(
        'HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %r = f32[] add(%a, %b), metadata={op_name="\U0001d538"}\n}\n'
    )
    r = run("--format", "json", f)
    cols = [d["column"] for d in json.loads(r.stdout)]
    line = f.read_text().split("\n")[3]
    assert cols == [line.index("%a") + 1, line.index("%b") + 1] or cols == [line.index("a,") + 1, line.index("b)") + 1]


def test_io_errors_are_one_line_and_exit_2(tmp_path):
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"HloModule m\x00\x01\x02")
    latin = tmp_path / "l.hlo"
    latin.write_bytes(b"HloModule m\n\xff\xfe\n")
    for bad, why in ((tmp_path / "missing.txt", "no such file"), (binary, "binary"), (latin, "not UTF-8")):
        r = run(bad)
        assert r.returncode == 2, (bad, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and str(bad) in r.stderr and why in r.stderr
        assert "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "hlo_lsp", "check"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_folder_without_dumps_says_so_and_exits_2(tmp_path):
    """A folder with no XLA dump in it (empty, or only other files) is named on stderr and the exit is 2, also
    beside a folder that does hold dumps; a wrong path in a CI job must not pass silently."""
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other"
    (other / "sub").mkdir(parents=True)
    (other / "notes.txt").write_text("Some notes about HloModule dumps.\n")
    (other / "sub" / "program.py").write_text("print('hi')\n")
    for args in ((empty,), (other,), (DATA / "seeds", empty)):
        r = run(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and str(args[-1]) in lines[0] and "no XLA dump" in lines[0], r.stderr
        assert "--xla_dump_to" in lines[0] and "Traceback" not in r.stderr
        assert r.stdout == ""


def test_donation_hints_only_with_hints():
    """The donation hints are advice, not findings: ``check`` prints them with --hints only, and they never fail it."""
    module = DATA / "jax-cpu" / "mlp_sgd" / "module_0000.jit_train_step.cpu_after_optimizations.txt"
    plain = run("--format", "json", "--fail-on", "warning", module)
    assert plain.returncode == 0 and json.loads(plain.stdout) == []
    hinted = run("--format", "json", "--fail-on", "warning", "--hints", module)
    found = json.loads(hinted.stdout)
    assert hinted.returncode == 0 and found
    assert {(d["severity"], d["code"]) for d in found} == {("information", "hlo.donation-hint")}
