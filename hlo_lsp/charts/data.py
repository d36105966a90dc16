"""What the memory charts draw, computed once for every renderer (plotly, matplotlib, the static page).

- `TimelineData`: bytes reserved at each step by category (the allocated view, where an entry parameter's
  allocation is held whole), their total, Total bytes, both peaks with the instruction scheduled there, and the
  largest values at the allocated peak.
- `HeapData`: the heap map (`core.memory.heapmap`) as rectangles: one panel per memory space, each drawn
  allocation a grey band (its bytes, stacked) and each drawn value a rectangle over its live range at its offset,
  coloured by category, with the hover text (value, shape, bytes, live range with the instructions at both ends,
  source line, padding); the panel's title holds the space's figures at the allocated peak.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from hlo_lsp.core.memory.heapmap import HeapAllocation, HeapMap, MemorySpace
from hlo_lsp.core.memory.peak import PeakReport
from hlo_lsp.core.memory.values import CATEGORIES
from hlo_lsp.core.shapes import human_size

FORMATS = ("html", "svg", "png")
VIEWS = ("timeline", "heap", "both")
COLORS = {
    "parameter": "#4c78a8",
    "output": "#f58518",
    "constant": "#9d755d",
    "temporary": "#54a24b",
    "thread-local": "#b279a2",
}
BAND = "#e4e4e4"  # an allocation's bytes holding no live value
# hlo-lsp is installed from a clone (it is on no package index), so the extra is named from there
CHARTS_INSTALL = (
    "run pip install '.[charts]' in the hlo-lsp clone, with the pip of that Python "
    "(installed with pipx: pipx inject hlo-lsp plotly matplotlib)"
)
NAME_CHARS = 32  # an instruction name on the step axis is cut to this


class ChartError(Exception):
    """A chart that cannot be written (unknown format or view, missing extra, I/O); the message is one line."""


@dataclass(slots=True)
class TimelineData:
    steps: list[int]
    series: dict[str, list[int]]  # category -> bytes per step (only categories that hold anything)
    total: list[int]  # bytes reserved per step (the sum of the series)
    labels: list[str]  # instruction scheduled at each step
    xla_step: int | None
    xla_bytes: int
    allocated_step: int | None
    allocated_bytes: int
    total_bytes: int  # every allocation whole
    top: list[tuple[str, int, str]]  # (value, bytes, source) at the allocated peak, largest first

    def name_at(self, step: int | None) -> str:
        """The instruction at ``step``, cut to `NAME_CHARS`; "" when unknown."""
        if step is None or not 0 <= step < len(self.labels):
            return ""
        name = self.labels[step]
        return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def timeline_data(report: PeakReport, top: int = 10) -> TimelineData:
    view = report.allocated
    steps = list(range(view.steps))
    series = {c: list(view.by_category[c]) for c in CATEGORIES if any(view.by_category[c])}
    labels = [report.sequence[t] if t < len(report.sequence) else "" for t in steps]
    tops = [(v.key, v.bytes, v.source.label() if v.source else "") for v in view.live[:top]]
    f = report.figures
    total_bytes = f.total_bytes if f is not None else 0
    return TimelineData(
        steps,
        series,
        list(view.total),
        labels,
        report.xla.step,
        report.xla.bytes,
        view.peak_step,
        view.peak_bytes,
        total_bytes,
        tops,
    )


def peak_text(data: TimelineData) -> list[str]:
    """The lines beside (or under) the timeline: both peaks, Total bytes and the largest values at the peak."""
    lines = [
        f"XLA peak: step {data.xla_step} ({data.name_at(data.xla_step)}), {human_size(data.xla_bytes)} live "
        "(as XLA prints it)",
        f"allocated peak: step {data.allocated_step} ({data.name_at(data.allocated_step)}), "
        f"{human_size(data.allocated_bytes)} reserved of Total bytes {human_size(data.total_bytes)}; there:",
    ]
    for name, b, src in data.top:
        lines.append(f"{human_size(b):>10}  {name}" + (f"  ({src})" if src else ""))
    return lines


def step_ticks(n: int, marks: list[tuple[int, str]], count: int = 7) -> tuple[list[float], list[str]]:
    """Ticks of a step axis of ``n`` steps: round numbers, and each of ``marks`` (step, label) with its label,
    the round numbers too close to a mark dropped so labels do not collide."""
    step, k = 1, 0
    while n / step > count:
        k += 1
        step = (1, 2, 5)[k % 3] * 10 ** (k // 3)
    vals: list[float] = []
    text: list[str] = []
    for x in range(0, n + 1, step):
        if all(abs(x - m) > 0.06 * n for m, _ in marks):
            vals.append(x)
            text.append(str(x))
    for m, label in marks:
        vals.append(m + 0.5)
        text.append(label)
    return vals, text


def peak_marks(
    data_steps: int, allocated: int | None, xla: int | None, name_at: Callable[[int | None], str]
) -> list[tuple[int, str]]:
    """(step, label) of the peaks for the step axis: the allocated peak with its instruction, XLA's too when it
    is far enough away to be read apart, else named with it."""
    marks: list[tuple[int, str]] = []
    if allocated is not None:
        label = f"{allocated}: {name_at(allocated)}"
        if xla is not None and xla != allocated and abs(xla - allocated) <= 0.12 * max(data_steps, 1):
            label += f" (XLA peak {xla})"
        marks.append((allocated, label))
    if xla is not None and xla != allocated and not (marks and "XLA peak" in marks[0][1]):
        marks.append((xla, f"{xla}: {name_at(xla)}"))
    return marks


# ------------------------------------------------------------------------------------------------ heap map


@dataclass(frozen=True, slots=True)
class Rect:
    x0: float
    x1: float
    y0: float
    y1: float
    category: str
    text: str  # hover lines, "\n"-separated


@dataclass(slots=True)
class HeapPanel:
    title: str  # the memory space and its figures at the allocated peak
    height: int  # bytes stacked (its drawn allocations)
    bands: list[Rect] = field(default_factory=list)
    rects: list[Rect] = field(default_factory=list)
    ticks: list[tuple[float, str]] = field(default_factory=list)  # (y, allocation label) of the larger bands
    main: bool = False  # the largest space (drawn taller)


@dataclass(slots=True)
class HeapData:
    steps: int
    peak_step: int | None
    xla_step: int | None
    panels: list[HeapPanel]
    summary: str  # fragmentation and padding in all
    note: str  # what is not drawn ("" when everything is)
    name_at: Callable[[int | None], str]  # step -> the instruction there (for the axis)

    def categories(self) -> list[str]:
        """The categories drawn, in legend order."""
        seen = {r.category for p in self.panels for r in p.rects}
        return [c for c in COLORS if c in seen]


def heap_data(report: PeakReport, hm: HeapMap, timeline: TimelineData) -> HeapData:
    h = human_size
    panels = []
    biggest = max(hm.spaces, key=lambda s: s.total_bytes, default=None)
    for space in hm.spaces:
        drawn = hm.drawn.get(space.color, [])
        if not drawn:
            continue
        panel = HeapPanel(_space_title(space, hm), drawn[-1].base + drawn[-1].size, main=space is biggest)
        for a in drawn:
            _panel_allocation(panel, a, report, hm.steps, space)
        panels.append(panel)
    summary = (
        f"at the allocated peak (step {hm.peak_step}): {h(hm.peak_bytes)} held, fragmentation "
        f"{h(hm.fragmentation)} (reserved, no live value), padding {h(hm.padding)}"
    )
    return HeapData(hm.steps, hm.peak_step, hm.xla_step, panels, summary, hm.left_out_text(), timeline.name_at)


def _space_title(s: MemorySpace, hm: HeapMap) -> str:
    h = human_size
    return (
        f"{s.label()}: Total bytes {h(s.total_bytes)} in {s.allocations} allocations; at step {hm.peak_step} "
        f"{h(s.held_at_peak)} held, {h(s.fragmentation)} fragmented, {h(s.padding)} padding"
    )


def _panel_allocation(panel: HeapPanel, a: HeapAllocation, report: PeakReport, steps: int, space: MemorySpace):
    h = human_size
    base = a.base
    band_text = (
        f"allocation {a.index} ({a.kinds}), {h(a.size)} in {space.label()}\n"
        f"{a.values} values with a live range"
        + (f", {a.left_out} not drawn" if a.left_out else "")
        + f"\nat the allocated peak: {h(a.held_at_peak)} held, {h(a.fragmentation)} unused"
        + (f", {h(a.padding_at_peak)} padding" if a.padding_at_peak else "")
    )
    panel.bands.append(Rect(0, steps, base, base + a.size, a.category, band_text))
    if panel.height and a.size >= 0.045 * panel.height:
        panel.ticks.append((base + a.size / 2, f"alloc {a.index} ({h(a.size)})"))
    seq = report.sequence
    sources = report.sources
    for b in a.blocks:
        src = sources.of(b.instruction) if sources is not None else None
        ends = [seq[t] if 0 <= t < len(seq) and seq[t] else f"step {t}" for t in (b.start, b.end)]
        lines = [
            f"{b.key}  {b.shape or ''}".rstrip(),
            f"{h(b.size)} at bytes [{b.offset}, {b.offset + b.size}) of allocation {a.index} ({a.category})",
            f"live {b.start}–{b.end} ({ends[0]} … {ends[1]})",
        ]
        if src is not None and src.label():
            lines.append(f"source: {src.label()}")
        if b.padding:
            lines.append(f"padding: {h(b.padding)}")
        panel.rects.append(
            Rect(b.start, b.end + 1, base + b.offset, base + b.offset + b.size, a.category, "\n".join(lines))
        )


# ------------------------------------------------------------------------------------------------ files


def format_of(path: str) -> str:
    """``html``, ``svg`` or ``png`` from the file name; ChartError for anything else."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext == "htm":
        ext = "html"
    if ext not in FORMATS:
        raise ChartError(f"{path}: unknown chart format (use .html, .svg or .png)")
    return ext


