"""Go to definition, type definition, references and document highlight.

Definition: a value goes to its defining instruction (the HLO file when the folder has the module, else the
``from instruction:`` line); an operand or called computation to its definition; a ``parameter`` definition to
the caller's operand it receives; a stack frame or source metadata to the Python file and line when the file
exists on disk (else to the ``FileLocations`` row). Type definition: a value (or an instruction's first value) to
its allocation header. References: every occurrence of the key in every file of the module, by the documents'
occurrence indexes, so each is O(hits).
"""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.source import SourceFrame, allowed_source_file, instruction_source, stack
from hlo_lsp.core.workspace import ModuleBundle, Workspace
from hlo_lsp.ide.context import (
    Cursor,
    allocation_location,
    cursor,
    instruction_definition,
    value_definition,
)
from hlo_lsp.ide.types import Highlight, Location


def definition(ws: Workspace, path: str, line: int, col: int) -> list[Location]:
    """Definition targets at (line, col); [] when there is nothing to go to."""
    cur = cursor(ws, path, line, col)
    if cur is None:
        return []
    o = cur.occurrence
    if o is None:
        return _metadata_source(cur, ws.roots)
    if o.kind == "value":
        loc = value_definition(cur.bundle, o.key)
        return [loc] if loc else []
    if o.kind == "instruction":
        return _instruction_target(cur, o.key, o.role)
    if o.kind == "computation":
        found = _module(cur)
        ci = found[0].computation_by_name.get(o.key) if found else None
        if found is None or ci is None:
            return []
        return [Location(found[1], found[0].computations[ci].name_range)]
    if o.kind == "allocation":
        loc = allocation_location(cur.bundle, int(o.key))
        return [loc] if loc else []
    digits = o.key.isascii() and o.key.isdigit() and len(o.key) < 12
    if o.kind == "stack_frame" and cur.analysis.hlo is not None and digits:
        if o.role == "def":
            return []
        return source_targets(cur, stack(cur.analysis.hlo, int(o.key)), ws.roots)
    if o.kind in ("file_location", "file_name", "function_name") and o.role == "use":
        d = cur.index.definition(o.kind, o.key)
        return [Location(path, d.range)] if d else []
    return []


def _module(cur: Cursor) -> tuple[HloModule, str] | None:
    """The module of the cursor's bundle and its file's path; None when the bundle has no HLO text."""
    if cur.analysis.hlo is not None:
        return cur.analysis.hlo, cur.analysis.path
    h = cur.bundle.hlo
    return (h.hlo, h.path) if h is not None and h.hlo is not None else None


def _instruction_target(cur: Cursor, name: str, role: str) -> list[Location]:
    mod = cur.analysis.hlo
    if mod is None:
        loc = instruction_definition(cur.bundle, name)
        return [loc] if loc else []
    scope = mod.computation_at_line(cur.line)
    ins = mod.instruction(name, scope)
    if ins is None:
        return []
    if role == "def" and ins.opcode == "parameter" and ins.parameter_number is not None and cur.maps_at_once(mod):
        # a parameter of a called computation: go to the operand each caller passes (a large module's callers are
        # known once its maps are built in the background: until then, the parameter itself)
        comp = mod.computation_of(ins)
        callee = comp.name if comp is not None else ""
        out = []
        for caller in mod.callers(callee) if callee else []:
            k = passed_operand(caller.opcode, caller.called, callee, ins.parameter_number)
            d = parse_instruction_line(mod.lines[caller.line]) if k is not None else None
            if d is not None and k is not None and k < len(d.operands):
                sp = d.operands[k]
                out.append(Location(cur.path, Range(caller.line, sp.start, caller.line, sp.end)))
        if out:
            return out
    return [Location(cur.path, ins.name_range)]


def passed_operand(opcode: str, called: tuple[str, ...], callee: str, parameter: int) -> int | None:
    """Which operand of a caller becomes parameter ``parameter`` of ``callee``; None when the callee's
    parameters are not operands (reducers, comparators, scatter combiners...)."""
    if opcode == "conditional":
        # branch k (or true/false computation) receives operand k+1; operand 0 selects the branch
        return called.index(callee) + 1 if parameter == 0 and callee in called else None
    if opcode == "while":
        return 0 if parameter == 0 else None
    if opcode in ("fusion", "call", "async-start", "custom-call", "map"):
        return parameter
    return None


def _metadata_source(cur: Cursor, roots: list[str]) -> list[Location]:
    """On ``op_name``/``source_file``/``source_line`` text of an instruction: its Python source."""
    mod = cur.analysis.hlo
    if mod is None or mod.instruction_at_line(cur.line) is None:
        return []
    d = parse_instruction_line(mod.lines[cur.line])
    if d is None:
        return []
    for key in ("op_name", "source_file", "source_line", "op_type"):
        sp = d.metadata.get(key)
        if sp is not None and sp.start <= cur.col <= sp.end:
            return source_targets(cur, instruction_source(mod, d), roots)
    return []


