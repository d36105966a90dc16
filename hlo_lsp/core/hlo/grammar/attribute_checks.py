"""An instruction's attributes against its opcode's table (`check_attributes`), called from
`checks.ComputationChecker`: each one known and given once, its value of the right kind (`attributes.check_value`,
`semantics.check_sharding`, `rules.attribute_problems`), the required ones present."""

from __future__ import annotations

from collections.abc import Callable

from hlo_lsp.core.diagnostics import Diagnostic, Related, error
from hlo_lsp.core.hlo.opcodes import COMMON_ATTRIBUTES, Attr, OpcodeInfo

from .attributes import check_value
from .model import Attribute, Instruction, Operand, Shape, Tok
from .ranges import rng, tok_range
from .rules import attribute_problems
from .semantics import check_sharding


def check_attributes(
    ins: Instruction,
    info: OpcodeInfo,
    wrapped: OpcodeInfo | None,
    out: list[Diagnostic],
    shape_of: Callable[[Operand], Shape | None],
    uses: Callable[[Attribute, str], None],
) -> dict[str, Attribute]:
    """Check ``ins``'s attributes against its opcode's table (``info``, and the wrapped opcode's for an async
    or custom-call wrapper): duplicates, unknown names, each value's syntax, required ones, and the
    operand-dependent rules of broadcast and conditional; problems go to ``out``. Each valid attribute is handed
    to ``uses`` with its kind (the checker records the names it refers to). Returns the attributes by name
    (the first of a duplicate)."""
    allowed: dict[str, Attr] = dict(info.attributes)
    if wrapped is not None:
        allowed.update(wrapped.attributes)
        if info.name == "async-start":
            allowed.pop("calls", None)
    seen: dict[str, Attribute] = {}
    prev: Attribute | None = None
    for attr in ins.attributes:
        at = rng(attr.line, attr.start, attr.end)
        follows_mesh = (
            prev is not None and prev.name == "replica_groups" and prev.value and prev.value[0].text == "mesh"
        )
        prev = attr
        if attr.name == "device_ids" and follows_mesh:
            continue  # `replica_groups=mesh[...], device_ids=(...) {axes}`: one value in XLA's syntax
        if attr.name in seen:
            out.append(
                error(
                    at,
                    "duplicate-attribute",
                    f"attribute '{attr.name}' already exists",
                    related=(
                        Related(
                            rng(seen[attr.name].line, seen[attr.name].start, seen[attr.name].end),
                            "first given here",
                        ),
                    ),
                )
            )
            continue
        seen[attr.name] = attr
        spec = allowed.get(attr.name)
        kind = spec.kind if spec else COMMON_ATTRIBUTES.get(attr.name)
        if kind is None:
            out.append(error(at, "unknown-attribute", f"'{info.name}' does not take the attribute '{attr.name}'"))
            continue
        problem = value_problem(attr, kind)
        if problem is not None:
            idx, msg = problem
            t = attr.value[idx] if attr.value else Tok("", "", attr.line, attr.end)
            out.append(error(rng(t.line, t.col, t.end), "invalid-attribute", f"{attr.name}=: {msg}"))
            continue
        uses(attr, kind)
    _missing(ins, info.name, allowed, seen, out, shape_of)
    return seen


def value_problem(attr: Attribute, kind: str) -> tuple[int, str] | None:
    """(index of the token at fault, message) when ``attr``'s value is not of ``kind``; None when it is."""
    problem = check_value(kind, attr.value)
    if problem is None and kind == "sharding":
        found = check_sharding(attr.value)
        if found is not None:
            t = found[0] or attr.value[0]
            problem = (attr.value.index(t) if t in attr.value else 0, found[1])
    if problem is None:
        found_tok = attribute_problems(attr, kind)
        if found_tok is not None:
            problem = (attr.value.index(found_tok[0]), found_tok[1])
    return problem


def _missing(
    ins: Instruction,
    op: str,
    allowed: dict[str, Attr],
    seen: dict[str, Attribute],
    out: list[Diagnostic],
    shape_of: Callable[[Operand], Shape | None],
) -> None:
    """The attributes ``op`` requires that ``ins`` does not give (broadcast's and conditional's by operand)."""
    for key, spec in allowed.items():
        if spec.required and key not in seen:
            out.append(error(tok_range(ins.opcode), "missing-attribute", f"'{op}' needs the attribute '{key}='"))
    if op == "broadcast" and "dimensions" not in seen and ins.operands:
        shape = shape_of(ins.operands[0])
        if shape is not None and not shape.is_scalar:
            out.append(
                error(
                    tok_range(ins.opcode),
                    "missing-attribute",
                    "'broadcast' of a non-scalar operand needs the attribute 'dimensions='",
                )
            )
    if op == "conditional":
        _conditional(ins, seen, out, shape_of)


def _conditional(
    ins: Instruction, seen: dict, out: list[Diagnostic], shape_of: Callable[[Operand], Shape | None]
) -> None:
    """A conditional's branch attributes against its index operand's type (pred: true/false, s32: branches)."""
    where = tok_range(ins.opcode)
    has_pred = "true_computation" in seen or "false_computation" in seen
    has_branches = "branch_computations" in seen
    shape = shape_of(ins.operands[0]) if ins.operands else None
    if shape is not None and shape.element is not None:
        if not shape.is_scalar or shape.element not in ("pred", "s32"):
            out.append(
                error(where, "invalid-attribute", "the first operand of conditional must be a scalar pred or s32")
            )
            return
        pred = shape.element == "pred"
        if pred and not ("true_computation" in seen and "false_computation" in seen):
            out.append(
                error(
                    where,
                    "missing-attribute",
                    "a pred-indexed conditional needs true_computation= and false_computation=",
                )
            )
        elif not pred and not has_branches:
            out.append(error(where, "missing-attribute", "an s32-indexed conditional needs branch_computations="))
        elif (pred and has_branches) or (not pred and has_pred):
            out.append(
                error(
                    where,
                    "unknown-attribute",
                    "true_computation/false_computation go with a pred index, branch_computations with an s32 index",
                )
            )
    elif not has_pred and not has_branches:
        out.append(
            error(
                where,
                "missing-attribute",
                "'conditional' needs branch_computations= (or true_computation= and false_computation=)",
            )
        )
