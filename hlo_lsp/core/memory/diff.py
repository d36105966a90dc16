"""What changed at the peak between two dumps of one program (``hlo-lsp peak --diff OLD NEW``).

The values live at each XLA peak are first matched one to one by identity, most specific first, each value at
most once:

1. the same instruction name, shape and ``op_name`` (the same value);
2. the same ``op_name``, source line and shape (renamed: names change between jax/XLA versions);
3. the same ``op_name`` and shape (its source line moved: lines inserted above it);
4. the same instruction name and ``op_name`` (the value changed: its shape or dtype);
5. the same ``op_name`` and source line (renamed and changed).

(2-5 only for values that carry an ``op_name``.) A matched pair is ``same``, ``grew`` or ``shrank`` by XLA's
printed bytes, ``moved`` when its source line changed, and shows both sides; a value left unmatched ``appeared``
or ``vanished``. The pairs are then grouped by source line (``file.py:12`` of the innermost frame, else
``op_name``, else the instruction): a group of moved values is one row ``old line -> new line``. Rows come
largest change first. Linear in the number of values at both peaks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from hlo_lsp.core.memory.peak import PeakReport
from hlo_lsp.core.memory.values import LiveValue


def group_label(v: LiveValue) -> str:
    """The label a value is grouped under: ``file:line``, else op_name, else the instruction name."""
    if v.source is not None:
        if v.source.frames:
            f = v.source.frames[0]
            return f"{f.file}:{f.line}"
        if v.source.op_name:
            return v.source.op_name
    return v.instruction


def _op_name(v: LiveValue) -> str | None:
    return v.source.op_name if v.source is not None and v.source.op_name else None


def _line(v: LiveValue) -> str | None:
    s = v.source
    return f"{s.frames[0].file}:{s.frames[0].line}" if s is not None and s.frames else None


# the identity keys of a value, most specific first (None: this key does not apply to the value)
_KEYS: tuple[tuple[str, Callable[[LiveValue], tuple | None]], ...] = (
    ("same value", lambda v: (v.instruction, v.shape, _op_name(v))),
    ("renamed", lambda v: (_op_name(v), _line(v), v.shape) if _op_name(v) and _line(v) else None),
    ("moved", lambda v: (_op_name(v), v.shape) if _op_name(v) else None),
    ("changed", lambda v: (v.instruction, _op_name(v)) if _op_name(v) else None),
    ("renamed and changed", lambda v: (_op_name(v), _line(v)) if _op_name(v) and _line(v) else None),
)


@dataclass(slots=True)
class ValuePair:
    """One value at the old peak and its match at the new one; either side None when it has no match."""

    old: LiveValue | None
    new: LiveValue | None
    matched_by: str | None = None  # the identity key that matched them (`_KEYS`)

    @property
    def delta(self) -> int:
        return (self.new.bytes if self.new else 0) - (self.old.bytes if self.old else 0)

    @property
    def status(self) -> str:
        if self.old is None:
            return "appeared"
        if self.new is None:
            return "vanished"
        if group_label(self.old) != group_label(self.new) and _line(self.old) and _line(self.new):
            return "moved"
        if self.delta:
            return "grew" if self.delta > 0 else "shrank"
        return "changed" if self.old.shape != self.new.shape else "same"

    def as_json(self) -> dict:
        def side(v: LiveValue | None) -> dict | None:
            if v is None:
                return None
            return {"value": v.key, "bytes": v.bytes, "shape": v.shape, "source": group_label(v)}

        return {"status": self.status, "matched_by": self.matched_by, "old": side(self.old), "new": side(self.new)}


def match_values(old: list[LiveValue], new: list[LiveValue]) -> list[ValuePair]:
    """Every value of both peaks in one pair (`ValuePair`), matched by the identity keys in order."""
    left = list(old)
    right = list(new)
    pairs: list[ValuePair] = []
    for name, key in _KEYS:
        waiting: dict[tuple, list[int]] = defaultdict(list)
        for j, v in enumerate(right):
            k = key(v)
            if k is not None:
                waiting[k].append(j)
        for k_list in waiting.values():
            k_list.reverse()  # pop() takes them in order
        taken: set[int] = set()
        rest = []
        for v in left:
            k = key(v)
            js = waiting.get(k) if k is not None else None
            if js:
                j = js.pop()
                taken.add(j)
                pairs.append(ValuePair(v, right[j], name))
            else:
                rest.append(v)
        left = rest
        right = [v for j, v in enumerate(right) if j not in taken]
    pairs += [ValuePair(v, None) for v in left]
    pairs += [ValuePair(None, v) for v in right]
    return pairs


@dataclass(slots=True)
class DiffRow:
    label: str  # the source line, op_name or instruction that groups the values (the new side's when moved)
    old_bytes: int
    new_bytes: int
    old_values: list[str] = field(default_factory=list)
    new_values: list[str] = field(default_factory=list)
    old_label: str | None = None  # the old side's label, for a group whose lines moved
    pairs: list[ValuePair] = field(default_factory=list)

    @property
    def delta(self) -> int:
        return self.new_bytes - self.old_bytes

    @property
    def status(self) -> str:
        if self.old_label is not None:
            return "moved"
        if not self.old_values:
            return "appeared"
        if not self.new_values:
            return "vanished"
        if self.delta > 0:
            return "grew"
        if self.delta < 0:
            return "shrank"
        return "changed" if any(p.status == "changed" for p in self.pairs) else "same"

    def as_json(self) -> dict:
        return {
            "source": self.label,
            "old_source": self.old_label,
            "status": self.status,
            "old_bytes": self.old_bytes,
            "new_bytes": self.new_bytes,
            "delta": self.delta,
            "old_values": self.old_values,
            "new_values": self.new_values,
            "values": [p.as_json() for p in self.pairs if p.status != "same"],
        }


@dataclass(slots=True)
class PeakDiff:
    old_step: int | None
    new_step: int | None
    old_bytes: int
    new_bytes: int
    rows: list[DiffRow]
    pairs: list[ValuePair] = field(default_factory=list)

    @property
    def delta(self) -> int:
        return self.new_bytes - self.old_bytes

    def as_json(self, top: int | None = None) -> dict:
        rows = [r for r in self.rows if r.status != "same"]
        counts: dict[str, int] = defaultdict(int)
        for p in self.pairs:
            counts[p.status] += 1
        return {
            "old": {"peak_step": self.old_step, "peak_bytes": self.old_bytes},
            "new": {"peak_step": self.new_step, "peak_bytes": self.new_bytes},
            "delta": self.delta,
            "values": dict(sorted(counts.items())),
            "changes": [r.as_json() for r in (rows[:top] if top else rows)],
            "unchanged": sum(1 for r in self.rows if r.status == "same"),
        }


def diff_peaks(old: PeakReport, new: PeakReport) -> PeakDiff:
    """The change of the values live at XLA's peak, from ``old`` to ``new``: values matched by identity, grouped
    by source line."""
    pairs = match_values(old.xla.live, new.xla.live)
    rows: dict[tuple[str, str | None], DiffRow] = {}
    for p in pairs:
        moved = p.status == "moved"
        label = group_label(p.new) if p.new is not None else group_label(p.old)  # type: ignore[arg-type]
        old_label = group_label(p.old) if moved and p.old is not None else None
        row = rows.get((label, old_label))
        if row is None:
            row = rows[(label, old_label)] = DiffRow(label, 0, 0, old_label=old_label)
        row.pairs.append(p)
        if p.old is not None:
            row.old_bytes += p.old.bytes
            row.old_values.append(p.old.key)
        if p.new is not None:
            row.new_bytes += p.new.bytes
            row.new_values.append(p.new.key)
    ordered = sorted(rows.values(), key=lambda r: (-abs(r.delta), r.status == "moved", r.label))
    return PeakDiff(old.xla.step, new.xla.step, old.xla.bytes, new.xla.bytes, ordered, pairs)
