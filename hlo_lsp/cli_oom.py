"""``hlo-lsp oom LOG [--dump DIR]``: XLA's out-of-memory report tied to the dump of the failed compilation.

The dump folder is ``--dump`` or the log's own folder; its module is the after-optimizations HLO (with its buffer
files) whose instructions the report names. Text: one row an entry (size, name, where it is defined, its
allocation, the Python line), then the entries grouped by source line and by op_name, what is padding and what an
argument, and for the short form the total against the memory-usage report's ``Total bytes``. JSON: the contract
of issue 20 (``kind``, ``exceeded_by``, ``entries`` with ``instruction`` / ``allocation`` locations, 1-based
lines, and ``groups``)."""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict

from hlo_lsp.core.kinds import sibling_paths
from hlo_lsp.core.memory.oom import (
    Donation,
    OomEntry,
    OomReport,
    donations,
    dump_modules,
    parse_size,
    pick_module,
    read_oom,
    resolve,
)
from hlo_lsp.core.shapes import human_size
from hlo_lsp.core.workspace import ReadError, Workspace


def _groups(entries: list[OomEntry]) -> list[dict]:
    out = []
    for by, key_of in (("source", lambda e: e.source), ("op_name", lambda e: e.op_name)):
        sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for e in entries:
            if e.section != "allocations":
                continue
            acc = sums[key_of(e) or "(none)"]
            acc[0] += e.size or 0
            acc[1] += 1
        for key, (b, n) in sorted(sums.items(), key=lambda kv: (-kv[1][0], kv[0])):
            out.append({"by": by, "key": key, "bytes": b, "count": n})
    return out


def _entry_json(e: OomEntry, module: str | None, assignment: str | None) -> dict:
    return {
        "rank": e.rank,
        "section": e.section,
        "name": e.name or e.label,
        "size": e.size,
        "shape": e.shape,
        "unpadded_size": parse_size(e.unpadded_text),
        "allocation_type": e.allocation_type,
        "op_name": e.op_name,
        "instruction": {"path": module, "line": e.instruction_line + 1}
        if module and e.instruction_line is not None
        else None,
        "allocation": {"index": e.allocation, "path": assignment, "line": e.allocation_line + 1}
        if assignment and e.allocation is not None and e.allocation_line is not None
        else None,
        "assigned_size": e.assigned_size,
        "source": e.source,
    }


def oom(log: str, dump: str | None, fmt: str) -> int:
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        print(f"hlo-lsp: {log}: {e.strerror or e}", file=sys.stderr)
        return 2
    report = read_oom(text)
    if report is None:
        print(f"hlo-lsp: {log}: no RESOURCE_EXHAUSTED out-of-memory report in this file", file=sys.stderr)
        return 1
    folder = dump or os.path.dirname(os.path.abspath(log))
    module = assignment = None
    total = None
    header: str | None = None
    if os.path.isdir(folder):
        module = pick_module(report, dump_modules(folder))
    if module is not None:
        try:
            bundle = Workspace().bundle(os.path.abspath(module))
            hlo = bundle.hlo.hlo if bundle.hlo is not None else None
            resolve(report, hlo, bundle.buffers)
            if hlo is not None and hlo.header_line is not None:
                header = hlo.lines[hlo.header_line]
            assignment = str(sibling_paths(module).get("assignment") or "") or None
            tables = getattr(bundle.buffers, "memory_report", None) or []
            # the report's ``Total bytes`` of the default memory space (colour 0: HBM)
            total = next((t.total_bytes for t in tables if t.color == 0 and t.total_bytes is not None), None)
        except ReadError as e:
            print(f"hlo-lsp: {e}", file=sys.stderr)
    if fmt == "json":
        data = {
            "kind": report.kind,
            "memory_space": report.memory_space,
            "exceeded_by": report.exceeded_by,
            "used": parse_size(report.used_text),
            "capacity": parse_size(report.capacity_text),
            "required": parse_size(report.required_text),
            "dump": {"module": module, "total_bytes": total},
            "entries": [_entry_json(e, module, assignment) for e in report.entries],
            "groups": _groups(report.entries),
            "donations": [
                {"parameter": d.parameter, "output": d.output.label, "bytes": d.bytes, "shape": d.argument.shape}
                for d in donations(report, header)
            ],
        }
        print(json.dumps(data, indent=1))
        return 0
    print(_text(report, module, total, donations(report, header)))
    return 0


def _text(r: OomReport, module: str | None, total: int | None, donate: list[Donation]) -> str:
    head = f"Out of memory ({r.kind} form) in {r.memory_space or 'HBM'}"
    if r.kind == "long":
        head += f": used {r.used_text} of {r.capacity_text}" + (
            f", over by {r.exceeded_text}" if r.exceeded_text else ""
        )
    else:
        head += f": HLO temporaries {r.required_text} > available {r.capacity_text}"
        if total is not None:
            head += f"; the dump's memory-usage report says Total bytes {total} ({human_size(total)})"
    shown = module
    if module is not None and not os.path.relpath(module).startswith(".."):
        shown = os.path.relpath(module)
    lines = [head, f"dump: {shown or '(no after-optimizations module with buffer files found)'}"]
    for e in r.entries:
        where = f"line {e.instruction_line + 1}" if e.instruction_line is not None else "-"
        alloc = f"alloc {e.allocation}" if e.allocation is not None else ""
        pad = ""
        size, unpadded = e.size, parse_size(e.unpadded_text)
        if size is not None and unpadded is not None and size > unpadded:
            pad = f" (padding {human_size(size - unpadded)})"
        kind = "alloc" if e.section == "allocations" else "arg"
        what = e.name or e.label or "?"
        row = f"  {kind:<5} {e.rank:>3}. {e.size_text:>8}{pad}  {what}  {where}  {alloc}  {e.source or e.op_name or ''}"
        lines.append(row.rstrip())
    for g in _groups(r.entries):
        lines.append(f"  by {g['by']}: {human_size(g['bytes']):>10}  {g['count']:>3}  {g['key']}")
    if donate:
        saved = sum(d.bytes for d in donate)
        lines.append(
            f"  could be donated (donate_argnums), at least {human_size(saved)}: "
            + ", ".join(f"argument {d.parameter} -> {d.output.label}" for d in donate)
        )
    return "\n".join(lines)
