"""Structural rules XLA's parser enforces inside one block, and the facts a block exports for the
cross-block pass (defined computations, called computations, stack-frame ids).

Everything here works on the plain records of `model` and returns block-relative diagnostics and
occurrences.  Rules and their codes (each mirrors an error or abort of HloParserImpl):
``unknown-opcode``, ``undefined-operand`` (also a use before the definition, which XLA rejects),
``duplicate-instruction``, ``multiple-roots``, ``parameter-number`` (duplicates, negatives and numbers
that are not 0..n-1, on which XLA aborts), ``operand-count``, ``unknown-attribute``,
``missing-attribute``, ``duplicate-attribute``, ``invalid-attribute``, ``cannot-infer-shape``,
``layout-rank``, ``signature-mismatch``, ``keyword-name``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_lsp.core.diagnostics import Diagnostic, Range, Related, error
from hlo_lsp.core.hlo.opcodes import COMMON_ATTRIBUTES, KEYWORDS, OPCODES, PRIMITIVE_TYPES, Attr, OpcodeInfo, lookup
from hlo_lsp.core.occurrences import Occurrence

from .attributes import check_value
from .model import Attribute, Computation, Instruction, Name, Shape, Tok
from .rules import attribute_problems, infer, negative_dims, opcode_rules, oversized
from .semantics import check_literal, check_sharding


@dataclass(slots=True)
class CallUse:
    name: str
    line: int
    start: int
    end: int


@dataclass(slots=True)
class BlockFacts:
    """What the cross-block pass needs from one checked block (block-relative positions)."""

    defines: list[Name] = field(default_factory=list)  # computations defined (0 or 1)
    entry: Tok | None = None
    calls: list[CallUse] = field(default_factory=list)  # called computations
    frame_uses: list[CallUse] = field(default_factory=list)  # stack_frame_id=N (N > 0)
    frames: dict[str, int] = field(default_factory=dict)  # tables: stack frame ids defined


def _rng(line: int, start: int, end: int) -> Range:
    return Range(line, start, line, max(end, start + 1))


def _tok_range(t: Tok | None) -> Range:
    """The range of ``t``; the start of the document for a problem that names no token."""
    return _rng(t.line, t.col, t.end) if t is not None else _rng(0, 0, 0)


def _name_range(n: Name) -> Range:
    return _rng(n.line, n.start, n.end)


class ComputationChecker:
    def __init__(self, comp: Computation):
        self.comp = comp
        self.diags: list[Diagnostic] = []
        self.occ: list[Occurrence] = []
        self.facts = BlockFacts()
        self.defined: dict[str, Name] = {}
        self.later: dict[str, Name] = {}
        self.shapes: dict[str, Shape | None] = {}
        self.channels: dict[str, tuple[str, str | None]] = {}
        self.inferred: Shape | None = None

    def run(self) -> None:
        comp = self.comp
        self.facts.defines.append(comp.name)
        self.facts.entry = comp.entry
        self.occ.append(
            Occurrence(comp.name.line, comp.name.start, comp.name.end, "computation", comp.name.text, "def")
        )
        self._keyword(comp.name)
        for attr in comp.attributes:
            if attr.name != "execution_thread":
                self.diags.append(
                    error(
                        _rng(attr.line, attr.start, attr.end),
                        "unknown-attribute",
                        f"unexpected attribute '{attr.name}' on a computation (only execution_thread= is allowed)",
                    )
                )
            elif check_value("string", attr.value):
                self.diags.append(
                    error(
                        _rng(attr.line, attr.start, attr.end),
                        "invalid-attribute",
                        "execution_thread= expects a quoted string",
                    )
                )
        all_names = {}
        for ins in comp.instructions:
            if ins.name is not None and ins.name.text not in all_names:
                all_names[ins.name.text] = ins.name
        self.later = all_names
        root_tok: Tok | None = None
        params: list[tuple[int, Instruction, Tok]] = []
        for ins in comp.instructions:
            self.inferred = None
            self._instruction(ins, params)
            name = ins.name
            if ins.root is not None:
                if root_tok is not None:
                    self.diags.append(
                        error(
                            _tok_range(ins.root),
                            "multiple-roots",
                            "one computation should have only one ROOT",
                            related=(Related(_tok_range(root_tok), "the first ROOT"),),
                        )
                    )
                else:
                    root_tok = ins.root
            if name is not None:
                if name.text in self.defined:
                    first = self.defined[name.text]
                    self.diags.append(
                        error(
                            _name_range(name),
                            "duplicate-instruction",
                            f"instruction '{name.text}' is already defined in this computation",
                            related=(Related(_name_range(first), "first defined here"),),
                        )
                    )
                else:
                    self.defined[name.text] = name
                    self.shapes[name.text] = ins.shape if ins.shape is not None else self.inferred
        self._parameters(params)
        self._signature(root_tok)

    # ------------------------------------------------------------------ pieces
    def _keyword(self, name: Name) -> None:
        if name.bare and (name.text in KEYWORDS or name.text in PRIMITIVE_TYPES):
            self.diags.append(
                error(
                    _name_range(name),
                    "keyword-name",
                    f"'{name.text}' is a keyword of HLO text; write it as '%{name.text}'",
                )
            )

    def _instruction(self, ins: Instruction, params: list) -> None:
        if ins.name is not None:
            self.occ.append(
                Occurrence(ins.name.line, ins.name.start, ins.name.end, "instruction", ins.name.text, "def")
            )
            self._keyword(ins.name)
            eq = ins.equal
            if ins.name.bare and eq is not None and eq.line == ins.name.line and eq.col == ins.name.end:
                self.diags.append(
                    error(
                        _rng(eq.line, ins.name.start, eq.end),
                        "syntax-error",
                        f"write a space before '=': XLA reads '{ins.name.text}=' as an attribute "
                        "name, not an instruction name",
                    )
                )
        info, wrapped = lookup(ins.opcode.text)
        if (
            ins.shape is not None
            and ins.shape.layout_rank >= 0
            and ins.shape.element is not None
            and ins.shape.layout_rank != len(ins.shape.dims)
        ):
            self.diags.append(
                error(
                    _tok_range(ins.shape.layout_tok),
                    "layout-rank",
                    f"the layout lists {ins.shape.layout_rank} dimensions but the shape "
                    f"{ins.shape.text} has {len(ins.shape.dims)}",
                )
            )
        self._operands(ins, info)
        for shp in [ins.shape] if ins.shape is not None else []:
            bad = negative_dims(shp)
            if bad is not None:
                self.diags.append(error(_tok_range(bad), "invalid-shape", f"{bad.text}: dimension sizes must be >= 0"))
            big = oversized(shp)
            if big is not None:
                self.diags.append(error(_tok_range(big[0]), "shape-too-large", big[1]))
        if info is None or not info.in_parser:
            why = "is not an HLO opcode" if info is None else "is not accepted by XLA's HLO parser"
            self.diags.append(error(_tok_range(ins.opcode), "unknown-opcode", f"'{ins.opcode.text}' {why}"))
            return
        if ins.shape is None and not info.infers_shape:
            self.diags.append(
                error(
                    _tok_range(ins.opcode),
                    "cannot-infer-shape",
                    f"XLA cannot infer the result shape of '{ins.opcode.text}'; "
                    "write it before the opcode, e.g. 'x = f32[4] ...'",
                )
            )
        self._arity(ins, info, params)
        seen = self._attributes(ins, info, wrapped)
        operand_shapes = [self._operand_shape(o) for o in ins.operands]
        self.diags.extend(opcode_rules(ins, operand_shapes, seen, self.channels, info.name))
        if info.name == "constant" and ins.shape is not None and ins.arg_count == 1:
            problem = check_literal(ins.shape, ins.literal, ins.opcode)
            if problem is not None:
                t, msg = problem
                self.diags.append(error(_tok_range(t), "invalid-literal", msg))
        if ins.shape is None:
            inferred, problem = infer(ins, operand_shapes)
            if problem is not None:
                t, msg = problem
                self.diags.append(error(_tok_range(t), "cannot-infer-shape", f"failed to infer the shape: {msg}"))
            self.inferred = inferred
        if ins.name is not None:
            chan = seen.get("channel_id")
            self.channels[ins.name.text] = (info.name, chan.value[0].text if chan and chan.value else None)

    def _operands(self, ins: Instruction, info: OpcodeInfo | None) -> None:
        for op in ins.operands:
            if op.nested is not None:
                nested = op.nested
                ninfo, nwrapped = lookup(nested.opcode.text)
                self._operands(nested, ninfo)
                if ninfo is None or not ninfo.in_parser or nested.opcode.text.startswith("%"):
                    self.diags.append(
                        error(
                            _tok_range(nested.opcode),
                            "unknown-opcode",
                            f"'{nested.opcode.text}' is not an HLO opcode (an operand followed "
                            "by '(' is an inline instruction)",
                        )
                    )
                    continue
                if nested.shape is None and not ninfo.infers_shape:
                    self.diags.append(
                        error(
                            _tok_range(nested.opcode),
                            "cannot-infer-shape",
                            f"XLA cannot infer the result shape of '{nested.opcode.text}'; write a shape before it",
                        )
                    )
                self._arity(nested, ninfo, None)
                self._attributes(nested, ninfo, nwrapped)
                continue
            if op.name is None:
                continue
            self._use(op.name)
            defined = self.shapes.get(op.name.text) if op.name.text in self.defined else None
            if op.shape is not None and defined is not None and op.shape.text != defined.text:
                self.diags.append(
                    error(
                        _rng(op.shape.line, op.shape.col, op.name.start - 1),
                        "operand-shape-mismatch",
                        f"the operand is written as {op.shape.text}, but '{op.name.text}' is {defined.text}",
                    )
                )

    def _use(self, name: Name) -> None:
        self.occ.append(Occurrence(name.line, name.start, name.end, "instruction", name.text, "use"))
        self._keyword(name)
        if name.text in self.defined:
            return
        later = self.later.get(name.text)
        if later is not None:
            self.diags.append(
                error(
                    _name_range(name),
                    "undefined-operand",
                    f"'{name.text}' is used before its definition; XLA's parser needs "
                    "operands defined above their users",
                    related=(Related(_name_range(later), "defined here"),),
                )
            )
        else:
            self.diags.append(
                error(
                    _name_range(name),
                    "undefined-operand",
                    f"instruction '{name.text}' does not exist in this computation",
                )
            )

    def _arity(self, ins: Instruction, info: OpcodeInfo, params) -> None:
        op = info.name
        count = len(ins.operands)
        where = _tok_range(ins.opcode)
        if op in ("parameter", "constant") and ins.commas:
            self.diags.append(
                error(
                    where, "syntax-error", f"expects ')' after the {op} {'number' if op == 'parameter' else 'literal'}"
                )
            )
            return
        if op == "parameter":
            lit = ins.literal
            if ins.operands or len(lit) != 1 or lit[0].type != "INT":
                self.diags.append(error(where, "parameter-number", "expects parameter(N) with an integer N"))
                return
            num = int(lit[0].text)
            if num < 0:
                self.diags.append(error(_tok_range(lit[0]), "parameter-number", "parameter number must be >= 0"))
                return
            if params is not None:
                params.append((num, ins, lit[0]))
            return
        if op == "constant":
            if ins.operands or ins.arg_count != 1:
                self.diags.append(error(where, "operand-count", "expects constant(<literal>)"))
            return
        if ins.literal:
            t = ins.literal[0]
            self.diags.append(
                error(
                    _tok_range(t),
                    "syntax-error",
                    f"'{info.name}' takes instruction operands, not the literal '{t.text}'",
                )
            )
            return
        expected = info.arity
        if op == "ragged-dot":
            expected = 3
        elif op == "scaled-dot":
            expected = 4
        if expected is not None and count != expected:
            self.diags.append(
                error(
                    where,
                    "operand-count",
                    f"'{op}' expects {expected} operand{'s' if expected != 1 else ''}, but has {count}",
                )
            )
        elif op in ("reduce", "reduce-window") and count % 2:
            self.diags.append(error(where, "operand-count", f"expects an even number of operands, but has {count}"))
        elif op == "scatter" and count % 2 == 0:
            self.diags.append(error(where, "operand-count", f"expects an odd number of operands, but has {count}"))
        elif op in ("dynamic-slice", "conditional", "dot") and count < (1 if op == "dynamic-slice" else 2):
            self.diags.append(error(where, "operand-count", f"'{op}' needs more operands (has {count})"))
        elif op == "dynamic-update-slice" and count < 2:
            self.diags.append(error(where, "operand-count", "expected at least two operands"))

    def _attributes(self, ins: Instruction, info: OpcodeInfo, wrapped: OpcodeInfo | None) -> dict[str, Attribute]:
        allowed: dict[str, Attr] = dict(info.attributes)
        if wrapped is not None:
            allowed.update(wrapped.attributes)
            if info.name == "async-start":
                allowed.pop("calls", None)
        seen: dict[str, Attribute] = {}
        prev: Attribute | None = None
        for attr in ins.attributes:
            rng = _rng(attr.line, attr.start, attr.end)
            follows_mesh = (
                prev is not None and prev.name == "replica_groups" and prev.value and prev.value[0].text == "mesh"
            )
            prev = attr
            if attr.name == "device_ids" and follows_mesh:
                continue  # `replica_groups=mesh[...], device_ids=(...) {axes}`: one value in XLA's syntax
            if attr.name in seen:
                self.diags.append(
                    error(
                        rng,
                        "duplicate-attribute",
                        f"attribute '{attr.name}' already exists",
                        related=(
                            Related(
                                _rng(seen[attr.name].line, seen[attr.name].start, seen[attr.name].end),
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
                self.diags.append(
                    error(rng, "unknown-attribute", f"'{info.name}' does not take the attribute '{attr.name}'")
                )
                continue
            problem = check_value(kind, attr.value)
            if problem is None and kind == "sharding":
                found = check_sharding(attr.value)
                if found is not None:
                    t = found[0] or attr.value[0]
                    problem = (attr.value.index(t) if t in attr.value else 0, found[1])
            if problem is None:
                found = attribute_problems(attr, kind)
                if found is not None:
                    problem = (attr.value.index(found[0]), found[1])
            if problem is not None:
                idx, msg = problem
                t = attr.value[idx] if attr.value else Tok("", "", attr.line, attr.end)
                self.diags.append(error(_rng(t.line, t.col, t.end), "invalid-attribute", f"{attr.name}=: {msg}"))
                continue
            self._attribute_uses(attr, kind)
        for key, spec in allowed.items():
            if spec.required and key not in seen:
                self.diags.append(
                    error(_tok_range(ins.opcode), "missing-attribute", f"'{info.name}' needs the attribute '{key}='")
                )
        if info.name == "broadcast" and "dimensions" not in seen and ins.operands:
            shape = self._operand_shape(ins.operands[0])
            if shape is not None and not shape.is_scalar:
                self.diags.append(
                    error(
                        _tok_range(ins.opcode),
                        "missing-attribute",
                        "'broadcast' of a non-scalar operand needs the attribute 'dimensions='",
                    )
                )
        if info.name == "conditional":
            self._conditional(ins, seen)
        return seen

    def _operand_shape(self, op):
        if op.shape is not None:
            return op.shape
        if op.name is not None:
            return self.shapes.get(op.name.text)
        return None

    def _conditional(self, ins: Instruction, seen: dict) -> None:
        where = _tok_range(ins.opcode)
        has_pred = "true_computation" in seen or "false_computation" in seen
        has_branches = "branch_computations" in seen
        shape = self._operand_shape(ins.operands[0]) if ins.operands else None
        if shape is not None and shape.element is not None:
            if not shape.is_scalar or shape.element not in ("pred", "s32"):
                self.diags.append(
                    error(where, "invalid-attribute", "the first operand of conditional must be a scalar pred or s32")
                )
                return
            pred = shape.element == "pred"
            if pred and not ("true_computation" in seen and "false_computation" in seen):
                self.diags.append(
                    error(
                        where,
                        "missing-attribute",
                        "a pred-indexed conditional needs true_computation= and false_computation=",
                    )
                )
            elif not pred and not has_branches:
                self.diags.append(
                    error(where, "missing-attribute", "an s32-indexed conditional needs branch_computations=")
                )
            elif (pred and has_branches) or (not pred and has_pred):
                self.diags.append(
                    error(
                        where,
                        "unknown-attribute",
                        "true_computation/false_computation go with a pred index, "
                        "branch_computations with an s32 index",
                    )
                )
        elif not has_pred and not has_branches:
            self.diags.append(
                error(
                    where,
                    "missing-attribute",
                    "'conditional' needs branch_computations= (or true_computation= and false_computation=)",
                )
            )

    def _attribute_uses(self, attr: Attribute, kind: str) -> None:
        if kind in ("computation", "computation_list"):
            for t in attr.value:
                if t.type in ("NAME", "PNAME"):
                    text = t.text[1:] if t.type == "PNAME" else t.text
                    self.occ.append(Occurrence(t.line, t.col, t.end, "computation", text, "use"))
                    self.facts.calls.append(CallUse(text, t.line, t.col, t.end))
        elif kind == "instruction_list":
            for t in attr.value:
                if t.type in ("NAME", "PNAME"):
                    bare = t.type == "NAME"
                    self._use(Name(t.text if bare else t.text[1:], t.line, t.col, t.end, bare))
        elif kind == "metadata":
            vals = attr.value
            for i, t in enumerate(vals[:-1]):
                if t.type == "ATTR_NAME" and t.text == "stack_frame_id=" and vals[i + 1].type == "INT":
                    n = vals[i + 1]
                    if int(n.text) > 0:
                        self.occ.append(Occurrence(n.line, n.col, n.end, "stack_frame", n.text, "use"))
                        self.facts.frame_uses.append(CallUse(n.text, n.line, n.col, n.end))

    def _parameters(self, params: list[tuple[int, Instruction, Tok]]) -> None:
        seen: dict[int, Tok] = {}
        for num, _ins, t in params:
            if num in seen:
                self.diags.append(
                    error(
                        _tok_range(t),
                        "parameter-number",
                        f"parameter number {num} already exists",
                        related=(Related(_tok_range(seen[num]), "first used here"),),
                    )
                )
            else:
                seen[num] = t
        n = len(seen)
        for num, t in seen.items():
            if num >= n:
                missing = sorted(set(range(n)) - set(seen))
                self.diags.append(
                    error(
                        _tok_range(t),
                        "parameter-number",
                        f"parameter numbers must be 0..{n - 1} in a computation with {n} "
                        f"parameters; {missing[0] if missing else num} is missing "
                        "(XLA's parser aborts the process on this)",
                    )
                )

    def _signature(self, root_tok: Tok | None) -> None:
        comp = self.comp
        if comp.result is None or not comp.instructions:
            return
        root = None
        if root_tok is not None:
            for ins in comp.instructions:
                if ins.root is root_tok:
                    root = ins
        else:
            root = comp.instructions[-1]
        if root is None or root.shape is None:
            return
        if root.shape.text != comp.result.text:
            r = comp.result
            self.diags.append(
                error(
                    _rng(r.line, r.col, r.col + len(r.text)),
                    "signature-mismatch",
                    f"computation {comp.name.text} returns {comp.result.text}, but its root "
                    f"instruction {root.name.text if root.name else ''} is {root.shape.text}",
                )
            )


def check_computation(comp: Computation) -> tuple[list[Diagnostic], list[Occurrence], BlockFacts]:
    checker = ComputationChecker(comp)
    checker.run()
    return checker.diags, checker.occ, checker.facts


__all__ = ["BlockFacts", "CallUse", "check_computation", "OPCODES"]
