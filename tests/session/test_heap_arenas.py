"""The server caps glibc's malloc arenas at start (issue 15: reads in worker threads left their freed memory
fragmented in per-thread arenas). Whether that keeps RSS down is measured by benchmarks/soak.py; here, that the
cap is applied where it can be, and that an explicit ``MALLOC_ARENA_MAX`` is left to win."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

CODE = "from hlo_lsp.core.process.heap import limit_arenas; print(limit_arenas())"


def _run(env: dict[str, str]) -> str:
    return subprocess.run(
        [sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="mallopt(M_ARENA_MAX) is glibc's"
)
def test_arenas_capped_on_glibc():
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert _run(env) == "True"


def test_explicit_malloc_arena_max_wins():
    assert _run({**os.environ, "MALLOC_ARENA_MAX": "4"}) == "False"
