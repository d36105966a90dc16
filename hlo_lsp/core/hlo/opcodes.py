"""The one HLO opcode table: XLA's opcode set (xla/hlo/ir/hlo_opcode.h) with, per opcode, its family,
its operand count where XLA's parser fixes it, the attributes it takes (name -> kind, required) and the
attributes that name called computations.

Source of truth: ``HloParserImpl::CreateInstruction`` in xla/hlo/parser/hlo_parser.cc, which registers
the attributes each opcode accepts; any other attribute is an error there ("unexpected attribute").
Completion and the grammar's checker both read this table; nothing else lists opcodes.

Attribute kinds (how the value is written):
``int``, ``float``, ``bool``, ``string``, ``int_list`` (``{1,2}``), ``int_list_list`` (``{{0,1},{1,0}}``),
``computation`` (``%name``), ``computation_list`` (``{%a, %b}``), ``instruction_list``,
``window``, ``dim_labels``, ``padding``, ``slice``, ``shape``, ``shape_list``, ``enum:<name>``,
``replica_groups``, ``sharding``, ``metadata``, ``frontend``, ``json`` (string or JSON dict),
``any`` (checked by XLA only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# Attributes every instruction accepts (HloParserImpl::ParseInstructionRhs).
COMMON_ATTRIBUTES: dict[str, str] = {
    "sharding": "sharding",
    "frontend_attributes": "frontend",
    "statistics": "any",
    "parameter_replication": "any",
    "control-predecessors": "instruction_list",
    "origin": "any",
    "metadata": "metadata",
    "backend_config": "json",
}

ENUMS: dict[str, frozenset[str]] = {
    "direction": frozenset({"EQ", "NE", "GE", "GT", "LE", "LT"}),
    "comparison_type": frozenset({"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}),
    "fusion_kind": frozenset({"kLoop", "kInput", "kOutput", "kCustom"}),
    "distribution": frozenset({"rng_uniform", "rng_normal"}),
    "rng_algorithm": frozenset({"rng_default", "rng_three_fry", "rng_philox"}),
    "fft_type": frozenset({"FFT", "IFFT", "RFFT", "IRFFT"}),
    "api_version": frozenset(
        {
            "API_VERSION_UNSPECIFIED",
            "API_VERSION_ORIGINAL",
            "API_VERSION_STATUS_RETURNING",
            "API_VERSION_STATUS_RETURNING_UNIFIED",
            "API_VERSION_TYPED_FFI",
        }
    ),
}

# Attributes whose value names computations, in the order completion should offer them.
CALLED_COMPUTATION_ATTRIBUTES = (
    "calls",
    "to_apply",
    "condition",
    "body",
    "select",
    "scatter",
    "true_computation",
    "false_computation",
    "branch_computations",
    "called_computations",
)


@dataclass(frozen=True, slots=True)
class Attr:
    kind: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class OpcodeInfo:
    name: str
    family: str
    arity: int | None  # operand count XLA's parser enforces; None when variadic or checked otherwise
    attributes: Mapping[str, Attr] = field(default_factory=dict)
    infers_shape: bool = False  # XLA can infer the result shape when it is omitted
    in_parser: bool = True  # False: in hlo_opcode.h but HloParserImpl::CreateInstruction rejects it

    @property
    def called_computation_attributes(self) -> tuple[str, ...]:
        return tuple(a for a in CALLED_COMPUTATION_ATTRIBUTES if a in self.attributes)

    def accepts(self, attribute: str) -> bool:
        return attribute in self.attributes or attribute in COMMON_ATTRIBUTES


def _a(**kinds: str) -> dict[str, Attr]:
    """``_a(dimensions="int_list!")``: a trailing ``!`` marks a required attribute."""
    out = {}
    for key, kind in kinds.items():
        out[key.replace("__", "-")] = Attr(kind.rstrip("!"), kind.endswith("!"))
    return out


_ACCURACY = _a(result_accuracy="any")
_GROUPS = _a(replica_groups="replica_groups", channel_id="int")  # every collective's
_COLLECTIVE = {**_GROUPS, **_a(constrain_layout="bool", use_global_device_ids="bool")}
_DOT = _a(
    lhs_contracting_dims="int_list",
    rhs_contracting_dims="int_list",
    lhs_batch_dims="int_list",
    rhs_batch_dims="int_list",
    operand_precision="any",
)
_CHANNEL = _a(channel_id="int", is_host_transfer="bool")

_TABLE: list[tuple[str, str, int | None, dict[str, Attr], bool]] = []


def _add(names: str, family: str, arity: int | None, attrs: dict[str, Attr] | None = None, infers: bool = False):
    for name in names.split():
        _TABLE.append((name, family, arity, attrs or {}, infers))


# Elementwise unary with result_accuracy (the CreateInstruction list "Unary ops with result accuracy").
_add(
    "acos acosh asin asinh atanh exponential-minus-one log log-plus-one logistic sqrt cbrt rsqrt tanh erf "
    "sine sinh cosine cosh tan exponential",
    "elementwise-unary",
    1,
    _ACCURACY,
    True,
)
_add(
    "abs round-nearest-afz round-nearest-even ceil count-leading-zeros copy opt-barrier imag is-finite floor "
    "not negate popcnt real sign",
    "elementwise-unary",
    1,
    None,
    True,
)
_add("bitcast", "data-movement", 1)
_add("all-gather-done all-reduce-done collective-permute-done", "collective", 1)
_add("copy-done", "async", 1)
_add(
    "add divide multiply subtract atan2 complex maximum minimum power remainder and or xor shift-left "
    "shift-right-arithmetic shift-right-logical",
    "elementwise-binary",
    2,
    None,
    True,
)
_add("stochastic-convert", "elementwise-binary", 2)
_add("clamp select", "elementwise-ternary", 3, None, True)
_add("convert bitcast-convert", "conversion", 1)
_add("reduce-precision", "conversion", 1, _a(exponent_bits="int!", mantissa_bits="int!"))
_add("compare", "elementwise-binary", 2, _a(direction="enum:direction!", type="enum:comparison_type"), True)
_add("parameter", "structural", None)
_add("constant", "structural", None)
_add("iota", "structural", 0, _a(iota_dimension="int!"))
_add("tuple", "structural", None, None, True)
_add("get-tuple-element", "structural", 1, _a(index="int!"), True)
_add("after-all", "structural", None, None, True)
_add("add-dependency", "structural", 2, None, True)
_add("partition-id replica-id", "structural", 0, None, True)
_add("domain", "structural", 1, _a(domain="any!"), True)
_add("topk", "sort", 1, _a(k="int!", largest="bool"), True)
_add("sort", "sort", None, _a(dimensions="int_list!", is_stable="bool", to_apply="computation!"), True)
_add("all-gather all-gather-start", "collective", None, {**_COLLECTIVE, **_a(dimensions="int_list!")})
_add("all-reduce all-reduce-start", "collective", None, {**_COLLECTIVE, **_a(to_apply="computation!", mode="any")})
_add(
    "reduce-scatter",
    "collective",
    None,
    {**_COLLECTIVE, **_a(to_apply="computation!", mode="any", dimensions="int_list!")},
)
_add("all-to-all", "collective", None, {**_GROUPS, **_a(dimensions="int_list", constrain_layout="bool")})
_add("ragged-all-to-all", "collective", None, {**_GROUPS, **_a(dimensions="int_list")})
_add("collective-broadcast", "collective", None, _GROUPS)
_add(
    "collective-permute collective-permute-start",
    "collective",
    None,
    _a(source_target_pairs="int_list_list!", channel_id="int", slice_sizes="int_list_list"),
)
_add(
    "async-start",
    "async",
    None,
    _a(calls="computation!", async_execution_thread="string", output_to_operand_aliasing="any"),
)
_add("async-update async-done", "async", None, _a(calls="computation", async_execution_thread="string"))
_add("copy-start", "async", 1, _a(cross_program_prefetch_index="int"))
_add("dynamic-reshape", "data-movement", None)
_add("reshape", "data-movement", 1, _a(inferred_dimension="int"))
_add("while", "control-flow", 1, _a(condition="computation!", body="computation!"), True)
_add("call", "control-flow", None, _a(to_apply="computation!", is_composite="bool"), True)
_add(
    "conditional",
    "control-flow",
    None,
    _a(true_computation="computation", false_computation="computation", branch_computations="computation_list"),
    True,
)
_add("recv", "send-recv", 1, _CHANNEL)
_add("recv-done", "send-recv", 1, _CHANNEL)
_add("send", "send-recv", 2, _CHANNEL)
_add("send-done", "send-recv", 1, _CHANNEL)
_add("reduce-window", "reduction", None, _a(window="window", to_apply="computation!"), True)
_add("reduce", "reduction", None, _a(to_apply="computation!", dimensions="int_list!"), True)
_add("select-and-scatter", "reduction", 3, _a(select="computation!", scatter="computation!", window="window"), True)
_add("map", "reduction", None, _a(to_apply="computation!", dimensions="int_list"), True)
_add(
    "scan",
    "reduction",
    None,
    _a(to_apply="computation!", dimensions="int_list!", num_carries="int!", is_reverse="bool", is_associative="bool"),
    True,
)
_add(
    "convolution",
    "convolution-dot",
    2,
    _a(
        window="window",
        dim_labels="dim_labels!",
        feature_group_count="int",
        batch_group_count="int",
        conv_kind="any",
        operand_precision="any",
    ),
    True,
)
_add("dot", "convolution-dot", None, {**_DOT, **_a(algorithm="any")}, True)
_add("ragged-dot", "convolution-dot", None, {**_DOT, **_a(lhs_ragged_dims="int_list", rhs_group_dims="int_list")}, True)
_add("scaled-dot", "convolution-dot", None, {**_DOT, **_a(algorithm="any")}, True)
_add("fft", "convolution-dot", 1, _a(fft_type="enum:fft_type!", fft_length="int_list!"), True)
_add(
    "triangular-solve",
    "linear-algebra",
    2,
    _a(left_side="bool", lower="bool", unit_diagonal="bool", transpose_a="any"),
    True,
)
_add("cholesky", "linear-algebra", 1, _a(lower="bool"), True)
_add("broadcast", "data-movement", 1, _a(dimensions="int_list"), True)
_add("concatenate", "data-movement", None, _a(dimensions="int_list!"), True)
_add("reverse", "data-movement", 1, _a(dimensions="int_list!"), True)
_add("transpose", "data-movement", 1, _a(dimensions="int_list!"), True)
_add("slice", "data-movement", 1, _a(slice="slice!"))
_add("dynamic-slice", "data-movement", None, _a(dynamic_slice_sizes="int_list!"))
_add("dynamic-update-slice", "data-movement", None)
_add("pad", "data-movement", 2, _a(padding="padding!"), True)
_add(
    "gather",
    "data-movement",
    2,
    _a(
        offset_dims="int_list!",
        collapsed_slice_dims="int_list!",
        start_index_map="int_list!",
        index_vector_dim="int!",
        slice_sizes="int_list!",
        indices_are_sorted="bool",
        operand_batching_dims="int_list",
        start_indices_batching_dims="int_list",
    ),
    True,
)
_add(
    "scatter",
    "data-movement",
    None,
    _a(
        update_window_dims="int_list!",
        inserted_window_dims="int_list!",
        scatter_dims_to_operand_dims="int_list!",
        index_vector_dim="int!",
        to_apply="computation!",
        indices_are_sorted="bool",
        unique_indices="bool",
        input_batching_dims="int_list",
        scatter_indices_batching_dims="int_list",
    ),
    True,
)
_add("batch-norm-training", "normalization", 3, _a(epsilon="float!", feature_index="int!"), True)
_add("batch-norm-inference batch-norm-grad", "normalization", 5, _a(epsilon="float!", feature_index="int!"), True)
_add(
    "fusion", "control-flow", None, _a(calls="computation!", kind="enum:fusion_kind!", output_to_operand_aliasing="any")
)
_add("infeed", "io", 1, _a(infeed_config="string"))
_add("outfeed", "io", 2, _a(outfeed_config="string", outfeed_shape="shape"))
_add("rng", "rng", None, _a(distribution="enum:distribution!"))
_add("rng-get-and-update-state", "rng", 0, _a(delta="int!"))
_add("rng-bit-generator", "rng", None, _a(algorithm="enum:rng_algorithm!"))
_add(
    "custom-call",
    "custom",
    None,
    _a(
        custom_call_target="string!",
        window="window",
        dim_labels="dim_labels",
        feature_group_count="int",
        batch_group_count="int",
        operand_layout_constraints="shape_list",
        custom_call_has_side_effect="bool",
        to_apply="computation",
        called_computations="computation_list",
        output_to_operand_aliasing="any",
        padding_type="any",
        literal="any",
        operand_precision="any",
        schedule="any",
        api_version="enum:api_version",
    ),
)
_add("get-dimension-size", "dynamic-shape", 1, _a(dimensions="int_list!"), True)
_add("set-dimension-size", "dynamic-shape", 2, _a(dimensions="int_list!"), True)

OPCODES: dict[str, OpcodeInfo] = {
    name: OpcodeInfo(name, family, arity, attrs, infers) for name, family, arity, attrs, infers in _TABLE
}

# In hlo_opcode.h (newer XLA) but without a case in HloParserImpl::CreateInstruction: XLA's parser
# fails on them without a message.  Listed so completion can show them and the checker can say why.
for _name, _family, _arity in (
    ("atan", "elementwise-unary", 1),
    ("mulhi", "elementwise-binary", 2),
    ("shuffle", "data-movement", 1),
    ("collective-reduce", "collective", None),
):
    OPCODES[_name] = OpcodeInfo(_name, _family, _arity, {}, False, in_parser=False)

ASYNC_SUFFIXES = ("-start", "-update", "-done")


def lookup(opcode: str) -> tuple[OpcodeInfo | None, OpcodeInfo | None]:
    """``(info, wrapped)`` for an opcode spelling; ``wrapped`` is set for async wrappers such as
    ``custom-call-start`` (HloParserImpl::ParseOpcode).  ``(None, None)`` when XLA knows no such opcode."""
    info = OPCODES.get(opcode)
    if info is not None:
        return info, None
    for suffix in ASYNC_SUFFIXES:
        if opcode.endswith(suffix):
            wrapped = OPCODES.get(opcode[: -len(suffix)])
            if wrapped is not None and wrapped.in_parser:
                return OPCODES["async" + suffix], wrapped
    return None, None


# Keywords and primitive types of XLA's lexer: a bare (``%``-less) name cannot be one of these.
PRIMITIVE_TYPES = frozenset(
    "pred s1 s2 s4 s8 s16 s32 s64 u1 u2 u4 u8 u16 u32 u64 f16 f32 bf16 f64 c64 c128 f4e2m1fn f8e3m4 f8e4m3 "
    "f8e4m3b11fnuz f8e4m3fn f8e4m3fnuz f8e5m2 f8e5m2fnuz f8e8m0fnu token opaque".split()
)
KEYWORDS = frozenset(
    "true false inf nan HloModule ENTRY ROOT FileLocations FileNames FunctionNames StackFrames maximal "
    "replicated manual last_tile_dim_replicate shard_as shard_like unknown unreduced".split()
)
