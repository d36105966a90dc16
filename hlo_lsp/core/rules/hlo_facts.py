"""The facts the verifier-level rules read from an HLO module, found without touching every instruction.

`ModuleFacts` finds candidate lines with one regex scan of the text (the reader parses an instruction's line on
first use, so nothing else is parsed), resolves operand names per computation lazily, and caches each line's
details and each distinct shape text's parse. The shape comparisons here are the lax verifier's: layouts,
dynamic-dimension markers and floating-point precision are ignored (`same_shape`); `exact_types` is for copies of
a shape (written operand shapes) where precision counts.
"""

from __future__ import annotations

import bisect
import re

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo import _INSTR, Computation, HloModule, Instruction
from hlo_lsp.core.hlo_line import InstructionLine, parse_instruction_line
from hlo_lsp.core.shapes import Shape, parse_shape, shape_text

FLOATS = frozenset("f16 bf16 f32 f64 f8e5m2 f8e4m3fn f8e4m3b11fnuz f8e5m2fnuz f8e4m3fnuz f8e4m3 f8e3m4 "
                   "f8e8m0fnu f4e2m1fn".split())
_OPCODE_PATTERNS: dict[tuple[str, ...], re.Pattern] = {}


class ModuleFacts:
    """The module with lazy per-computation name lookup, candidate lines found by one regex scan of the text, and
    cached line details and shapes: a rule touches only the instructions of its opcodes (the reader parses an
    instruction's line on first use, so nothing else is parsed)."""

    def __init__(self, mod: HloModule) -> None:
        self.mod = mod
        self._scope: dict[int, dict[str, int]] = {}
        self._detail: dict[int, InstructionLine | None] = {}
        self._shape: dict[int, Shape | None] = {}
        self._parsed: dict[str, Shape | None] = {}
        self._params: dict[str, list[Instruction] | None] = {}
        self._text: str | None = None
        self._line_starts: list[int] | None = None
        self._index_of_line: dict[int, int] | None = None
        table = mod.instructions
        self._names: list[str] = getattr(table, "names", None) or [i.name for i in table]
        self._line_of: list[int] = getattr(table, "line_of", None) or [i.line for i in table]

    # -- finding candidates without touching every instruction ------------------------------------------
    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "\n".join(self.mod.lines)
        return self._text

    def lines_matching(self, pattern: re.Pattern) -> list[int]:
        """The distinct lines holding a match of ``pattern``, in order."""
        if self._line_starts is None:
            starts, pos = [], 0
            for ln in self.mod.lines:
                starts.append(pos)
                pos += len(ln) + 1
            self._line_starts = starts
        out: list[int] = []
        for mm in pattern.finditer(self.text):
            ln = bisect.bisect_right(self._line_starts, mm.start()) - 1
            if not out or out[-1] != ln:
                out.append(ln)
        return out

    def at_line(self, line: int) -> Instruction | None:
        if self._index_of_line is None:
            self._index_of_line = {ln: i for i, ln in enumerate(self._line_of)}
        i = self._index_of_line.get(line)
        return None if i is None else self.mod.instructions[i]

    def of_opcodes(self, opcodes) -> list[Instruction]:
        """The instructions with one of ``opcodes``, in document order."""
        key = tuple(sorted(opcodes))
        pat = _OPCODE_PATTERNS.get(key)
        if pat is None:
            pat = _OPCODE_PATTERNS[key] = re.compile(r" (?:%s)\(" % "|".join(re.escape(o) for o in key))
        out = []
        for ln in self.lines_matching(pat):
            ins = self.at_line(ln)
            if ins is not None and ins.opcode in opcodes:
                out.append(ins)
        return out

    def scope(self, comp: Computation) -> dict[str, int]:
        """Name -> instruction index within ``comp`` (the first of a repeated name)."""
        names = self._scope.get(id(comp))
        if names is None:
            names = {}
            for i in comp.instructions:
                names.setdefault(self._names[i], i)
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
            mm = _INSTR.match(self.mod.lines[ins.line])
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
        table = self.mod.instructions
        return [table[names[op]] if op in names else None for op in ins.operands]

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
        lines, line_of, table = self.mod.lines, self._line_of, self.mod.instructions
        # The substring test spares parsing every other instruction of the computation.
        params = [table[i] for i in comp.instructions
                  if " parameter(" in lines[line_of[i]] and table[i].opcode == "parameter"]
        nums = [p.parameter_number for p in params]
        if any(n is None for n in nums) or sorted(nums) != list(range(len(params))):
            return None
        return sorted(params, key=lambda p: p.parameter_number)

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


def fp_type(t: str) -> str:
    return "<float>" if t in FLOATS else t


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
