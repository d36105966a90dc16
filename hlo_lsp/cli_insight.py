"""``hlo-lsp peak DUMP [--top N] [--format text|json]``, ``hlo-lsp peak --diff OLD NEW`` and
``hlo-lsp timeline DUMP -o FILE.html|.svg|.png [--view timeline|heap|both]``.

DUMP is an old single-file buffer assignment or any file of a split set (the module text included); its siblings
are found by stem in its folder. Exit codes: 0 on success, 2 on a usage or I/O error (one line, no traceback).
Nothing is ever written beside the dump: the timeline goes only where ``-o`` says.
"""

from __future__ import annotations

import json
import os
import sys

from hlo_lsp.core.memory.diff import diff_peaks
from hlo_lsp.core.memory.groups import group_rows, group_values
from hlo_lsp.core.memory.heapmap import HeapMap, heap_map, peak_state_json
from hlo_lsp.core.memory.peak import PeakReport, peak_of_bundle
from hlo_lsp.core.memory.values import CATEGORIES, LiveValue
from hlo_lsp.core.shapes import human_size
from hlo_lsp.core.workspace import ReadError, Workspace


class InsightError(Exception):
    """A dump that gives no peak report; the message names the file."""


def load_report(path: str, ws: Workspace | None = None) -> PeakReport:
    """The peak report of the module ``path`` belongs to; InsightError when it has no buffer files."""
    ws = ws or Workspace()
    full = os.path.abspath(path)
    try:
        bundle = ws.bundle(full)
    except ReadError as e:
        raise InsightError(str(e).replace(full, path, 1)) from None
    report = peak_of_bundle(bundle)
    if report is None:
        raise InsightError(
            f"{path}: no buffer-assignment files for this module (dump with "
            "--xla_dump_hlo_as_text to get <stem>-buffer-assignment.txt and -live-range.txt)"
        )
    if report.xla.step is None and not report.allocated.steps:
        raise InsightError(f"{path}: no live ranges in this module's buffer files (HloLiveRange not available?)")
    return report


