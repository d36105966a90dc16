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

from hlo_lsp.core.diagnostics import Diagnostic, Related, error
from hlo_lsp.core.hlo.opcodes import KEYWORDS, OPCODES, PRIMITIVE_TYPES, OpcodeInfo, lookup
from hlo_lsp.core.occurrences import Occurrence

from .arity import check_arity
from .attribute_checks import check_attributes
from .attributes import check_value
from .model import Attribute, Computation, Instruction, Name, Shape, Tok
from .ranges import name_range, rng, tok_range
from .rules import infer, layout_rank_problems, opcode_rules, size_problems
from .semantics import check_literal


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


class ComputationChecker:
    """One pass over a computation's instructions in order: each one's own rules (`_instruction`: opcode, shape,
    operands, arity, attributes, literal, inferred shape), then what spans the computation (names defined once,
    one ROOT, parameter numbers, the signature against the root)."""

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
        self._header()
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
            if ins.root is not None:
                root_tok = self._root(ins.root, root_tok)
            if ins.name is not None:
                self._define(ins, ins.name)
        self.diags.extend(parameter_problems(params))
        self.diags.extend(signature_problems(comp, root_tok))

    # ------------------------------------------------------------------ pieces
    def _header(self) -> None:
        """The computation's name (a definition) and its attributes (only ``execution_thread=``)."""
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
                        rng(attr.line, attr.start, attr.end),
                        "unknown-attribute",
                        f"unexpected attribute '{attr.name}' on a computation (only execution_thread= is allowed)",
                    )
                )
            elif check_value("string", attr.value):
                self.diags.append(
                    error(
                        rng(attr.line, attr.start, attr.end),
                        "invalid-attribute",
                        "execution_thread= expects a quoted string",
                    )
                )

    def _root(self, root: Tok, first: Tok | None) -> Tok:
        """The computation's ROOT token after this one (a second ROOT is reported)."""
        if first is None:
            return root
        self.diags.append(
            error(
                tok_range(root),
                "multiple-roots",
                "one computation should have only one ROOT",
                related=(Related(tok_range(first), "the first ROOT"),),
            )
        )
        return first

    def _define(self, ins: Instruction, name: Name) -> None:
        """``name`` is defined (with its shape, written or inferred), unless the computation already has it."""
        first = self.defined.get(name.text)
        if first is not None:
            self.diags.append(
                error(
                    name_range(name),
                    "duplicate-instruction",
                    f"instruction '{name.text}' is already defined in this computation",
                    related=(Related(name_range(first), "first defined here"),),
                )
            )
        else:
            self.defined[name.text] = name
            self.shapes[name.text] = ins.shape if ins.shape is not None else self.inferred

    def _keyword(self, name: Name) -> None:
        if name.bare and (name.text in KEYWORDS or name.text in PRIMITIVE_TYPES):
            self.diags.append(
                error(
                    name_range(name),
                    "keyword-name",
                    f"'{name.text}' is a keyword of HLO text; write it as '%{name.text}'",
                )
            )

    def _definition(self, ins: Instruction, name: Name) -> None:
        """The instruction's name: a definition, not a keyword, and not glued to its ``=``."""
        self.occ.append(Occurrence(name.line, name.start, name.end, "instruction", name.text, "def"))
        self._keyword(name)
        eq = ins.equal
        if name.bare and eq is not None and eq.line == name.line and eq.col == name.end:
            self.diags.append(
                error(
                    rng(eq.line, name.start, eq.end),
                    "syntax-error",
                    f"write a space before '=': XLA reads '{name.text}=' as an attribute name, not an instruction name",
                )
            )

    def _instruction(self, ins: Instruction, params: list) -> None:
        if ins.name is not None:
            self._definition(ins, ins.name)
        info, wrapped = lookup(ins.opcode.text)
        if ins.shape is not None:
            self.diags.extend(layout_rank_problems(ins.shape))
        self._operands(ins, info)
        if ins.shape is not None:
            self.diags.extend(size_problems(ins.shape))
        if info is None or not info.in_parser:
            why = "is not an HLO opcode" if info is None else "is not accepted by XLA's HLO parser"
            self.diags.append(error(tok_range(ins.opcode), "unknown-opcode", f"'{ins.opcode.text}' {why}"))
            return
        if ins.shape is None and not info.infers_shape:
            self.diags.append(
                error(
                    tok_range(ins.opcode),
                    "cannot-infer-shape",
                    f"XLA cannot infer the result shape of '{ins.opcode.text}'; "
                    "write it before the opcode, e.g. 'x = f32[4] ...'",
                )
            )
        check_arity(ins, info, params, self.diags)
        seen = check_attributes(ins, info, wrapped, self.diags, self._operand_shape, self._attribute_uses)
        operand_shapes = [self._operand_shape(o) for o in ins.operands]
        self.diags.extend(opcode_rules(ins, operand_shapes, seen, self.channels, info.name))
        if info.name == "constant" and ins.shape is not None and ins.arg_count == 1:
            problem = check_literal(ins.shape, ins.literal, ins.opcode)
            if problem is not None:
                self.diags.append(error(tok_range(problem[0]), "invalid-literal", problem[1]))
        if ins.shape is None:
            inferred, problem = infer(ins, operand_shapes)
            if problem is not None:
                t, msg = problem
                self.diags.append(error(tok_range(t), "cannot-infer-shape", f"failed to infer the shape: {msg}"))
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
                            tok_range(nested.opcode),
                            "unknown-opcode",
                            f"'{nested.opcode.text}' is not an HLO opcode (an operand followed "
                            "by '(' is an inline instruction)",
                        )
                    )
                    continue
                if nested.shape is None and not ninfo.infers_shape:
                    self.diags.append(
                        error(
                            tok_range(nested.opcode),
                            "cannot-infer-shape",
                            f"XLA cannot infer the result shape of '{nested.opcode.text}'; write a shape before it",
                        )
                    )
                check_arity(nested, ninfo, None, self.diags)
                check_attributes(nested, ninfo, nwrapped, self.diags, self._operand_shape, self._attribute_uses)
                continue
            if op.name is None:
                continue
            self._use(op.name)
            defined = self.shapes.get(op.name.text) if op.name.text in self.defined else None
            if op.shape is not None and defined is not None and op.shape.text != defined.text:
                self.diags.append(
                    error(
                        rng(op.shape.line, op.shape.col, op.name.start - 1),
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
                    name_range(name),
                    "undefined-operand",
                    f"'{name.text}' is used before its definition; XLA's parser needs "
                    "operands defined above their users",
                    related=(Related(name_range(later), "defined here"),),
                )
            )
        else:
            self.diags.append(
                error(
                    name_range(name),
                    "undefined-operand",
                    f"instruction '{name.text}' does not exist in this computation",
                )
            )

    def _operand_shape(self, op):
        if op.shape is not None:
            return op.shape
        if op.name is not None:
            return self.shapes.get(op.name.text)
        return None

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


