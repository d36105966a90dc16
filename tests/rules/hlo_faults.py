"""Verifier-level faults injected into real HLO modules, with an independent reading of the module text.

Each generator edits one instruction line (or the header) of a real module so that exactly one verifier-level
rule must fire on that line, choosing its replacement from facts read here (definitions, shapes, tuple elements)
without hlo_lsp."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.fixtures import tuple_elements

_INSTR = re.compile(r"^(\s*)(ROOT )?%([^ ]+) = (.+?) ([a-z][a-z0-9-]*)\((.*)$")
_ARRAY = re.compile(r"^(\w+)\[([\d,]*)\]")
_FLOATS = {"f16", "bf16", "f32", "f64"}


@dataclass
class Ins:
    name: str
    line: int
    shape: str
    opcode: str
    rest: str  # the text after `opcode(`
    comp: int  # index of its computation


@dataclass
class HloFault:
    name: str
    code: str
    path: Path
    text: str
    line: int


def array(shape: str) -> tuple[str, tuple[int, ...]] | None:
    """(element type, dims) of an array shape; None for tuples and others."""
    m = _ARRAY.match(shape)
    if m is None or shape.startswith("("):
        return None
    return m.group(1), tuple(int(d) for d in m.group(2).split(",") if d)


def no_layout(shape: str) -> str:
    out, depth = [], 0
    for ch in shape:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return re.sub(r"/\*[^*]*\*/", "", "".join(out)).replace(" ", "")


def operand_names(rest: str) -> list[str]:
    """Operand names of the top-level operand list (text up to its closing paren)."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            if depth == 0:
                return re.findall(r"%([^\s,()]+)", rest[:i])
            depth -= 1
    return []


def read(text: str) -> list[Ins]:
    out, comp = [], -1
    for n, line in enumerate(text.split("\n")):
        if line and not line[0].isspace() and line.rstrip().endswith("{"):
            comp += 1
            continue
        m = _INSTR.match(line)
        if m and comp >= 0:
            out.append(Ins(m.group(3), n, m.group(4), m.group(5), m.group(6), comp))
    return out


def _swap_operand(lines: list[str], ins: Ins, k: int, new_name: str) -> str:
    line = lines[ins.line]
    ops = operand_names(ins.rest)
    start = line.index(ins.opcode + "(") + len(ins.opcode) + 1
    head, tail = line[:start], line[start:]
    pos = [mm for mm in re.finditer(r"%([^\s,()]+)", tail)][k]
    assert pos.group(1) == ops[k]
    return head + tail[: pos.start(1)] + new_name + tail[pos.end(1) :]


def _earlier(instrs: list[Ins], ins: Ins) -> list[Ins]:
    return [o for o in instrs if o.comp == ins.comp and o.line < ins.line]


def _edit(text: str, line: int, new: str) -> str:
    lines = text.split("\n")
    lines[line] = new
    return "\n".join(lines)


def _fault(name: str, code: str, path: Path, text: str, line: int, new: str) -> list[HloFault]:
    """The one fault of a generator: line ``line`` of ``text`` replaced by ``new``."""
    return [HloFault(name, code, path, _edit(text, line, new), line)]


def _swapped(name: str, code: str, path: Path, text: str, ins: Ins, k: int, other: Ins) -> list[HloFault]:
    """The fault of ``ins`` taking ``other`` as its operand ``k``."""
    return _fault(name, code, path, text, ins.line, _swap_operand(text.split("\n"), ins, k, other.name))


def _plain_operands(ins: Ins) -> bool:
    """The operands are bare names (old-style modules write each operand's shape: that is another rule)."""
    return "[" not in ins.rest.split(")")[0]


