"""XLA's out-of-memory report (kind ``oom``) in the editor: each entry tied to the dump of the compilation that
failed (`Workspace.oom_dump`, found in the background after the report opens).

- **links** (`oom_links`): each ``XLA label`` name to its instruction in the module's after-optimizations HLO;
- **definition** (`oom_definition`), on an entry's name or ``N. Size:`` line: the instruction, the allocation
  header in ``-buffer-assignment.txt`` and the Python line that made it;
- **hover** (`oom_hover`), anywhere on an entry: the report's fields (size, padding, allocation type, op_name),
  then what the dump knows of the value (its allocation, offset, live range, the values sharing its allocation:
  the buffer files' own value hover); on the ``Ran out of memory`` line, the totals against the dump's;
- **outline** (`oom_symbols`): the two lists and their entries.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from hlo_lsp.core import kinds
from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.source import instruction_source
from hlo_lsp.core.memory.oom import OomEntry, OomReport, donations, parse_size
from hlo_lsp.core.shapes import human_size
from hlo_lsp.core.workspace import Analysis, OomDump, ReadError, Workspace
from hlo_lsp.ide.context import Cursor, allocation_location, instruction_definition
from hlo_lsp.ide.hover_buffers import hover_value
from hlo_lsp.ide.hover_fields import fmt_bytes
from hlo_lsp.ide.navigation import source_targets
from hlo_lsp.ide.types import DocumentLink, HoverResult, Location, Symbol

_END = re.compile(r"^\s*=+\s*$")
SECTION_TITLES = {"allocations": "Largest program allocations", "arguments": "Largest program arguments and outputs"}


def _report(ws: Workspace, path: str) -> tuple[Analysis, OomReport] | None:
    try:
        a = ws.analysis(path)
    except ReadError:
        return None
    if a.kind != kinds.OOM or a.oom is None:
        return None
    return a, a.oom


def _dump(ws: Workspace, path: str) -> OomDump | None:
    try:
        return ws.oom_dump(path)
    except ReadError:
        return None


def entry_end(lines, e: OomEntry, next_line: int | None) -> int:
    """The last line of entry ``e``: its row of ``=``, else the line before the next entry (or its own fields)."""
    stop = min(len(lines), next_line if next_line is not None else e.line + 12)
    for ln in range(e.line + 1, stop):
        if _END.match(lines[ln]):
            return ln
    return max(e.line, stop - 1) if next_line is not None else max(e.line, e.label_line or e.line)


def _entry_at(report: OomReport, lines, line: int) -> OomEntry | None:
    starts = [e.line for e in report.entries]
    i = bisect_right(starts, line) - 1
    if i < 0:
        return None
    e = report.entries[i]
    return e if line <= entry_end(lines, e, starts[i + 1] if i + 1 < len(starts) else None) else None


def _name_range(e: OomEntry) -> Range | None:
    span = e.name_span
    if span is None or e.label_line is None:
        return None
    return Range(e.label_line, span[0], e.label_line, span[1])


def _module_cursor(dump: OomDump | None) -> Cursor | None:
    """A cursor on the dump's module (for the buffer files' own hover and the source lookups)."""
    if dump is None or dump.bundle is None:
        return None
    docs = dump.bundle.documents()
    return Cursor(docs[0], dump.bundle, None, 0, 0) if docs else None


def oom_links(ws: Workspace, path: str) -> list[DocumentLink]:
    """A link from each entry's ``XLA label`` name to its instruction in the module's HLO."""
    found, dump = _report(ws, path), _dump(ws, path)
    if found is None or dump is None or dump.bundle is None:
        return []
    out = []
    for e in found[1].entries:
        rng = _name_range(e)
        loc = instruction_definition(dump.bundle, e.name) if rng is not None and e.name else None
        if rng is not None and loc is not None:
            out.append(DocumentLink(rng, loc, f"definition of {e.name}"))
    return out


def oom_definition(ws: Workspace, path: str, line: int, col: int) -> list[Location]:
    """On an entry's name (or its ``N. Size:`` line): its instruction, its allocation header, its Python line."""
    found, dump = _report(ws, path), _dump(ws, path)
    if found is None or dump is None or dump.bundle is None:
        return []
    a, report = found
    e = _entry_at(report, a.lines, line)
    rng = _name_range(e) if e is not None else None
    if e is None or not e.name or not (line == e.line or (rng is not None and line == rng.start_line)):
        return []
    out = []
    loc = instruction_definition(dump.bundle, e.name)
    if loc is not None:
        out.append(loc)
    if e.allocation is not None:
        aloc = allocation_location(dump.bundle, e.allocation)
        if aloc is not None:
            out.append(aloc)
    out += _source(ws, dump, e)
    return out


