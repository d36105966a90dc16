"""The facts the verifier-level rules read from an HLO module, found without touching every instruction.

`summarize` reads a computation's rows (`hlo_bulk`) and keeps, for the rules, only what they must look at;
`ModuleFacts` joins the summaries into each rule's candidates, resolves operand names per computation lazily,
and caches each line's details and each distinct shape text's parse. The shape comparisons here are the lax verifier's: layouts,
dynamic-dimension markers and floating-point precision are ignored (`same_shape`); `exact_types` is for copies of
a shape (written operand shapes) where precision counts.
"""

from __future__ import annotations

import re
import sys
from typing import NamedTuple

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo import _INSTR, Computation, HloModule, Instruction, find_close_paren
from hlo_lsp.core.hlo_bulk import (
    ATTRS, NAME, OPCODE, OPERANDS, PARAM, ROOT, SHAPE, columns, computation_rows, operand_names, row_calls,
)
from hlo_lsp.core.hlo_line import InstructionLine, parse_instruction_line
from hlo_lsp.core.rules.inference import NEEDS_CALLEE, REGISTRY, Site, mismatch
from hlo_lsp.core.rules.inference.attrs import attr_text
from hlo_lsp.core.shapes import Shape, parse_shape, shape_text

FLOATS = frozenset("f16 bf16 f32 f64 f8e5m2 f8e4m3fn f8e4m3b11fnuz f8e5m2fnuz f8e4m3fnuz f8e4m3 f8e3m4 "
                   "f8e8m0fnu f4e2m1fn".split())
# Elementwise opcodes whose operands and result share one element type (HloInstruction::IsElementwise).
SAME_TYPE_UNARY = frozenset("abs ceil cbrt cosine exponential exponential-minus-one floor log log-plus-one "
                            "logistic negate not popcnt round-nearest-afz round-nearest-even rsqrt sign sine "
                            "sqrt tan tanh count-leading-zeros erf copy".split())
SAME_TYPE_BINARY = frozenset("add subtract multiply divide maximum minimum power remainder and or xor "
                             "shift-left shift-right-arithmetic shift-right-logical atan2".split())
OTHER_ELEMENTWISE = frozenset("compare convert select clamp is-finite real imag complex "
                              "reduce-precision".split())
ELEMENTWISE = SAME_TYPE_UNARY | SAME_TYPE_BINARY | OTHER_ELEMENTWISE
_SAME_TYPE = SAME_TYPE_UNARY | SAME_TYPE_BINARY | {"clamp"}
CALLING = frozenset(("fusion", "call", "while", "reduce", "map"))
PER_LINE = frozenset(("bitcast-convert", "reshape", "bitcast", "get-tuple-element"))  # always read per line
#: Opcodes with a shape inference (`rules.inference`) checked by `row_inferred_ok` in the rows pass.
INFERRED = frozenset(REGISTRY) - {"fusion", "call", "while", "reshape"}
_LOOKED_AT = ELEMENTWISE | CALLING | PER_LINE | INFERRED | {"parameter"}


