"""Byte sizes of shapes (unpadded, TPU-tiled, tuple tables) and XLA's human sizes (``932.23MiB``)."""

from __future__ import annotations

from hlo_lsp.core.shapes.model import ELEMENT_BITS, INT64_MAX, MAX_INT_DIGITS, Shape, SizeError
from hlo_lsp.core.shapes.parse import shape_text


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
    elif t.endswith("B") and t.isascii() and t[:-1].isdigit():
        v = int(t[:-1][:MAX_INT_DIGITS])
        return (v, v)
    else:
        return None
    if not num or num.count(".") != 1 or not (num.isascii() and num.replace(".", "").isdigit()) or len(num) > 24:
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
