"""XLA shapes: parsing shape strings, byte sizes (unpadded, TPU-tiled, tuple tables) and XLA's human sizes.

Algorithm: `parse_shape` is a single left-to-right scan with an explicit stack of open tuples, so any
nesting depth costs heap, not Python recursion, and the time is linear in the text. Layouts
(``{1,0:T(8,128)(2,1)E(4)S(1)}``) are read by a second small scanner over the text between the braces.
Nothing here raises on bad text: `parse_shape` returns None, and sizes that leave int64 come back as a
`SizeError` value (XLA's sizes are int64, so a larger number can only be a wrong shape).

Byte sizes follow ``ShapeUtil::ByteSizeOf``: arrays are elements x element bytes, where sub-byte types take a
whole byte each unless the layout packs them with ``E(bits)`` (then ceil(elements*bits/8)); ``token`` is 0;
``opaque`` and tuples are pointer tables (pointer_size per element). TPU dumps print tuples as 4 bytes an
element rounded up to 32 (see `dumped_tuple_size_candidates`) and array sizes padded to the first tile
(`padded_byte_size`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from hlo_lsp.core.memos import memo_table

INT64_MAX = (1 << 63) - 1

#: Bits per element of every XLA primitive type as printed in HLO text (primitive_util::BitWidth).
ELEMENT_BITS: dict[str, int] = {
    "pred": 8,
    "s1": 1,
    "u1": 1,
    "s2": 2,
    "u2": 2,
    "s4": 4,
    "u4": 4,
    "s8": 8,
    "u8": 8,
    "s16": 16,
    "u16": 16,
    "s32": 32,
    "u32": 32,
    "s64": 64,
    "u64": 64,
    "f4e2m1fn": 4,
    "f8e5m2": 8,
    "f8e4m3fn": 8,
    "f8e4m3b11fnuz": 8,
    "f8e5m2fnuz": 8,
    "f8e4m3fnuz": 8,
    "f8e4m3": 8,
    "f8e3m4": 8,
    "f8e8m0fnu": 8,
    "bf16": 16,
    "f16": 16,
    "f32": 32,
    "f64": 64,
    "c64": 64,
    "c128": 128,
}
#: Types without a fixed element size: token (0 bytes), opaque (a pointer).
SPECIAL_TYPES = ("token", "opaque")


class SizeError(NamedTuple):
    """A size that cannot be computed (beyond int64, or a shape without a definite size)."""

    message: str

    def __bool__(self) -> bool:  # so `if size:` treats an error as "no size"
        return False


@dataclass(frozen=True, slots=True)
class Layout:
    """A parsed layout. ``tiles`` holds each ``T(...)`` tile; None stands for ``*`` (a combined dimension)."""

    minor_to_major: tuple[int, ...]
    tiles: tuple[tuple[int | None, ...], ...] = ()
    element_size_bits: int = 0
    memory_space: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class Shape:
    """An array (``element_type`` is a primitive), ``token``/``opaque``, or a tuple (``element_type == "tuple"``)."""

    element_type: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()  # True for ``<=N`` (bounded) or ``?`` (unbounded, dim -1)
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] = ()

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def is_array(self) -> bool:
        return self.element_type in ELEMENT_BITS

    @property
    def rank(self) -> int:
        return len(self.dims)


# ----------------------------------------------------------------------------------------------- parsing

_WS = " \t\r\n"
_DIGITS = "0123456789"
_MAX_INT_DIGITS = 19  # int64 has at most 19 decimal digits: never build a 95,000-digit int


def _skip(text: str, i: int, n: int) -> int:
    """Skip whitespace and ``/*...*/`` comments; returns the next index (n at the end)."""
    while i < n:
        c = text[i]
        if c in _WS:
            i += 1
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                return n
            i = j + 2
        else:
            break
    return i


def _read_int(text: str, i: int, n: int) -> tuple[int, int] | None:
    j = i
    while j < n and text[j] in _DIGITS:
        j += 1
    if j == i or j - i > _MAX_INT_DIGITS:
        return None
    v = int(text[i:j])
    if v > INT64_MAX:
        return None
    return v, j


def _parse_array(text: str, i: int, n: int) -> tuple[Shape, int] | None:
    """Parse ``type[dims]{layout}`` starting at i; returns (shape, index after it) or None."""
    j = i
    while j < n and (text[j].isalnum() or text[j] == "_"):
        j += 1
    etype = text[i:j]
    if etype not in ELEMENT_BITS and etype not in SPECIAL_TYPES:
        return None
    if j >= n or text[j] != "[":
        return None
    j += 1
    dims: list[int] = []
    dynamic: list[bool] = []
    j = _skip(text, j, n)
    if j < n and text[j] == "]":
        j += 1
    else:
        while True:
            j = _skip(text, j, n)
            if j >= n:
                return None
            if text[j] == "?":
                dims.append(-1)
                dynamic.append(True)
                j += 1
            else:
                dyn = text.startswith("<=", j)
                if dyn:
                    j += 2
                r = _read_int(text, j, n)
                if r is None:
                    return None
                dims.append(r[0])
                dynamic.append(dyn)
                j = r[1]
            j = _skip(text, j, n)
            if j < n and text[j] == ",":
                j += 1
                continue
            if j < n and text[j] == "]":
                j += 1
                break
            return None
    layout = None
    if j < n and text[j] == "{":
        k = text.find("}", j + 1)
        if k < 0:
            return None
        layout = parse_layout(text[j + 1 : k])
        if layout is None:
            return None
        j = k + 1
    return Shape(etype, tuple(dims), tuple(dynamic), layout), j


def parse_layout(body: str) -> Layout | None:
    """Parse the text between a layout's braces (``1,0:T(8,128)(2,1)S(1)``); None when malformed."""
    text = body
    colon = body.find(":")
    m2m_text = body if colon < 0 else body[:colon]
    m2m: list[int] = []
    if m2m_text.strip():
        for part in m2m_text.split(","):
            part = part.strip()
            if not part.isdigit() or len(part) > _MAX_INT_DIGITS:
                return None
            m2m.append(int(part))
    tiles: list[tuple[int | None, ...]] = []
    esize = 0
    mspace = 0
    if colon >= 0:
        attrs = body[colon + 1 :]
        n = len(attrs)
        i = 0
        last = ""
        while i < n:
            c = attrs[i]
            if c in _WS:
                i += 1
                continue
            # An attribute is a short tag (letters, '#', '*') followed by a parenthesised group.
            j = i
            while j < n and attrs[j] != "(":
                j += 1
            tag = attrs[i:j].strip()
            if j >= n:
                return None
            k = attrs.find(")", j + 1)
            if k < 0:
                return None
            inner = attrs[j + 1 : k]
            if tag == "" and last == "T":
                tag = "T"  # a further tile: T(8,128)(2,1)
            if tag == "T":
                tile: list[int | None] = []
                for part in inner.split(","):
                    part = part.strip()
                    if part == "*":
                        tile.append(None)
                    elif part.isdigit() and len(part) <= _MAX_INT_DIGITS:
                        tile.append(int(part))
                    else:
                        return None
                tiles.append(tuple(tile))
            elif tag == "E":
                if not inner.strip().isdigit():
                    return None
                esize = int(inner.strip()[:_MAX_INT_DIGITS])
            elif tag == "S":
                if not inner.strip().isdigit():
                    return None
                mspace = int(inner.strip()[:_MAX_INT_DIGITS])
            elif tag == "" or not all(ch.isalpha() or ch in "#*_" for ch in tag):
                return None
            last = tag
            i = k + 1
    return Layout(tuple(m2m), tuple(tiles), esize, mspace, text)


