"""Shape-inference faults injected into real HLO modules: one dimension, or the element type, of one
instruction's written result is changed where XLA infers it, read with the independent reader of
`hlo_faults` (nothing here imports hlo_lsp).

A fault names the edited line and the lines where other findings are legitimate: the instruction's users
(they now see an operand of another shape), the callers of its computation when it is the root (they see
another callee root), and the module header when it is the ENTRY root (``entry_computation_layout``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.rules.hlo_faults import Ins

_INSTR = re.compile(r"^(\s*)(ROOT )?%?([^ =]+) = (.+?) ([a-z][a-z0-9-]*)\((.*)$")  # `%` optional (hand-written)


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


def operand_names(rest: str) -> list[str]:
    """The names in the top-level operand list (the text up to its closing parenthesis)."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            if depth == 0:
                return re.findall(r"%?([A-Za-z_][\w.\-]*)(?=\s*(?:,|$))", rest[:i])
            depth -= 1
    return []


#: The opcodes of issue 17's list whose result XLA infers (iota's shape is free; custom-call and parameter too).
OPCODES = (
    "dot",
    "convolution",
    "reduce",
    "reduce-window",
    "select-and-scatter",
    "broadcast",
    "transpose",
    "reshape",
    "bitcast",
    "slice",
    "dynamic-slice",
    "dynamic-update-slice",
    "gather",
    "scatter",
    "concatenate",
    "pad",
    "select",
    "clamp",
    "compare",
    "convert",
    "bitcast-convert",
    "sort",
    "reverse",
    "map",
    "while",
    "conditional",
    "call",
    "fusion",
    "tuple",
    "get-tuple-element",
    "all-gather",
    "all-gather-start",
    "all-gather-done",
    "all-reduce",
    "all-reduce-start",
    "all-reduce-done",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
    "collective-permute-start",
    "collective-permute-done",
    "async-start",
    "async-done",
    "copy-start",
    "copy-done",
    "dynamic-reshape",
    "cholesky",
    "triangular-solve",
    "fft",
    "rng-bit-generator",
)
#: Opcodes whose result element type XLA does not fix (a preferred type, a conversion, a reinterpretation).
FREE_TYPE = frozenset(("dot", "convolution", "convert", "bitcast-convert", "bitcast"))
#: Result dimensions taken from a count or a group, not inferred one by one: the gathered/scattered one.
_GROUPED = frozenset(("all-gather", "all-gather-start", "reduce-scatter"))
_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[((?:<=)?[0-9]+(?:,(?:<=)?[0-9]+)*)?\]")
_OTHER_TYPE = {
    "pred": "s32",
    "s8": "f32",
    "s16": "f32",
    "s32": "f32",
    "s64": "f32",
    "u8": "f32",
    "u16": "f32",
    "u32": "f32",
    "u64": "f32",
    "f16": "s32",
    "bf16": "s32",
    "f32": "s32",
    "f64": "s32",
    "c64": "s32",
    "c128": "s32",
}


_ODD_OPERANDS = re.compile(r"[a-z0-9]\(|,\s*,|\(\s*,")


@dataclass
class ShapeFault:
    opcode: str
    kind: str  # "dims" or "type"
    path: Path
    platform: str
    text: str
    line: int
    allowed: frozenset[int]  # lines where a finding is legitimate besides ``line``


def platform(path: Path) -> str:
    s = str(path).lower()
    return "tpu" if "tpu" in s else "gpu" if ("gpu" in s or "cuda" in s or "/seeds/001_" in s) else "cpu"


def _dims_edit(ins: Ins) -> tuple[int, int] | None:
    """(start, end) in the shape text of the dimension to change; None when there is no inferred one."""
    if ins.opcode == "rng-bit-generator" and not ins.shape.startswith("("):
        return None  # ShapeVerifier::HandleRngBitGenerator checks a tuple result only
    pick = None
    if ins.opcode == "broadcast":
        m = re.search(r"dimensions=\{(\d+)", ins.rest)
        pick = int(m.group(1)) if m else None
        if pick is None:
            return None
    avoid = None
    if ins.opcode in _GROUPED:
        m = re.search(r"dimensions=\{(\d+)\}", ins.rest)
        avoid = int(m.group(1)) if m else 0
    for m in _ARRAY.finditer(ins.shape):
        dims = m.group(2).split(",") if m.group(2) else []
        if not dims or any(d.lstrip("<=") == "0" for d in dims):
            continue
        ks = [pick] if pick is not None else [k for k in range(len(dims)) if k != avoid]
        if not ks or ks[0] >= len(dims):
            return None
        k = ks[0]
        start = m.start(2) + sum(len(d) + 1 for d in dims[:k]) + (2 if dims[k].startswith("<=") else 0)
        return start, m.start(2) + sum(len(d) + 1 for d in dims[:k]) + len(dims[k])
    return None


