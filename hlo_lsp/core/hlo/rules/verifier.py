"""HLO verifier-level rules: what XLA's parser accepts but its `HloVerifier` would reject (all warnings, one
information).

Each rule is a function ``rule(m: ModuleFacts) -> Iterator[Diagnostic]`` with a stable ``code`` and a docstring
naming the check of xla/service/hlo_verifier.cc (or shape_inference.cc) it mirrors. Shapes are compared the way the
verifier does when it is not layout-sensitive and allows mixed precision (the laxest configuration XLA runs
with): layouts, dynamic-dimension markers and floating-point precision are ignored, so a rule never fires on
something some XLA pipeline accepts.

Algorithm: each rule asks `rules.facts.ModuleFacts` for the instructions of its opcodes it must look at: one regex
pass per computation (`bulk`, `summary`) reads every machine-written line and clears the instructions whose
shapes plainly agree (the same shape text where a rule compares shapes; for `inferred_shapes`, XLA's shape
inference of `rules.inference` answered once per distinct combination of shape and attribute texts, and a
calling instruction's result text equal to its callee's root text), so a rule reads per line only the rest,
with dict lookups and cached parses. Instructions whose shapes cannot be read are skipped, never guessed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator

from hlo_lsp.core.diagnostics import Diagnostic, Range, Related, info, warning
from hlo_lsp.core.hlo.instructions import Instruction
from hlo_lsp.core.hlo.model import Computation, HloModule
from hlo_lsp.core.hlo.rules.entry_layout import entry_layout
from hlo_lsp.core.hlo.rules.facts import ModuleFacts, Summary, exact_types, fp_type, same_shape, text_of
from hlo_lsp.core.hlo.rules.inference import NEEDS_CALLEE, REGISTRY
from hlo_lsp.core.hlo.rules.summary import ELEMENTWISE, SAME_TYPE_BINARY, SAME_TYPE_UNARY
from hlo_lsp.core.hlo.text import INSTR
from hlo_lsp.core.process import collector
from hlo_lsp.core.shapes import ELEMENT_BITS, byte_size, element_count, padded_byte_size, parse_shape

_log = logging.getLogger(__name__)
_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() accepts '²', on which int() raises
# `f32[4]{0} %x` / `f32[4] x`: an operand written with its shape (searched after the opcode's parenthesis)
_OLD_STYLE_OPERAND = re.compile(r"[\]})] %?[^\s,()%=]+\s*[,)]")


INFERRED_OPCODES = frozenset(REGISTRY)


def _instrs(m: ModuleFacts, opcodes) -> list[Instruction]:
    return m.of_opcodes(opcodes)


# ------------------------------------------------------------------------------------------------- rules


def elementwise_shapes(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.elementwise-shape``: an elementwise instruction whose operand dimensions differ from its
    result's. XLA: ``CheckElementwiseInstruction`` (hlo_verifier.cc) requires every operand to be
    ``CompatibleIgnoringElementType`` with the output ("Implicit broadcast is not allowed in HLO"). Scalar
    operands of ``select`` and ``clamp`` are left alone (older XLA broadcasts them)."""
    for ins in _instrs(m, ELEMENTWISE):
        out = m.shape(ins)
        if out is None or not out.is_array:
            continue
        for k, op in enumerate(m.operands(ins)):
            s = m.shape(op) if op is not None else None
            if s is None or not s.is_array:
                continue
            if ins.opcode in ("select", "clamp") and not s.dims:
                continue
            if s.dims != out.dims:
                yield warning(
                    m.operand_range(ins, k),
                    "verifier.elementwise-shape",
                    f"operand {k} of {ins.opcode} is {text_of(s)}, but the result is {text_of(out)}: "
                    "HLO has no implicit broadcast",
                )