def _source(ws: Workspace, dump: OomDump, e: OomEntry) -> list[Location]:
    """The Python line of the entry's instruction (its metadata's innermost frame), when the file may be offered."""
    ma = dump.bundle.hlo if dump.bundle is not None else None
    mod = ma.hlo if ma is not None else None
    if ma is None or mod is None or e.instruction_line is None or e.instruction_line >= len(mod.lines):
        return []
    d = parse_instruction_line(mod.lines[e.instruction_line])
    if d is None or dump.bundle is None:
        return []
    return source_targets(Cursor(ma, dump.bundle, None, 0, 0), instruction_source(mod, d), ws.roots)


def oom_hover(ws: Workspace, path: str, line: int, col: int) -> HoverResult | None:
    """On an entry: the report's fields, then the dump's value hover; on the message line: the totals."""
    found = _report(ws, path)
    if found is None:
        return None
    a, report = found
    dump = _dump(ws, path)
    if line == report.line:
        return _hover_totals(a, report, dump)
    e = _entry_at(report, a.lines, line)
    if e is None:
        return None
    title = e.name or e.label or "?"
    where = f"{SECTION_TITLES[e.section]} in {report.memory_space or 'HBM'}"
    md = [f"**{title}** · #{e.rank} of the {where[0].lower() + where[1:]}", ""]
    plain = [f"{title} · #{e.rank} of the {where.lower()}"]

    def add(label: str, value: str) -> None:
        md.append(f"**{label}** {value}  ")
        plain.append(f"{label}: {value.replace('`', '')}")

    size, unpadded = e.size, parse_size(e.unpadded_text)
    add("Size", e.size_text + (f" (≈ {size} bytes)" if size is not None else ""))
    if e.shape:
        add("Shape", f"`{e.shape}`")
    if size is not None and unpadded is not None and size > unpadded:
        add("Padding", f"{human_size(size - unpadded)} (unpadded {e.unpadded_text})")
    if e.allocation_type:
        add("Allocation type", e.allocation_type)
    donated = next((d for d in donations(report, _header(dump)) if d.argument is e), None)
    if donated is not None:
        add(
            "Donation",
            f"not donated, and `{donated.output.label}` has its shape: donating argument {donated.parameter} "
            "(`donate_argnums`) lets that output reuse this buffer",
        )
    if e.op_name:
        add("op_name", f"`{e.op_name}`")
    if e.source:
        add("Source", f"`{e.source}`")
    if dump is None:
        add("Dump", "being read (the module's files beside the report)")
    elif dump.module is None:
        add(
            "Dump", f"no after-optimizations module with buffer files in `{dump.folder}` (setting `hlo.oom.dumpFolder`)"
        )
    else:
        if e.instruction_line is not None:
            add("Defined", f"`{_short(dump.module)}` line {e.instruction_line + 1}")
        if e.allocation is not None:
            add("Allocation", f"{e.allocation} (the value takes {fmt_bytes(e.assigned_size)})")
            others = _sharing(dump, e)
            if others:
                add("Shares it with", others)
        elif e.name:
            add("Dump", "names no such value")
    rng = _name_range(e) if line == e.label_line else None
    rng = rng or Range(line, 0, line, len(a.lines[line]))
    cur = _module_cursor(dump)
    more = hover_value(cur, e.value_key, rng) if cur is not None and e.value_key else None
    if more is not None:
        md += ["", "---", "", more.markdown]
        plain += ["", more.plain]
    return HoverResult("\n".join(md).rstrip(), "\n".join(plain), rng)


