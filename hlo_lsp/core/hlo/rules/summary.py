"""The rows pass of the verifier rules: what each computation's instructions need read per line.

`summarize` reads a computation's rows (`bulk`) and keeps, for the rules, only what they must look at: an
instruction whose shapes plainly agree (the same shape texts where a rule compares shapes, or a shape
inference the memo has already answered for the same texts) is no candidate; a calling one is kept with its
callees, operand shape texts and result text for the module-wide comparison (`call_ok`, `root_ok`) that
`rules.facts.ModuleFacts` makes once every computation's summary is known.
"""

from __future__ import annotations

import re
import sys
from typing import NamedTuple

from hlo_lsp.core.hlo.model import Computation, HloModule
from hlo_lsp.core.hlo.rows import (
    ATTRS,
    NAME,
    OPCODE,
    OPERANDS,
    PARAM,
    ROOT,
    SHAPE,
    columns,
    computation_rows,
    operand_names,
    row_calls,
    table_lines,
)
from hlo_lsp.core.hlo.rules.inference import FLOATS, REGISTRY, Site, mismatch
from hlo_lsp.core.hlo.rules.inference.attrs import attr_text
from hlo_lsp.core.hlo.text import INDEX_NUMBER
from hlo_lsp.core.memos import memo_table
from hlo_lsp.core.shapes import parse_shape

# Elementwise opcodes whose operands and result share one element type (HloInstruction::IsElementwise).
SAME_TYPE_UNARY = frozenset(
    "abs ceil cbrt cosine exponential exponential-minus-one floor log log-plus-one "
    "logistic negate not popcnt round-nearest-afz round-nearest-even rsqrt sign sine "
    "sqrt tan tanh count-leading-zeros erf copy".split()
)
SAME_TYPE_BINARY = frozenset(
    "add subtract multiply divide maximum minimum power remainder and or xor "
    "shift-left shift-right-arithmetic shift-right-logical atan2".split()
)
OTHER_ELEMENTWISE = frozenset("compare convert select clamp is-finite real imag complex reduce-precision".split())
ELEMENTWISE = SAME_TYPE_UNARY | SAME_TYPE_BINARY | OTHER_ELEMENTWISE
_SAME_TYPE = SAME_TYPE_UNARY | SAME_TYPE_BINARY | {"clamp"}
CALLING = frozenset(("fusion", "call", "while", "reduce", "map"))
PER_LINE = frozenset(("bitcast-convert", "reshape", "bitcast", "get-tuple-element"))  # always read per line
#: Opcodes with a shape inference (`rules.inference`) checked by `row_inferred_ok` in the rows pass.
INFERRED = frozenset(REGISTRY) - {"fusion", "call", "while", "reshape"}
_LOOKED_AT = ELEMENTWISE | CALLING | PER_LINE | INFERRED | {"parameter"}


def fp_type(t: str) -> str:
    return "<float>" if t in FLOATS else t


class Summary(NamedTuple):
    """What the verifier rules need of one computation, read from its rows (`summarize`)."""

    # instructions are numbered from the computation's first (a summary holds wherever the computation is)
    cand: tuple[tuple[str, int], ...]  # (opcode, instruction number) a rule must read per line
    sig: tuple[str, ...] | None  # parameter shape texts by number; None when not plainly numbered 0..n-1
    calls: tuple[tuple[int, str, tuple[str, ...], tuple[str | None, ...], str], ...]  # (number, opcode, callees,
    # operand shape texts, result shape text)
    root: str | None = None  # the root's shape text


