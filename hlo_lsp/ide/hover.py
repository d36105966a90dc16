"""Hover: what a name under the cursor is, how big it is, where it sits and when it is live.

One function per target: a buffer value (wherever it appears), an allocation header, an HLO instruction
(definition or use, with its buffer facts when the folder holds the module's buffer assignment), a called
computation (its signature), a shape (unpadded and padded bytes), and source-table ids. Each renders Markdown
as a list of labelled fields ("**Size** 32768 bytes (32.0KiB)") and a plain-text twin for clients that ask.
"""

from __future__ import annotations

import re

from hlo_lsp.core import kinds, shapes
from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.instructions import Instruction
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.rules.donation import donation_hints
from hlo_lsp.core.hlo.source import file_location, instruction_source, stack
from hlo_lsp.core.memory.allocated import union_bytes
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.context import Cursor, cursor
from hlo_lsp.ide.lens import report_for
from hlo_lsp.ide.passes import hover_section
from hlo_lsp.ide.peak_groups import groups_hover
from hlo_lsp.ide.types import HoverResult

MAX_DEF_TEXT = 160
MAX_SHAPE_TEXT = 400  # a hover shows at most this much of a shape (100,000 dimensions would be 400 KB)
# a type name starts only after a non-word character and dims/layouts stop at the next bracket, so finditer is
# linear on a 100 KB run of letters or of unclosed 'f32[' (it was quadratic: a minute on one hover)
_SHAPE_AT = re.compile(r"(?:(?<![a-z0-9_])[a-z][a-z0-9]*\[[^\][]*\](?:\{[^{}]*\})?|\((?:[^()]|\([^()]*\))*\))")

DONATION_NOW_LIMIT = 2_000_000  # above this a module's donation hints come from its verifier run only


def fmt_bytes(n: int | None) -> str:
    """``32768 bytes (32.0KiB)``; ``?`` for an unknown size."""
    if n is None:
        return "?"
    return f"{n} bytes ({shapes.human_size(n)})" if n >= 1024 else f"{n} bytes"


def size_of_shape(text: str | None, pointer_size: int = 8) -> tuple[int | None, int | None, str | None]:
    """(unpadded bytes, padded bytes when tiling changes it, error) of a shape string."""
    if not text:
        return None, None, None
    sh = shapes.parse_shape(text)
    if sh is None:
        return None, None, None
    unpadded = shapes.byte_size(sh, pointer_size)
    if isinstance(unpadded, shapes.SizeError):
        return None, None, unpadded.message
    padded = shapes.padded_byte_size(sh, pointer_size) if shapes.is_tiled(sh) else None
    if isinstance(padded, shapes.SizeError) or padded == unpadded:
        padded = None
    return unpadded, padded, None