def cache_dir() -> str:
    """Where the server puts charts: ``$XDG_CACHE_HOME/hlo-lsp/timelines`` (``~/.cache/...``), else a folder in
    the temp dir; never a dump's folder."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for root in (os.path.join(base, "hlo-lsp", "timelines"), os.path.join(tempfile.gettempdir(), "hlo-lsp-timelines")):
        try:
            os.makedirs(root, exist_ok=True)
            if os.access(root, os.W_OK):
                return root
        except OSError:
            continue
    return tempfile.mkdtemp(prefix="hlo-lsp-")


def cached_chart_path(dump_path: str, fmt: str = "html", view: str = "timeline") -> str:
    """The cache file for the chart of ``dump_path`` (one per dump, view and format; ``html`` for an unknown
    format)."""
    fmt = fmt if fmt in FORMATS else "html"
    digest = hashlib.sha1(dump_path.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    stem = os.path.basename(dump_path).removesuffix(".txt")[:80]
    suffix = "" if view == "timeline" else f"-{view}"
    return os.path.join(cache_dir(), f"{stem}-{digest}{suffix}.{fmt}")


def html_page(title: str, body: list[str]) -> str:
    """A page of ``body``'s pieces: white, whatever the editor's theme (a webview shows it as it is)."""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>'
        f"{escape(title or 'Memory')}</title></head>"
        '<body style="font-family:DejaVu Sans,Arial,sans-serif;background:#fff;color:#222;margin:10px">'
        + "".join(body)
        + "</body></html>\n"
    )


def heap_note(heap: HeapData) -> str:
    """The heap map's figures at the peak and what it left out, as a paragraph."""
    return f"<p>{escape(heap.summary)}" + (f"<br>{escape(heap.note)}" if heap.note else "") + "</p>"


def escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def tick_step(top: int) -> int:
    """The smallest power of two that puts at most 8 ticks below ``top`` (so ticks read 4.00MiB, 8.00MiB...)."""
    step = 1
    while top / step > 8:
        step *= 2
    return step