def summarize(
    mod: HloModule,
    c: Computation,
    rows: list[tuple[str, ...]] | None | bool = True,
    calls: dict[int, list[str]] | None = None,
    cols: list[tuple[str, ...]] | None = None,
) -> Summary | None:
    """The `Summary` of ``c`` from its rows (read here unless given); None when the rows cannot be read or a
    name repeats (the rules then read the computation per line). An elementwise instruction whose shapes
    plainly agree (`_elementwise_ok`), or one whose shape inference agrees (`row_inferred_ok`), is no
    candidate; a calling one is kept with its callees, operand shape texts and result text for the
    module-wide comparisons (`call_ok`, `root_ok`)."""
    if rows is True:
        rows = computation_rows(mod, c)
    if rows is None or isinstance(rows, bool):
        return None
    if cols is None:
        cols = columns(rows)
    shape_of = dict(zip(cols[NAME], cols[SHAPE]))
    if len(shape_of) != len(rows):
        return None  # a repeated name
    if calls is None:
        calls = row_calls(rows, c.instructions.start, mod.lines, table_lines(mod))
    get = shape_of.get
    intern = sys.intern
    line_memo = _LINE_MEMO
    cand: list[tuple[str, int]] = []
    calling = []
    # each distinct operand-shapes tuple once (the 100 MB synthetic module's entry: 69,600 fusion calls, 52
    # distinct tuples): a forked child's part pickles and loads a shared tuple as a reference (its entry's summary
    # in 64 + 34 ms instead of 84 + 47, medians in-process), and the summaries hold 69,548 tuples fewer
    same_shapes: dict[tuple[str | None, ...], tuple[str | None, ...]] = {}
    params: dict[int, str] = {}
    sig_ok = True
    for k, op in enumerate(cols[OPCODE]):
        if op not in _LOOKED_AT:
            continue  # constant, iota, custom-call...: no rule reads them from the rows
        r = rows[k]
        if op in _SAME_TYPE:  # the common case, `_elementwise_ok` inlined: every operand's text is the result's
            s = r[SHAPE]
            ops = r[OPERANDS]
            if s and s[0] != "(" and ops:
                head = None
                for n in ops.replace("%", "").split(", ") if "/" not in ops else operand_names(ops):
                    t = get(n)
                    if t != s:  # the same type and dimensions in another layout is the same to the rules
                        if head is None:
                            head = s[: s.find("]") + 1] or s
                        if t is None or t[: t.find("]") + 1] != head:
                            cand.append((op, k))
                            break
        elif op == "parameter":
            sig_ok = _parameter(r, params) and sig_ok
        elif op in ELEMENTWISE:
            if not _elementwise_ok(op, r[SHAPE], [get(n) for n in operand_names(r[OPERANDS])]):
                cand.append((op, k))
        elif op in CALLING:
            callees = calls.get(k)
            if callees:
                operands = tuple([intern(t) if t else t for t in map(get, operand_names(r[OPERANDS]))])
                operands = same_shapes.setdefault(operands, operands)
                calling.append((k, op, tuple(callees), operands, intern(r[SHAPE])))
            if op in INFERRED and not _row_ok(op, r, get):
                cand.append((op, k))  # reduce, map
        elif op in INFERRED:  # `_row_ok` inlined (the hot path of a large module: its broadcasts)
            ops = r[OPERANDS]
            key = (
                op,
                r[SHAPE],
                r[ATTRS],
                tuple(map(get, ops.replace("%", "").split(", ") if "/" not in ops else operand_names(ops)))
                if ops
                else (),
            )
            ok = line_memo.get(key)
            if ok is None:
                ok = line_memo[key] = row_inferred_ok(op, r[SHAPE], key[3], r[ATTRS])
            if not ok:
                cand.append((op, k))
        elif op == "reshape" or op == "bitcast":
            if not _reshape_ok(op, r, get):
                cand.append((op, k))
        elif op in PER_LINE:
            cand.append((op, k))
    sig = _signature(params) if sig_ok else None
    root = _root_text(cols) if rows else None
    return Summary(tuple(cand), sig, tuple(calling), root)


def _parameter(r: tuple[str, ...], params: dict[int, str]) -> bool:
    """Note a parameter row's shape text under its number; False when the number is missing, too long or
    given twice, or the shape is missing (the signature is then not plainly numbered)."""
    p = r[PARAM]
    if not p or len(p) >= 10 or not r[SHAPE] or (ip := int(p)) in params:
        return False
    params[ip] = sys.intern(r[SHAPE])  # kept: one copy of each parameter shape text
    return True


def _signature(params: dict[int, str]) -> tuple[str, ...] | None:
    """The parameter shape texts by number when they are numbered 0..n-1, shared with every equal signature;
    None otherwise."""
    if sorted(params) != list(range(len(params))):
        return None
    sig = tuple(params[j] for j in range(len(params)))
    if len(_SIGS) > 100_000:
        _SIGS.clear()
    return _SIGS.setdefault(sig, sig)


def _root_text(cols: list[tuple[str, ...]]) -> str:
    """The root's shape text (`Computation.root`: the last ROOT, else the last instruction)."""
    flags = cols[ROOT]
    last = len(flags) - 1 if flags[-1] else next((k for k in range(len(flags) - 1, -1, -1) if flags[k]), len(flags) - 1)
    return sys.intern(cols[SHAPE][last])


def _reshape_ok(op: str, r: tuple[str, ...], get) -> bool:
    """A reshape or bitcast row with one operand of the same element count (and, for a reshape, type): neither
    rule has anything to say about it."""
    names = operand_names(r[OPERANDS])
    n_out = _count(r[SHAPE])
    return not (
        n_out is None
        or len(names) != 1
        or _count(get(names[0])) != n_out
        or (op == "reshape" and not _same_type(r[SHAPE], get(names[0])))
    )


def _same_type(a: str | None, b: str | None) -> bool:
    """The element types of two array shape texts are one (floating types one class)."""
    if not a or not b:
        return False
    return fp_type(a[: a.find("[")]) == fp_type(b[: b.find("[")])


