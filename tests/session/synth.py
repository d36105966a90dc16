"""A module over 2 MB (the size where the server reads in a worker thread and the bulk rows pass takes over),
made by `benchmarks/synth_module.py` from a real dump of tests/data."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def large_module(out: Path, size_mb: float = 2.6) -> str:
    """Write the synthetic module to ``out`` (once) and return its text."""
    if not out.exists():
        spec = importlib.util.spec_from_file_location("synth_module", REPO / "benchmarks" / "synth_module.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules.setdefault("synth_module", mod)  # its dataclasses look their module up
        spec.loader.exec_module(sys.modules["synth_module"])
        mod = sys.modules["synth_module"]
        mod.synthesize(mod.DEFAULT_SRC.read_text(), out, size_mb)
    return out.read_text()


def entry_line(text: str) -> int:
    """The zero-based line of the ENTRY computation's header."""
    return next(i for i, line in enumerate(text.split("\n")) if line.startswith("ENTRY"))
