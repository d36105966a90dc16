"""The tests' own reading of a pass-by-pass dump (never hlo_lsp's): its files in pass order, the pass a file's
name says just ran, and each instruction's line."""

from __future__ import annotations

import re
from pathlib import Path


def pass_order(folder: Path) -> list[Path]:
    """before_optimizations, the numbered files by their sequence number, then the after-optimizations file."""
    files = sorted(folder.glob("module_*.txt"))
    numbered = sorted((p for p in files if re.search(r"\.\d{4}\.", p.name)), key=lambda p: p.name)
    return (
        [p for p in files if p.name.endswith(".before_optimizations.txt")]
        + numbered
        + [p for p in files if p.name.endswith("after_optimizations.txt")]
    )


def definitions(path: Path) -> dict[str, tuple[int, str, str | None]]:
    """name -> (0-based line, line text, computation) of every instruction line."""
    out: dict[str, tuple[int, str, str | None]] = {}
    comp = None
    for i, line in enumerate(path.read_text().split("\n")):
        head = re.match(r"(?:ENTRY )?%([^\s(]+) .*\{$", line)
        if head:
            comp = head.group(1)
        m = re.match(r"\s+(?:ROOT )?%([^\s=]+) = ", line)
        if m:
            out[m.group(1)] = (i, line, comp)
    return out


def ran(path: Path) -> str | None:
    """The pass a numbered file's name says just ran: ``after_<A>`` (not pipeline-start), or the during-pass file's
    pass; None for the others."""
    m = re.search(r"\.\d{4}\.([^.]+)\.(.*)\.txt$", path.name)
    if m is None:
        return None
    if ".before_" not in m.group(2):
        return m.group(1)
    after = m.group(2)[len("after_") :].split(".before_")[0]
    return None if after == "pipeline-start" else after
