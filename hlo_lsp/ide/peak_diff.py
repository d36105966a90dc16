"""The peak diff of two dumps as a read-only document, for the editors' *compare peaks* command (the server's
``hlo.peakDiff``): `core.memory.diff`'s rows, and under each row its changed values with a link to the
instruction on each side, so that a click lands in the old or the new module.

Links are written as ``file:///path#L12`` (VS Code opens them at the line) or as ``/path:12`` (Neovim's ``gF``).
"""

from __future__ import annotations

import os
from pathlib import Path

from hlo_lsp.core.kinds import buffer_modules
from hlo_lsp.core.memory.diff import diff_peaks
from hlo_lsp.core.memory.peak import PeakReport
from hlo_lsp.core.memory.values import LiveValue
from hlo_lsp.core.shapes import human_size
from hlo_lsp.core.workspace import ModuleBundle, ReadError, Workspace
from hlo_lsp.ide.context import instruction_definition
from hlo_lsp.ide.lens import report_for

MAX_ROWS = 200
MAX_VALUES = 8  # changed values listed under one row


class DiffError(Exception):
    """Why no diff can be made (one line for the user)."""


def newest_pair(folder: str) -> tuple[str, str]:
    """The two most recently written modules with buffer files under ``folder``: (older, newer)."""

    def written(path: str) -> float:
        try:
            return os.path.getmtime(path)
        except OSError:
            return 0.0

    found = sorted(buffer_modules(folder), key=lambda p: (written(p), p))
    if len(found) < 2:
        raise DiffError(f"{folder}: fewer than two modules with buffer files to compare")
    return found[-2], found[-1]


def _report(ws: Workspace, path: str) -> tuple[ModuleBundle, PeakReport]:
    try:
        bundle = ws.bundle(os.path.abspath(path), read_large=True)
    except ReadError as e:
        raise DiffError(str(e)) from None
    report = report_for(bundle)
    if report is None or report.xla.step is None:
        raise DiffError(f"{os.path.basename(path)}: no buffer-assignment files with live ranges for this module")
    return bundle, report


def _link(bundle: ModuleBundle, v: LiveValue, style: str) -> str:
    loc = instruction_definition(bundle, v.instruction)
    if loc is None:
        return ""
    if style == "path":
        return f"{loc.path}:{loc.range.start_line + 1}"
    return f"{Path(loc.path).as_uri()}#L{loc.range.start_line + 1}"


def _file(path: str, style: str) -> str:
    return path if style == "path" else Path(path).as_uri()


def diff_document(ws: Workspace, old: str, new: str, style: str = "uri") -> str:
    """The text of the diff of ``old`` and ``new`` (any file of each module); DiffError when one has no peak."""
    (old_bundle, old_report), (new_bundle, new_report) = _report(ws, old), _report(ws, new)
    d = diff_peaks(old_report, new_report)
    sign = "+" if d.delta >= 0 else "-"
    counts: dict[str, int] = {}
    for p in d.pairs:
        counts[p.status] = counts.get(p.status, 0) + 1
    old_file = old_bundle.hlo.path if old_bundle.hlo is not None else old
    new_file = new_bundle.hlo.path if new_bundle.hlo is not None else new
    lines = [
        f"XLA's peak: {human_size(d.old_bytes)} at step {d.old_step} -> {human_size(d.new_bytes)} at step "
        f"{d.new_step} ({sign}{human_size(abs(d.delta))})",
        f"old: {_file(old_file, style)}",
        f"new: {_file(new_file, style)}",
        "values at the peaks: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())),
        "",
    ]
    changed = [r for r in d.rows if r.status != "same"]
    for row in changed[:MAX_ROWS]:
        s = "+" if row.delta >= 0 else "-"
        label = f"{row.old_label} -> {row.label}" if row.old_label else row.label
        lines.append(f"{row.status:<9} {s}{human_size(abs(row.delta)):>10}  {label}")
        shown = [p for p in row.pairs if p.status != "same"]
        for p in shown[:MAX_VALUES]:
            for side, v, bundle in (("old", p.old, old_bundle), ("new", p.new, new_bundle)):
                if v is not None:
                    lines.append(
                        f"    {side} {v.key} {v.shape or '?'} {human_size(v.bytes)}  {_link(bundle, v, style)}".rstrip()
                    )
        if len(shown) > MAX_VALUES:
            lines.append(f"    ... {len(shown) - MAX_VALUES} more values")
    if len(changed) > MAX_ROWS:
        lines.append(f"... {len(changed) - MAX_ROWS} more rows (hlo-lsp peak --diff gives them all)")
    if not changed:
        lines.append("no change in what is live at the peak")
    return "\n".join(lines) + "\n"
