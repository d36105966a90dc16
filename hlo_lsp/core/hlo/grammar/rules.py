"""Per-opcode rules of HloParserImpl::CreateInstruction that need operand shapes or attribute values
(called from `checks.ComputationChecker`).  Several guard inputs on which XLA's parser aborts the
process (CHECK failures, out-of-range `at(0)`): those messages say so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from hlo_lsp.core.diagnostics import Diagnostic, Range, error

from .model import Attribute, Instruction, Shape, Tok
from .ranges import tok_range

_METADATA_KEYS = frozenset(
    "deduplicated_name metadata_payload op_name op_type profile_type scheduling_name "
    "source_column source_end_column source_end_line source_file source_line "
    "stack_frame_id".split()
)
_BINARY = frozenset(
    "add divide multiply subtract atan2 complex maximum minimum power remainder and or xor "
    "shift-left shift-right-arithmetic shift-right-logical compare".split()
)
_ONE_DIMENSION = {
    "concatenate": "exactly",
    "sort": "exactly",
    "all-to-all": "exactly",
    "all-gather": "first",
    "all-gather-start": "first",
    "reduce-scatter": "first",
    "get-dimension-size": "first",
    "set-dimension-size": "first",
}


_METADATA_INTS = frozenset("source_line source_end_line source_column source_end_column stack_frame_id".split())


def attribute_problems(attr: Attribute, kind: str) -> tuple[Tok, str] | None:
    """Sub-attribute rules for metadata= (HloParserImpl::ParseMetadata) and frontend_attributes=."""
    vals = attr.value
    if kind == "metadata":
        depth = 0
        value_next = False
        for k, t in enumerate(vals):
            at_top = depth == 1
            if t.type in ("LBRACE", "LAYOUT_OPEN", "LSQB", "LPAR"):
                depth += 1
            elif t.type in ("RBRACE", "RSQB", "RPAR"):
                depth -= 1
            if not at_top:
                continue
            if value_next:
                value_next = False
                continue
            if t.type in ("COMMA", "RBRACE"):
                continue
            if t.type != "ATTR_NAME":
                return t, 'expects attribute name (metadata is {op_name="..." source_line=N ...})'
            value_next = True
            key = t.text[:-1]
            if key not in _METADATA_KEYS:
                return t, f"unexpected metadata attribute '{key}'"
            nxt = vals[k + 1] if k + 1 < len(vals) else t
            if key in _METADATA_INTS and nxt.type != "INT":
                return nxt, f"metadata {key}= expects an integer"
            if key not in _METADATA_INTS and key != "profile_type" and nxt.type != "STRING":
                return nxt, f"metadata {key}= expects a string"
    elif kind == "frontend":
        depth = 0
        for k, t in enumerate(vals):
            if t.type in ("LBRACE", "LAYOUT_OPEN", "LSQB", "LPAR"):
                depth += 1
            elif t.type in ("RBRACE", "RSQB", "RPAR"):
                depth -= 1
            elif depth == 1 and t.type == "ATTR_NAME":
                value = vals[k + 1] if k + 1 < len(vals) else None
                if value is None or value.type not in ("STRING", "JSON_DICT"):
                    return t, "a frontend attribute value is a string or a JSON dictionary"
    return None


def infer(ins: Instruction, operand_shapes: list[Shape | None]) -> tuple[Shape | None, tuple[Tok, str] | None]:
    """(inferred shape or None, problem) for an instruction written without a result shape."""
    op = ins.opcode.text
    if op in _BINARY and len(operand_shapes) == 2 and operand_shapes[0] and operand_shapes[1]:
        a, b = operand_shapes[0], operand_shapes[1]
        if a.is_tuple or b.is_tuple:
            return None, None
        if a.element != b.element and op not in ("complex",):
            return None, (ins.opcode, f"Binary op {op} with different element types: {a.text} and {b.text}")
        if a.dims and b.dims and a.dims != b.dims:
            if len(a.dims) != len(b.dims):
                return None, (ins.opcode, f"Shapes must be equal rank, but are {a.text} and {b.text}")
            return None, (ins.opcode, f"Binary op {op} with incompatible shapes: {a.text} and {b.text}")
        base = a if a.dims else b
        if op == "compare":
            return Shape(f"pred[{','.join(base.dims)}]", "pred", base.dims, -1, 0, 0), None
        return base, None
    if op == "get-tuple-element" and operand_shapes and operand_shapes[0] is not None:
        t = operand_shapes[0]
        idx = next(
            (a.value[0] for a in ins.attributes if a.name == "index" and a.value and a.value[0].type == "INT"), None
        )
        if idx is None:
            return None, None
        i = int(idx.text)
        if not t.is_tuple or not 0 <= i < len(t.elements):
            what = "a non-tuple operand" if not t.is_tuple else f"a {len(t.elements)}-element tuple"
            return None, (
                idx,
                f"index {i} is out of range for {what} (XLA's parser aborts when it has to infer this shape)",
            )
        return t.elements[i], None
    return None, None


def opcode_rules(
    ins: Instruction,
    operand_shapes: list[Shape | None],
    attrs: dict[str, Attribute],
    channels: dict[str, tuple[str, str | None]],
    op: str,
) -> list[Diagnostic]:
    """The rules of `_RULES` that apply to ``ins``, in their order; ``op`` is the table name (``async-start`` for
    ``custom-call-start``), ``channels`` the opcode and channel_id of each instruction defined above."""
    c = _Instr(ins, operand_shapes, attrs, channels, op)
    out = []
    for ops, needs, rule in _RULES:
        if (ops is None or op in ops) and (needs is None or needs in attrs):
            d = rule(c)
            if d is not None:
                out.append(d)
    return out


class _Instr(NamedTuple):
    """What an opcode rule reads: the instruction, its operands' shapes, its attributes by name, the channels
    above it, its opcode's table name."""

    ins: Instruction
    shapes: list[Shape | None]
    attrs: dict[str, Attribute]
    channels: dict[str, tuple[str, str | None]]
    op: str

    def ints(self, name: str) -> list[Tok]:
        a = self.attrs.get(name)
        return [t for t in a.value if t.type == "INT"] if a else []

    def count_error(self, message: str) -> Diagnostic:
        return error(tok_range(self.ins.opcode), "operand-count", message)