def shorten(text: str, limit: int = MAX_DEF_TEXT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Fields:
    """Labelled lines rendered as Markdown and as plain text."""

    def __init__(self, title_md: str, title_plain: str):
        self.md = [title_md, ""]
        self.plain = [title_plain]

    def add(self, label: str, md: str, plain: str | None = None) -> None:
        self.md.append(f"**{label}** {md}".rstrip() + "  ")
        self.plain.append(f"{label}: {plain if plain is not None else md.replace('`', '')}".rstrip())

    def block(self, code: str) -> None:
        self.md += ["", "```hlo", code, "```"]
        self.plain.append(code)

    def result(self, rng: Range) -> HoverResult:
        return HoverResult("\n".join(self.md).rstrip(), "\n".join(self.plain), rng)


def hover(ws: Workspace, path: str, line: int, col: int) -> HoverResult | None:
    """Hover at (line, col); None when nothing we know is under the cursor."""
    cur = cursor(ws, path, line, col)
    if cur is None:
        return None
    o = cur.occurrence
    if o is None:
        return _hover_value_id(cur) or _hover_peak_line(cur) or _hover_shape(cur)
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


_VALUE_ID = re.compile(r"<(\d+) ")


def _hover_value_id(cur: Cursor) -> HoverResult | None:
    """On the numeric id of ``<820 name @0>`` (assignment listing, Used values): the hover of the value named
    right after it, over the id's range."""
    lines = cur.analysis.lines
    text = lines[cur.line] if 0 <= cur.line < len(lines) else ""
    for m in _VALUE_ID.finditer(text):
        if m.start(1) <= cur.col <= m.end(1):
            o = cur.index.at(cur.line, m.end())
            if o is not None and o.kind == "value":
                return hover_value(cur, o.key, Range(cur.line, m.start(1), cur.line, m.end(1)))
            return None
    return None


def _hover_peak_line(cur: Cursor) -> HoverResult | None:
    """On the ``Live ranges at N (peak):`` line: the values live there grouped by source line, op_name, dtype,
    category and argument (`peak_groups`)."""
    doc = cur.analysis.buffers
    if doc is None or doc.peak_line != cur.line:
        return None
    report = report_for(cur.bundle)
    if report is None:
        return None
    lines = cur.analysis.lines
    return groups_hover(report, Range(cur.line, 0, cur.line, len(lines[cur.line]) if cur.line < len(lines) else 0))


def _allocation_kind(alloc) -> str:
    k = alloc.kinds()
    if alloc.parameter is not None and alloc.parameter_shape_index:
        k = [
            f"parameter {alloc.parameter} at ShapeIndex {{{','.join(map(str, alloc.parameter_shape_index))}}}"
            if x.startswith("parameter")
            else x
            for x in k
        ]
    return ", ".join(k) if k else "temp"


def _step_name(bs, step: int) -> str | None:
    seq = bs.sequence
    if 0 <= step < len(seq) and seq[step].step == step:
        return seq[step].name
    return None


def _live_range_fields(f: _Fields, bs, v, partial: bool = False) -> None:
    if v.live_range is None:
        f.add(
            "Live range",
            "not read yet (a large sibling file is still loading)" if partial else "no live range in this dump",
        )
        return
    s, e = v.live_range

    def end_name(step: int) -> str:
        name = _step_name(bs, step)
        if name is not None:
            return f"`{name}`"
        return "end of program" if step == bs.live_range_max else f"step {step}"

    # intervals are code spans: a bare `[70, 73]` is a Markdown shortcut link, which Neovim's hover conceals
    f.add("Live range", f"`[{s}, {e}]` ({end_name(s)} … {end_name(e)})")
    if bs.peak_step is not None:
        live = s <= bs.peak_step <= e
        f.add("At XLA peak", f"{'live' if live else 'not live'} at step {bs.peak_step}")


def hover_value(cur: Cursor, key: str, rng: Range) -> HoverResult | None:
    bs = cur.bundle.buffers
    v = bs.value(key) if bs is not None else None
    if bs is None or v is None:
        return None
    ident = f" · id {v.value_id}" if v.value_id is not None else ""
    f = _Fields(f"**value** `{key}`{ident}", f"value {key}{ident}")
    if v.shape:
        f.add("Shape", f"`{shorten(v.shape, MAX_SHAPE_TEXT)}`")
    unpadded, padded, err = size_of_shape(v.shape)
    if v.size is not None:
        f.add("Size", fmt_bytes(v.size))
    if unpadded is not None and (unpadded != v.size or padded is not None):
        extra = f", padded {fmt_bytes(padded)}" if padded is not None else ""
        f.add("Unpadded", fmt_bytes(unpadded) + extra)
    if err:
        f.add("Shape size", err)
    if v.allocation is not None:
        alloc = bs.allocation(v.allocation)
        kind = _allocation_kind(alloc) if alloc is not None else "?"
        f.add("Allocation", f"{v.allocation} ({kind})")
        if v.offset is not None and v.size is not None:
            f.add("Offset", f"{v.offset} · bytes `[{v.offset}, {v.offset + v.size})`")
    if v.color:
        f.add("Color", str(v.color))
    _live_range_fields(f, bs, v, cur.bundle.partial)
    if v.positions:
        f.add(
            "Positions",
            ", ".join(f"`{p.instruction}{_idx(p.index)}`" for p in v.positions[:8])
            + (" …" if len(v.positions) > 8 else ""),
        )
    if v.uses:
        f.add(
            "Uses",
            ", ".join(f"`{u.instruction}` operand {u.operand}" for u in v.uses[:8]) + (" …" if len(v.uses) > 8 else ""),
        )
    src_text = _defining_text(cur, v.instruction) or v.from_instruction
    if src_text:
        f.add("Defined by", "")
        f.block(shorten(src_text))
    _source_fields(f, cur, v.instruction)
    return f.result(rng)


def _idx(index) -> str:
    return "" if index is None else " {" + ",".join(map(str, index)) + "}"


def _defining_text(cur: Cursor, instruction: str) -> str | None:
    h = cur.bundle.hlo
    if h is None or h.hlo is None:
        return None
    ins = h.hlo.instruction(instruction)
    return h.hlo.lines[ins.line].strip() if ins is not None else None


def _source_fields(f: _Fields, cur: Cursor, instruction: str) -> None:
    """op_name and the Python source line of ``instruction``, from the module's HLO text when present."""
    h = cur.bundle.hlo
    if h is None or h.hlo is None:
        return
    ins = h.hlo.instruction(instruction)
    if ins is None:
        return
    d = parse_instruction_line(h.hlo.lines[ins.line])
    if d is None:
        return
    op = d.metadata.get("op_name")
    if op is not None:
        f.add("op_name", f"`{op.text}`")
    frames = instruction_source(h.hlo, d)
    if frames:
        f.add("Source", f"`{frames[0].label()}`")
        if len(frames) > 1:
            f.add("Called from", " ← ".join(f"`{fr.label()}`" for fr in frames[1:6]))


def hover_allocation(cur: Cursor, index: int, rng: Range) -> HoverResult | None:
    bs = cur.bundle.buffers
    alloc = bs.allocation(index) if bs is not None else None
    if bs is None or alloc is None:
        return None
    f = _Fields(f"**allocation {index}**", f"allocation {index}")
    f.add("Size", fmt_bytes(alloc.size))
    f.add("Kind", _allocation_kind(alloc))
    shape = alloc.parameter_shape or alloc.output_shape
    if shape:
        f.add("Shape", f"`{shorten(shape, MAX_SHAPE_TEXT)}`")
    f.add("Values", str(len(alloc.assignments)))
    if bs.peak_step is not None:
        live = [bs.value(a.key) for a in alloc.assignments]
        used = union_bytes(
            (v.offset, v.offset + v.size)
            for v in live
            if v is not None
            and v.live_range
            and v.offset is not None
            and v.size is not None
            and v.live_range[0] <= bs.peak_step <= v.live_range[1]
        )
        f.add("In use at XLA peak", f"{fmt_bytes(used)} of {fmt_bytes(alloc.size)} (step {bs.peak_step})")
    if bs.total_bytes_used:
        f.add("Share of total", f"{100.0 * alloc.size / bs.total_bytes_used:.1f}% of {fmt_bytes(bs.total_bytes_used)}")
    return f.result(rng)


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
        f = _Fields(f"**instruction** `{name}`", f"instruction {name}")
        for v in vals:
            f.add(f"`{v.key}`", f"{fmt_bytes(v.size)} in allocation {v.allocation}", f"{v.key} {v.size} bytes")
        return f.result(rng)
    scope = mod.computation_at_line(cur.line) if cur.analysis.hlo is mod else None
    ins = mod.instruction(name, scope)
    if ins is None:
        return None
    return _instruction_fields(cur, mod, ins).result(rng)


def _instruction_fields(cur: Cursor, mod: HloModule, ins: Instruction) -> _Fields:
    d = parse_instruction_line(mod.lines[ins.line])
    comp = mod.computation_of(ins)
    where = f" in `{comp.name}`" if comp else ""
    f = _Fields(f"**{ins.opcode}** `%{ins.name}`{where}", f"{ins.opcode} %{ins.name}{where.replace('`', '')}")
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
    f.add("Users", str(len(mod.users(ins.name))))
    if ins.called:
        f.add("Calls", ", ".join(f"`{c}`" for c in ins.called))
    if d is not None:
        op_name = d.metadata.get("op_name")
        if op_name is not None:
            f.add("op_name", f"`{op_name.text}`")
        frames = instruction_source(mod, d)
        if frames:
            f.add("Source", f"`{frames[0].label()}`")
            if len(frames) > 1:
                f.add("Called from", " ← ".join(f"`{fr.label()}`" for fr in frames[1:6]))
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
    f = _Fields(f"**computation** `{name}`" + (" (ENTRY)" if c.is_entry else ""), f"computation {name}")
    f.block(shorten(f"{name} {c.signature}", 400))
    f.add("Instructions", str(len(c.instructions)))
    callers = mod.callers(name)
    if callers:
        f.add("Called by", ", ".join(f"`{x.name}`" for x in callers[:8]) + (" …" if len(callers) > 8 else ""))
    return f.result(rng)


def _hover_source_row(mod: HloModule, kind: str, key: str, rng: Range) -> HoverResult | None:
    if not key.isdigit() or len(key) > 12:
        return None
    frames = stack(mod, int(key)) if kind == "stack_frame" else [fr for fr in [file_location(mod, int(key))] if fr]
    if not frames:
        return None
    f = _Fields(f"**{kind.replace('_', ' ')} {key}**", f"{kind} {key}")
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
            f = _Fields(f"**shape** `{shown}`", f"shape {shown}")
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
