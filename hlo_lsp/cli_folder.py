"""``hlo-lsp peak DIR``: every module of a dump folder (and of the folders under it) ranked by XLA's peak and by
the bytes reserved at the allocated view's peak, each with its largest source lines.

A module is a set of buffer files: a ``*-buffer-assignment.txt`` (current split sets and older single files)
or a ``.txt`` whose first line is ``BufferAssignment:`` (old dumps with plain names). Each is read with a
workspace of its own (memory stays that of one module); one that cannot be read is listed with the reason."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from hlo_lsp.cli_insight import InsightError, _emit, _fail, load_report
from hlo_lsp.core import kinds
from hlo_lsp.core.memory.groups import group_values
from hlo_lsp.core.shapes import human_size
from hlo_lsp.core.workspace import Workspace

SOURCES = 3  # largest source lines shown per module


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


def module_files(folder: str) -> list[str]:
    """One file of each module with buffer files under ``folder`` (sorted; hidden folders skipped)."""
    out = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = os.path.join(here, name)
            if name.endswith("-buffer-assignment.txt"):
                out.append(path)
            elif name.endswith(".txt") and kinds.module_stem(path) is None and _first_line_kind(path) == kinds.SINGLE:
                out.append(path)
    return out


def _first_line_kind(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return None
    return kinds.detect_kind(path, head)


def module_peak(path: str) -> ModulePeak:
    hlo = kinds.sibling_paths(path).get(kinds.HLO)
    row = ModulePeak(str(hlo) if hlo is not None else path)
    try:
        report = load_report(path, Workspace())
    except InsightError as e:
        row.error = str(e)
        return row
    row.xla_bytes, row.xla_step = report.xla.bytes, report.xla.step
    row.reserved_bytes, row.reserved_step = report.allocated.peak_bytes, report.allocated.peak_step
    row.sources = [(g.key, g.bytes) for g in group_values(report.xla.live, "source")[:SOURCES]]
    return row


def rank_folder(folder: str, top: int, fmt: str) -> int:
    files = module_files(folder)
    if not files:
        return _fail(f"{folder}: no module with buffer files under this folder (dump with --xla_dump_hlo_as_text)")
    rows = [module_peak(p) for p in files]
    ok = [r for r in rows if r.error is None]
    by_peak = sorted(ok, key=lambda r: (-(r.xla_bytes or 0), r.path))
    by_reserved = sorted(ok, key=lambda r: (-(r.reserved_bytes or 0), r.path))
    if fmt == "json":
        data = {
            "folder": folder,
            "modules": [r.as_json(folder) for r in by_peak],
            "by_reserved": [os.path.relpath(r.path, folder) for r in by_reserved],
            "unreadable": [r.as_json(folder) for r in rows if r.error is not None],
        }
        _emit(json.dumps(data, indent=1))
        return 0
    _emit(_text(folder, by_peak, by_reserved, [r for r in rows if r.error is not None], top))
    return 0


def _text(
    folder: str, by_peak: list[ModulePeak], by_reserved: list[ModulePeak], bad: list[ModulePeak], top: int
) -> str:
    shown = by_peak[:top] if top else by_peak
    lines = [
        f"{len(by_peak)} modules under {folder}, by XLA's peak (live bytes) and reserved bytes at the allocated peak"
    ]
    reserved_rank = {id(r): i + 1 for i, r in enumerate(by_reserved)}
    for i, r in enumerate(shown, 1):
        name = os.path.relpath(r.path, folder)
        lines.append(
            f"{i:>3}. {human_size(r.xla_bytes or 0):>10} at step {r.xla_step}  reserved "
            f"{human_size(r.reserved_bytes or 0):>10} (#{reserved_rank[id(r)]})  {name}"
        )
        for source, b in r.sources:
            lines.append(f"       {human_size(b):>10}  {source}")
    if top and len(by_peak) > top:
        lines.append(f"  ... {len(by_peak) - top} more modules")
    for r in bad:
        lines.append(f"  unreadable: {os.path.relpath(r.path, folder)}: {r.error}")
    return "\n".join(lines)
