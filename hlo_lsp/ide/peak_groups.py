"""The values live at XLA's peak grouped by where they come from, in the editor (`core.memory.groups`): by source
line, op_name, dtype, category and argument.

- A code lens on the peak step (the ``Live ranges at N (peak)`` line, the step's line of the InstructionSequence,
  the peak instruction in HLO text) names the largest source lines (``by source: mlp.py:11 1.53MiB · ...``) and
  runs ``hlo.peakGroups``, which answers every grouping as a read-only document (`groups_document`).
- A hover on the ``Live ranges at N (peak)`` line shows the five groupings, the largest groups of each.

Every grouping's bytes add up to the XLA peak's (the bytes XLA prints for each value).
"""

from __future__ import annotations

import os

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.memory.groups import GROUP_KEYS, GROUP_TITLES, group_rows, group_values
from hlo_lsp.core.memory.peak import PeakReport
from hlo_lsp.core.shapes import human_size
from hlo_lsp.ide.types import HoverResult

PEAK_GROUPS = "hlo.peakGroups"
HOVER_ROWS = 5  # groups of each key a hover shows
LENS_SOURCES = 2  # source lines a lens names


def _header(report: PeakReport) -> str:
    x = report.xla
    at = f" ({report.peak_instruction})" if report.peak_instruction else ""
    return f"XLA peak at step {x.step}{at}: {human_size(x.bytes)} in {len(x.live)} values"


def lens_title(report: PeakReport) -> str | None:
    """``by source: mlp.py:11 1.53MiB · mlp.py:25 1.02MiB · 3 more`` (file names without folders); None when
    nothing is live at the peak."""
    groups = group_values(report.xla.live, "source")
    if not groups:
        return None
    shown = [f"{_short(g.key)} {human_size(g.bytes)}" for g in groups[:LENS_SOURCES]]
    rest = len(groups) - len(shown)
    return "by source: " + " · ".join(shown) + (f" · {rest} more" if rest else "") + " · all groupings"


def _short(key: str) -> str:
    """``mlp.py:11`` of ``programs/mlp.py:11 (mlp)``; other keys as they are."""
    where = key.split(" (", 1)[0]
    return os.path.basename(where) if ":" in where and not key.startswith("(") else key


def groups_text(report: PeakReport, top: int = 0) -> str:
    """Every grouping of the XLA peak's values, ``top`` groups each (0: all)."""
    lines = [_header(report)]
    for key in GROUP_KEYS:
        groups = group_values(report.xla.live, key)
        lines += ["", f"By {GROUP_TITLES[key]} ({len(groups)} groups):"]
        lines += group_rows(groups, top)
    return "\n".join(lines)


def groups_document(report: PeakReport, path: str) -> dict:
    """The answer of ``hlo.peakGroups``: ``{"title", "text"}``, every group of every key."""
    return {"title": f"Peak groups: {os.path.basename(path)}", "text": groups_text(report) + "\n"}


def groups_hover(report: PeakReport, rng: Range) -> HoverResult | None:
    """The hover of the peak line: the largest groups of each key; None when nothing is live at the peak."""
    if not report.xla.live:
        return None
    md = [f"**{_header(report)}**, grouped:", ""]
    plain = [_header(report) + ", grouped:"]
    for key in GROUP_KEYS:
        groups = group_values(report.xla.live, key)
        rows = group_rows(groups, HOVER_ROWS)
        md += [f"**By {GROUP_TITLES[key]}** ({len(groups)} groups)", "```text", *rows, "```"]
        plain += [f"By {GROUP_TITLES[key]} ({len(groups)} groups):", *rows]
    return HoverResult("\n".join(md), "\n".join(plain), rng)
