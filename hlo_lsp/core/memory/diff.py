"""What changed at the peak between two dumps of one program (``hlo-lsp peak --diff OLD NEW``).

Instruction names are not stable across compilations (``fusion.10`` may become ``fusion.12``), but the Python
line that made a value is. So values live at each XLA peak are grouped by their source: the innermost frame
(``file.py:12``) when the dump has one, else XLA's ``op_name``, else the instruction name; the groups of the two
dumps are then matched by that label. Each row says whether the group appeared, vanished, grew, shrank or stayed
the same, with the bytes on both sides (XLA's printed measure) and the value names; rows come largest change
first. Linear in the number of values at both peaks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_lsp.core.memory.peak import PeakReport
from hlo_lsp.core.memory.values import LiveValue


@dataclass(slots=True)
class DiffRow:
    label: str  # the source line, op_name or instruction that groups the values
    old_bytes: int
    new_bytes: int
    old_values: list[str] = field(default_factory=list)
    new_values: list[str] = field(default_factory=list)

    @property
    def delta(self) -> int:
        return self.new_bytes - self.old_bytes

    @property
    def status(self) -> str:
        if not self.old_values:
            return "appeared"
        if not self.new_values:
            return "vanished"
        if self.delta > 0:
            return "grew"
        if self.delta < 0:
            return "shrank"
        return "same"

    def as_json(self) -> dict:
        return {
            "source": self.label,
            "status": self.status,
            "old_bytes": self.old_bytes,
            "new_bytes": self.new_bytes,
            "delta": self.delta,
            "old_values": self.old_values,
            "new_values": self.new_values,
        }


@dataclass(slots=True)
class PeakDiff:
    old_step: int | None
    new_step: int | None
    old_bytes: int
    new_bytes: int
    rows: list[DiffRow]

    @property
    def delta(self) -> int:
        return self.new_bytes - self.old_bytes

    def as_json(self, top: int | None = None) -> dict:
        rows = [r for r in self.rows if r.status != "same"]
        return {
            "old": {"peak_step": self.old_step, "peak_bytes": self.old_bytes},
            "new": {"peak_step": self.new_step, "peak_bytes": self.new_bytes},
            "delta": self.delta,
            "changes": [r.as_json() for r in (rows[:top] if top else rows)],
            "unchanged": sum(1 for r in self.rows if r.status == "same"),
        }


def group_label(v: LiveValue) -> str:
    """The label a value is grouped under: ``file:line``, else op_name, else the instruction name."""
    if v.source is not None:
        if v.source.frames:
            f = v.source.frames[0]
            return f"{f.file}:{f.line}"
        if v.source.op_name:
            return v.source.op_name
    return v.instruction


def diff_peaks(old: PeakReport, new: PeakReport) -> PeakDiff:
    """The per-source change of the values live at XLA's peak, from ``old`` to ``new``."""
    rows: dict[str, DiffRow] = {}
    for side, report in (("old", old), ("new", new)):
        for v in report.xla.live:
            label = group_label(v)
            row = rows.setdefault(label, DiffRow(label, 0, 0))
            if side == "old":
                row.old_bytes += v.bytes
                row.old_values.append(v.key)
            else:
                row.new_bytes += v.bytes
                row.new_values.append(v.key)
    ordered = sorted(rows.values(), key=lambda r: (-abs(r.delta), r.label))
    return PeakDiff(old.xla.step, new.xla.step, old.xla.bytes, new.xla.bytes, ordered)
