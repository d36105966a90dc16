"""Shapes: parsing every XLA shape form, ByteSizeOf, TPU padding, tuple tables and XLA's human sizes.

Expected sizes come from the dumps themselves (the ``size=`` XLA printed, the ``(932.23MiB)`` beside a total)
or from arithmetic written out in the test, never from a previous run of this code.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_lsp.core.shapes import (
    ELEMENT_BITS,
    SizeError,
    byte_size,
    dumped_tuple_size_candidates,
    human_size,
    padded_byte_size,
    parse_human_size,
    parse_shape,
    shape_text,
)
from tests.fixtures import tuple_elements

DATA = Path(__file__).resolve().parent.parent / "data"
SEEDS = DATA / "seeds"
CORPUS = DATA / "jax-cpu"


def _buffer_texts() -> list[tuple[str, str]]:
    files = [p for p in sorted(SEEDS.glob("*.txt")) if p.read_text().startswith("BufferAssignment:")]
    files += sorted(CORPUS.glob("*/*-buffer-assignment*.txt")) + sorted(CORPUS.glob("*/*-memory-usage-report.txt"))
    return [(p.name, p.read_text(encoding="utf-8")) for p in files]


# ------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text, etype, dims",
    [
        ("f32[8,128]{1,0}", "f32", (8, 128)),
        ("f32[]", "f32", ()),
        ("pred[]", "pred", ()),
        ("token[]", "token", ()),
        ("bf16[4096,3584]{1,0:T(8,128)(2,1)}", "bf16", (4096, 3584)),
        ("f32[]{:T(128)}", "f32", ()),
        ("s4[16]{0:E(4)}", "s4", (16,)),
        ("f32[32,512,4096]{2,1,0:T(8,128)S(1)}", "f32", (32, 512, 4096)),
        ("f32[<=10,4]", "f32", (10, 4)),
        ("f8e4m3b11fnuz[3]{0}", "f8e4m3b11fnuz", (3,)),
        ("u32[]{:S(2)}", "u32", ()),
    ],
)
def test_parse_array_forms(text, etype, dims):
    s = parse_shape(text)
    assert s is not None and s.element_type == etype and s.dims == dims
    assert shape_text(s) == text


def test_layout_parts():
    s = parse_shape("bf16[3584,4096]{1,0:T(8,128)(2,1)S(1)}")
    assert s.layout.minor_to_major == (1, 0)
    assert s.layout.tiles == ((8, 128), (2, 1))
    assert s.layout.memory_space == 1
    assert parse_shape("s4[8]{0:E(4)}").layout.element_size_bits == 4
    assert parse_shape("f32[]{:T(128)}").layout.tiles == ((128,),)
    assert parse_shape("f32[<=10,4]").dynamic == (True, False)


def test_tuples_with_index_comments_and_nesting():
    text = "(f32[2], (s32[], u8[4]), /*index=2*/token[], ())"
    s = parse_shape(text)
    assert s.is_tuple and len(s.tuple_shapes) == 4
    assert s.tuple_shapes[1].tuple_shapes[1].dims == (4,)
    assert s.tuple_shapes[3].is_tuple and s.tuple_shapes[3].tuple_shapes == ()
    assert shape_text(s) == text.replace("/*index=2*/", "")


@pytest.mark.parametrize("etype", sorted(ELEMENT_BITS))
def test_every_element_type(etype):
    s = parse_shape(f"{etype}[3]{{0}}")
    assert s is not None and s.is_array


def test_element_bits_match_xla():
    # primitive_util::BitWidth, written out here independently.
    expected = {
        "pred": 8,
        "s1": 1,
        "u1": 1,
        "s2": 2,
        "u2": 2,
        "s4": 4,
        "u4": 4,
        "f4e2m1fn": 4,
        "s8": 8,
        "u8": 8,
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
        "s16": 16,
        "u16": 16,
        "f32": 32,
        "s32": 32,
        "u32": 32,
        "f64": 64,
        "s64": 64,
        "u64": 64,
        "c64": 64,
        "c128": 128,
    }
    assert ELEMENT_BITS == expected


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "garbage",
        "f32[2",
        "f32[2]{1,0",
        "(f32[]",
        "f32[], f32[]",
        "f32[] x",
        "q32[1]",
        "f32[a]",
        "(f32[],",
        "f32[2]{1,0:T(8,128}",
        "f32[2]{1,0:Q}",
        "((((",
        "))",
        "f32[-1]",
        "f32[" + "9" * 95000 + "]",
    ],
)
def test_garbage_is_none(bad):
    assert parse_shape(bad) is None


@given(st.text(alphabet="f32[]{}(),:TSE0123456789<=/* ", max_size=60))
@settings(max_examples=300, deadline=None)
def test_random_text_never_raises(text):
    s = parse_shape(text)
    if s is not None:
        byte_size(s)
        padded_byte_size(s)
        shape_text(s)


def test_deep_nesting_is_iterative_and_linear():
    depth = 50_000
    t0 = time.perf_counter()
    s = parse_shape("(" * depth + "f32[]" + ")" * depth)
    elapsed = time.perf_counter() - t0
    assert s is not None and byte_size(s) == 8
    assert len(shape_text(s)) == 2 * depth + 5
    # Linear: twice the depth takes well under ten times as long (quadratic would be ~4x, recursion would fail).
    t0 = time.perf_counter()
    assert parse_shape("(" * (2 * depth) + "f32[]" + ")" * (2 * depth)) is not None
    assert time.perf_counter() - t0 < 10 * elapsed + 1.0
    assert parse_shape("(" * depth + "f32[]" + ")" * (depth - 1)) is None


# --------------------------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    "text, size",
    [
        ("f32[8,128]{1,0}", 8 * 128 * 4),
        ("pred[]", 1),
        ("token[]", 0),
        ("opaque[]", 8),
        ("(f32[2], (s32[], u8[4]), token[])", 3 * 8),
        ("s4[3]", 3),  # sub-byte types take a whole byte each without E(n)
        ("s4[3]{0:E(4)}", 2),  # packed: ceil(3*4/8)
        ("u2[5]{0:E(2)}", 2),
        ("f4e2m1fn[7]{0:E(4)}", 4),
        ("c128[2]", 32),
        ("f32[<=10,4]", 160),
        ("f32[]{:T(128)}", 4),  # unpadded
    ],
)
def test_byte_size(text, size):
    assert byte_size(parse_shape(text)) == size


def test_tuple_pointer_size():
    assert byte_size(parse_shape("(f32[], f32[])"), pointer_size=4) == 8


@pytest.mark.parametrize(
    "text, size",
    [
        ("f32[]{:T(128)}", 512),
        ("bf16[4096,3584]{1,0:T(8,128)(2,1)}", 4096 * 3584 * 2),
        ("f32[2,3]{1,0:T(8,128)}", 8 * 128 * 4),
        ("f32[200,3]{1,0:T(8,128)}", 200 * 128 * 4),
        ("f32[200,3]{0,1:T(8,128)}", 8 * 256 * 4),  # physical order: dim 1 major, dim 0 minor
        ("f32[8,128,3584]{2,1,0:T(8,128)S(1)}", 8 * 128 * 3584 * 4),
        ("f32[5]{0}", 20),  # no tiles: the unpadded size
    ],
)
def test_padded_byte_size(text, size):
    assert padded_byte_size(parse_shape(text)) == size


def test_sizes_beyond_int64_are_errors_not_huge_ints():
    s = parse_shape("f32[9999999999,9999999999,9999999999]")
    r = byte_size(s)
    assert isinstance(r, SizeError) and not r and "int64" in r.message
    assert isinstance(padded_byte_size(parse_shape("f32[9999999999,9999999999,99]{2,1,0:T(8,128)}")), SizeError)
    assert isinstance(byte_size(parse_shape("f32[?]")), SizeError)


def test_dumped_tuple_sizes_match_a_platform_rule():
    value = re.compile(r"^ value: <\d+ \S+ @\d+> \(size=(\d+),offset=\d+\): (\(.*\))$", re.M)
    seen = 0
    for name, text in _buffer_texts():
        for m in value.finditer(text):
            n = len(tuple_elements(m.group(2)) or [])
            assert int(m.group(1)) in dumped_tuple_size_candidates(n).values(), (name, m.group(0))
            seen += 1
    assert seen >= 20
    # seed 002's fusion.10{}: 17 elements, 96 bytes on TPU.
    assert dumped_tuple_size_candidates(17)["tpu"] == 96
    assert dumped_tuple_size_candidates(7)["cpu/gpu"] == 56


# ----------------------------------------------------------------------------------------- human size


def test_human_size_matches_every_total_in_seeds_and_corpus():
    total = re.compile(r"^Total bytes(?: used)?: (\d+) \(([^)]*)\)$", re.M)
    n = 0
    for name, text in _buffer_texts():
        for m in total.finditer(text):
            assert human_size(int(m.group(1))) == m.group(2), name
            n += 1
    assert n >= 4 + 2 * 23  # 4 seeds, plus the values file and the report of every corpus module


@pytest.mark.parametrize(
    "n, text",
    [
        (977514064, "932.23MiB"),
        (65638, "64.1KiB"),
        (299944008, "286.05MiB"),
        (2885767252, "2.69GiB"),
        (525448, "513.1KiB"),
        (32768, "32.0KiB"),
        (8, "8B"),
        (0, "0B"),
        (1023, "1023B"),
        (1024, "1.0KiB"),
        (-2048, "-2.0KiB"),
        (1 << 40, "1.00TiB"),
    ],
)
def test_human_size_examples(n, text):
    assert human_size(n) == text


def test_parse_human_size_brackets_the_value():
    rng = random.Random(7)
    for _ in range(2000):
        n = rng.randrange(0, 1 << rng.randrange(1, 50))
        lo, hi = parse_human_size(human_size(n))
        assert lo <= n <= hi
    assert parse_human_size("8B") == (8, 8)
    assert parse_human_size("nonsense") is None
    assert parse_human_size("1.2.3KiB") is None


def test_long_shapes_parsed_again_are_what_a_fresh_parse_gives():
    """Texts of `LONG_SHAPE` characters or more are kept by their text after a parse (a hover on the Adam module's
    ENTRY root, or on any of its 9,000 values, parsed its 184 kB tuple each time): asked again, in any order, past
    the table's size, and for texts that are no shape, the answer is the fresh parse's."""
    from hlo_lsp.core import memos
    from hlo_lsp.core.shapes import parse as P

    rng = random.Random(14)
    elements = ["f32[64]{0}", "f32[128,128]{1,0}", "s32[]", "pred[3,2]{0,1}", "bf16[8]{0:T(128)(2,1)}", "(u8[4], s8[])"]

    def long_text(k: int) -> str:
        parts = []
        for i in range(k):
            parts.append(("/*index=%d*/" % i if i % 5 == 0 and i else "") + rng.choice(elements))
        text = "(" + ", ".join(parts) + ")"
        return text if rng.random() < 0.8 else text[: rng.randrange(P.LONG_SHAPE, len(text))]  # some cut: no shape

    texts = [long_text(rng.randrange(150, 400)) for _ in range(P._LONG_MEMO_MAX + 8)]
    assert all(len(t) >= P.LONG_SHAPE for t in texts) and any(P._parse_shape(t) is None for t in texts)
    P._LONG_MEMO.clear()
    for _ in range(4 * len(texts)):
        text = rng.choice(texts)
        assert parse_shape(text) == P._parse_shape(text)
    assert 0 < len(P._LONG_MEMO) <= P._LONG_MEMO_MAX
    assert any(t is P._LONG_MEMO for t in memos._TABLES)
