"""Call hierarchy between computations: who calls a computation (``calls=``, ``to_apply=``, ``body=``, ...),
and which computations it calls."""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import Computation, HloModule
from hlo_lsp.core.workspace import ReadError, Workspace
from hlo_lsp.ide.context import cursor
from hlo_lsp.ide.types import Call, CallItem, Location


def _item(path: str, mod: HloModule, c: Computation) -> CallItem:
    rng = Range(c.line, 0, c.end_line, len(mod.lines[c.end_line]) if 0 <= c.end_line < len(mod.lines) else 0)
    return CallItem(
        c.name, "ENTRY" if c.is_entry else f"{len(c.instructions)} instructions", Location(path, rng), c.name_range
    )


def prepare(ws: Workspace, path: str, line: int, col: int) -> list[CallItem]:
    """The computation named under the cursor (definition or call site); [] elsewhere."""
    cur = cursor(ws, path, line, col)
    if cur is None or cur.analysis.hlo is None:
        return []
    mod = cur.analysis.hlo
    o = cur.occurrence
    if o is not None and o.kind == "computation":
        ci = mod.computation_by_name.get(o.key)
        return [_item(path, mod, mod.computations[ci])] if ci is not None else []
    c = mod.computation_at_line(line)
    return [_item(path, mod, c)] if c is not None and line == c.line else []


def _module(ws: Workspace, path: str) -> HloModule | None:
    try:
        return ws.analysis(path).hlo
    except ReadError:
        return None


def incoming(ws: Workspace, item: CallItem) -> list[Call]:
    """Computations whose instructions call ``item``, each with the ranges of those call sites."""
    mod = _module(ws, item.location.path)
    if mod is None:
        return []
    by_caller: dict[int, list[Range]] = {}
    for ins in mod.callers(item.name):
        c = mod.computation_of(ins)
        if c is None:
            continue
        d = parse_instruction_line(mod.lines[ins.line])
        spans = [s for s in (d.called if d else []) if s.text == item.name]
        rngs = [Range(ins.line, s.start, ins.line, s.end) for s in spans] or [ins.name_range]
        by_caller.setdefault(mod.computation_by_name[c.name], []).extend(rngs)
    return [Call(_item(item.location.path, mod, mod.computations[ci]), tuple(r)) for ci, r in by_caller.items()]


def outgoing(ws: Workspace, item: CallItem) -> list[Call]:
    """Computations that ``item``'s instructions call, each with the call-site ranges inside ``item``."""
    mod = _module(ws, item.location.path)
    ci = mod.computation_by_name.get(item.name) if mod else None
    if mod is None or ci is None:
        return []
    calls: dict[str, list[Range]] = {}
    for i in mod.computations[ci].instructions:
        ins = mod.make_instruction(i)  # (not kept by the table: the 23 MB module's ENTRY has 25,000)
        if not ins.called:
            continue
        d = parse_instruction_line(mod.lines[ins.line])
        for s in d.called if d else []:
            calls.setdefault(s.text, []).append(Range(ins.line, s.start, ins.line, s.end))
    out = []
    for name, rngs in calls.items():
        target = mod.computation_by_name.get(name)
        if target is not None:
            out.append(Call(_item(item.location.path, mod, mod.computations[target]), tuple(rngs)))
    return out
