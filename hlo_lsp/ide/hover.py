"""Hover: what a name under the cursor is, how big it is, where it sits and when it is live.

One function per target: a buffer value (wherever it appears) and an allocation header (`hover_buffers`), an HLO
instruction (definition or use, with its buffer facts when the folder holds the module's buffer assignment), a
called computation (its signature), a shape (unpadded and padded bytes), and source-table ids. Each renders
Markdown as a list of labelled fields ("**Size** 32768 bytes (32.0KiB)") and a plain-text twin for clients that
ask (`hover_fields`).
"""

from __future__ import annotations

import re

from hlo_lsp.core import kinds
from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.instructions import Instruction
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.rules.donation import donation_hints
from hlo_lsp.core.hlo.source import file_location, stack
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.context import Cursor, cursor
from hlo_lsp.ide.hover_buffers import hover_allocation, hover_value, hover_value_id
from hlo_lsp.ide.hover_fields import MAX_SHAPE_TEXT, Fields, fmt_bytes, metadata_fields, shorten, size_of_shape
from hlo_lsp.ide.lens import report_or_start
from hlo_lsp.ide.passes import hover_section
from hlo_lsp.ide.peak_groups import groups_hover
from hlo_lsp.ide.types import HoverResult

# a type name starts only after a non-word character and dims/layouts stop at the next bracket, so finditer is
# linear on a 100 KB run of letters or of unclosed 'f32[' (it was quadratic: a minute on one hover)
_SHAPE_AT = re.compile(r"(?:(?<![a-z0-9_])[a-z][a-z0-9]*\[[^\][]*\](?:\{[^{}]*\})?|\((?:[^()]|\([^()]*\))*\))")

DONATION_NOW_LIMIT = 2_000_000  # above this a module's donation hints come from its verifier run only
# what a hover says of a large module's users or callers while its maps are built in the background after its read
INDEXING = "being indexed: hover again in a moment"


def hover(ws: Workspace, path: str, line: int, col: int) -> HoverResult | None:
    """Hover at (line, col); None when nothing we know is under the cursor."""
    cur = cursor(ws, path, line, col)
    if cur is None:
        return None
    o = cur.occurrence
    if o is None:
        return hover_value_id(cur) or _hover_peak_line(cur) or _hover_shape(cur)
    if o.kind == "value":
        return hover_value(cur, o.key, o.range)
    if o.kind == "allocation":
        return hover_allocation(cur, int(o.key), o.range)
    if o.kind == "instruction":
        return _with_passes(ws, path, o.key, hover_instruction(cur, o.key, o.range))
    if o.kind == "computation":
        return hover_computation(cur, o.key, o.range)
    if o.kind in ("stack_frame", "file_location") and cur.analysis.hlo is not None:
        return _hover_source_row(cur.analysis.hlo, o.kind, o.key, o.range)
    return None


def _with_passes(ws: Workspace, path: str, name: str, h: HoverResult | None) -> HoverResult | None:
    """An instruction's hover in a file of a pass-by-pass dump, with its pass history (`ide.passes`)."""
    if h is None:
        return None
    section = hover_section(ws, path, name)
    if section is None:
        return h
    return HoverResult(f"{h.markdown}\n\n{section[0]}", f"{h.plain}\n{section[1]}", h.range)


def _hover_peak_line(cur: Cursor) -> HoverResult | None:
    """On the ``Live ranges at N (peak):`` line: the values live there grouped by source line, op_name, dtype,
    category and argument (`peak_groups`)."""
    doc = cur.analysis.buffers
    if doc is None or doc.peak_line != cur.line:
        return None
    lines = cur.analysis.lines
    rng = Range(cur.line, 0, cur.line, len(lines[cur.line]) if cur.line < len(lines) else 0)
    made, report = report_or_start(cur.bundle)
    if not made:
        text = "The values live at the peak are being grouped (the module's peak report is being made): hover again."
        return HoverResult(f"**Live at the peak**\n\n{text}", text, rng)
    if report is None:
        return None
    return groups_hover(report, rng)


def hover_instruction(cur: Cursor, name: str, rng: Range) -> HoverResult | None:
    h = cur.bundle.hlo
    mod = h.hlo if h is not None else None
    if mod is None:
        # a buffer file without its module text: show the values the instruction defines
        bs = cur.bundle.buffers
        vals = bs.values_of(name) if bs is not None else []
        if len(vals) == 1:
            return hover_value(cur, vals[0].key, rng)
        if not vals:
            return None
        f = Fields(f"**instruction** `{name}`", f"instruction {name}")
        for v in vals:
            f.add(f"`{v.key}`", f"{fmt_bytes(v.size)} in allocation {v.allocation}", f"{v.key} {v.size} bytes")
        return f.result(rng)
    scope = mod.computation_at_line(cur.line) if cur.analysis.hlo is mod else None
    ins = mod.instruction(name, scope)
    if ins is None:
        return None
    return _instruction_fields(cur, mod, ins).result(rng)