class ModuleFacts:
    """The module with lazy per-computation name lookup, the candidates of each rule taken from the computations'
    summaries (`summarize`), and cached line details and shapes: a rule reads per line only the instructions
    the summaries could not clear, and those of computations the rows could not read."""

    def __init__(self, mod: HloModule, summaries: list[Summary | None] | None = None) -> None:
        self.mod = mod
        self._summaries = summaries
        self._scope: dict[int, dict[str, int]] = {}
        self._detail: dict[int, InstructionLine | None] = {}
        self._shape: dict[int, Shape | None] = {}
        self._parsed: dict[str, Shape | None] = {}
        self._params: dict[str, list[Instruction] | None] = {}
        table = mod.instructions
        self._names: list[str] = getattr(table, "names", None) or [i.name for i in table]
        self._line_of: list[int] = getattr(table, "line_of", None) or [i.line for i in table]
        self._ins: dict[int, Instruction] = {}
        self._candidates: dict[str, list[int]] | None = None
        self._slow: list[Computation] = []  # computations the rows could not read: every rule reads them per line

    def ins(self, i: int) -> Instruction:
        """Instruction ``i``, made for this run only (the module's table keeps no object for it)."""
        x = self._ins.get(i)
        if x is None:
            x = self._ins[i] = self.mod.make_instruction(i)
        return x

    # -- the rows pass: which instructions a rule must look at ---------------------------------------------
    def _scan(self) -> dict[str, list[int]]:
        """Every computation's `Summary` (kept by the structural checker, else made here), joined: the
        candidates of each opcode, and the calling instructions whose callee's parameters do not plainly agree
        with their operands. Computations without a summary are left to the per-line path whole."""
        mod = self.mod
        cand: dict[str, list[int]] = {}
        sigs: dict[str, tuple[str, ...] | None] = {}
        roots: dict[str, str | None] = {}
        calls: list = []
        for k, c in enumerate(mod.computations):
            sm = self._summaries[k] if self._summaries is not None else summarize(mod, c)
            if sm is None or c.name in sigs:
                self._slow.append(c)
                sigs[c.name] = None  # unknown, or a repeated computation name: callers are read per line
                continue
            sigs[c.name] = sm.sig
            roots[c.name] = sm.root
            for op, i in sm.cand:
                cand.setdefault(op, []).append(i)
            calls.extend(sm.calls)
        for i, op, callees, shapes, result in calls:
            if not all(_call_ok(op, sigs, callee, shapes) for callee in callees) or not _root_ok(op, roots, callees, result):
                cand.setdefault(op, []).append(i)
        self._candidates = cand
        return cand

    # -- the instructions a rule reads per line ---------------------------------------------------------
    def at_line(self, line: int) -> Instruction | None:
        i = self.mod.index_at_line(line)
        return None if i is None else self.ins(i)

    def of_opcodes(self, opcodes) -> list[Instruction]:
        """The instructions with one of ``opcodes`` a rule must look at, in document order: those the rows pass
        could not clear, and every one of those opcodes in a computation it could not read."""
        cand = self._candidates if self._candidates is not None else self._scan()
        idx = {i for op in opcodes for i in cand.get(op, ())}
        idx.update(i for c in self._slow for i in c.instructions if self.ins(i).opcode in opcodes)
        idx = sorted(idx)
        return [self.ins(i) for i in idx]

    def slow_lines_matching(self, pattern: re.Pattern) -> list[int]:
        """The instruction lines of computations the rows pass could not read that hold a match of
        ``pattern`` (a line the rows read has a plain operand list, so per-line patterns about operands only
        matter on the others)."""
        if self._candidates is None:
            self._scan()
        lines, line_of = self.mod.lines, self._line_of
        return [line_of[i] for c in self._slow for i in c.instructions if pattern.search(lines[line_of[i]])]

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
        params = [self.ins(i) for i in comp.instructions
                  if " parameter(" in lines[line_of[i]] and self.ins(i).opcode == "parameter"]
        nums = [p.parameter_number for p in params]
        if any(n is None for n in nums) or sorted(nums) != list(range(len(params))):
            return None
        return sorted(params, key=lambda p: p.parameter_number)

    def root_shape(self, comp_name: str) -> Shape | None:
        """The shape of a computation's root instruction; None when unknown."""
        ci = self.mod.computation_by_name.get(comp_name)
        comp = self.mod.computations[ci] if ci is not None else None
        return self.shape(self.ins(comp.root)) if comp is not None and comp.root is not None else None

    def site(self, ins: Instruction) -> Site | None:
        """What `rules.inference` reads of ``ins``: its shape, its operands' definitions' shapes, its attribute
        text and its callees' roots; None when a shape is unreadable or an operand does not resolve."""
        out = self.shape(ins)
        d = self.detail(ins)
        if out is None or d is None:
            return None
        ops = []
        for op in self.operands(ins):
            s = self.shape(op) if op is not None else None
            if s is None:
                return None
            ops.append(s)
        line = self.mod.lines[ins.line]
        close = find_close_paren(line, d.opcode.end)
        if close < 0 or len(ops) != len(d.operands) or _NESTED.search(line, d.opcode.end + 1, close):
            return None  # an operand written inline (nested), which the names do not give
        return Site(ins.opcode, out, tuple(ops), attr_text(line[close + 1:]), tuple(ins.called), self.root_shape)

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


_NESTED = re.compile(r"[a-z0-9]\(")  # `tuple(x, (f32[2]) tuple(x))`: an instruction written as an operand


class Summary(NamedTuple):
    """What the verifier rules need of one computation, read from its rows (`summarize`)."""

    cand: tuple[tuple[str, int], ...]  # (opcode, instruction index) a rule must read per line
    sig: tuple[str, ...] | None  # parameter shape texts by number; None when not plainly numbered 0..n-1
    calls: tuple[tuple[int, str, tuple[str, ...], tuple[str | None, ...], str], ...]  # (index, opcode, callees,
    # operand shape texts, result shape text)
    root: str | None = None  # the root's shape text


