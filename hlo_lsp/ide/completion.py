"""Completion for hand-written HLO: opcodes, operand names, called computations and attribute names.

The context is read from the text before the cursor on its line only (linear, no regex that can backtrack):
- after ``name = <shape> `` (the shape read with a bracket-depth scan): opcodes from the one opcode table
  (`hlo_lsp.core.hlo.opcodes.OPCODES`), with their family as detail;
- inside the operand list of ``opcode(``: instructions defined earlier in the same computation, and the
  computation's parameters, with their shapes;
- after ``calls=``, ``to_apply=``, ``body=``, ``condition=`` and the other computation attributes (also inside
  ``{...}`` lists): the module's computations other than the current one;
- after the operand list, at the start of an attribute (``, ``): the attributes the opcode accepts plus the ones
  every instruction takes.
Anywhere else nothing is offered. Buffer-assignment files get no completion.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from hlo_lsp.core import kinds
from hlo_lsp.core.document import Lines
from hlo_lsp.core.hlo.instructions import InstructionTable, instruction_names
from hlo_lsp.core.hlo.line import CALL_ATTRS, parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.opcodes import COMMON_ATTRIBUTES, OPCODES, lookup
from hlo_lsp.core.workspace import ReadError, Workspace


@dataclass(frozen=True, slots=True)
class CompletionItem:
    label: str
    kind: str  # "keyword" (opcode) | "variable" (operand) | "function" (computation) | "property" (attribute)
    detail: str = ""
    insert_text: str | None = None


_IDENT = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _word_start(text: str, end: int) -> int:
    i = end
    while i > 0 and text[i - 1] in _IDENT:
        i -= 1
    return i


def _skip_shape(text: str, i: int) -> int:
    """End of a shape that starts at ``i`` (tuple parens balanced, array up to the first space); -1 when it
    does not end before the text does. The parens are found by a C search (a Python loop over each character of
    the benchmark module's ENTRY root line, a 184 kB tuple shape, held the event loop 14 ms at each keystroke)."""
    if i < len(text) and text[i] == "(":
        depth = 0
        for m in _PARENS.finditer(text, i):
            if m.group() == "(":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return m.end()
        return -1
    return text.find(" ", i)


_PARENS = re.compile(r"[()]")


def _context(before: str) -> tuple[str, str] | None:
    """(context, detail) at the end of ``before``: ("opcode", ""), ("operand", opcode), ("computation", ""),
    ("attribute", opcode) or None."""
    eq = before.find("=")
    head = before[:eq].strip() if eq >= 0 else ""
    if eq < 0 or not head or " " in head.replace("ROOT ", "", 1).strip():
        return None
    ws = _word_start(before, len(before))
    prefix_start = ws - 1 if ws > 0 and before[ws - 1] == "%" else ws
    # called computation: `calls=`, `to_apply=%`, `branch_computations={%a, %`
    j = prefix_start
    while j > 0 and before[j - 1] in " ,{%":
        j -= 1
    if j > 0 and before[j - 1] == "=":
        key_end = j - 1
        k = _word_start(before, key_end)
        if before[k:key_end] in CALL_ATTRS:
            return "computation", ""
    brace = before.rfind("={")
    if brace >= 0 and "}" not in before[brace:] and before[_word_start(before, brace) : brace] in CALL_ATTRS:
        return "computation", ""
    rest = before[eq + 1 :].lstrip()
    offset = len(before) - len(rest)
    shape_end = _skip_shape(before, offset)
    if shape_end < 0:
        return None
    tail = before[shape_end:]
    paren = tail.find("(")
    if paren < 0:
        return ("opcode", "") if tail.startswith(" ") and " " not in tail.strip() else None
    opcode = tail[:paren].strip()
    depth = 0
    i = shape_end + paren
    close = -1
    in_str = False
    while i < len(before):
        ch = before[i]
        if in_str:
            in_str = ch != '"' or before[i - 1] == "\\"
        elif ch == '"':
            in_str = True
        elif ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth == 0 and close < 0:
                close = i
        i += 1
    if in_str:
        return None
    if close < 0:
        return ("operand", opcode) if depth == 1 else None
    if depth == 0 and before[:prefix_start].rstrip().endswith(","):
        return "attribute", opcode
    return None


MAX_NAMES = 100  # operand or computation names offered at once: the nearest holding what is typed (`completions`)


def complete(ws: Workspace, path: str, line: int, col: int) -> list[CompletionItem]:
    """Completion items at (line, col) of an HLO document; [] for other documents and contexts."""
    return completions(ws, path, line, col)[0]


def completions(ws: Workspace, path: str, line: int, col: int) -> tuple[list[CompletionItem], bool]:
    """(`complete`'s items, whether more names would have been offered): in a long computation or module only the
    `MAX_NAMES` nearest names holding the word typed so far (any case) are, and the editor asks again as more is
    typed (the 23 MB module's ENTRY offered 25,714 operands, 0.43 s on the event loop a keystroke)."""
    try:
        a = ws.analysis(path)
    except ReadError:
        return [], False
    if a.kind != kinds.HLO or a.hlo is None or not 0 <= line < len(a.lines):
        return [], False
    before = a.lines[line][:col]
    ctx = _context(before)
    if ctx is None:
        return [], False
    what, opcode = ctx
    typed = before[_word_start(before, len(before)) :].lower()
    mod = a.hlo
    comp = mod.computation_at_line(line)
    if what == "opcode":
        items = [
            CompletionItem(name, "keyword", info.family) for name, info in sorted(OPCODES.items()) if info.in_parser
        ]
        return items, False
    if what == "computation":
        comps = [c for c in mod.computations if (comp is None or c.name != comp.name) and typed in c.name.lower()]
        more = len(comps) > MAX_NAMES
        # (the nearest: those defined last before the cursor's line, then the first after it)
        near = sorted(comps, key=lambda c: (c.line > line, -c.line if c.line < line else c.line))[:MAX_NAMES]
        near.sort(key=lambda c: c.line)
        return [CompletionItem(c.name, "function", c.signature.strip()[:80]) for c in near], more
    if what == "operand":
        return _operands(mod, a.lines, comp, line, typed)
    info, wrapped = lookup(opcode)
    names: dict[str, str] = {}
    for source in (info, wrapped):
        if source is not None:
            names.update({k: v.kind for k, v in source.attributes.items()})
    for k, v in COMMON_ATTRIBUTES.items():
        names.setdefault(k, v)
    written = {x.key for x in (parse_instruction_line(a.lines[line]) or _NoLine).attributes}
    items = [
        CompletionItem(k, "property", kind, insert_text=k + "=")
        for k, kind in sorted(names.items())
        if k not in written
    ]
    return items, False


class _NoLine:
    attributes: list = []


def _operands(mod: HloModule, lines: Lines, comp, line: int, typed: str) -> tuple[list[CompletionItem], bool]:
    """The instructions of ``comp`` defined before ``line`` whose name holds ``typed``: the `MAX_NAMES` nearest,
    in document order, each with its shape and opcode (whether more there were)."""
    if comp is None:
        return [], False
    r = comp.instructions
    t = mod.instructions
    before: Sequence[int]
    if isinstance(t, InstructionTable) and isinstance(r, range):
        # (a computation's lines rise with its instructions: the cursor's place found by bisection)
        before = range(r.start, bisect_left(t.line_of, line, r.start, r.stop))
    else:
        before = [i for i in r if mod.make_instruction(i).line < line]
    names = instruction_names(t)
    picked: list[int] = []
    seen: set[str] = set()
    more = False
    for i in reversed(before):
        name = names[i]
        if typed in name.lower() and name not in seen:
            if len(picked) == MAX_NAMES:
                more = True
                break
            seen.add(name)
            picked.append(i)
    return _operand_items(mod, lines, picked), more


def _operand_items(mod: HloModule, lines: Lines, picked: list[int]) -> list[CompletionItem]:
    out = []
    for i in reversed(picked):  # (picked nearest first; offered in document order)
        ins = mod.make_instruction(i)
        d = parse_instruction_line(lines[ins.line])
        shape = d.shape.text if d is not None and d.shape is not None else ""
        out.append(CompletionItem(ins.name, "variable", f"{shape} {ins.opcode}".strip()))
    return out