# An array shape with a plain layout (no tiles, not followed by another brace): the key of `_ARRAY_MEMO`, so the
# thousands of equal elements of a large tuple (an ENTRY layout of 9,000 parameters) are parsed once. A text is
# stored only when `_parse_array` ended exactly where this match ends, so a hit is what parsing would give.
_ARRAY_TEXT = re.compile(r"[A-Za-z0-9_]+\[[0-9,]*\](?:\{[0-9,]*\})?(?![{\[])")
_ARRAY_MEMO: dict[str, Shape] = memo_table({})
_ARRAY_MEMO_MAX = 4096


def parse_shape(text: str) -> Shape | None:
    """Parse an XLA shape string (array, scalar, token, tuple of any depth); None when it is not one shape."""
    if not isinstance(text, str):
        return None
    n = len(text)
    i = _skip(text, 0, n)
    # Each open tuple is a list of its element shapes so far.
    stack: list[list[Shape]] = []
    result: Shape | None = None
    while True:
        i = _skip(text, i, n)
        if i >= n:
            return None
        c = text[i]
        if c == "(":
            stack.append([])
            i += 1
            i = _skip(text, i, n)
            if i < n and text[i] == ")":
                i += 1
                done = Shape("tuple", tuple_shapes=tuple(stack.pop()))
            else:
                continue
        else:
            m = _ARRAY_TEXT.match(text, i)
            memo = _ARRAY_MEMO.get(m.group()) if m is not None else None
            if m is not None and memo is not None:
                done = memo
                i = m.end()
            else:
                r = _parse_array(text, i, n)
                if r is None:
                    return None
                done, i = r
                if m is not None and i == m.end():
                    if len(_ARRAY_MEMO) >= _ARRAY_MEMO_MAX:
                        _ARRAY_MEMO.clear()
                    _ARRAY_MEMO[m.group()] = done
        # Close as many tuples as the text closes after this element.
        while True:
            if not stack:
                result = done
                break
            stack[-1].append(done)
            i = _skip(text, i, n)
            if i < n and text[i] == ",":
                i += 1
                break
            if i < n and text[i] == ")":
                i += 1
                done = Shape("tuple", tuple_shapes=tuple(stack.pop()))
                continue
            return None
        if result is not None:
            break
    i = _skip(text, i, n)
    return result if i == n else None


