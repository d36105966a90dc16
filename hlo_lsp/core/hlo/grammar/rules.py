"""Per-opcode rules of HloParserImpl::CreateInstruction that need operand shapes or attribute values
(called from `checks.ComputationChecker`).  Several guard inputs on which XLA's parser aborts the
process (CHECK failures, out-of-range `at(0)`): those messages say so.
"""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Diagnostic, Range, error

from .model import Attribute, Instruction, Shape, Tok

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


def _r(t: Tok) -> Range:
    return Range(t.line, t.col, t.line, max(t.end, t.col + 1))


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
            if True:
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
    """``op`` is the table name (``async-start`` for ``custom-call-start``)."""
    out: list[Diagnostic] = []
    where = _r(ins.opcode)
    n = len(ins.operands)
    shape = ins.shape

    def dims_of(name: str) -> list[Tok]:
        a = attrs.get(name)
        return [t for t in a.value if t.type == "INT"] if a else []

    rule = _ONE_DIMENSION.get(op)
    if rule and "dimensions" in attrs:
        count = len(dims_of("dimensions"))
        a = attrs["dimensions"]
        if rule == "exactly" and count != 1:
            out.append(
                error(
                    Range(a.line, a.start, a.line, a.end),
                    "invalid-attribute",
                    f"'{op}' takes exactly one dimension in dimensions=",
                )
            )
        elif rule == "first" and count == 0:
            out.append(
                error(
                    Range(a.line, a.start, a.line, a.end),
                    "invalid-attribute",
                    f"'{op}' needs a dimension in dimensions= (XLA's parser aborts on an empty list)",
                )
            )
    if shape is not None and shape.is_tuple and op == "tuple" and n != len(shape.elements) and not ins.nested:
        out.append(error(where, "operand-count", f"expects {len(shape.elements)} operands, but has {n} operands"))
    if op == "reshape" and shape is not None and operand_shapes and operand_shapes[0] is not None:
        n_in, n_out = operand_shapes[0].element_count(), shape.element_count()
        if n_in is not None and n_out is not None and n_in != n_out:
            out.append(
                error(
                    where,
                    "reshape-element-count",
                    f"reshape from {operand_shapes[0].text} ({n_in} elements) to {shape.text} ({n_out} elements) "
                    "(XLA's parser aborts the process on this)",
                )
            )
    if op in ("rng-bit-generator", "dynamic-reshape") and n == 0:
        out.append(
            error(
                where,
                "operand-count",
                f"'{op}' requires at least one operand"
                + (" (XLA's parser aborts on this)" if op == "rng-bit-generator" else ""),
            )
        )
    if op == "dynamic-slice" and n >= 1 and operand_shapes[0] is not None and not operand_shapes[0].is_tuple:
        rank = len(operand_shapes[0].dims)
        vector = n == 2 and operand_shapes[1] is not None and len(operand_shapes[1].dims) == 1
        if not vector and n != 1 + rank and (n != 2 or operand_shapes[1] is not None):
            out.append(
                error(where, "operand-count", f"Wrong number of operands: expects {1 + rank} for a rank-{rank} operand")
            )
    if op == "dynamic-update-slice" and n >= 2 and operand_shapes[0] is not None and not operand_shapes[0].is_tuple:
        rank = len(operand_shapes[0].dims)
        vector = n == 3 and operand_shapes[2] is not None and len(operand_shapes[2].dims) == 1
        if not vector and n != 2 + rank and (n != 3 or operand_shapes[2] is not None):
            out.append(
                error(where, "operand-count", f"Wrong number of operands: expects {2 + rank} for a rank-{rank} operand")
            )
    if op == "conditional" and n >= 1:
        branches = attrs.get("branch_computations")
        branch_count = (
            2
            if "true_computation" in attrs
            else (sum(1 for t in branches.value if t.type in ("NAME", "PNAME")) if branches else None)
        )
        if branch_count is not None and branch_count and n != branch_count + 1:
            out.append(
                error(
                    where,
                    "operand-count",
                    f"a conditional with {branch_count} branches takes {branch_count + 1} operands, but has {n}",
                )
            )
    if op == "infeed" and shape is not None and not shape.is_tuple:
        out.append(error(where, "invalid-shape", "infeed must have a non-empty tuple shape"))
    if (
        op == "async-start"
        and shape is not None
        and not (shape.is_tuple and len(shape.elements) >= 2 and shape.elements[0].is_tuple)
    ):
        out.append(
            error(where, "invalid-shape", "async-start expects the shape ((async-operands), async-outputs, state)")
        )
    api = attrs.get("api_version")
    if op == "custom-call" and api is not None and api.value and api.value[0].text == "API_VERSION_UNSPECIFIED":
        out.append(error(_r(api.value[0]), "invalid-attribute", "Invalid API version: API_VERSION_UNSPECIFIED"))
    pairs = attrs.get("source_target_pairs")
    if pairs is not None:
        size = 0
        depth = 0
        for t in pairs.value:
            if t.type in ("LBRACE", "LAYOUT_OPEN"):
                depth += 1
                size = 0
            elif t.type == "RBRACE":
                if depth == 2 and size != 2:
                    out.append(
                        error(_r(t), "invalid-attribute", "expects 'source_target_pairs=' to be a list of pairs")
                    )
                    break
                depth -= 1
            elif t.type == "INT":
                size += 1
    if op in ("send-done", "recv-done") and ins.operands and ins.operands[0].name is not None:
        src = channels.get(ins.operands[0].name.text)
        mine = dims_of("channel_id")
        if src is not None and src[0] in ("send", "recv") and (mine[0].text if mine else None) != src[1]:
            out.append(
                error(
                    where,
                    "invalid-attribute",
                    f"channel_id of {op} must equal the channel_id of its {src[0]} operand ({src[1]})",
                )
            )
    return out


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
            if not d.isdigit():
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