def _one_dimension(c: _Instr) -> Diagnostic | None:
    a = c.attrs["dimensions"]
    count = len(c.ints("dimensions"))
    if _ONE_DIMENSION[c.op] == "exactly" and count != 1:
        message = f"'{c.op}' takes exactly one dimension in dimensions="
    elif _ONE_DIMENSION[c.op] == "first" and count == 0:
        message = f"'{c.op}' needs a dimension in dimensions= (XLA's parser aborts on an empty list)"
    else:
        return None
    return error(Range(a.line, a.start, a.line, a.end), "invalid-attribute", message)


def _tuple_count(c: _Instr) -> Diagnostic | None:
    shape, n = c.ins.shape, len(c.ins.operands)
    if shape is not None and shape.is_tuple and n != len(shape.elements) and not c.ins.nested:
        return c.count_error(f"expects {len(shape.elements)} operands, but has {n} operands")
    return None


def _reshape_count(c: _Instr) -> Diagnostic | None:
    shape, operand = c.ins.shape, (c.shapes[0] if c.shapes else None)
    if shape is None or operand is None:
        return None
    n_in, n_out = operand.element_count(), shape.element_count()
    if n_in is None or n_out is None or n_in == n_out:
        return None
    return error(
        tok_range(c.ins.opcode),
        "reshape-element-count",
        f"reshape from {operand.text} ({n_in} elements) to {shape.text} ({n_out} elements) "
        "(XLA's parser aborts the process on this)",
    )


def _some_operand(c: _Instr) -> Diagnostic | None:
    if c.ins.operands:
        return None
    aborts = " (XLA's parser aborts on this)" if c.op == "rng-bit-generator" else ""
    return c.count_error(f"'{c.op}' requires at least one operand{aborts}")


def _index_operands(c: _Instr) -> Diagnostic | None:
    """dynamic-slice (one operand before the start indices) and dynamic-update-slice (two): one scalar index per
    dimension of the first operand, or one index vector."""
    lead = 1 if c.op == "dynamic-slice" else 2
    n, shapes = len(c.ins.operands), c.shapes
    if n < lead or shapes[0] is None or shapes[0].is_tuple:
        return None
    rank = len(shapes[0].dims)
    index = shapes[lead] if n > lead else None
    vector = n == lead + 1 and index is not None and len(index.dims) == 1
    if not vector and n != lead + rank and (n != lead + 1 or index is not None):
        return c.count_error(f"Wrong number of operands: expects {lead + rank} for a rank-{rank} operand")
    return None


def _conditional_count(c: _Instr) -> Diagnostic | None:
    n = len(c.ins.operands)
    if n < 1:
        return None
    branches = c.attrs.get("branch_computations")
    if "true_computation" in c.attrs:
        count: int | None = 2
    else:
        count = sum(1 for t in branches.value if t.type in ("NAME", "PNAME")) if branches else None
    if count and n != count + 1:
        return c.count_error(f"a conditional with {count} branches takes {count + 1} operands, but has {n}")
    return None


def _infeed_shape(c: _Instr) -> Diagnostic | None:
    shape = c.ins.shape
    if shape is not None and not shape.is_tuple:
        return error(tok_range(c.ins.opcode), "invalid-shape", "infeed must have a non-empty tuple shape")
    return None


def _async_start_shape(c: _Instr) -> Diagnostic | None:
    shape = c.ins.shape
    if shape is not None and not (shape.is_tuple and len(shape.elements) >= 2 and shape.elements[0].is_tuple):
        message = "async-start expects the shape ((async-operands), async-outputs, state)"
        return error(tok_range(c.ins.opcode), "invalid-shape", message)
    return None