def _instruction_fields(cur: Cursor, mod: HloModule, ins: Instruction) -> Fields:
    d = parse_instruction_line(mod.lines[ins.line])
    comp = mod.computation_of(ins)
    where = f" in `{comp.name}`" if comp else ""
    f = Fields(f"**{ins.opcode}** `%{ins.name}`{where}", f"{ins.opcode} %{ins.name}{where.replace('`', '')}")
    shape_text = d.shape.text if d is not None and d.shape is not None else None
    if shape_text:
        f.add("Shape", f"`{shorten(shape_text, MAX_SHAPE_TEXT)}`")
        unpadded, padded, err = size_of_shape(shape_text)
        if unpadded is not None:
            f.add("Bytes", fmt_bytes(unpadded) + (f", padded {fmt_bytes(padded)}" if padded else ""))
        elif err:
            f.add("Bytes", err)
    if ins.parameter_number is not None:
        f.add("Parameter", str(ins.parameter_number))
        if comp is not None and comp.is_entry:
            hint = _donation_at(cur, mod, ins.line)
            if hint is not None:
                f.add("Donation", hint)
    if ins.operands:
        ops = []
        for op in ins.operands[:8]:
            o = mod.instruction(op, comp)
            od = parse_instruction_line(mod.lines[o.line]) if o is not None else None
            oshape = f" {shorten(od.shape.text, MAX_SHAPE_TEXT)}" if od is not None and od.shape is not None else ""
            ops.append(f"`{op}`{oshape}")
        f.add("Operands", ", ".join(ops) + (f" … ({len(ins.operands)})" if len(ins.operands) > 8 else ""))
    if mod.users_at_once() or cur.maps_at_once(mod):
        f.add("Users", str(mod.user_count(ins.name, mod.index_at_line(ins.line))))
    else:
        f.add("Users", f"_{INDEXING}_", INDEXING)
    if ins.called:
        f.add("Calls", ", ".join(f"`{c}`" for c in ins.called))
    if d is not None:
        metadata_fields(f, mod, d)
    bs = cur.bundle.buffers
    if cur.bundle.partial:
        f.add("Buffers", "the module's buffer-assignment files are still being read")
    if bs is not None:
        for v in bs.values_of(ins.name)[:8]:
            parts = [f"`{v.key}`"]
            if v.allocation is not None:
                parts.append(f"allocation {v.allocation} offset {v.offset} size {fmt_bytes(v.size)}")
            if v.live_range is not None:
                parts.append(f"live `[{v.live_range[0]}, {v.live_range[1]}]`")
            f.add("Buffer", " · ".join(parts))
    return f


def _donation_at(cur: Cursor, mod: HloModule, line: int) -> str | None:
    """The donation hint of the entry parameter on ``line``: the last verifier run's for a large module (the pass
    over the entry computation is not made per hover), else made now."""
    a = cur.bundle.hlo
    if a is not None and a.donations is not None:
        return next((d.message for d in a.donations if d.range.start_line == line), None)
    if a is not None and a.size > DONATION_NOW_LIMIT:
        return None
    return next((h.message() for h in donation_hints(mod) if h.line == line), None)


def hover_computation(cur: Cursor, name: str, rng: Range) -> HoverResult | None:
    mod = cur.analysis.hlo if cur.analysis.hlo is not None else (cur.bundle.hlo.hlo if cur.bundle.hlo else None)
    if mod is None:
        return None
    ci = mod.computation_by_name.get(name)
    if ci is None:
        return None
    c = mod.computations[ci]
    f = Fields(f"**computation** `{name}`" + (" (ENTRY)" if c.is_entry else ""), f"computation {name}")
    f.block(shorten(f"{name} {c.signature}", 400))
    f.add("Instructions", str(len(c.instructions)))
    if not cur.maps_at_once(mod):
        f.add("Called by", f"_{INDEXING}_", INDEXING)
        return f.result(rng)
    callers = mod.callers(name)
    if callers:
        f.add("Called by", ", ".join(f"`{x.name}`" for x in callers[:8]) + (" …" if len(callers) > 8 else ""))
    return f.result(rng)


def _hover_source_row(mod: HloModule, kind: str, key: str, rng: Range) -> HoverResult | None:
    if not (key.isascii() and key.isdigit()) or len(key) > 12:
        return None
    frames = stack(mod, int(key)) if kind == "stack_frame" else [fr for fr in [file_location(mod, int(key))] if fr]
    if not frames:
        return None
    f = Fields(f"**{kind.replace('_', ' ')} {key}**", f"{kind} {key}")
    f.add("Source", f"`{frames[0].label()}`")
    if len(frames) > 1:
        f.add("Called from", " ← ".join(f"`{fr.label()}`" for fr in frames[1:8]))
    return f.result(rng)


def _hover_shape(cur: Cursor) -> HoverResult | None:
    """Hover on a shape written anywhere on the line (instruction result, operand, signature, value line)."""
    if cur.analysis.kind not in (kinds.HLO,) + kinds.BUFFER_KINDS:
        return None
    lines = cur.analysis.lines
    if not 0 <= cur.line < len(lines):
        return None
    text = lines[cur.line]
    if len(text) > 100_000:
        text = text[max(0, cur.col - 50_000) : cur.col + 50_000]
        base = max(0, cur.col - 50_000)
    else:
        base = 0
    for m in _SHAPE_AT.finditer(text):
        s, e = m.start() + base, m.end() + base
        if s <= cur.col <= e:
            unpadded, padded, err = size_of_shape(m.group())
            if unpadded is None and err is None:
                return None
            shown = shorten(m.group(), MAX_SHAPE_TEXT)
            f = Fields(f"**shape** `{shown}`", f"shape {shown}")
            if unpadded is not None:
                f.add("Bytes", fmt_bytes(unpadded))
                if padded is not None:
                    f.add("Padded", fmt_bytes(padded))
            else:
                f.add("Bytes", err or "?")
            return f.result(Range(cur.line, s, cur.line, e))
        if s > cur.col:
            break
    return None
