"""Shared helpers for the grammar tests: finding HLO files and reading a module's expectation line."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fixtures import DATA, REPO, SHARED, require_found  # noqa: F401 (re-exported for the grammar tests)

HANDWRITTEN = DATA / "handwritten"

_EXPECT = re.compile(r"// expect-(error|warning): (\d+) (\S+)")


def expectation(text: str) -> tuple[str, int, str] | None:
    """(severity, zero-based line, code) from a first-line `// expect-error: LINE code` comment."""
    m = _EXPECT.match(text)
    if not m:
        return None
    return m.group(1), int(m.group(2)) - 1, m.group(3)


def is_hlo_module(path: Path) -> bool:
    """True for HLO module text: `.hlo`, or a file whose first code line starts with `HloModule`."""
    if path.suffix == ".hlo":
        return True
    if "buffer-assignment" in path.name or "live-range" in path.name or "memory-usage" in path.name:
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip():
                    return line.startswith("HloModule")
    except OSError:
        return False
    return False


def hlo_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and is_hlo_module(p) and "handwritten" not in p.parts)