def summarize(mod: HloModule, c: Computation, rows: list[tuple[str, ...]] | None | bool = True,
              calls: dict[int, list[str]] | None = None, cols: list[tuple[str, ...]] | None = None) -> Summary | None:
    """The `Summary` of ``c`` from its rows (read here unless given); None when the rows cannot be read or a
    name repeats (the rules then read the computation per line). An elementwise instruction whose shapes
    plainly agree (`_elementwise_ok`) is no candidate; a calling one is kept with its callees and operand shape
    texts for the module-wide comparison (`_call_ok`)."""
    if rows is True:
        rows = computation_rows(mod, c)
    if rows is None:
        return None
    if cols is None:
        cols = columns(rows)
    shape_of = dict(zip(cols[NAME], cols[SHAPE]))
    if len(shape_of) != len(rows):
        return None  # a repeated name
    a = c.instructions.start
    if calls is None:
        calls = row_calls(rows, a, mod.lines, mod.instructions.line_of)
    get = shape_of.get
    intern = sys.intern
    cand: list[tuple[str, int]] = []
    calling = []
    params: dict[int, str] = {}
    sig_ok = True
    for k, op in enumerate(cols[OPCODE]):
        if op not in _LOOKED_AT:
            continue  # broadcast, constant, tuple...: no rule reads them from the rows
        r = rows[k]
        if op in _SAME_TYPE:  # the common case, `_elementwise_ok` inlined: every operand's text is the result's
            s = r[SHAPE]
            ops = r[OPERANDS]
            if s and s[0] != "(" and ops:
                head = None
                for n in (ops.replace("%", "").split(", ") if "/" not in ops else operand_names(ops)):
                    t = get(n)
                    if t != s:  # the same type and dimensions in another layout is the same to the rules
                        if head is None:
                            head = s[: s.find("]") + 1] or s
                        if t is None or t[: t.find("]") + 1] != head:
                            cand.append((op, a + k))
                            break
        elif op == "parameter":
            p = r[PARAM]
            if not p or len(p) >= 10 or not r[SHAPE] or (ip := int(p)) in params:
                sig_ok = False
            else:
                params[ip] = intern(r[SHAPE])  # kept: one copy of each parameter shape text
        elif op in ELEMENTWISE:
            if not _elementwise_ok(op, r[SHAPE], [get(n) for n in operand_names(r[OPERANDS])]):
                cand.append((op, a + k))
        elif op in CALLING:
            callees = calls.get(k)
            if callees:
                calling.append((a + k, op, tuple(callees),
                                tuple([intern(t) if t else t for t in map(get, operand_names(r[OPERANDS]))]),
                                intern(r[SHAPE])))
            if op in INFERRED and not row_inferred_ok(op, r[SHAPE], tuple(map(get, operand_names(r[OPERANDS]))),
                                                      r[ATTRS]):
                cand.append((op, a + k))  # reduce, map
        elif op in INFERRED:  # `row_inferred_ok` with its memo looked up first on the whole attribute text
            ops = r[OPERANDS]
            texts = tuple(map(get, ops.replace("%", "").split(", ") if "/" not in ops else operand_names(ops))) \
                if ops else ()
            ok = _LINE_MEMO.get((op, r[SHAPE], r[ATTRS], texts))
            if ok is None:
                ok = _LINE_MEMO[(op, r[SHAPE], r[ATTRS], texts)] = row_inferred_ok(op, r[SHAPE], texts, r[ATTRS])
            if not ok:
                cand.append((op, a + k))
        elif op == "reshape" or op == "bitcast":
            ops = operand_names(r[OPERANDS])
            n_out = _count(r[SHAPE])
            if n_out is None or len(ops) != 1 or _count(get(ops[0])) != n_out or (
                    op == "reshape" and not _same_type(r[SHAPE], get(ops[0]))):
                cand.append((op, a + k))  # equal counts and types: neither rule has anything to say
        elif op in PER_LINE:
            cand.append((op, a + k))
    sig = None
    if sig_ok and sorted(params) == list(range(len(params))):
        sig = tuple(params[j] for j in range(len(params)))
        if len(_SIGS) > 100_000:
            _SIGS.clear()
        sig = _SIGS.setdefault(sig, sig)
    root = None
    if rows:  # `Computation.root`: the last ROOT, else the last instruction
        flags = cols[ROOT]
        r = len(flags) - 1 if flags[-1] else next((k for k in range(len(flags) - 1, -1, -1) if flags[k]), len(flags) - 1)
        root = intern(cols[SHAPE][r])
    return Summary(tuple(cand), sig, tuple(calling), root)


def _same_type(a: str | None, b: str | None) -> bool:
    """The element types of two array shape texts are one (floating types one class)."""
    if not a or not b:
        return False
    return fp_type(a[: a.find("[")]) == fp_type(b[: b.find("[")])


_ROW_MEMO: dict[tuple, bool] = {}
_LINE_MEMO: dict[tuple, bool] = {}  # the same keyed by the whole attribute text (metadata included)