SHARING = 4  # largest other values of the allocation named in the hover


def _sharing(dump: OomDump, e: OomEntry) -> str:
    """The other values of the entry's allocation (how many, the largest few with their bytes); "" when alone."""
    bs = dump.bundle.buffers if dump.bundle is not None else None
    alloc = bs.allocation(e.allocation) if bs is not None and e.allocation is not None else None
    if alloc is None:
        return ""
    others = sorted((a for a in alloc.assignments if a.key != e.value_key), key=lambda a: (-a.size, a.key))
    if not others:
        return ""
    named = ", ".join(f"`{a.key}` {human_size(a.size)}" for a in others[:SHARING])
    more = f" and {len(others) - SHARING} more" if len(others) > SHARING else ""
    return f"{len(others)} other value{'s' if len(others) != 1 else ''}: {named}{more}"


def _header(dump: OomDump | None) -> str | None:
    """The dump module's ``HloModule`` line (its ``input_output_alias`` says what is donated already)."""
    mod = dump.bundle.hlo.hlo if dump is not None and dump.bundle is not None and dump.bundle.hlo is not None else None
    if mod is None or mod.header_line is None:
        return None
    return mod.lines[mod.header_line]


def _short(path: str) -> str:
    """The file with its folder's name (``dump/module_0000....txt``): enough to tell dumps apart."""
    return "/".join(path.replace("\\", "/").rsplit("/", 2)[-2:])


def _hover_totals(a: Analysis, report: OomReport, dump: OomDump | None) -> HoverResult:
    space = report.memory_space or "HBM"
    md = [f"**Out of memory** in {space} ({report.kind} form)", ""]
    if report.used_text:
        md.append(f"**Used** {report.used_text} of {report.capacity_text}  ")
    if report.exceeded_text:
        md.append(f"**Over by** {report.exceeded_text} ({fmt_bytes(report.exceeded_by)})  ")
    if report.required_text:
        md.append(f"**HLO temporaries** {report.required_text} > available {report.capacity_text}  ")
    if report.entries:
        allocs, args = len(report.allocations()), len(report.arguments())
        md.append(f"**Entries** {allocs} largest allocations, {args} largest arguments and outputs  ")
    if dump is not None and dump.module is not None:
        md.append(f"**Dump** `{_short(dump.module)}`  ")
        bs = dump.bundle.buffers if dump.bundle is not None else None
        tables = bs.memory_report if bs is not None else []
        total = next((t.total_bytes for t in tables if t.color == 0 and t.total_bytes is not None), None)
        if total is not None:
            md.append(f"**Dump's Total bytes** (memory-usage report, memory space 0) {fmt_bytes(total)}  ")
    text = "\n".join(md).rstrip()
    line = a.lines[report.line]
    return HoverResult(text, text.replace("**", "").replace("`", ""), Range(report.line, 0, report.line, len(line)))


def oom_symbols(ws: Workspace, path: str) -> list[Symbol]:
    """The report's two lists, each entry a child (``1. copy-start.12``, its size as detail)."""
    found = _report(ws, path)
    if found is None:
        return []
    a, report = found
    lines = a.lines
    starts = [e.line for e in report.entries]
    out: list[Symbol] = []
    for section in ("allocations", "arguments"):
        children = []
        for i, e in enumerate(report.entries):
            if e.section != section:
                continue
            end = entry_end(lines, e, starts[i + 1] if i + 1 < len(starts) else None)
            whole = Range(e.line, 0, end, len(lines[end]))
            sel = _name_range(e) or Range(e.line, 0, e.line, len(lines[e.line]))
            detail = e.size_text + (f" · {e.allocation_type}" if e.allocation_type else "")
            children.append(Symbol(f"{e.rank}. {e.name or e.label or '?'}", "variable", whole, sel, detail))
        if children:
            first, last = children[0].range, children[-1].range
            head = max(first.start_line - 1, 0)
            rng = Range(head, 0, last.end_line, last.end_col)
            name = f"{SECTION_TITLES[section]} in {report.memory_space or 'HBM'}"
            out.append(Symbol(name, "namespace", rng, Range(head, 0, head, len(lines[head])), "", children))
    return out
