"""Byte sizes against the sizes XLA printed: every array value's dumped ``size=`` is at least its unpadded
``ShapeUtil::ByteSizeOf``, and every TPU-tiled array value's size equals the padded rule (39 of 39 in seeds
002/004). The values and their counts are found in the text by this test's own regex."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_lsp.core.shapes import byte_size, padded_byte_size, parse_shape

DATA = Path(__file__).resolve().parent.parent / "data"
TPU_SEEDS = [DATA / "seeds" / "002_b0117d631587537a.txt", DATA / "seeds" / "004_a3085531593bac68.txt"]
ALL_LISTINGS = (
    [DATA / "seeds" / n for n in ("000_45ad91e6d67cdb55.txt", "003_6f652c95ac4cfb4d.txt")]
    + TPU_SEEDS
    + sorted(DATA.glob("jax-cpu/*/*-buffer-assignment.txt"))
)
VALUE = re.compile(r"^ value: <\d+ (\S+) @\d+> \(size=(\d+),offset=\d+\): (.+)$", re.M)


def array_values(path: Path) -> list[tuple[str, int, str]]:
    """(name, dumped size, shape text) of every value whose shape is an array (not a tuple)."""
    return [
        (m.group(1), int(m.group(2)), m.group(3))
        for m in VALUE.finditer(path.read_text(encoding="utf-8"))
        if not m.group(3).startswith("(")
    ]


@pytest.mark.parametrize("path", ALL_LISTINGS, ids=[p.name for p in ALL_LISTINGS])
def test_every_array_value_holds_its_unpadded_size(path):
    values = array_values(path)
    assert values
    for name, size, shape_text in values:
        shape = parse_shape(shape_text)
        assert shape is not None and shape.is_array, shape_text
        unpadded = byte_size(shape)
        assert isinstance(unpadded, int) and size >= unpadded, (name, size, shape_text, unpadded)


def test_every_tiled_value_in_tpu_seeds_has_the_padded_size():
    tiled = [v for p in TPU_SEEDS for v in array_values(p) if ":T(" in v[2]]
    matches = [(name, size, text) for name, size, text in tiled if padded_byte_size(parse_shape(text)) == size]
    assert len(tiled) == 39  # counted in the text above; the issue expects 39 of 39
    assert len(matches) == len(tiled), [v for v in tiled if v not in matches]


def test_padding_matters_for_some_tpu_values():
    # The rule is not vacuous: for f32[]{:T(128)} values the unpadded size (4) is not what XLA printed (512).
    tiled = [v for p in TPU_SEEDS for v in array_values(p) if ":T(" in v[2]]
    differ = [v for v in tiled if byte_size(parse_shape(v[2])) != v[1]]
    assert differ and all(padded_byte_size(parse_shape(t)) == s for _, s, t in differ)
