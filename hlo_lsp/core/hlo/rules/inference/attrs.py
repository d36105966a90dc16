"""Attribute values of one instruction line, read from its attribute text (what follows the operand list) the
way XLA's parser reads them; each reader returns None when the attribute is absent or not of the form XLA
prints, so a rule that needs it skips the instruction (never guesses).

`attr_text` drops ``metadata``, ``backend_config``, ``frontend_attributes`` (a string in them can hold any
text, ``dimensions={...}`` included) and the called computations.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from hlo_lsp.core.hlo.text import CALL_ATTRS, find_close

_KEYS: dict[str, re.Pattern] = {}
_INT = re.compile(r"-?[0-9]{1,18}")


def attr_text(attrs: str) -> str:
    """The attribute text shape inference reads: without ``metadata``, ``backend_config`` and
    ``frontend_attributes`` (whose strings can hold any text, ``dimensions={...}`` included, and which differ
    from instruction to instruction)."""
    for key in _DROPPED:
        k = attrs.find(key)
        if k >= 0:
            end = _value_end(attrs, k + len(key))
            attrs = attrs[:k] + attrs[end:]
    return attrs


# Never read by shape inference: the metadata blocks, and the called computations (a `Site` names those
# itself), whose names differ from instruction to instruction and would defeat the memo of the rows pass.
_DROPPED = (", metadata=", ", backend_config=", ", frontend_attributes=") + tuple(f", {k}=" for k in sorted(CALL_ATTRS))


def _value_end(text: str, i: int) -> int:
    """The end of the attribute value starting at ``i``: a balanced ``{...}`` (strings skipped), a quoted
    string, or up to the next comma."""
    n = len(text)
    if i < n and text[i] == '"':
        j = i + 1
        while j < n and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return min(j + 1, n)
    if i < n and text[i] == "{":
        j = find_close(text, i, "{", "}")
        return n if j < 0 else j + 1
    j = text.find(",", i)
    return n if j < 0 else j


def raw(attrs: str, key: str) -> str | None:
    """The value text of ``key=`` (a braced value whole, else up to the next ``,`` or blank); None if absent."""
    pat = _KEYS.get(key)
    if pat is None:
        pat = _KEYS[key] = re.compile(r"(?:^|[\s,])" + re.escape(key) + r"=")
    m = pat.search(attrs)
    if m is None:
        return None
    i = m.end()
    if attrs.startswith("{", i):
        depth = 0
        for j in range(i, len(attrs)):
            c = attrs[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return attrs[i : j + 1]
        return None
    j, depth = i, 0  # up to a comma or blank outside brackets (`replica_groups=[2,4]<=[8]`)
    while j < len(attrs):
        c = attrs[j]
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif depth <= 0 and c in ", \t":
            break
        j += 1
    return attrs[i:j]


def ints(attrs: str, key: str, absent: tuple[int, ...] | None = None) -> tuple[int, ...] | None:
    """``key={1,2,3}`` as ints; ``absent`` when the attribute is not written; None when malformed."""
    v = raw(attrs, key)
    if v is None:
        return absent
    if not (v.startswith("{") and v.endswith("}")):
        return None
    body = v[1:-1].replace(" ", "")
    if not body:
        return ()
    parts = body.split(",")
    if not all(_INT.fullmatch(p) for p in parts):
        return None
    return tuple(int(p) for p in parts)


def int_value(attrs: str, key: str, absent: int | None = None) -> int | None:
    """``key=N``; ``absent`` when not written, None when malformed."""
    v = raw(attrs, key)
    if v is None:
        return absent
    return int(v) if _INT.fullmatch(v) else None


_SLICE_DIM = re.compile(r"\[([^\[\]]*)\]")  # no `[` inside: linear on a run of `[`


def slices(attrs: str) -> list[tuple[int, int, int]] | None:
    """``slice={[0:4], [2:8:2]}`` as (start, limit, stride) per dimension; None when absent or malformed."""
    v = raw(attrs, "slice")
    if v is None or not v.startswith("{"):
        return None
    out = []
    for m in _SLICE_DIM.finditer(v):
        parts = m.group(1).replace(" ", "").split(":")
        if len(parts) not in (2, 3) or not all(_INT.fullmatch(p) for p in parts):
            return None
        out.append((int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) == 3 else 1))
    return out


def padding(attrs: str) -> list[tuple[int, int, int]] | None:
    """``padding=1_1x2_2_1`` as (low, high, interior) per dimension; None when absent or malformed."""
    v = raw(attrs, "padding")
    if v is None:
        return None
    out = []
    for d in v.split("x") if v else []:
        parts = d.split("_")
        if len(parts) not in (2, 3) or not all(_INT.fullmatch(p) for p in parts):
            return None
        out.append((int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) == 3 else 0))
    return out


class WindowDim(NamedTuple):
    size: int
    stride: int = 1
    pad_lo: int = 0
    pad_hi: int = 0
    base_dilation: int = 1
    window_dilation: int = 1


def window(attrs: str) -> list[WindowDim] | None:
    """``window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1}`` per dimension; [] when
    absent (a window of no dimensions); None when malformed."""
    v = raw(attrs, "window")
    if v is None:
        return []
    if not (v.startswith("{") and v.endswith("}")):
        return None
    fields: dict[str, list[str]] = {}
    for item in v[1:-1].split():
        k, _, val = item.partition("=")
        fields[k] = val.split("x")
    size = fields.get("size")
    if size is None:
        return None
    n = len(size)

    def col(key: str, default: int, k: int) -> list[int] | None:
        vals = fields.get(key)
        if vals is None:
            return [default] * n
        if len(vals) != n:
            return None
        try:
            return [int(x.split("_")[k]) if "_" in x or k == 0 else default for x in vals]
        except ValueError:
            return None

    cols = [
        col("size", 1, 0),
        col("stride", 1, 0),
        col("pad", 0, 0),
        col("pad", 0, 1),
        col("lhs_dilate", 1, 0),
        col("rhs_dilate", 1, 0),
    ]
    if any(c is None for c in cols):
        return None
    return [WindowDim(*vals) for vals in zip(*cols)]


def window_output(base: int, w: WindowDim) -> int:
    """``ShapeInference::InferWindowOutputShape`` for one dimension: the dilated, padded base against the
    dilated window (``window_util::DilatedBound`` and ``StridedBound``)."""
    dilated_base = 0 if base == 0 else (base - 1) * w.base_dilation + 1
    padded = w.pad_lo + dilated_base + w.pad_hi
    dilated_window = 0 if w.size == 0 else (w.size - 1) * w.window_dilation + 1
    if dilated_window > padded or w.stride < 1:
        return 0
    return (padded - dilated_window) // w.stride + 1


_GROUPS_LIST = re.compile(r"\{(\{[0-9, ]*\}(?:,\s*\{[0-9, ]*\})*)?\}")
_GROUPS_IOTA = re.compile(r"\[([0-9]{1,18}),([0-9]{1,18})\]<=\[")


def group_size(attrs: str) -> int | None:
    """The size of the first replica group (``replica_groups={{0,1},{2,3}}`` or the iota form
    ``replica_groups=[2,2]<=[4]``); None when there are none written (``{}``: the module's replica or
    partition count, which the text does not give) or they cannot be read."""
    v = raw(attrs, "replica_groups")
    if v is None:
        return None
    m = _GROUPS_IOTA.match(v)
    if m is not None:
        return int(m.group(2))
    m = _GROUPS_LIST.fullmatch(v.replace(" ", ""))
    if m is None or m.group(1) is None:
        return None
    first = m.group(1)[1 : m.group(1).index("}")]
    return len([x for x in first.split(",") if x])


def dim_labels(attrs: str) -> tuple[str, str, str] | None:
    """``dim_labels=b01f_01io->b01f`` as (input, kernel, output) labels; None when absent or malformed."""
    v = raw(attrs, "dim_labels")
    if v is None:
        return None
    m = re.fullmatch(r"([0-9a-z?]+)_([0-9a-z?]+)->([0-9a-z?]+)", v)
    return (m.group(1), m.group(2), m.group(3)) if m else None