def _type_edit(ins: Ins) -> tuple[int, int, str] | None:
    if ins.opcode == "rng-bit-generator" and not ins.shape.startswith("("):
        return None
    m = _ARRAY.search(ins.shape)
    if m is None or m.group(1) not in _OTHER_TYPE:
        return None
    return m.start(1), m.end(1), _OTHER_TYPE[m.group(1)]


def _allowed(instrs: list[Ins], ins: Ins, lines: list[str], comp_names: dict[int, str]) -> frozenset[int]:
    out = {o.line for o in instrs if o.comp == ins.comp and ins.name in operand_names(o.rest)}
    last = max(o.line for o in instrs if o.comp == ins.comp)
    is_root = lines[ins.line].lstrip().startswith("ROOT ") or (
        ins.line == last and not any(lines[o.line].lstrip().startswith("ROOT ") for o in instrs if o.comp == ins.comp)
    )
    if is_root:
        name = comp_names.get(ins.comp, "")
        call = re.compile(r"=%?" + re.escape(name) + r"\b|[{,]\s*%?" + re.escape(name) + r"\b")
        out |= {o.line for o in instrs if call.search(o.rest)}
        out.add(0)  # entry_computation_layout
    return frozenset(out)


def _computation_names(text: str) -> dict[int, str]:
    names, comp = {}, -1
    for line in text.split("\n"):
        if line and not line[0].isspace() and line.rstrip().endswith("{"):
            comp += 1
            m = re.match(r"(?:ENTRY\s+)?%?([^\s(]+)", line)
            names[comp] = m.group(1) if m else ""
    return names


def shape_faults(path: Path, text: str, per_opcode: int = 2) -> list[ShapeFault]:
    """Up to ``per_opcode`` dimension faults and as many element-type faults per opcode of `OPCODES` in one
    module (instructions with plain names only; the edited result keeps its layout text)."""
    instrs = read(text)
    lines = text.split("\n")
    comps = _computation_names(text)
    out: list[ShapeFault] = []
    counts: dict[tuple[str, str], int] = {}
    for ins in instrs:
        if ins.opcode not in OPCODES:
            continue
        line = lines[ins.line]
        at = line.find(" = ") + 3
        if line[at : at + len(ins.shape)] != ins.shape or _ODD_OPERANDS.search(ins.rest.split("=")[0]):
            continue  # hand-written oddities the verifier rules skip: nested instructions, empty operands
        for kind in ("dims", "type"):
            if counts.get((ins.opcode, kind), 0) >= per_opcode or (kind == "type" and ins.opcode in FREE_TYPE):
                continue
            if kind == "dims":
                e = _dims_edit(ins)
                # a bitcast's verifier compares byte sizes, TPU's padded to the tile: grow past any tile
                grow = 256 if ins.opcode == "bitcast" else 1
                new_shape = (
                    None
                    if e is None
                    else ins.shape[: e[0]] + str(int(ins.shape[e[0] : e[1]]) + grow) + ins.shape[e[1] :]
                )
            else:
                t = _type_edit(ins)
                new_shape = None if t is None else ins.shape[: t[0]] + t[2] + ins.shape[t[1] :]
            if new_shape is None:
                continue
            new = line[:at] + new_shape + line[at + len(ins.shape) :]
            edited = "\n".join(lines[: ins.line] + [new] + lines[ins.line + 1 :])
            counts[(ins.opcode, kind)] = counts.get((ins.opcode, kind), 0) + 1
            out.append(
                ShapeFault(
                    ins.opcode, kind, path, platform(path), edited, ins.line, _allowed(instrs, ins, lines, comps)
                )
            )
    return out
