"""The facts the verifier-level rules read from an HLO module, found without touching every instruction.

`ModuleFacts` joins the computations' summaries (`rules.summary`) into each rule's candidates, resolves operand
names per computation lazily, and caches each line's details and each distinct shape text's parse. The shape
comparisons here are the lax verifier's: layouts, dynamic-dimension markers and floating-point precision are
ignored (`same_shape`); `exact_types` is for copies of a shape (written operand shapes) where precision counts.
"""

from __future__ import annotations

import re

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.instructions import Instruction
from hlo_lsp.core.hlo.line import InstructionLine, parse_instruction_line
from hlo_lsp.core.hlo.model import Computation, HloModule
from hlo_lsp.core.hlo.rules.candidates import Candidates
from hlo_lsp.core.hlo.rules.inference import Site, mismatch
from hlo_lsp.core.hlo.rules.inference.attrs import attr_text
from hlo_lsp.core.hlo.rules.summary import Summary, fp_type
from hlo_lsp.core.hlo.text import INSTR, find_close_paren
from hlo_lsp.core.shapes import Shape, parse_shape, shape_text

# `tuple(x, (f32[2]) tuple(x))`: an instruction written as an operand; `tuple(a,, b)`: an empty one
_ODD_OPERANDS = re.compile(r"[a-z0-9]\(|,\s*,|\(\s*,|,\s*\)")
#: Opcodes whose inferred shape needs a called computation's root (`inference.Site.callee_root`).
NEEDS_ROOTS = frozenset(("fusion", "call", "while", "conditional", "map", "async-start"))


