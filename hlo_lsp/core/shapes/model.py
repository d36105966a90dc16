"""The shape records (`Shape`, `Layout`), the bits of each primitive type, and `SizeError`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

INT64_MAX = (1 << 63) - 1
MAX_INT_DIGITS = 19  # int64 has at most 19 decimal digits: never build a 95,000-digit int

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
