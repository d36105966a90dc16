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

from hlo_lsp.core.shapes.model import ELEMENT_BITS, INT64_MAX, SPECIAL_TYPES, Layout, Shape, SizeError
from hlo_lsp.core.shapes.parse import parse_layout, parse_shape, shape_text
from hlo_lsp.core.shapes.sizes import (
    byte_size,
    dumped_tuple_size_candidates,
    element_count,
    human_size,
    is_tiled,
    padded_byte_size,
    parse_human_size,
)

__all__ = [
    "ELEMENT_BITS",
    "INT64_MAX",
    "SPECIAL_TYPES",
    "Layout",
    "Shape",
    "SizeError",
    "byte_size",
    "dumped_tuple_size_candidates",
    "element_count",
    "human_size",
    "is_tiled",
    "padded_byte_size",
    "parse_human_size",
    "parse_layout",
    "parse_shape",
    "shape_text",
]