class ModuleFacts:
    """The module with lazy per-computation name lookup, the candidates of each rule (`candidates`, from the
    computations' summaries), and cached line details and shapes: a rule reads per line only the instructions
    the summaries could not clear, and those of computations the rows could not read."""

    def __init__(self, mod: HloModule, summaries: list[Summary | None] | None = None) -> None:
        self.mod = mod
        self.summaries = summaries
        self._scope: dict[int, dict[str, int]] = {}
        self._detail: dict[int, InstructionLine | None] = {}
        self._shape: dict[int, Shape | None] = {}
        self._parsed: dict[str, Shape | None] = {}
        self._params: dict[str, list[Instruction] | None] = {}
        table = mod.instructions
        self.names: list[str] = getattr(table, "names", None) or [i.name for i in table]
        self._line_of: list[int] = getattr(table, "line_of", None) or [i.line for i in table]
        self._ins: dict[int, Instruction] = {}
        self._verdicts: dict[tuple, tuple[str, str] | None] = {}
        self.candidates = Candidates(mod, summaries)

    def ins(self, i: int) -> Instruction:
        """Instruction ``i``, made for this run only (the module's table keeps no object for it)."""
        x = self._ins.get(i)
        if x is None:
            x = self._ins[i] = self.mod.make_instruction(i)
        return x

    # -- the instructions a rule reads per line ---------------------------------------------------------
    def at_line(self, line: int) -> Instruction | None:
        i = self.mod.index_at_line(line)
        return None if i is None else self.ins(i)

    def of_opcodes(self, opcodes) -> list[Instruction]:
        """The instructions with one of ``opcodes`` a rule must look at, in document order: those the rows pass
        could not clear, and every one of those opcodes in a computation it could not read."""
        idx = self.candidates.indices(opcodes, lambda i: self.ins(i).opcode)
        return [self.ins(i) for i in sorted(idx)]

    def slow_lines_matching(self, pattern: re.Pattern) -> list[int]:
        """The instruction lines of computations the rows pass could not read that hold a match of
        ``pattern`` (a line the rows read has a plain operand list, so per-line patterns about operands only
        matter on the others)."""
        lines, line_of = self.mod.lines, self._line_of
        return [line_of[i] for i in self.candidates.slow_instructions() if pattern.search(lines[line_of[i]])]

    def scope(self, comp: Computation) -> dict[str, int]:
        """Name -> instruction index within ``comp`` (the first of a repeated name)."""
        names = self._scope.get(id(comp))
        if names is None:
            names = {}
            for i in comp.instructions:
                names.setdefault(self.names[i], i)
            self._scope[id(comp)] = names
        return names

    def comp_of(self, ins: Instruction) -> Computation | None:
        return self.mod.computation_at_line(ins.line)

    def detail(self, ins: Instruction) -> InstructionLine | None:
        key = id(ins)
        if key not in self._detail:
            self._detail[key] = parse_instruction_line(self.mod.lines[ins.line])
        return self._detail[key]

    def shape(self, ins: Instruction) -> Shape | None:
        """The instruction's result shape; None when not written or unreadable. Only the head of the line is
        matched (not its attributes), and each distinct shape text is parsed once."""
        key = id(ins)
        if key not in self._shape:
            mm = INSTR.match(self.mod.lines[ins.line])
            text = mm.group(4) if mm is not None else None
            if text is None:
                self._shape[key] = None
            else:
                if text not in self._parsed:
                    self._parsed[text] = parse_shape(text)
                self._shape[key] = self._parsed[text]
        return self._shape[key]

    def operands(self, ins: Instruction) -> list[Instruction | None]:
        """The operand instructions in the same computation (None for a name that does not resolve)."""
        c = self.comp_of(ins)
        names = self.scope(c) if c is not None else {}
        return [self.ins(names[op]) if op in names else None for op in ins.operands]

    def parameters(self, comp_name: str) -> list[Instruction] | None:
        """A computation's parameter instructions by number (0..n-1); None when unknown or numbered oddly."""
        if comp_name not in self._params:
            self._params[comp_name] = self._read_parameters(comp_name)
        return self._params[comp_name]

    def _read_parameters(self, comp_name: str) -> list[Instruction] | None:
        ci = self.mod.computation_by_name.get(comp_name)
        if ci is None:
            return None
        comp = self.mod.computations[ci]
        lines, line_of = self.mod.lines, self._line_of
        # The substring test spares parsing every other instruction of the computation.
        params = [
            self.ins(i)
            for i in comp.instructions
            if " parameter(" in lines[line_of[i]] and self.ins(i).opcode == "parameter"
        ]
        nums = [n for p in params if (n := p.parameter_number) is not None]
        if len(nums) != len(params) or sorted(nums) != list(range(len(params))):
            return None
        return sorted(params, key=lambda p: p.parameter_number or 0)

    def root_shape(self, comp_name: str) -> Shape | None:
        """The shape of a computation's root instruction; None when unknown."""
        ci = self.mod.computation_by_name.get(comp_name)
        comp = self.mod.computations[ci] if ci is not None else None
        return self.shape(self.ins(comp.root)) if comp is not None and comp.root is not None else None

    def site(self, ins: Instruction) -> Site | None:
        """What `rules.inference` reads of ``ins``: its shape, its operands' definitions' shapes, its attribute
        text and its callees' roots; None when a shape is unreadable, an operand does not resolve, or one is
        written inline (a nested instruction) or left empty."""
        out = self.shape(ins)
        line = self.mod.lines[ins.line]
        head = INSTR.match(line)
        if out is None or head is None:
            return None
        ops = []
        for op in self.operands(ins):
            s = self.shape(op) if op is not None else None
            if s is None:
                return None
            ops.append(s)
        close = find_close_paren(line, head.end() - 1)
        if close < 0 or _ODD_OPERANDS.search(line, head.end() - 1, close + 1):
            return None
        return Site(ins.opcode, out, tuple(ops), attr_text(line[close + 1 :]), tuple(ins.called), self.root_shape)

    def inferred_mismatch(self, ins: Instruction) -> tuple[str, str] | None:
        """`inference.mismatch` of ``ins``'s site, memoized for this run by opcode, shapes and attribute text
        (an opcode whose answer needs a callee's root is never memoized)."""
        site = self.site(ins)
        if site is None:
            return None
        if site.opcode in NEEDS_ROOTS:
            return mismatch(site)
        key = (site.opcode, id(site.shape), tuple(map(id, site.operands)), site.attrs)  # shapes: one per text
        if key not in self._verdicts:
            self._verdicts[key] = mismatch(site)
        return self._verdicts[key]

    def opcode_range(self, ins: Instruction) -> Range:
        d = self.detail(ins)
        if d is None:
            return ins.name_range
        return Range(ins.line, d.opcode.start, ins.line, d.opcode.end)

    def called_range(self, ins: Instruction, callee: str) -> Range:
        """The range of ``callee`` where ``ins`` names it; the instruction name when not found."""
        d = self.detail(ins)
        for sp in d.called if d is not None else ():
            if sp.text == callee:
                return Range(ins.line, sp.start, ins.line, sp.end)
        return ins.name_range

    def operand_range(self, ins: Instruction, k: int) -> Range:
        d = self.detail(ins)
        if d is None or k >= len(d.operands):
            return ins.name_range
        sp = d.operands[k]
        return Range(ins.line, sp.start, ins.line, sp.end)


def same_shape(a: Shape, b: Shape) -> bool:
    """Equal ignoring layout, dynamic markers and fp precision (`Shape::Equal` as the lax verifier uses it);
    iterative over tuples."""
    work = [(a, b)]
    while work:
        x, y = work.pop()
        if x.is_tuple or y.is_tuple:
            if not (x.is_tuple and y.is_tuple) or len(x.tuple_shapes) != len(y.tuple_shapes):
                return False
            work.extend(zip(x.tuple_shapes, y.tuple_shapes))
            continue
        if fp_type(x.element_type) != fp_type(y.element_type) or x.dims != y.dims:
            return False
    return True


def text_of(s: Shape) -> str:
    return shape_text(s, with_layout=False)


def exact_types(a: Shape, b: Shape) -> bool:
    """Element types equal everywhere (a written operand shape is a copy, so precision counts here)."""
    work = [(a, b)]
    while work:
        x, y = work.pop()
        if x.is_tuple and y.is_tuple:
            work.extend(zip(x.tuple_shapes, y.tuple_shapes))
        elif x.element_type != y.element_type:
            return False
    return True