def row_inferred_ok(op: str, shape: str, operands: tuple[str | None, ...], attrs: str) -> bool:
    """True when `rules.inference` has nothing to say of an instruction of ``op`` with result shape text
    ``shape``, operand shape texts ``operands`` and attribute text ``attrs`` (memoized: machine-written modules
    repeat the same few combinations thousands of times). False when it finds a mismatch or needs a called
    computation: the instruction is then read per line."""
    key = (op, shape, operands, attr_text(attrs))
    ok = _ROW_MEMO.get(key)
    if ok is None:
        ok = _infer_ok(op, shape, operands, key[3])
        if len(_ROW_MEMO) > 65536:
            _ROW_MEMO.clear()
        _ROW_MEMO[key] = ok
    if len(_LINE_MEMO) > 16384:
        _LINE_MEMO.clear()
    return ok


def _infer_ok(op: str, shape: str, operands: tuple[str | None, ...], attrs: str) -> bool:
    out = parse_shape(shape) if shape else None
    ops = [parse_shape(t) if t else None for t in operands]
    if out is None or any(o is None for o in ops):
        return True  # unreadable: the per-line rule skips it too
    return mismatch(Site(op, out, tuple(ops), attrs)) is None


_PLAIN_ARRAY = re.compile(r"[a-z][a-z0-9]*\[([0-9,]*)\](?:\{[^{}]*\})?")
_COUNTS: dict[str, int | None] = {}


def _count(t: str | None) -> int | None:
    """Element count of a plain static array shape text (``f32[4,8]{1,0}`` -> 32), memoized per text; None
    for anything else (tuples, dynamic dimensions, unreadable)."""
    if not t:
        return None
    n = _COUNTS.get(t, -1)
    if n != -1:
        return n
    m = _PLAIN_ARRAY.fullmatch(t)
    n = None
    if m is not None:
        n = 1
        for d in m.group(1).split(","):
            if d:
                n *= int(d[:30])
    if len(_COUNTS) > 65536:
        _COUNTS.clear()
    _COUNTS[t] = n
    return n


_SIGS: dict[tuple[str, ...], tuple[str, ...]] = {}  # one copy of each parameter signature (fusions repeat them)


def _tail(t: str | None) -> str | None:
    """``[dims]{layout}`` of an array shape text (``f32[2,3]{1,0}`` -> ``[2,3]{1,0}``); None for anything else."""
    if not t or t[0] == "(":
        return None
    k = t.find("[")
    return t[k:] if k > 0 else None


def _elementwise_ok(op: str, s: str, shapes: list[str | None]) -> bool:
    """True when neither elementwise rule can fire on an instruction of ``op`` with result shape text ``s`` and
    operand shape texts ``shapes``: equal texts parse to equal shapes, and equal ``[dims]{layout}`` tails to
    equal dimensions."""
    if not s or s[0] == "(":
        return True  # no result shape, or a tuple: both rules skip it
    if any(t is None for t in shapes):
        return False
    if op in _SAME_TYPE:
        return all(t == s for t in shapes)
    tail = _tail(s)
    if tail is None:
        return False
    if op == "compare":
        return not shapes or (s.startswith("pred[") and _tail(shapes[0]) == tail
                              and all(t == shapes[0] for t in shapes))
    if op == "select":
        return (len(shapes) == 3 and shapes[0].startswith("pred[") and _tail(shapes[0]) == tail
                and shapes[1] == s and shapes[2] == s)
    return all(_tail(t) == tail for t in shapes)  # convert, complex...: only the dimensions are compared


def _call_ok(op: str, sigs: dict[str, tuple[str, ...] | None], callee: str, shapes: list[str | None]) -> bool:
    """True when `called_parameters` cannot fire for ``callee`` of an instruction of ``op`` with operand shape
    texts ``shapes``: the callee's parameters are known from its rows and agree in number and text."""
    if callee not in sigs:
        return True  # not a computation of the module: the rule has nothing to compare
    sig = sigs[callee]
    if sig is None:
        return False
    if len(sig) != (1 if op == "while" else len(shapes)):
        return False
    if op in ("reduce", "map"):
        return True
    return all(t is not None and t == p for p, t in zip(sig, shapes))


def _root_ok(op: str, roots: dict[str, str | None], callees: tuple[str, ...], result: str) -> bool:
    """True when the result shape text of a fusion, call or while is its callee's root text (a while's
    condition returns pred[]), so `inferred_shapes` has nothing to say; reduce and map are read elsewhere."""
    if op not in ("fusion", "call", "while"):
        return True
    texts = [roots.get(c) for c in callees]
    if op != "while":
        return len(texts) == 1 and texts[0] == result
    return result in texts and all(t == result or (t is not None and t.startswith("pred[]")) for t in texts)


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