def element_types(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.element-type``: an elementwise instruction mixing element types where XLA's shape inference
    requires one (``add(f32, s32)``), ``compare`` not returning ``pred``, ``select`` with a non-``pred``
    predicate. XLA: ``ShapeInference::InferBinaryOpShape``/``InferUnaryOpShape``/``InferTernaryOpShape`` as
    ``HloVerifier`` calls them; floating types are treated as one (``allow_mixed_precision``)."""
    for ins in _instrs(m, SAME_TYPE_UNARY | SAME_TYPE_BINARY | {"compare", "select", "clamp"}):
        out = m.shape(ins)
        if out is None or not out.is_array:
            continue
        ops = m.operands(ins)
        maybe = [m.shape(o) if o is not None else None for o in ops]
        shapes = [s for s in maybe if s is not None and s.is_array]
        if len(shapes) != len(maybe) or not shapes:
            continue
        if ins.opcode == "abs" and shapes[0].element_type in ("c64", "c128"):
            continue  # abs of a complex number is real
        if ins.opcode == "compare":
            if out.element_type != "pred":
                yield warning(
                    m.opcode_range(ins),
                    "verifier.element-type",
                    f"compare returns {text_of(out)}; its result type is pred",
                )
            pairs = [(k, shapes[k], shapes[0]) for k in range(1, len(shapes))]
        elif ins.opcode == "select":
            if shapes[0].element_type != "pred":
                yield warning(
                    m.operand_range(ins, 0),
                    "verifier.element-type",
                    f"the predicate of select is {text_of(shapes[0])}; it must be pred",
                )
            pairs = [(k, shapes[k], out) for k in range(1, len(shapes))]
        else:
            pairs = [(k, shapes[k], out) for k in range(len(shapes))]
        for k, s, ref in pairs:
            if fp_type(s.element_type) != fp_type(ref.element_type):
                yield warning(
                    m.operand_range(ins, k),
                    "verifier.element-type",
                    f"operand {k} of {ins.opcode} is {s.element_type}, but "
                    f"{'operand 0' if ref is shapes[0] else 'the result'} is {ref.element_type}",
                )


def bitcast_convert_shape(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.bitcast-convert``: a ``bitcast-convert`` whose result dimensions do not follow from its
    operand's and the two bit widths. XLA: ``ShapeInference::InferBitcastConvertShape``: equal widths keep the
    dimensions; a narrower result appends a minor dimension of ``in_bits / out_bits``; a wider result drops a
    minor dimension that must equal ``out_bits / in_bits``. ``pred`` (whose width differs between XLA versions)
    is left alone."""
    for ins in _instrs(m, ("bitcast-convert",)):
        out = m.shape(ins)
        ops = m.operands(ins)
        if out is None or not out.is_array or len(ops) != 1 or ops[0] is None:
            continue
        s = m.shape(ops[0])
        if s is None or not s.is_array or "pred" in (s.element_type, out.element_type):
            continue
        a, b = ELEMENT_BITS[s.element_type], ELEMENT_BITS[out.element_type]
        if a == b:
            want: tuple[int, ...] | None = s.dims
        elif a > b:
            want = s.dims + (a // b,) if a % b == 0 else None
        else:
            want = s.dims[:-1] if b % a == 0 and s.dims and s.dims[-1] == b // a else None
        if want is None or want != out.dims:
            yield warning(
                m.opcode_range(ins),
                "verifier.bitcast-convert",
                f"bitcast-convert of {text_of(s)} ({a} bits an element) cannot give {text_of(out)} "
                f"({b} bits an element)",
            )


def element_count_kept(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.element-count``: a ``reshape`` that changes the number of elements, or a ``bitcast`` that
    changes the element count and both the byte size and the tiled (padded) byte size. XLA:
    ``ShapeInference::InferReshapeShape`` ("reshape operation has mismatched element counts");
    ``HloVerifier::HandleBitcast`` compares the backend's byte sizes (a bitcast may reinterpret u8[16] as f32[4],
    and TPU sizes include tile padding, so the count alone is not checked)."""
    for ins in _instrs(m, ("reshape", "bitcast")):
        out = m.shape(ins)
        ops = m.operands(ins)
        if out is None or len(ops) != 1 or ops[0] is None:
            continue
        s = m.shape(ops[0])
        if s is None or not s.is_array or not out.is_array or any(s.dynamic) or any(out.dynamic):
            continue
        a, b = element_count(s), element_count(out)
        if not isinstance(a, int) or not isinstance(b, int) or a == b:
            continue
        if ins.opcode == "bitcast" and (byte_size(s) == byte_size(out) or padded_byte_size(s) == padded_byte_size(out)):
            continue  # the verifier compares the backend's (tiled, padded) sizes
        yield warning(
            m.opcode_range(ins),
            "verifier.element-count",
            f"{ins.opcode} turns {text_of(s)} ({a} elements) into {text_of(out)} ({b} elements)",
        )


def written_operand_shapes(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``operand-shape-mismatch``: an operand written with a shape (old style ``add(f32[4]{0} %x, ...)``) that
    is not the shape of its definition. XLA: the printer writes each operand's own shape, and every shape check
    of the verifier reads the definition's; a differing written shape is a hand edit."""
    for ln in m.slow_lines_matching(_OLD_STYLE_OPERAND):
        ins = m.at_line(ln)
        if ins is None:
            continue
        line = m.mod.lines[ln]
        head = INSTR.match(line)
        if head is None or not _OLD_STYLE_OPERAND.search(line, head.end()):
            continue
        d = m.detail(ins)
        if d is None or not any(d.operand_shapes):
            continue
        ops = m.operands(ins)
        for k, written in enumerate(d.operand_shapes):
            op = ops[k] if k < len(ops) else None
            if written is None or op is None:
                continue
            ws, ds = parse_shape(written.text), m.shape(op)
            if ws is None or ds is None or (same_shape(ws, ds) and exact_types(ws, ds)):
                continue
            dd = m.detail(op)
            yield warning(
                Range(ins.line, written.start, ins.line, written.end),
                "operand-shape-mismatch",
                f"operand {k} is written as {written.text}, but `{op.name}` is "
                f"{dd.shape.text if dd and dd.shape else text_of(ds)}",
                related=(Related(op.name_range, f"definition of {op.name}"),),
            )


def tuple_index(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.tuple-index``: a ``get-tuple-element`` whose index is outside its operand's tuple, or whose
    shape is not that element's. XLA: ``ShapeInference::InferGetTupleElementShape`` ("Cannot infer shape:
    attempt to index out of tuple bounds") and ``HloVerifier::HandleGetTupleElement`` (``CheckShape``)."""
    for ins in _instrs(m, ("get-tuple-element",)):
        out = m.shape(ins)
        ops = m.operands(ins)
        d = m.detail(ins)
        if out is None or d is None or len(ops) != 1 or ops[0] is None:
            continue
        s = m.shape(ops[0])
        attr = d.attribute("index")
        if s is None or not s.is_tuple or attr is None or not _DIGITS.fullmatch(attr.value.strip()):
            continue
        digits = attr.value.strip()
        # beyond int64 is out of range of any tuple; int() of over 4300 digits would raise ValueError
        k = int(digits) if len(digits) <= 18 else len(s.tuple_shapes)
        rng = Range(ins.line, attr.value_start, ins.line, attr.value_end)
        if k >= len(s.tuple_shapes):
            shown = digits if len(digits) <= 18 else f"{digits[:12]}… ({len(digits)} digits)"
            yield warning(
                rng,
                "verifier.tuple-index",
                f"index {shown} is out of range: `{ops[0].name}` has {len(s.tuple_shapes)} elements",
            )
        elif not same_shape(out, s.tuple_shapes[k]):
            yield warning(
                Range(ins.line, d.shape.start, ins.line, d.shape.end) if d.shape else rng,
                "verifier.tuple-index",
                f"element {k} of `{ops[0].name}` is {text_of(s.tuple_shapes[k])}, but this is {text_of(out)}",
            )


def inferred_shapes(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.shape-inference``: a result shape that is not the one XLA's shape inference gives for the
    instruction's operands and attributes (dimensions, and the element type where XLA fixes it). XLA:
    ``ShapeVerifier::CheckShape`` against ``ShapeInference::Infer*Shape`` (or the verifier's own check),
    one function per opcode family in `rules.inference`, each naming the one it follows; compared without
    layouts and with floating types as one class (the laxest verifier)."""
    for ins in _instrs(m, INFERRED_OPCODES):
        found = m.inferred_mismatch(ins)
        if found is None or found[0] == NEEDS_CALLEE:
            continue
        d = m.detail(ins)
        rng = Range(ins.line, d.shape.start, ins.line, d.shape.end) if d is not None and d.shape else ins.name_range
        yield warning(rng, "verifier.shape-inference", f"{found[0]} (XLA: {found[1]})")


def called_parameters(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.called-parameters``: a ``fusion``/``call``/``while`` whose called computation's parameters
    disagree with its operands in count or shape, or a ``reduce``/``map`` whose ``to_apply`` takes a different
    number of parameters than it has operands. XLA: ``HloVerifier::HandleFusion``/``HandleCall``
    (``CheckParameterCount`` and "Shape mismatch between parameter number %d and its operand"),
    ``HandleWhile`` (body and condition take one parameter of the loop's shape), ``CheckReduce``/``HandleMap``
    via ``ShapeInference::InferReduceShape``/``InferMapShape`` (to_apply arity)."""
    for ins in _instrs(m, ("fusion", "call", "while", "reduce", "map")):
        if not ins.called:
            continue
        ops = m.operands(ins)
        for callee in ins.called:
            params = m.parameters(callee)
            if params is None:
                continue
            expected = 1 if ins.opcode == "while" else len(ops)
            if len(params) != expected:
                yield warning(
                    m.called_range(ins, callee),
                    "verifier.called-parameters",
                    f"`{callee}` takes {len(params)} parameter{'s' * (len(params) != 1)}, but "
                    f"{ins.opcode} passes {expected}",
                )
                continue
            if ins.opcode in ("reduce", "map"):
                continue
            for k, (p, op) in enumerate(zip(params, ops)):
                ps = m.shape(p)
                os_ = m.shape(op) if op is not None else None
                if ps is not None and os_ is not None and not same_shape(ps, os_):
                    yield warning(
                        m.operand_range(ins, k),
                        "verifier.called-parameters",
                        f"operand {k} is {text_of(os_)}, but parameter {k} of `{callee}` is {text_of(ps)}",
                        related=(Related(p.name_range, f"parameter {k} of {callee}"),),
                    )


def name_reused(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.name-reused`` (information): an instruction name defined in two computations. XLA: names are
    unique module-wide (``HloModule`` uniquifies them with its ``NameUniquer``), so its printer never writes
    this; the parser accepts it because names are scoped per computation."""
    first: dict[str, tuple[int, Computation]] = {}
    names = m.names
    if m.mod.names_unique():
        return  # no name repeats anywhere (as the read found, or the name index says: one entry per distinct name)
    for c in m.mod.computations:
        local: set[str] = set()
        for i in c.instructions:
            name = names[i]
            if name in local:
                continue
            local.add(name)
            prev = first.get(name)
            if prev is None:
                first[name] = (i, c)
                continue
            ins, other = m.ins(i), m.ins(prev[0])
            yield info(
                ins.name_range,
                "verifier.name-reused",
                f"`{name}` is also defined in `{prev[1].name}`; XLA keeps names unique across the module",
                related=(Related(other.name_range, f"the other `{name}`"),),
            )


#: Every rule with the codes it can emit, in the order they run.
VERIFIER_RULES: tuple[tuple[Callable[[ModuleFacts], Iterator[Diagnostic]], tuple[str, ...]], ...] = (
    (elementwise_shapes, ("verifier.elementwise-shape",)),
    (element_types, ("verifier.element-type",)),
    (bitcast_convert_shape, ("verifier.bitcast-convert",)),
    (element_count_kept, ("verifier.element-count",)),
    (written_operand_shapes, ("operand-shape-mismatch",)),
    (tuple_index, ("verifier.tuple-index",)),
    (called_parameters, ("verifier.called-parameters",)),
    (inferred_shapes, ("verifier.shape-inference",)),
    (entry_layout, ("verifier.entry-layout",)),
    (name_reused, ("verifier.name-reused",)),
)


def verify(mod: HloModule, summaries: list[Summary | None] | None = None) -> list[Diagnostic]:
    """Every verifier-level diagnostic of ``mod``; [] for a module XLA's verifier would accept. ``summaries``:
    each computation's `Summary` when the structural checker has them (else they are made here)."""
    m = ModuleFacts(mod, summaries)
    out: list[Diagnostic] = []
    with collector.paused():  # the objects made here are freed by reference counting; collections would rescan
        for rule, _codes in VERIFIER_RULES:
            try:
                out.extend(rule(m))
            except Exception:  # a rule's bug must not take the document's other diagnostics down
                _log.exception("verifier rule %s failed", rule.__name__)
    return out