def elementwise_dims(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    for ins in instrs:
        if ins.opcode not in ("add", "multiply", "subtract", "maximum", "divide"):
            continue
        out = array(ins.shape)
        if out is None or len(operand_names(ins.rest)) != 2 or not _plain_operands(ins):
            continue
        for o in _earlier(instrs, ins):
            a = array(o.shape)
            if a is not None and a[0] == out[0] and a[1] != out[1]:
                return _swapped("operand of another shape", "verifier.elementwise-shape", path, text, ins, 1, o)
    return []


def element_type(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    for ins in instrs:
        if ins.opcode not in ("add", "multiply", "subtract", "maximum", "minimum"):
            continue
        out = array(ins.shape)
        if out is None or len(operand_names(ins.rest)) != 2:
            continue
        for o in _earlier(instrs, ins):
            a = array(o.shape)
            if a is not None and a[1] == out[1] and a[0] != out[0] and not (a[0] in _FLOATS and out[0] in _FLOATS):
                return _swapped("operand of another element type", "verifier.element-type", path, text, ins, 1, o)
    return []


def _count(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _element_count_fault(opcode: str, name: str):
    """A generator giving the first ``opcode`` instruction an operand of its element type but another count."""

    def generate(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
        for ins in instrs:
            out = array(ins.shape)
            if ins.opcode != opcode or out is None or len(operand_names(ins.rest)) != 1 or not _plain_operands(ins):
                continue
            for o in _earlier(instrs, ins):
                a = array(o.shape)
                if a is not None and a[0] == out[0] and _count(a[1]) != _count(out[1]):
                    return _swapped(name, "verifier.element-count", path, text, ins, 0, o)
        return []

    generate.__name__ = f"{opcode}_count"
    return generate


bitcast_count = _element_count_fault("bitcast", "bitcast of another size")
reshape_count = _element_count_fault("reshape", "reshape of another element count")


def _tuple_reads(instrs: list[Ins]):
    """(get-tuple-element, its operand's tuple elements, its ``index=N`` match) of each one whose operand is a
    tuple defined in its computation."""
    by_name = {(i.comp, i.name): i for i in instrs}
    for ins in instrs:
        if ins.opcode != "get-tuple-element":
            continue
        ops = operand_names(ins.rest)
        src = by_name.get((ins.comp, ops[0])) if len(ops) == 1 else None
        elems = tuple_elements(src.shape) if src else None
        mm = re.search(r"index=(\d+)", ins.rest)
        if elems is not None and mm is not None:
            yield ins, elems, mm


def gte_out_of_range(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    for ins, elems, mm in _tuple_reads(instrs):
        new = text.split("\n")[ins.line].replace(f"index={mm.group(1)}", f"index={len(elems)}", 1)
        return _fault("tuple index out of range", "verifier.tuple-index", path, text, ins.line, new)
    return []


def gte_other_element(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    for ins, elems, mm in _tuple_reads(instrs):
        for k, e in enumerate(elems):
            if no_layout(e) != no_layout(ins.shape):
                new = text.split("\n")[ins.line].replace(f"index={mm.group(1)}", f"index={k}", 1)
                return _fault("tuple index of another element", "verifier.tuple-index", path, text, ins.line, new)
    return []


def fusion_operand_shape(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    by_name = {(i.comp, i.name): i for i in instrs}
    for ins in instrs:
        if ins.opcode != "fusion" or not _plain_operands(ins):
            continue
        ops = operand_names(ins.rest)
        if not ops or (ins.comp, ops[0]) not in by_name:
            continue
        cur = no_layout(by_name[(ins.comp, ops[0])].shape)
        for o in _earlier(instrs, ins):
            if array(o.shape) is not None and no_layout(o.shape) != cur and o.name not in ops:
                return _swapped("fusion operand of another shape", "verifier.called-parameters", path, text, ins, 0, o)
    return []


def fusion_operand_dropped(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    lines = text.split("\n")
    for ins in instrs:
        ops = operand_names(ins.rest)
        if ins.opcode != "fusion" or len(ops) < 2:
            continue
        line = lines[ins.line]
        needle = f", %{ops[-1]})"
        if line.count(needle) != 1:
            continue
        new = line.replace(needle, ")", 1)
        return _fault("fusion operand dropped", "verifier.called-parameters", path, text, ins.line, new)
    return []


def entry_layout_param(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    lines = text.split("\n")
    for n, line in enumerate(lines[:5]):
        mm = re.search(r"entry_computation_layout=\{\((\w+)\[(\d+)", line)
        if line.startswith("HloModule") and mm:
            new = line[: mm.start(2)] + str(int(mm.group(2)) + 1) + line[mm.end(2) :]
            return _fault("entry layout parameter changed", "verifier.entry-layout", path, text, n, new)
    return []


def written_operand_shape(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    """Old-style modules write each operand's shape: grow the first dimension of one (up to 8 instructions)."""
    lines = text.split("\n")
    out = []
    for ins in instrs:
        mm = re.search(r"(\w+)\[(\d+)([\d,]*)\](\{[^}]*\})? %", ins.rest)
        if mm is None or ins.opcode in ("parameter", "constant"):
            continue
        line = lines[ins.line]
        start = line.index(ins.opcode + "(") + len(ins.opcode) + 1 + mm.start(2)
        new = line[:start] + str(int(mm.group(2)) + 1) + line[start + len(mm.group(2)) :]
        out.append(
            HloFault(
                "written operand shape changed", "operand-shape-mismatch", path, _edit(text, ins.line, new), ins.line
            )
        )
        if len(out) == 8:
            break
    return out


def name_reused(path: Path, text: str, instrs: list[Ins]) -> list[HloFault]:
    """Rename the root of a later computation to a name defined in an earlier one (roots have no users)."""
    lines = text.split("\n")
    names_in: dict[int, set[str]] = {}
    for i in instrs:
        names_in.setdefault(i.comp, set()).add(i.name)
    for ins in instrs:
        if not lines[ins.line].lstrip().startswith("ROOT ") or ins.comp == 0:
            continue
        for o in instrs:
            if o.comp < ins.comp and o.name not in names_in[ins.comp]:
                new = lines[ins.line].replace(f"%{ins.name} = ", f"%{o.name} = ", 1)
                name = "root renamed to a name of another computation"
                return _fault(name, "verifier.name-reused", path, text, ins.line, new)
    return []


HLO_FAULTS = (
    elementwise_dims,
    element_type,
    bitcast_count,
    gte_out_of_range,
    gte_other_element,
    fusion_operand_shape,
    fusion_operand_dropped,
    entry_layout_param,
    written_operand_shape,
    name_reused,
)
#: Run over before-optimizations modules too (XLA's CPU pipeline turns every reshape into a bitcast).
BEFORE_FAULTS = (reshape_count,)