def _emit(text: str) -> None:
    """Print to stdout; a reader that went away (``| head``) ends the output quietly, without a traceback."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush does not fail again


def _fail(message: str) -> int:
    print(f"hlo-lsp: {message}", file=sys.stderr)
    return 2


def peak(dump: str | None, top: int, fmt: str, diff: list[str] | None = None, group_by: str | None = None) -> int:
    try:
        if diff:
            old, new = (load_report(p) for p in diff)
            d = diff_peaks(old, new)
            _emit(json.dumps(d.as_json(top), indent=1) if fmt == "json" else diff_text(d, top, diff))
            return 0
        if dump is None:
            return _fail("peak: give DUMP, or --diff OLD NEW")
        report = load_report(dump)
    except InsightError as e:
        return _fail(str(e))
    if fmt == "json":  # the data: every value, whatever --top (which shapes the text view)
        data = report.as_json()
        state = peak_state_json(heap_map(report, budget=0), report.space_name)
        data["memory_spaces"] = state.pop("memory_spaces")
        data["allocated"].update(state)
        if group_by:
            data["group_by"] = group_by
            data["groups"] = [g.as_json() for g in group_values(report.xla.live, group_by)]
        _emit(json.dumps(data, indent=1))
    else:
        _emit(peak_text(report, top, group_by))
    return 0


def timeline(dump: str, output: str, top: int, view: str = "timeline", max_blocks: int = 4000) -> int:
    from hlo_lsp.charts import ChartError, write_timeline

    try:
        report = load_report(dump)
        write_timeline(report, output, title=os.path.basename(dump), top=top, view=view, budget=max(max_blocks, 0))
    except (InsightError, ChartError) as e:
        return _fail(str(e))
    _emit(output)
    return 0


# ------------------------------------------------------------------------------------------------ text


def _rows(values: list[LiveValue], top: int, padding: bool) -> list[str]:
    out = []
    for v in values[:top] if top else values:
        pad = f" (+{human_size(v.padding)} padding)" if padding and v.padding else ""
        src = v.source.label() if v.source else ""
        op = v.source.op_name if v.source and v.source.frames and v.source.op_name else ""
        where = "  ".join(x for x in (src, op) if x)
        alloc = "-" if v.allocation is None else str(v.allocation)
        out.append(
            f"  {human_size(v.bytes):>10}  {v.key:<32} {(v.shape or '?'):<28} alloc {alloc:>3}{pad}"
            + (f"  {where}" if where else "")
        )
    if top and len(values) > top:
        rest = sum(v.bytes for v in values[top:])
        out.append(f"  {human_size(rest):>10}  ... {len(values) - top} more values")
    return out


def peak_text(r: PeakReport, top: int = 20, group_by: str | None = None) -> str:
    """The report as the lines ``hlo-lsp peak`` prints (``top`` rows of each list, then how many were left out;
    with ``group_by``, the XLA peak's values grouped by that key after its rows)."""
    x, a = r.xla, r.allocated
    at = r.sequence[x.step] if x.step is not None and x.step < len(r.sequence) else ""
    dump = ""
    if r.dump_peak_step is not None:
        dump = f"; the dump says step {r.dump_peak_step}" + (f", {r.dump_total} bytes" if r.dump_total else "")
    lines = [
        f"XLA peak: step {x.step}"
        + (f" ({at})" if at else "")
        + f", {human_size(x.bytes)} ({x.bytes} bytes) in {len(x.live)} live values{dump}"
    ]
    lines += _rows(x.live, top, padding=False)
    if group_by:
        groups = group_values(x.live, group_by)
        lines.append("")
        lines.append(f"By {group_by} ({len(groups)} groups):")
        lines += group_rows(groups, top)
    if a.peak_step is not None:
        parts = [
            f"{c} {human_size(a.by_category[c][a.peak_step])}" for c in CATEGORIES if a.by_category[c][a.peak_step]
        ]
        at = r.sequence[a.peak_step] if a.peak_step < len(r.sequence) else ""
        lines.append("")
        lines.append(
            f"Allocated: peak at step {a.peak_step}"
            + (f" ({at})" if at else "")
            + f", {human_size(a.peak_bytes)} ({a.peak_bytes} bytes) reserved: "
            + ", ".join(parts)
        )
        lines += _rows(a.live, top, padding=True)
        lines += heap_text(heap_map(r, budget=0), top)
    f = r.figures
    if f is not None and f.reasons:
        lines.append("")
        lines.append(
            f"Why XLA peak ({human_size(f.xla_bytes)}), allocated peak ({human_size(f.allocated_bytes)}) and "
            f"Total bytes ({human_size(f.total_bytes)}) differ:"
        )
        lines += [f"  - {why}" for why in f.reasons]
    for p in r.problems:
        lines.append(f"note: {p}")
    return "\n".join(lines)


def heap_text(hm: HeapMap, top: int) -> list[str]:
    """The allocations at the allocated peak: fragmentation, padding, thread-local bytes, the memory spaces
    (a table when there are several) and the ``top`` allocations with the most reserved bytes unused."""
    h = human_size
    lines = [
        "",
        f"At the allocated peak (step {hm.peak_step}): fragmentation {h(hm.fragmentation)} (bytes of allocations "
        f"holding no live value), padding {h(hm.padding)} (assigned beyond the shapes' bytes)",
    ]
    if len(hm.spaces) > 1:
        lines.append(
            f"  {'memory space':<16} {'allocs':>6} {'Total bytes':>12} {'held at peak':>13} {'fragmented':>11} "
            f"{'padding':>9}  own peak"
        )
        for s in hm.spaces:
            own = f"{h(s.peak_bytes)} at step {s.peak_step}" if s.peak_step is not None else "-"
            lines.append(
                f"  {s.label():<16} {s.allocations:>6} {h(s.total_bytes):>12} {h(s.held_at_peak):>13} "
                f"{h(s.fragmentation):>11} {h(s.padding):>9}  {own}"
            )
    frag = sorted((a for a in hm.allocations if a.fragmentation > 0), key=lambda a: (-a.fragmentation, a.index))
    shown = frag[:top] if top else frag
    for a in shown:
        space = f"; {hm.space_of(a.color)}" if len(hm.spaces) > 1 else ""
        lines.append(
            f"  {h(a.fragmentation):>10}  unused of alloc {a.index:>3} ({h(a.size)}, {a.kinds}{space}): "
            f"{h(a.held_at_peak)} held"
        )
    if len(frag) > len(shown):
        rest = sum(a.fragmentation for a in frag[len(shown) :])
        lines.append(f"  {h(rest):>10}  ... {len(frag) - len(shown)} more allocations")
    return lines


def diff_text(d, top: int, paths: list[str]) -> str:
    sign = "+" if d.delta >= 0 else "-"
    lines = [
        f"peak: {human_size(d.old_bytes)} at step {d.old_step} -> {human_size(d.new_bytes)} at step "
        f"{d.new_step} ({sign}{human_size(abs(d.delta))})",
        f"  old: {paths[0]}",
        f"  new: {paths[1]}",
    ]
    counts: dict[str, int] = {}
    for p in d.pairs:
        counts[p.status] = counts.get(p.status, 0) + 1
    lines.append("  values: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    changed = [r for r in d.rows if r.status != "same"]
    for row in changed[:top] if top else changed:
        s = "+" if row.delta >= 0 else "-"
        names = ", ".join(row.new_values or row.old_values)
        label = f"{row.old_label} -> {row.label}" if row.old_label else row.label
        lines.append(f"  {row.status:<9} {s}{human_size(abs(row.delta)):>10}  {label}  [{names}]")
        both = [
            p
            for p in row.pairs
            if p.old is not None and p.new is not None and p.status in ("grew", "shrank", "changed")
        ]
        for p in both[:3]:  # a changed value shows both sides
            assert p.old is not None and p.new is not None
            lines.append(
                f"      {p.old.key} {p.old.shape or '?'} {human_size(p.old.bytes)} -> "
                f"{p.new.key} {p.new.shape or '?'} {human_size(p.new.bytes)}"
            )
    if not changed:
        lines.append("  no change in what is live at the peak")
    return "\n".join(lines)
