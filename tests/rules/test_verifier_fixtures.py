"""Each verifier-level rule on small hand-written modules: the faulty form gives exactly its (code, line), and
the legal neighbour XLA accepts (layouts, mixed precision, scalar clamp bounds, bitcast reinterpretation, a
touching tuple element...) gives nothing. Line numbers are zero-based lines of the fixture text."""

from __future__ import annotations

import pytest

from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rules.verifier import verify

ADD = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

CASES = [
    # (id, body of ENTRY e, expected code or None, line within the body)
    (
        "add-dims",
        "x = f32[4] parameter(0)\n  y = f32[5] parameter(1)\n  ROOT r = f32[4] add(x, y)",
        "verifier.elementwise-shape",
        2,
    ),
    (
        "add-layouts-differ-ok",
        "x = f32[4,2]{0,1} parameter(0)\n  y = f32[4,2]{1,0} parameter(1)\n  ROOT r = f32[4,2]{1,0} add(x, y)",
        None,
        0,
    ),
    (
        "add-types",
        "x = f32[4] parameter(0)\n  y = s32[4] parameter(1)\n  ROOT r = f32[4] add(x, y)",
        "verifier.element-type",
        2,
    ),
    (
        "add-mixed-precision-ok",
        "x = f32[4] parameter(0)\n  y = bf16[4] parameter(1)\n  ROOT r = f32[4] add(x, y)",
        None,
        0,
    ),
    ("negate-type", "x = s32[4] parameter(0)\n  ROOT r = f32[4] negate(x)", "verifier.element-type", 1),
    (
        "compare-not-pred",
        "x = f32[4] parameter(0)\n  ROOT r = f32[4] compare(x, x), direction=LT",
        "verifier.element-type",
        1,
    ),
    ("compare-ok", "x = f32[4] parameter(0)\n  ROOT r = pred[4] compare(x, x), direction=LT", None, 0),
    ("convert-dims", "x = f32[4] parameter(0)\n  ROOT r = s32[3] convert(x)", "verifier.elementwise-shape", 1),
    ("convert-type-ok", "x = f32[4] parameter(0)\n  ROOT r = s32[4] convert(x)", None, 0),
    (
        "select-pred-type",
        "p = s32[4] parameter(0)\n  x = f32[4] parameter(1)\n  ROOT r = f32[4] select(p, x, x)",
        "verifier.element-type",
        2,
    ),
    ("select-ok", "p = pred[4] parameter(0)\n  x = f32[4] parameter(1)\n  ROOT r = f32[4] select(p, x, x)", None, 0),
    (
        "clamp-scalar-bounds-ok",
        "lo = f32[] parameter(0)\n  x = f32[4] parameter(1)\n  ROOT r = f32[4] clamp(lo, x, lo)",
        None,
        0,
    ),
    (
        "clamp-dims",
        "lo = f32[3] parameter(0)\n  x = f32[4] parameter(1)\n  hi = f32[] parameter(2)\n"
        "  ROOT r = f32[4] clamp(lo, x, hi)",
        "verifier.elementwise-shape",
        3,
    ),
    (
        "bitcast-convert-same-width-dims",
        "x = f32[4] parameter(0)\n  ROOT r = s32[5] bitcast-convert(x)",
        "verifier.bitcast-convert",
        1,
    ),
    ("bitcast-convert-narrower-ok", "x = f32[4] parameter(0)\n  ROOT r = u8[4,4] bitcast-convert(x)", None, 0),
    ("bitcast-convert-wider-ok", "x = u8[4,4] parameter(0)\n  ROOT r = f32[4] bitcast-convert(x)", None, 0),
    (
        "bitcast-convert-wider-bad",
        "x = u8[4,2] parameter(0)\n  ROOT r = f32[4] bitcast-convert(x)",
        "verifier.bitcast-convert",
        1,
    ),
    ("reshape-count", "x = f32[4,2] parameter(0)\n  ROOT r = f32[9] reshape(x)", "verifier.element-count", 1),
    ("reshape-ok", "x = f32[4,2] parameter(0)\n  ROOT r = f32[2,2,2] reshape(x)", None, 0),
    ("bitcast-reinterpret-ok", "x = u8[16] parameter(0)\n  ROOT r = f32[4] bitcast(x)", None, 0),
    ("bitcast-size", "x = f32[16] parameter(0)\n  ROOT r = f32[4] bitcast(x)", "verifier.element-count", 1),
    (
        "gte-range",
        "t = (f32[4], s32[]) parameter(0)\n  ROOT g = f32[4] get-tuple-element(t), index=2",
        "verifier.tuple-index",
        1,
    ),
    (
        "gte-shape",
        "t = (f32[4], s32[]) parameter(0)\n  ROOT g = f32[4] get-tuple-element(t), index=1",
        "verifier.tuple-index",
        1,
    ),
    ("gte-ok", "t = (f32[4], s32[]) parameter(0)\n  ROOT g = s32[] get-tuple-element(t), index=1", None, 0),
    (
        "written-shape",
        "x = f32[2] parameter(0)\n  ROOT y = f32[2] add(f32[3] x, f32[2] x)",
        "operand-shape-mismatch",
        1,
    ),
    ("written-shape-ok", "x = f32[2]{0} parameter(0)\n  ROOT y = f32[2]{0} add(f32[2]{0} %x, f32[2]{0} %x)", None, 0),
    (
        "reduce-arity",
        "x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[] reduce(x, z, z), dimensions={0}, to_apply=add",
        "verifier.called-parameters",
        2,
    ),
    (
        "reduce-ok",
        "x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add",
        None,
        0,
    ),
    (
        "map-arity",
        "x = f32[4] parameter(0)\n  ROOT r = f32[4] map(x), dimensions={0}, to_apply=add",
        "verifier.called-parameters",
        1,
    ),
    (
        "call-shape",
        "x = f32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT r = f32[] call(x, y), to_apply=add",
        "verifier.called-parameters",
        2,
    ),
    ("call-ok", "x = f32[] parameter(0)\n  ROOT r = f32[] call(x, x), to_apply=add", None, 0),
]


