"""Every module of a dump folder ranked by its peak (``hlo-lsp peak DIR``, the editors' *rank modules* command):
XLA's peak (live bytes), the bytes reserved at the allocated view's peak, and the largest source lines. Each module
is read with a workspace of its own (memory stays that of one module); one that cannot be read keeps the reason."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from hlo_lsp.core import kinds
from hlo_lsp.core.memory.groups import group_values
from hlo_lsp.core.memory.peak import peak_of_bundle
from hlo_lsp.core.shapes import human_size
from hlo_lsp.core.workspace import ReadError, Workspace

SOURCES = 3  # largest source lines kept per module


@dataclass(slots=True)
class ModulePeak:
    path: str  # the module's HLO text when the folder has it, else the buffer file
    xla_bytes: int | None = None
    xla_step: int | None = None
    reserved_bytes: int | None = None  # at the allocated view's peak
    reserved_step: int | None = None
    sources: list[tuple[str, int]] = field(default_factory=list)  # (source line, bytes at XLA's peak)
    error: str | None = None

    def as_json(self, root: str) -> dict:
        return {
            "module": os.path.relpath(self.path, root),
            "xla_peak_bytes": self.xla_bytes,
            "xla_peak_step": self.xla_step,
            "reserved_peak_bytes": self.reserved_bytes,
            "reserved_peak_step": self.reserved_step,
            "top_sources": [{"source": s, "bytes": b} for s, b in self.sources],
            "error": self.error,
        }


def module_peak(path: str) -> ModulePeak:
    """The peaks of the module ``path`` belongs to (any of its files)."""
    hlo = kinds.sibling_paths(path).get(kinds.HLO)
    row = ModulePeak(str(hlo) if hlo is not None else path)
    try:
        report = peak_of_bundle(Workspace().bundle(os.path.abspath(path)))
    except ReadError as e:
        row.error = str(e)
        return row
    if report is None or (report.xla.step is None and not report.allocated.steps):
        row.error = "no live ranges in this module's buffer files"
        return row
    row.xla_bytes, row.xla_step = report.xla.bytes, report.xla.step
    row.reserved_bytes, row.reserved_step = report.allocated.peak_bytes, report.allocated.peak_step
    row.sources = [(g.key, g.bytes) for g in group_values(report.xla.live, "source")[:SOURCES]]
    return row


def rank_modules(folder: str) -> tuple[list[ModulePeak], list[ModulePeak], list[ModulePeak]]:
    """(by XLA's peak, by reserved bytes, unreadable) for every module with buffer files under ``folder``."""
    rows = [module_peak(p) for p in kinds.buffer_modules(folder)]
    ok = [r for r in rows if r.error is None]
    by_peak = sorted(ok, key=lambda r: (-(r.xla_bytes or 0), r.path))
    by_reserved = sorted(ok, key=lambda r: (-(r.reserved_bytes or 0), r.path))
    return by_peak, by_reserved, [r for r in rows if r.error is not None]


def ranking_text(
    folder: str,
    by_peak: list[ModulePeak],
    by_reserved: list[ModulePeak],
    bad: list[ModulePeak],
    top: int = 0,
    name: Callable[[str], str] | None = None,
) -> str:
    """The ranking as ``hlo-lsp peak DIR`` prints it; ``name`` writes a module's path (default: relative to
    ``folder``; the editors give a link)."""
    name = name or (lambda p: os.path.relpath(p, folder))
    shown = by_peak[:top] if top else by_peak
    lines = [
        f"{len(by_peak)} modules under {folder}, by XLA's peak (live bytes) and reserved bytes at the allocated peak"
    ]
    reserved_rank = {id(r): i + 1 for i, r in enumerate(by_reserved)}
    for i, r in enumerate(shown, 1):
        lines.append(
            f"{i:>3}. {human_size(r.xla_bytes or 0):>10} at step {r.xla_step}  reserved "
            f"{human_size(r.reserved_bytes or 0):>10} (#{reserved_rank[id(r)]})  {name(r.path)}"
        )
        for source, b in r.sources:
            lines.append(f"       {human_size(b):>10}  {source}")
    if top and len(by_peak) > top:
        lines.append(f"  ... {len(by_peak) - top} more modules")
    for r in bad:
        lines.append(f"  unreadable: {name(r.path)}: {r.error}")
    return "\n".join(lines)
