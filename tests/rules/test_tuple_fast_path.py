"""A tuple whose shape is written as the tuple of its operands' shapes is accepted without parsing either
(`rules.summary._tuple_of`): on every tuple of the real modules of tests/data, and on each of them with one
element's dimension or type changed, an operand left out or one more, and its element numbers dropped, the
answer with that path equals the answer of the shape inference alone; the changed ones are rejected."""

from __future__ import annotations

import re

import pytest

from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rules import summary
from hlo_lsp.core.hlo.text import INDEX_NUMBER
from hlo_lsp.core.process import fork
from tests.fixtures import DATA

MODULES = [
    p
    for p in sorted(DATA.glob("**/*.txt"))
    if not any(k in p.name for k in ("buffer-assignment", "live-range", "memory-usage"))
    and p.read_text(errors="replace").lstrip().startswith("HloModule")
]


def _tuples() -> list[tuple[str, tuple[str | None, ...], str]]:
    """(shape, operand shapes, attributes) of every tuple instruction the rows pass asked about."""
    seen: list = []
    real = summary._infer_ok

    def record(op, shape, operands, attrs):
        if op == "tuple":
            seen.append((shape, operands, attrs))
        return real(op, shape, operands, attrs)

    mp = pytest.MonkeyPatch()
    mp.setattr(summary, "_infer_ok", record)
    mp.setattr(fork, "ENABLED", False)
    try:
        for p in MODULES:
            summary._ROW_MEMO.clear()  # (memoized per combination: what a test before read is not asked again)
            summary._LINE_MEMO.clear()
            text = p.read_text()
            read_hlo(text, text.split("\n"))
    finally:
        mp.undo()
    return seen


def _inferred(shape, operands, attrs) -> bool:
    mp = pytest.MonkeyPatch()
    mp.setattr(summary, "_tuple_of", lambda *_: False)
    try:
        return summary._infer_ok("tuple", shape, operands, attrs)
    finally:
        mp.undo()


def _changed(shape: str, operands: tuple) -> list[tuple[str, tuple]]:
    """The tuple with one element's first dimension grown, its first f32 made s32, its last operand left out, one
    operand more: none is what XLA infers."""
    out = []
    dim = re.search(r"\[(\d+)", shape)
    if dim:
        out.append((shape[: dim.start(1)] + str(int(dim.group(1)) + 1) + shape[dim.end(1) :], operands))
    if "f32[" in shape:
        out.append((shape.replace("f32[", "s32[", 1), operands))
    if len(operands) > 1:
        out.append((shape, operands[:-1]))
    out.append((shape, (*operands, "f32[7]{0}")))
    return out


TUPLES = _tuples()


def test_the_real_modules_hold_long_tuples_with_element_numbers():
    assert len(TUPLES) > 20
    assert any("/*index=" in shape and summary._tuple_of(shape, ops) for shape, ops, _ in TUPLES)


def test_a_tuple_taken_as_written_is_what_the_inference_answers():
    taken = 0
    for shape, operands, attrs in TUPLES:
        fast = summary._infer_ok("tuple", shape, operands, attrs)
        assert fast == _inferred(shape, operands, attrs), shape[:200]
        taken += None not in operands and summary._tuple_of(shape, operands)
        bare = INDEX_NUMBER.sub("", shape)
        assert summary._infer_ok("tuple", bare, operands, attrs) == _inferred(bare, operands, attrs)
        for wrong, ops in _changed(shape, operands):
            if None in ops:
                continue
            assert not summary._tuple_of(wrong, ops)
            assert summary._infer_ok("tuple", wrong, ops, attrs) is False, wrong[:200]
    assert taken > 20