def source_targets(cur: Cursor, frames: list[SourceFrame], roots: list[str]) -> list[Location]:
    if not frames:
        return []
    fr = frames[0]
    real = allowed_source_file(cur.path, fr.file, roots)
    if real is not None:  # the range from the dump (else the line start); the file itself is never read
        col = (fr.column - 1) if fr.column else 0
        end = (fr.end_column - 1) if fr.end_column and fr.end_line in (None, fr.line) else col
        return [Location(real, Range(max(fr.line - 1, 0), col, max(fr.line - 1, 0), max(end, col)), external=True)]
    found = _module(cur)
    row = found[0].table_row("FileLocations", fr.file_location_id) if found and fr.file_location_id else None
    if found is not None and row is not None:
        return [Location(found[1], Range(row.line, 0, row.line, len(found[0].lines[row.line])))]
    return []


def type_definition(ws: Workspace, path: str, line: int, col: int) -> list[Location]:
    """The allocation header of the value (or the instruction's first value) under the cursor; [] otherwise."""
    cur = cursor(ws, path, line, col)
    if cur is None or cur.occurrence is None or cur.bundle.buffers is None:
        return []
    bs = cur.bundle.buffers
    o = cur.occurrence
    if o.kind == "value":
        one = bs.value(o.key)
        values = [one] if one is not None else []
    elif o.kind == "instruction":
        values = bs.values_of(o.key)
    else:
        return []
    out = []
    for v in values:
        if v is not None and v.allocation is not None:
            loc = allocation_location(cur.bundle, v.allocation)
            if loc is not None and loc not in out:
                out.append(loc)
    return out


def _keys_for(cur: Cursor, kind: str, key: str) -> list[tuple[str, str]]:
    """The (kind, key) pairs that name the same thing across a module's files."""
    bs = cur.bundle.buffers
    if kind == "value":
        v = bs.value(key) if bs is not None else None
        return [("value", key)] + ([("instruction", v.instruction)] if v is not None else [])
    if kind == "instruction" and bs is not None:
        return [("instruction", key)] + [("value", v.key) for v in bs.values_of(key)]
    return [(kind, key)]


def references(ws: Workspace, path: str, line: int, col: int, include_declaration: bool = True) -> list[Location]:
    """Every occurrence of the name under the cursor across the module's files, as locations (the server sends
    `reference_spans` straight to the wire); [] when on no name."""
    return [
        Location(p, Range(ln, a, ln, b))
        for p, spans in reference_spans(ws, path, line, col, include_declaration)
        for ln, a, b in spans
    ]


def reference_spans(
    ws: Workspace, path: str, line: int, col: int, include_declaration: bool = True
) -> list[tuple[str, list[tuple[int, int, int]]]]:
    """Every occurrence of the name under the cursor across the module's files, grouped by file as
    (path, [(line, start column, end column)...]); [] when on no name. A name used thousands of times needs no
    object per use on the way to the wire."""
    cur = cursor(ws, path, line, col)
    if cur is None or cur.occurrence is None:
        return []
    o = cur.occurrence
    docs = cur.bundle.documents() or [cur.analysis]
    if cur.analysis not in docs:
        docs.append(cur.analysis)
    if o.kind not in ("value", "instruction", "allocation"):
        docs = [cur.analysis] if o.kind != "computation" else [d for d in docs if d.hlo is not None]
    wanted = _keys_for(cur, o.kind, o.key)
    out: list[tuple[str, list[tuple[int, int, int]]]] = []
    for doc in docs:
        index = doc.index
        if index is None:
            continue
        spans_of = getattr(index, "spans", None)
        found = [
            s
            for s in (
                (
                    spans_of(kind, key)
                    if spans_of is not None
                    else [(x.line, x.start, x.end, x.role) for x in index.find(kind, key)]
                )
                for kind, key in wanted
            )
            if s
        ]
        if len(found) == 1:  # one kind of name in this file: its occurrences are distinct already
            spans = [(ln, a, b) for ln, a, b, role in found[0] if include_declaration or role != "def"]
        else:
            seen: set[tuple[int, int]] = set()
            spans = []
            for group in found:
                for ln, a, b, role in group:
                    if (role == "def" and not include_declaration) or (ln, a) in seen:
                        continue
                    seen.add((ln, a))
                    spans.append((ln, a, b))
        if spans:
            out.append((doc.path, spans))
    return out


def highlights(ws: Workspace, path: str, line: int, col: int) -> list[Highlight]:
    """Occurrences of the name under the cursor in this document: definitions as writes, uses as reads."""
    cur = cursor(ws, path, line, col)
    if cur is None or cur.occurrence is None:
        return []
    o = cur.occurrence
    return [Highlight(x.range, "write" if x.role == "def" else "read") for x in cur.index.find(o.kind, o.key)]


def bundle_paths(bundle: ModuleBundle) -> list[str]:
    return [d.path for d in bundle.documents()]