def parameter_problems(params: list[tuple[int, Instruction, Tok]]) -> list[Diagnostic]:
    """``parameter-number``: numbers given twice, or not 0..n-1 (on which XLA's parser aborts)."""
    out: list[Diagnostic] = []
    seen: dict[int, Tok] = {}
    for num, _ins, t in params:
        if num in seen:
            out.append(
                error(
                    tok_range(t),
                    "parameter-number",
                    f"parameter number {num} already exists",
                    related=(Related(tok_range(seen[num]), "first used here"),),
                )
            )
        else:
            seen[num] = t
    n = len(seen)
    for num, t in seen.items():
        if num >= n:
            missing = sorted(set(range(n)) - set(seen))
            out.append(
                error(
                    tok_range(t),
                    "parameter-number",
                    f"parameter numbers must be 0..{n - 1} in a computation with {n} "
                    f"parameters; {missing[0] if missing else num} is missing "
                    "(XLA's parser aborts the process on this)",
                )
            )
    return out


def signature_problems(comp: Computation, root_tok: Tok | None) -> list[Diagnostic]:
    """``signature-mismatch``: the computation's declared result against its root instruction's shape."""
    if comp.result is None or not comp.instructions:
        return []
    root = None
    if root_tok is not None:
        for ins in comp.instructions:
            if ins.root is root_tok:
                root = ins
    else:
        root = comp.instructions[-1]
    if root is None or root.shape is None or root.shape.text == comp.result.text:
        return []
    r = comp.result
    return [
        error(
            rng(r.line, r.col, r.col + len(r.text)),
            "signature-mismatch",
            f"computation {comp.name.text} returns {comp.result.text}, but its root "
            f"instruction {root.name.text if root.name else ''} is {root.shape.text}",
        )
    ]


def check_computation(comp: Computation) -> tuple[list[Diagnostic], list[Occurrence], BlockFacts]:
    checker = ComputationChecker(comp)
    checker.run()
    return checker.diags, checker.occ, checker.facts


__all__ = ["BlockFacts", "CallUse", "check_computation", "OPCODES"]