def _module(body: str) -> tuple[str, int]:
    head = ADD + "\nENTRY e {\n  "
    return head + body + "\n}\n", head.count("\n")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rule_fixture(case):
    _id, body, code, line = case
    text, first = _module(body)
    got = [(d.code, d.range.start_line) for d in verify(read_hlo(text))]
    assert got == ([] if code is None else [(code, first + line)]), text


WHILE = """HloModule w

cond {
  c = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  b = (s32[], f32[4]) parameter(0)
  ROOT o = (s32[], f32[4]) copy(b)
}

ENTRY e {
  s = (s32[], f32[4]) parameter(0)
  ROOT w = (s32[], f32[4]) while(s), condition=cond, body=body
}
"""


def test_while_body_and_condition_take_the_loop_shape():
    assert verify(read_hlo(WHILE)) == []
    bad = WHILE.replace("b = (s32[], f32[4]) parameter(0)", "b = (s32[], f32[5]) parameter(0)")
    bad = bad.replace("ROOT o = (s32[], f32[4]) copy(b)", "ROOT o = (s32[], f32[5]) copy(b)")
    line = bad.split("\n").index("  ROOT w = (s32[], f32[4]) while(s), condition=cond, body=body")
    # the body takes another shape than the loop passes, and returns another than the loop's result (HandleWhile)
    assert sorted((d.code, d.range.start_line) for d in verify(read_hlo(bad))) == [
        ("verifier.called-parameters", line),
        ("verifier.shape-inference", line),
    ]


def test_entry_layout_count_and_result():
    text = (
        "HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n\nENTRY e {\n"
        "  x = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(x)\n}\n"
    )
    assert verify(read_hlo(text)) == []
    two = text.replace("{(f32[4]{0})->", "{(f32[4]{0}, f32[4]{0})->")
    res = text.replace("->f32[4]{0}}", "->f32[5]{0}}")
    for t in (two, res):
        assert [(d.code, d.range.start_line) for d in verify(read_hlo(t))] == [("verifier.entry-layout", 0)]
    other_layout = (
        "HloModule m, entry_computation_layout={(f32[4,2]{0,1})->f32[4,2]{0,1}}\n\nENTRY e {\n"
        "  x = f32[4,2]{1,0} parameter(0)\n  ROOT n = f32[4,2]{1,0} negate(x)\n}\n"
    )
    assert verify(read_hlo(other_layout)) == []  # the layout may differ: XLA compares with Compatible


def test_hostile_values_never_raise():
    huge = "9" * 5000
    text = (
        f"HloModule m\n\nENTRY e {{\n  t = (f32[4]) parameter(0)\n  ROOT g = f32[4] get-tuple-element(t), "
        f"index={huge}\n}}\n"
    )
    assert [d.code for d in verify(read_hlo(text))] == ["verifier.tuple-index"]
    text2 = text.replace(f"index={huge}", "index=²")
    assert verify(read_hlo(text2)) == []


def test_lenient_where_xla_is():
    """Forms some XLA pipeline accepts: abs of complex is real; a TPU bitcast whose tiled sizes agree."""
    body = "x = c64[4] parameter(0)\n  ROOT r = f32[4] abs(x)"
    assert verify(read_hlo(_module(body)[0])) == []
    body = "x = f32[8,127]{1,0:T(8,128)} parameter(0)\n  ROOT r = f32[8,128]{1,0:T(8,128)} bitcast(x)"
    assert verify(read_hlo(_module(body)[0])) == []
