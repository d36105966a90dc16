"""Quick fixes for diagnostics whose fix is obvious, as plain records the LSP layer converts.

- ``undefined-operand``: rename the operand to the closest names defined before it in the same computation
  (difflib similarity, best first; the best one is marked preferred).
- ``operand-shape-mismatch``: replace the written operand shape (old style ``add(f32[3]{0} %x, ...)``) by the
  shape written at the operand's definition.

Algorithm: the document's own diagnostics are recomputed through the shared aggregator (cached analyses make
this cheap) and those touching the requested range are kept, restricted to the ones the client sent back when
it sent any; each fix is derived again from the line text, so a stale diagnostic never yields a wrong edit.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from hlo_lsp.core.diagnostics import Diagnostic, Range, TextEdit
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.workspace import ReadError, Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics

FIXABLE = ("undefined-operand", "operand-shape-mismatch")
MAX_RENAMES = 3


@dataclass(frozen=True, slots=True)
class CodeAction:
    """One quick fix: its title, the edits per document path, and the diagnostic it fixes."""

    title: str
    edits: dict[str, tuple[TextEdit, ...]]
    diagnostic: Diagnostic
    kind: str = "quickfix"
    preferred: bool = False
    extra: dict = field(default_factory=dict, compare=False)


def _touches(a: Range, b: Range) -> bool:
    """True when the ranges overlap or touch (a cursor inside or at either end of a diagnostic)."""
    return (a.start_line, a.start_col) <= (b.end_line, b.end_col) and (b.start_line, b.start_col) <= (
        a.end_line,
        a.end_col,
    )


def code_actions(
    ws: Workspace, path: str, range_: Range, diagnostics: list[Diagnostic] | None = None
) -> list[CodeAction]:
    """Quick fixes for the fixable diagnostics of ``path`` touching ``range_``; when ``diagnostics`` (the ones
    the client sent back, as core records) is non-empty, only for those (matched by code and start position).
    [] when nothing there can be fixed or the file cannot be read."""
    try:
        a = ws.analysis(path)
    except ReadError:
        return []
    if a.hlo is None:
        return []
    wanted = None
    if diagnostics:
        wanted = {(d.code, d.range.start_line, d.range.start_col) for d in diagnostics if d.code in FIXABLE}
        if not wanted:
            return []
    out: list[CodeAction] = []
    for d in document_diagnostics(ws, path):
        if d.code not in FIXABLE or not _touches(d.range, range_):
            continue
        if wanted is not None and (d.code, d.range.start_line, d.range.start_col) not in wanted:
            continue
        if d.code == "undefined-operand":
            out.extend(_rename_operand(a.hlo, path, d))
        else:
            out.extend(_fix_written_shape(a.hlo, path, d))
    return out


def _rename_operand(mod: HloModule, path: str, d: Diagnostic) -> list[CodeAction]:
    ln = d.range.start_line
    if ln >= len(mod.lines) or d.range.end_line != ln:
        return []
    line = mod.lines[ln]
    written = line[d.range.start_col : d.range.end_col]
    sigil = "%" if written.startswith("%") else ""  # the grammar's range covers the `%` of `%name`
    name = written[len(sigil) :]
    comp = mod.computation_at_line(ln)
    if not name or comp is None:
        return []
    here = mod.instruction_at_line(ln)
    defined = []
    for i in comp.instructions:
        ins = mod.instructions[i]
        if ins.line >= ln:
            break
        defined.append(ins.name)
    if here is not None and here.name in defined:
        defined.remove(here.name)
    choices = difflib.get_close_matches(name, dict.fromkeys(defined), n=MAX_RENAMES, cutoff=0.5)
    return [
        CodeAction(f"Rename `{name}` to `{c}`", {path: (TextEdit(d.range, sigil + c),)}, d, preferred=k == 0)
        for k, c in enumerate(choices)
    ]


def _fix_written_shape(mod: HloModule, path: str, d: Diagnostic) -> list[CodeAction]:
    ln = d.range.start_line
    if ln >= len(mod.lines):
        return []
    detail = parse_instruction_line(mod.lines[ln])
    here = mod.instruction_at_line(ln)
    if detail is None or here is None:
        return []
    comp = mod.computation_of(here)
    for k, written in enumerate(detail.operand_shapes):
        if written is None or written.start != d.range.start_col or k >= len(detail.operands):
            continue
        target = mod.instruction(detail.operands[k].text, comp)
        if target is None:
            return []
        tdetail = parse_instruction_line(mod.lines[target.line])
        if tdetail is None or tdetail.shape is None or tdetail.shape.text == written.text:
            return []
        shape = tdetail.shape.text
        rng = Range(ln, written.start, ln, written.end)
        return [
            CodeAction(f"Write `{target.name}`'s shape {shape}", {path: (TextEdit(rng, shape),)}, d, preferred=True)
        ]
    return []
