"""Shape inference on small modules whose answers are worked out by hand from XLA's definitions (each case
gives the result XLA infers and one it rejects): window arithmetic, gather batching, shard counts, dot batch
order, padding, strided slices, variadic reduce, the calling opcodes' roots."""

from __future__ import annotations

import pytest

from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rules.verifier import verify

# (name, parameters and helper lines, the instruction with {R} for its result shape, result XLA infers, a wrong one)
CASES = [
    (
        "conv stride pad dilation",
        "x = f32[1,10,10,3] parameter(0)\n  k = f32[3,3,3,8] parameter(1)",
        "{R} convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f",
        # dilated window 5, padded base 12: (12 - 5) / 2 + 1 = 4
        "f32[1,4,4,8]",
        "f32[1,5,5,8]",
    ),
    (
        "conv batch groups",
        "x = f32[8,5,4] parameter(0)\n  k = f32[3,4,6] parameter(1)",
        "{R} convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f, batch_group_count=2",
        "f32[4,3,6]",
        "f32[8,3,6]",
    ),
    (
        "reduce-window base dilation",
        "x = f32[5] parameter(0)\n  z = f32[] parameter(1)",
        "{R} reduce-window(x, z), window={size=2 stride=1 pad=1_0 lhs_dilate=2}, to_apply=add",
        # dilated base 9, padded 10: 10 - 2 + 1 = 9
        "f32[9]",
        "f32[10]",
    ),
    (
        "gather with batching dims",
        "x = f32[4,10,7] parameter(0)\n  i = s32[4,3,1] parameter(1)",
        "{R} gather(x, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, "
        "slice_sizes={1,1,7}, operand_batching_dims={0}, start_indices_batching_dims={0}",
        "f32[4,3,7]",
        "f32[4,3,1,7]",
    ),
    (
        "dot batch first",
        "a = f32[2,3,5] parameter(0)\n  b = f32[5,2,4] parameter(1)",
        "{R} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}",
        "f32[2,3,4]",
        "f32[3,2,4]",
    ),
    (
        "pad interior and negative",
        "x = f32[4,3] parameter(0)\n  z = f32[] parameter(1)",
        "{R} pad(x, z), padding=1_2_1x-1_0",
        "f32[10,2]",
        "f32[9,2]",
    ),
    ("strided slice", "x = f32[10] parameter(0)", "{R} slice(x), slice={[1:8:3]}", "f32[3]", "f32[2]"),
    (
        "variadic reduce",
        "x = f32[4,5] parameter(0)\n  y = s32[4,5] parameter(1)\n  z = f32[] parameter(2)\n  w = s32[] parameter(3)",
        "{R} reduce(x, y, z, w), dimensions={1}, to_apply=pair",
        "(f32[4], s32[4])",
        "(f32[4], f32[4])",
    ),
    (
        "all-gather group",
        "x = f32[3,8] parameter(0)",
        "{R} all-gather(x), replica_groups={{0,1,2,3}}, dimensions={1}",
        "f32[3,32]",
        "f32[3,24]",
    ),
    (
        "all-gather no groups: a multiple",
        "x = f32[3,8] parameter(0)",
        "{R} all-gather(x), replica_groups={}, dimensions={1}",
        "f32[3,24]",
        "f32[3,20]",
    ),
    (
        "all-gather iota groups",
        "x = f32[6] parameter(0)",
        "{R} all-gather(x), channel_id=1, replica_groups=[2,4]<=[8], use_global_device_ids=true, dimensions={0}",
        "f32[24]",
        "f32[12]",
    ),
    (
        "reduce-scatter group",
        "x = f32[12,2] parameter(0)",
        "{R} reduce-scatter(x), replica_groups={{0,1,2}}, dimensions={0}, to_apply=add",
        "f32[4,2]",
        "f32[6,2]",
    ),
    (
        "broadcast keeps operand dims",
        "x = f32[3] parameter(0)",
        "{R} broadcast(x), dimensions={1}",
        "f32[7,3]",
        "f32[7,4]",
    ),
    ("transpose", "x = f32[2,3,4] parameter(0)", "{R} transpose(x), dimensions={2,0,1}", "f32[4,2,3]", "f32[4,3,2]"),
    (
        "concatenate",
        "x = f32[2,3] parameter(0)\n  y = f32[2,5] parameter(1)",
        "{R} concatenate(x, y), dimensions={1}",
        "f32[2,8]",
        "f32[2,7]",
    ),
    ("fft real", "x = f32[4,16] parameter(0)", "{R} fft(x), fft_type=RFFT, fft_length={16}", "c64[4,9]", "c64[4,16]"),
    ("call root", "x = f32[3] parameter(0)", "{R} call(x), to_apply=neg", "f32[3]", "s32[3]"),
    (
        "collective-permute-start",
        "x = f32[3] parameter(0)",
        "{R} collective-permute-start(x), channel_id=1, source_target_pairs={{0,1},{1,0}}",
        "(f32[3], f32[3], u32[], u32[])",
        "(f32[3], f32[4], u32[], u32[])",
    ),
]

COMPUTATIONS = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

pair {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  x = f32[] add(a, c)
  y = s32[] add(b, d)
  ROOT t = (f32[], s32[]) tuple(x, y)
}

neg {
  p = f32[3] parameter(0)
  ROOT n = f32[3] negate(p)
}
"""


def _module(params: str, instruction: str, result: str) -> str:
    root = instruction.replace("{R}", result)
    return f"HloModule m\n\n{COMPUTATIONS}\nENTRY e {{\n  {params}\n  ROOT r = {root}\n}}\n"


@pytest.mark.parametrize("name,params,instruction,good,bad", CASES, ids=[c[0] for c in CASES])
def test_inferred_result_accepted_and_another_rejected(name, params, instruction, good, bad):
    assert [
        d.message for d in verify(read_hlo(_module(params, instruction, good))) if d.severity >= Severity.WARNING
    ] == []
    text = _module(params, instruction, bad)
    found = [d for d in verify(read_hlo(text)) if d.code == "verifier.shape-inference"]
    line = text.split("\n").index("  ROOT r = " + instruction.replace("{R}", bad))
    assert [d.range.start_line for d in found] == [line]
    assert "(XLA: ShapeInference::Infer" in found[0].message or "(XLA: ShapeVerifier::Handle" in found[0].message