def _api_version(c: _Instr) -> Diagnostic | None:
    api = c.attrs["api_version"]
    if api.value and api.value[0].text == "API_VERSION_UNSPECIFIED":
        return error(tok_range(api.value[0]), "invalid-attribute", "Invalid API version: API_VERSION_UNSPECIFIED")
    return None


def _source_target_pairs(c: _Instr) -> Diagnostic | None:
    size = 0
    depth = 0
    for t in c.attrs["source_target_pairs"].value:
        if t.type in ("LBRACE", "LAYOUT_OPEN"):
            depth += 1
            size = 0
        elif t.type == "RBRACE":
            if depth == 2 and size != 2:
                return error(tok_range(t), "invalid-attribute", "expects 'source_target_pairs=' to be a list of pairs")
            depth -= 1
        elif t.type == "INT":
            size += 1
    return None


def _done_channel(c: _Instr) -> Diagnostic | None:
    first = c.ins.operands[0].name if c.ins.operands else None
    src = c.channels.get(first.text) if first is not None else None
    if src is None or src[0] not in ("send", "recv"):
        return None
    mine = c.ints("channel_id")
    if (mine[0].text if mine else None) == src[1]:
        return None
    message = f"channel_id of {c.op} must equal the channel_id of its {src[0]} operand ({src[1]})"
    return error(tok_range(c.ins.opcode), "invalid-attribute", message)


#: Per-opcode rules of HloParserImpl::CreateInstruction, in the order they run: (the table names they apply to,
#: or None for any; the attribute they need, or None; the rule).
_RULES: tuple[tuple[frozenset[str] | None, str | None, Callable[[_Instr], Diagnostic | None]], ...] = (
    (frozenset(_ONE_DIMENSION), "dimensions", _one_dimension),
    (frozenset({"tuple"}), None, _tuple_count),
    (frozenset({"reshape"}), None, _reshape_count),
    (frozenset({"rng-bit-generator", "dynamic-reshape"}), None, _some_operand),
    (frozenset({"dynamic-slice", "dynamic-update-slice"}), None, _index_operands),
    (frozenset({"conditional"}), None, _conditional_count),
    (frozenset({"infeed"}), None, _infeed_shape),
    (frozenset({"async-start"}), None, _async_start_shape),
    (frozenset({"custom-call"}), "api_version", _api_version),
    (None, "source_target_pairs", _source_target_pairs),
    (frozenset({"send-done", "recv-done"}), None, _done_channel),
)


_INT64_MAX = (1 << 63) - 1


def oversized(shape: Shape) -> tuple[Tok, str] | None:
    """(token, message) when a dimension or an array's element count leaves int64 (XLA's sizes are int64);
    None otherwise. The product stops as soon as it passes the limit, so 100,000 dimensions never build a
    95,000-digit number."""
    stack = [shape]
    while stack:
        s = stack.pop()
        if s.is_tuple:
            stack.extend(s.elements)
            continue
        count = 1
        for d in s.dims:
            d = d.lstrip("<=")
            if not (d.isascii() and d.isdigit()):
                continue
            tok = Tok("PRIM_TYPE", s.text, s.line, s.col)
            if len(d) > 19 or int(d) > _INT64_MAX:
                shown = d if len(d) <= 24 else f"{d[:12]}… ({len(d)} digits)"
                return tok, f"dimension size {shown} exceeds int64"
            count *= int(d)
            if count > _INT64_MAX:
                shown = s.text if len(s.text) <= 80 else f"{s.text[:60]}… ({len(s.dims)} dimensions)"
                return tok, f"the element count of {shown} exceeds int64"
    return None


def negative_dims(shape: Shape) -> Tok | None:
    """The shape's first tuple-free negative dimension, as a token to point at; None when all are >= 0."""
    stack = [shape]
    while stack:
        s = stack.pop()
        if s.is_tuple:
            stack.extend(s.elements)
        elif any(d.lstrip("<=").startswith("-") for d in s.dims):
            return Tok("PRIM_TYPE", s.text, s.line, s.col)
    return None


def layout_rank_problems(shape: Shape) -> list[Diagnostic]:
    """``layout-rank``: an array shape whose layout lists another number of dimensions than the shape has."""
    if shape.layout_rank < 0 or shape.element is None or shape.layout_rank == len(shape.dims):
        return []
    return [
        error(
            tok_range(shape.layout_tok),
            "layout-rank",
            f"the layout lists {shape.layout_rank} dimensions but the shape {shape.text} has {len(shape.dims)}",
        )
    ]


def size_problems(shape: Shape) -> list[Diagnostic]:
    """``invalid-shape`` for a negative dimension, ``shape-too-large`` for sizes past int64 (see `oversized`)."""
    out = []
    bad = negative_dims(shape)
    if bad is not None:
        out.append(error(tok_range(bad), "invalid-shape", f"{bad.text}: dimension sizes must be >= 0"))
    big = oversized(shape)
    if big is not None:
        out.append(error(tok_range(big[0]), "shape-too-large", big[1]))
    return out
