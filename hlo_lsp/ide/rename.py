"""Rename an instruction or a computation across its module (the answer is a set of edits; nothing is written).

Refused (`RenameRefused`, with a message for the user):
- in buffer-assignment files, and in an HLO module whose folder holds its buffer assignment: the buffer files
  name the same instructions, and renaming only the module would break the join between them;
- on anything but an instruction or computation name, for a name that is not valid in HLO
  (``[A-Za-z_][A-Za-z0-9_.-]*``, not a keyword or type), and for a name already taken in the same scope.

Scope: an instruction is renamed within its computation (its definition, operand uses, the parameter in the
computation header, ``control-predecessors``); a computation across the module (its header and every
``calls=``/``to_apply=``/``body=``/... that names it). The ``%`` sigil stays as written: edits cover the bare name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlo_lsp.core import kinds
from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.opcodes import KEYWORDS, PRIMITIVE_TYPES
from hlo_lsp.core.workspace import ReadError, Workspace

_VALID = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_NAME_IN_LIST = re.compile(r"%?([^\s,{}%]+)")


class RenameRefused(Exception):
    """Why a rename cannot be done here; the message is shown to the user."""


@dataclass(frozen=True, slots=True)
class Target:
    kind: str  # "instruction" | "computation"
    name: str
    range: Range  # of the name under the cursor


def _target(ws: Workspace, path: str, line: int, col: int):
    try:
        a = ws.analysis(path)
        bundle = ws.bundle(path)
    except ReadError as e:
        raise RenameRefused(str(e)) from None
    if a.kind in kinds.BUFFER_KINDS:
        raise RenameRefused("Names in buffer-assignment files are XLA's: rename in the HLO module instead.")
    if a.kind != kinds.HLO or a.hlo is None or a.index is None:
        raise RenameRefused("Not an HLO module.")
    if bundle.buffer_docs:
        raise RenameRefused(
            "This module's buffer assignment is in the same folder; renaming the module alone "
            "would break the link between them."
        )
    occ = a.index.at(line, col)
    if occ is None or occ.kind not in ("instruction", "computation"):
        raise RenameRefused("Only instruction and computation names can be renamed.")
    return a, Target(occ.kind, occ.key, occ.range)


def prepare_rename(ws: Workspace, path: str, line: int, col: int) -> Target:
    """The name under the cursor that can be renamed; raises RenameRefused with the reason otherwise."""
    return _target(ws, path, line, col)[1]


def rename(ws: Workspace, path: str, line: int, col: int, new_name: str) -> dict[str, list[tuple[Range, str]]]:
    """Edits (path -> [(range, new text)]) renaming the name under the cursor; raises RenameRefused."""
    a, t = _target(ws, path, line, col)
    if not _VALID.match(new_name) or new_name in KEYWORDS or new_name in PRIMITIVE_TYPES:
        raise RenameRefused(f"{new_name!r} is not a valid HLO name.")
    mod = a.hlo
    if new_name == t.name:
        return {path: []}
    if t.kind == "computation":
        if new_name in mod.computation_by_name:
            raise RenameRefused(f"A computation named {new_name!r} already exists.")
        ranges = [o.range for o in a.index.find("computation", t.name)]
    else:
        comp = mod.computation_at_line(line)
        if comp is None:
            raise RenameRefused("The instruction is outside every computation.")
        ranges = _instruction_ranges(a, comp, t.name)
        taken = {mod.instructions[i].name for i in comp.instructions}
        if new_name in taken or new_name in mod.by_name:
            raise RenameRefused(f"An instruction named {new_name!r} already exists.")
    return {path: [(r, new_name) for r in sorted(set(ranges))]}


def _instruction_ranges(a, comp, name: str) -> list[Range]:
    """Every mention of instruction ``name`` inside computation ``comp`` (header to closing brace)."""
    out = [o.range for o in a.index.on_line(comp.line) if o.kind == "instruction" and o.key == name]
    lines = a.lines
    for i in comp.instructions:
        ins = a.hlo.instructions[i]
        text = lines[ins.line]
        if name not in text:
            continue
        out += [o.range for o in a.index.on_line(ins.line) if o.kind == "instruction" and o.key == name]
        d = parse_instruction_line(text)
        cp = d.attribute("control-predecessors") if d is not None else None
        if cp is not None:
            for m in _NAME_IN_LIST.finditer(cp.value):
                if m.group(1) == name:
                    s = cp.value_start + m.start(1)
                    out.append(Range(ins.line, s, ins.line, s + len(name)))
    return out