def _row_ok(op: str, r: tuple[str, ...], get) -> bool:
    """`row_inferred_ok` of row ``r`` (``get``: name -> shape text), its memo looked up first on the whole
    attribute text (one dict lookup for the thousands of equal rows of a large module)."""
    ops = r[OPERANDS]
    texts = tuple(map(get, ops.replace("%", "").split(", ") if "/" not in ops else operand_names(ops))) if ops else ()
    key = (op, r[SHAPE], r[ATTRS], texts)
    ok = _LINE_MEMO.get(key)
    if ok is None:
        ok = _LINE_MEMO[key] = row_inferred_ok(op, r[SHAPE], texts, r[ATTRS])
    return ok


_ROW_MEMO: dict[tuple, bool] = memo_table({})
_LINE_MEMO: dict[tuple, bool] = memo_table({})  # the same keyed by the whole attribute text (metadata included)


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
    if op == "tuple" and shape[:1] == "(" and None not in operands and _tuple_of(shape, operands):  # type: ignore[arg-type]
        return True
    out = parse_shape(shape) if shape else None
    ops = [parse_shape(t) if t else None for t in operands]
    known = [o for o in ops if o is not None]
    if out is None or len(known) != len(ops):
        return True  # unreadable: the per-line rule skips it too
    return mismatch(Site(op, out, tuple(known), attrs)) is None


def _tuple_of(shape: str, operands: tuple[str, ...]) -> bool:
    """``shape`` is written as the tuple of the shapes ``operands`` are written with (the element numbers XLA writes
    into a long tuple aside, `text.INDEX_NUMBER`: ``(f32[4]{0}, ..., /*index=5*/f32[8]{0}, ...)``): what XLA infers
    for a tuple of them (`inference.arrays.tuple_`), with no shape parsed. A module's root tuple of 9,001 elements
    (the 23 MB benchmark module's) took 35-45 ms to parse and compare element by element, on the read's critical
    path; written any other way, the inference decides."""
    joined = "(" + ", ".join(operands) + ")"
    if "/*" in joined:
        joined = INDEX_NUMBER.sub("", joined)
    return INDEX_NUMBER.sub("", shape) == joined if "/*" in shape else shape == joined


_PLAIN_ARRAY = re.compile(r"[a-z][a-z0-9]*\[([0-9,]*)\](?:\{[^{}]*\})?")
_COUNTS: dict[str, int | None] = memo_table({})


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


_SIGS: dict[tuple[str, ...], tuple[str, ...]] = memo_table(
    {}
)  # one copy of each parameter signature (fusions repeat them)


def _tail(t: str | None) -> str | None:
    """``[dims]{layout}`` of an array shape text (``f32[2,3]{1,0}`` -> ``[2,3]{1,0}``); None for anything else."""
    if not t or t[0] == "(":
        return None
    k = t.find("[")
    return t[k:] if k > 0 else None


def _elementwise_ok(op: str, s: str, operand_shapes: list[str | None]) -> bool:
    """True when neither elementwise rule can fire on an instruction of ``op`` with result shape text ``s`` and
    operand shape texts ``operand_shapes``: equal texts parse to equal shapes, and equal ``[dims]{layout}`` tails to
    equal dimensions."""
    if not s or s[0] == "(":
        return True  # no result shape, or a tuple: both rules skip it
    shapes = [t for t in operand_shapes if t is not None]
    if len(shapes) != len(operand_shapes):
        return False
    if op in _SAME_TYPE:
        return all(t == s for t in shapes)
    tail = _tail(s)
    if tail is None:
        return False
    if op == "compare":
        return not shapes or (
            s.startswith("pred[") and _tail(shapes[0]) == tail and all(t == shapes[0] for t in shapes)
        )
    if op == "select":
        return (
            len(shapes) == 3
            and shapes[0].startswith("pred[")
            and _tail(shapes[0]) == tail
            and shapes[1] == s
            and shapes[2] == s
        )
    return all(_tail(t) == tail for t in shapes)  # convert, complex...: only the dimensions are compared


def call_ok(op: str, sigs: dict[str, tuple[str, ...] | None], callee: str, shapes: list[str | None]) -> bool:
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
    if op != "while":  # as many shapes as parameters, each a text (a None, no text, is never equal to one)
        return (shapes if type(shapes) is tuple else tuple(shapes)) == sig
    return all(t is not None and t == p for p, t in zip(sig, shapes))


def root_ok(op: str, roots: dict[str, str | None], callees: tuple[str, ...], result: str) -> bool:
    """True when the result shape text of a fusion, call or while is its callee's root text (a while's
    condition returns pred[]), so `inferred_shapes` has nothing to say; reduce and map are read elsewhere."""
    if op not in ("fusion", "call", "while"):
        return True
    if op != "while":
        return len(callees) == 1 and roots.get(callees[0]) == result
    texts = [roots.get(c) for c in callees]
    return result in texts and all(t == result or (t is not None and t.startswith("pred[]")) for t in texts)
