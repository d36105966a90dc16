"""A non-editable `pip install .` into a fresh venv works from another directory: the grammar ships inside the
wheel, and both the checker and the server start."""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _dependency_dirs() -> list[str]:
    """The folders this interpreter imports installed packages from (a venv's site-packages, or the system's)."""
    dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()]
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d)))


def make_venv_with_our_dependencies(env_dir: Path) -> Path:
    """A fresh venv (its own site-packages first) that also sees the running environment's packages for the
    dependencies, with no network. `system_site_packages=True` would give the *base* interpreter's packages,
    not those of the venv running the tests. A plain path in a .pth file adds a folder without running the
    .pth files inside it, so an editable install of hlo_lsp in the running environment stays out of sight."""
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    Path(purelib, "zz_test_dependencies.pth").write_text("\n".join(_dependency_dirs()) + "\n")
    return py


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_wheel_install_runs_from_elsewhere(tmp_path):
    env_dir = tmp_path / "venv"
    py = make_venv_with_our_dependencies(env_dir)
    r = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", str(REPO)], capture_output=True, text=True, timeout=500
    )
    assert r.returncode == 0, r.stdout + r.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [
            str(py),
            "-c",
            "import hlo_lsp, hlo_lsp.core.resources as r; print(hlo_lsp.__file__); print(r.grammar_path('hlo.lark'))",
        ],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=env,
        timeout=60,
    )
    assert where.returncode == 0, where.stdout + where.stderr
    pkg, grammar = where.stdout.split()
    assert str(env_dir) in pkg and str(env_dir) in grammar and "_grammar" in grammar, where.stdout + where.stderr
    bad = REPO / "tests" / "data" / "handwritten" / "invalid" / "i01_undefined_operand.hlo"
    r = subprocess.run(
        [str(env_dir / "bin" / "hlo-lsp"), "check", "--format", "json", str(bad)],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=env,
        timeout=120,
    )
    assert r.returncode == 1 and r.stdout.startswith("["), r.stdout + r.stderr
    assert json.loads(r.stdout)[0]["code"] == "undefined-operand", r.stdout + r.stderr
    # the server answers initialize over stdio
    msg = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    exit_msg = json.dumps({"jsonrpc": "2.0", "method": "exit"})
    payload = "".join(f"Content-Length: {len(m)}\r\n\r\n{m}" for m in (msg, exit_msg))
    r = subprocess.run(
        [str(env_dir / "bin" / "hlo-lsp")],
        input=payload,
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=env,
        timeout=120,
    )
    assert '"hoverProvider":true' in r.stdout.replace(" ", ""), r.stdout[:500] + r.stderr[-500:]


@pytest.mark.parametrize("fmt, missing", [("svg", "matplotlib"), ("png", "matplotlib")])
def test_chart_without_the_extra_names_the_install_command(fmt, missing, tmp_path):
    """Without the charts extra, `hlo-lsp timeline` says which package is missing and the command that installs it
    from a clone (the package is on no index, so `pip install hlo-lsp[charts]` could not work); no traceback."""
    dump = REPO / "examples" / "mlp_sgd" / "module_0000.jit_train_step.cpu_after_optimizations.txt"
    out = tmp_path / f"chart.{fmt}"
    code = (
        f"import sys; sys.modules[{missing!r}] = None; from hlo_lsp.cli import main; "
        f"sys.exit(main(['timeline', {str(dump)!r}, '-o', {str(out)!r}]))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert missing in r.stderr and "pip install '.[charts]'" in r.stderr and "pipx inject" in r.stderr, r.stderr
    assert "hlo-lsp[charts]" not in r.stderr and "Traceback" not in r.stderr and not out.exists(), r.stderr


def test_html_chart_without_plotly_is_a_static_svg_page(tmp_path):
    """Without plotly (the server bundled in the VS Code extension has none) an HTML chart is still written: a
    static SVG, one polygon per category that holds bytes, the peak's top buffers listed, and how to get the
    interactive chart."""
    dump = REPO / "examples" / "mlp_sgd" / "module_0000.jit_train_step.cpu_after_optimizations.txt"
    live = dump.with_name(dump.name.replace(".txt", "-live-range.txt"))
    out = tmp_path / "chart.html"
    code = (
        f"import sys; sys.modules['plotly'] = None; from hlo_lsp.cli import main; "
        f"sys.exit(main(['timeline', {str(dump)!r}, '-o', {str(out)!r}]))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "</svg>" in page and "plotly.js" not in page
    assert page.count("<polygon") >= 2 and "pip install '.[charts]'" in page
    # the XLA peak the live-range file prints is the one marked
    peak = int(re.search(r"Live ranges at (\d+) \(peak\)", live.read_text()).group(1))
    assert f"XLA peak (step {peak})" in page
