"""The values live at XLA's peak grouped by where they come from: the Python line that made them (``source``, the
innermost frame of their metadata), XLA's ``op_name``, the element type (``dtype``), their allocation's category
(``category``: parameter, output, constant, temporary) or, for entry parameters, the argument they hold
(``param``: ``params['w1']`` as jax names it in the parameter's op_name; a donated buffer's later values
count for the argument whose buffer they reuse). A group's bytes are XLA's printed bytes of
its values, so the groups of one key add up to the peak's bytes."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from hlo_lsp.core.memory.values import LiveValue
from hlo_lsp.core.shapes import human_size

GROUP_KEYS = ("source", "op_name", "dtype", "category", "param")
_DTYPE = re.compile(r"\s*([a-z][a-z0-9]*)\[")


@dataclass(frozen=True, slots=True)
class Group:
    key: str
    bytes: int
    count: int

    def as_json(self) -> dict:
        return {"key": self.key, "bytes": self.bytes, "count": self.count}


def dtype_of(shape: str | None) -> str:
    """``f32`` of ``f32[4,8]{1,0}``; ``tuple`` for a tuple shape, ``token`` for a token, ``?`` when unknown."""
    if not shape:
        return "?"
    if shape.lstrip().startswith("("):
        return "tuple"
    m = _DTYPE.match(shape)
    if m:
        return m.group(1)
    return shape.strip().split("[", 1)[0] or "?"


def _source(v: LiveValue) -> str:
    if v.source is not None and v.source.frames:
        return v.source.frames[0].label()
    return "(no source line)"


def _op_name(v: LiveValue) -> str:
    return v.source.op_name if v.source is not None and v.source.op_name else "(no op_name)"


def _param(v: LiveValue) -> str:
    return v.param or "(not in a parameter's buffer)"


_KEYS: dict[str, Callable[[LiveValue], str]] = {
    "source": _source,
    "op_name": _op_name,
    "dtype": lambda v: dtype_of(v.shape),
    "category": lambda v: v.category or "(no allocation)",
    "param": _param,
}


def group_values(values: list[LiveValue], key: str) -> list[Group]:
    """``values`` grouped by ``key`` (one of `GROUP_KEYS`), largest first (then by key)."""
    if key not in _KEYS:
        raise ValueError(f"group by one of {', '.join(GROUP_KEYS)}, not {key!r}")
    of = _KEYS[key]
    sums: dict[str, list[int]] = {}
    for v in values:
        acc = sums.setdefault(of(v), [0, 0])
        acc[0] += v.bytes
        acc[1] += 1
    return sorted((Group(k, b, n) for k, (b, n) in sums.items()), key=lambda g: (-g.bytes, g.key))


GROUP_TITLES = {
    "source": "source line",
    "op_name": "op_name",
    "dtype": "dtype",
    "category": "category",
    "param": "argument (param)",
}


def group_rows(groups: list[Group], top: int = 0) -> list[str]:
    """The groups as text rows (``  6.03MiB      3 values  file.py:34 (f)``): the ``top`` largest (0: all),
    then one row for the rest."""
    shown = groups[:top] if top else groups
    out = [f"  {human_size(g.bytes):>10}  {g.count:>5} values  {g.key}" for g in shown]
    if len(groups) > len(shown):
        rest = sum(g.bytes for g in groups[len(shown) :])
        out.append(f"  {human_size(rest):>10}  ... {len(groups) - len(shown)} more groups")
    return out
