"""Patch an `HloModule` in place for an edit, instead of reading the whole module again.

The unit of incremental work is the instruction line: an edit that keeps the number of lines and leaves every
touched line an (indented) instruction line updates that instruction's entry in the `InstructionTable` (name,
column, ROOT flag; its parsed form (opcode, operands, calls) is dropped and re-read on first use), the name index,
and the computation's root. Anything else (a line added or removed, a header or brace touched) returns False and
the caller reads the module again. `patched_lines` counts the lines re-read, for tests.
"""

from __future__ import annotations

import re

from hlo_lsp.core.document import Edit
from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.model import HloModule

_EDIT_LINE = re.compile(r"[ \t]+(ROOT[ \t]+)?%?([\w.\-]+)[ \t]*=")

patched_lines = 0


def patch_module(mod: HloModule, edit: Edit) -> bool:
    """Update ``mod`` (whose ``lines`` already hold the edited text) for ``edit``; False when the edit is not
    one this patch can express, in which case ``mod`` must be read again."""
    global patched_lines
    table = mod.instructions
    if edit.old_count != edit.new_count or not isinstance(table, InstructionTable):
        return False
    changes = []
    for k in range(edit.first, edit.first + edit.new_count):
        i = mod.index_at_line(k)
        m = _EDIT_LINE.match(mod.lines[k]) if i is not None else None
        if i is None or m is None:
            return False
        changes.append((i, k, m))
    kept = True
    for i, k, m in changes:
        kept &= _patch_instruction(mod, table, i, mod.lines[k], m)
        mod.mark_patched(i)
        patched_lines += 1
    mod.patch_kept_names = kept
    return True


def _patch_instruction(mod: HloModule, table: InstructionTable, i: int, line: str, m: re.Match) -> bool:
    """Patch instruction ``i`` for its edited ``line``; True when its name, name column and ROOT flag are
    unchanged (then only the line's own checks can change: `StructuralChecker.invalidate_line`)."""
    old_name, new_name = table.names[i], m.group(2)
    kept = old_name == new_name and table.col_of[i] == m.start(2) and table.root_flags[i] == (1 if m.group(1) else 0)
    table.names[i] = new_name
    table.col_of[i] = m.start(2)
    table.root_flags[i] = 1 if m.group(1) else 0
    table.forget(i)
    if old_name != new_name:
        mod.renamed(i, old_name, new_name)
    k = mod.computation_index_at_line(table.line_of[i])
    if k is not None:
        c = mod.computations[k]
        lo, hi = c.instructions.start, c.instructions.stop
        r = table.root_flags.rfind(1, lo, hi)
        c.root = r if r >= 0 else (hi - 1 if hi > lo else None)
    return kept