# ------------------------------------------------------------------------------------------------ sizes


def element_count(shape: Shape) -> int | SizeError:
    """Number of elements of an array (bounded dynamic dims count at their bound)."""
    count = 1
    for d in shape.dims:
        if d < 0:
            return SizeError(f"unbounded dimension in {_short_text(shape)}")
        count *= d
        if count > INT64_MAX:
            return SizeError(f"element count of {_short_text(shape)} exceeds int64")
    return count


def _element_bits(shape: Shape) -> int:
    """Storage bits per element: the layout's ``E(n)`` when set, else whole bytes (sub-byte types take one)."""
    if shape.layout is not None and shape.layout.element_size_bits:
        return shape.layout.element_size_bits
    return ((ELEMENT_BITS[shape.element_type] + 7) // 8) * 8


def _bytes_for(count: int, bits: int, what: Shape) -> int | SizeError:
    nbytes = (count * bits + 7) // 8
    if nbytes > INT64_MAX:
        return SizeError(f"byte size of {_short_text(what)} exceeds int64")
    return nbytes


def byte_size(shape: Shape, pointer_size: int = 8) -> int | SizeError:
    """``ShapeUtil::ByteSizeOf``: unpadded bytes; tuples are a pointer table (not their elements)."""
    et = shape.element_type
    if et == "tuple":
        return pointer_size * len(shape.tuple_shapes)
    if et == "token":
        return 0
    if et == "opaque":
        return pointer_size
    count = element_count(shape)
    if isinstance(count, SizeError):
        return count
    return _bytes_for(count, _element_bits(shape), shape)


def padded_byte_size(shape: Shape, pointer_size: int = 8) -> int | SizeError:
    """Bytes under TPU tiling: the first ``T(...)`` tile rounds each tiled minor dimension up to the tile
    (dimensions beyond the rank count as 1); later tiles round the result again. Without tiles this is
    `byte_size`. Dimensions are taken in the layout's physical (minor-to-major) order."""
    if shape.element_type not in ELEMENT_BITS or shape.layout is None or not shape.layout.tiles:
        return byte_size(shape, pointer_size)
    rank = len(shape.dims)
    m2m = shape.layout.minor_to_major
    if len(m2m) == rank and sorted(m2m) == list(range(rank)):
        physical = [shape.dims[d] for d in reversed(m2m)]  # major to minor
    else:
        physical = list(shape.dims)
    if any(d < 0 for d in physical):
        return SizeError(f"unbounded dimension in {_short_text(shape)}")
    for tile in shape.layout.tiles:
        k = len(tile)
        if k > len(physical):
            physical = [1] * (k - len(physical)) + physical
        for t in range(1, k + 1):
            size = tile[-t]
            if size is None or size <= 0:
                continue
            d = physical[-t]
            physical[-t] = -(-d // size) * size
    count = 1
    for d in physical:
        count *= d
        if count > INT64_MAX:
            return SizeError(f"padded element count of {_short_text(shape)} exceeds int64")
    return _bytes_for(count, _element_bits(shape), shape)


def dumped_tuple_size_candidates(n_elements: int) -> dict[str, int]:
    """Sizes a buffer-assignment dump prints for a tuple's index table, by platform:
    ``cpu/gpu``: 8 bytes an element; ``tpu``: 4 bytes an element rounded up to a multiple of 32."""
    return {"cpu/gpu": 8 * n_elements, "tpu": -(-4 * n_elements // 32) * 32}


def is_tiled(shape: Shape) -> bool:
    return shape.layout is not None and bool(shape.layout.tiles)


# ------------------------------------------------------------------------------------------- printing


def shape_text(shape: Shape, with_layout: bool = True) -> str:
    """Print a shape back as XLA does (iteratively); layouts as their original text."""
    out: list[str] = []
    # Work items: a Shape to print, or a literal string.
    work: list[object] = [shape]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        s: Shape = item  # type: ignore[assignment]
        if s.element_type == "tuple":
            work.append(")")
            for k in range(len(s.tuple_shapes) - 1, -1, -1):
                work.append(s.tuple_shapes[k])
                if k:
                    work.append(", ")
            out.append("(")
            continue
        dims = ",".join(("?" if d < 0 else ("<=" if dy else "") + str(d)) for d, dy in zip(s.dims, s.dynamic))
        out.append(f"{s.element_type}[{dims}]")
        if with_layout and s.layout is not None:
            out.append("{" + s.layout.text + "}")
    return "".join(out)


def _short_text(shape: Shape, limit: int = 120) -> str:
    """`shape_text` cut for messages: ``f32[9,9,9,…] (100000 dimensions)`` for a shape with too many."""
    text = shape_text(shape, with_layout=False)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(shape.dims)} dimensions)"


def human_size(num_bytes: int) -> str:
    """``tsl::strings::HumanReadableNumBytes``: ``512B``, ``64.1KiB``, ``932.23MiB``, ``2.69GiB``.

    Below 1024 bytes an integer with ``B``; otherwise the value is divided (integer division) by 1024 while it
    is at least 1 MiB, then printed divided by 1024.0 with one decimal for KiB and two for larger units."""
    if num_bytes == -(1 << 63):
        return "-8E"
    neg = "-" if num_bytes < 0 else ""
    n = -num_bytes if num_bytes < 0 else num_bytes
    if n < 1024:
        return f"{neg}{n}B"
    units = "KMGTPE"
    u = 0
    while n >= 1024 * 1024 and u < len(units) - 1:
        n //= 1024
        u += 1
    if units[u] == "K":
        return f"{neg}{n / 1024.0:.1f}{units[u]}iB"
    return f"{neg}{n / 1024.0:.2f}{units[u]}iB"


def parse_human_size(text: str) -> tuple[int, int] | None:
    """The byte interval [lo, hi] that `human_size` could have printed as ``text`` (e.g. ``"1.53MiB"``);
    None when the text is not such a size."""
    t = text.strip()
    if t.endswith("iB") and len(t) > 3 and t[-3] in "KMGTPE":
        unit = "KMGTPE".index(t[-3])
        num = t[:-3]
    elif t.endswith("B") and t[:-1].isdigit():
        v = int(t[:-1][:_MAX_INT_DIGITS])
        return (v, v)
    else:
        return None
    if not num or num.count(".") != 1 or not num.replace(".", "").isdigit() or len(num) > 24:
        return None
    scale = 1024 ** (unit + 1)
    decimals = len(num.split(".")[1])
    # Printed value v (rounded to `decimals`) means the truncated n/1024 lies in [v - h, v + h] with h = half ulp.
    from fractions import Fraction

    printed = Fraction(num)
    h = Fraction(1, 2 * 10**decimals)
    lo = int(max(0, (printed - h) * scale))
    hi = int((printed + h) * scale) + scale // 1024
    return (lo, hi)
