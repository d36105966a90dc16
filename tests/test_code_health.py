"""The code's health checks, run by the README's test command and so by CI: ruff (lint and format), mypy on
`hlo_lsp/`, and import-linter's contracts (the layers lsp -> ide -> core, no protocol in the core, no import
cycles, the HLO and buffer pipelines independent, each pipeline one way). Configuration: pyproject.toml.

Each tool comes with the ``test`` extra; run from a checkout without it, its test skips, except under CI=true,
where a missing tool is a failure (a check that silently does not run must not pass)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    exe = BIN / name
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed: `pip install -e '.[test]'` installs it")
        pytest.skip(f"{name} is not installed (the test extra has it)")
    return found


def _run(args: list[str]) -> None:
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"{' '.join(args[:3])} failed:\n{out.stdout[-6000:]}\n{out.stderr[-3000:]}"


def test_ruff_lint():
    _run([_tool("ruff"), "check", "--no-cache", "."])


def test_ruff_format():
    _run([_tool("ruff"), "format", "--check", "--no-cache", "."])


def test_import_contracts():
    _run([_tool("lint-imports"), "--no-cache"])


def test_mypy():
    # no cache: the run leaves nothing in the tree (about 20 s from scratch)
    _run([_tool("mypy"), "--cache-dir=/dev/null"])
