"""The printed charts (matplotlib, SVG or PNG at 2x scale) and the static page (an HTML page of SVG written with
no third-party package, for a server without the charts extra, such as the one bundled in the VS Code
extension).

The printed chart is sized to be read where it is shown: 10 inches wide at 200 dpi (a 2000-pixel PNG), text of
10 to 13 points, so a README that shows it 900 pixels wide still prints the text at 11 pixels or more. The
timeline sits on top, the heap map's memory spaces below it sharing its step axis, the peak's values as text at
the bottom. The static page draws the same with SVG rectangles; hovering one shows its text (a small script, and
each rectangle's ``<title>`` where scripts are off).
"""

from __future__ import annotations

from typing import Any

from hlo_lsp.charts.data import (
    BAND,
    CHARTS_INSTALL,
    COLORS,
    ChartError,
    HeapData,
    HeapPanel,
    TimelineData,
    escape,
    heap_note,
    html_page,
    peak_marks,
    peak_text,
    step_ticks,
    tick_step,
)
from hlo_lsp.core.shapes import human_size

DPI = 200  # 2x of matplotlib's 100: a sharp PNG on a high-density screen, readable scaled down to 900 px
WIDTH = 10.0  # inches


def write_printed(path: str, fmt: str, title: str, timeline: TimelineData | None, heap: HeapData | None) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ChartError(
            f"SVG/PNG charts need matplotlib, which the Python running hlo-lsp lacks: {CHARTS_INSTALL}"
        ) from None
    panels = heap.panels if heap is not None else []
    rows: list[tuple[str, float]] = []
    if timeline is not None:
        rows.append(("timeline", 3.6))
    if panels:
        rows.append(("legend", 0.35 if timeline is not None else 0.7))
    rows += [("heap", 3.4 if p.main else 1.4) for p in panels]
    text = peak_text(timeline) if timeline is not None else []
    if heap is not None:
        text += [heap.summary] + ([heap.note] if heap.note else [])
    text = [piece for line in text for piece in _wrap(line, 100)]
    if text:
        rows.append(("text", 0.19 * len(text) + 0.3))
    if not rows:
        raise ChartError("no buffer is live at any step: nothing to draw")
    style: Any = {
        "font.size": 11,
        "axes.titlesize": 11.5,
        "xtick.labelsize": 10,
        "ytick.labelsize": 10,
        "legend.fontsize": 10,
    }
    with matplotlib.rc_context(style):
        fig = plt.figure(figsize=(WIDTH, sum(h for _, h in rows) + 0.6))
        try:
            grid = fig.add_gridspec(len(rows), 1, height_ratios=[h for _, h in rows])
            axes: list = []  # the plots, sharing the step axis
            heap_panels = iter(panels)
            for i, (kind, _) in enumerate(rows):
                ax = fig.add_subplot(grid[i, 0], sharex=axes[0] if axes and kind in ("timeline", "heap") else None)
                if kind == "timeline" and timeline is not None:
                    _timeline_axes(ax, timeline)
                elif kind == "heap" and heap is not None:
                    _heap_axes(ax, next(heap_panels), heap)
                elif kind == "legend" and heap is not None:
                    ax.axis("off")
                    handles = [matplotlib.patches.Patch(color=COLORS[c], label=c) for c in heap.categories()]
                    handles.append(matplotlib.patches.Patch(color=BAND, label="reserved, no live value"))
                    if timeline is None:  # the peaks' lines are named in the timeline's legend otherwise
                        handles += _peak_handles(matplotlib, heap.peak_step, heap.xla_step)
                    ax.legend(
                        handles=handles,
                        loc="center left",
                        ncol=min(len(handles), 4),
                        frameon=False,
                        title="heap map:",
                        alignment="left",
                    )
                    continue
                else:
                    ax.axis("off")
                    ax.text(0, 1, "\n".join(text), family="monospace", fontsize=9.5, va="top")
                    continue
                axes.append(ax)
            marks_of = timeline or heap
            assert marks_of is not None
            n, alloc, xla = _axis_facts(timeline, heap)
            vals, labels = step_ticks(n, peak_marks(n, alloc, xla, marks_of.name_at))
            for ax in axes:
                ax.set_xlim(0, max(n, 1))
                ax.set_xticks(vals)
                ax.set_xticklabels([t.replace(": ", "\n", 1) for t in labels])
                ax.tick_params(axis="x", labelbottom=ax is axes[-1])
            axes[-1].set_xlabel("program step")
            fig.suptitle(title or "Memory by program order", fontsize=13)
            fig.tight_layout()
            fig.savefig(path, format=fmt, dpi=DPI)
        finally:
            plt.close(fig)


def _wrap(line: str, width: int) -> list[str]:
    """``line`` cut at spaces into pieces of at most ``width`` characters, the later ones indented."""
    out: list[str] = []
    while len(line) > width:
        cut = line.rfind(" ", 0, width)
        cut = cut if cut > width // 2 else width
        out.append(line[:cut])
        line = "    " + line[cut:].lstrip()
    return out + [line]


def _axis_facts(timeline: TimelineData | None, heap: HeapData | None) -> tuple[int, int | None, int | None]:
    if timeline is not None:
        return len(timeline.steps), timeline.allocated_step, timeline.xla_step
    assert heap is not None
    return heap.steps, heap.peak_step, heap.xla_step


def _bytes_axis(ax, top: int) -> None:
    import matplotlib.ticker

    ax.yaxis.set_major_locator(matplotlib.ticker.MultipleLocator(tick_step(max(top, 1))))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: human_size(int(y))))


def _timeline_axes(ax, data: TimelineData) -> None:
    cats = list(data.series)
    edges = data.steps + [len(data.steps)]
    if cats and data.steps:  # a dump with no live buffers draws empty axes (stackplot needs a series)
        ax.stackplot(
            edges,
            *[ys + ys[-1:] for ys in (data.series[c] for c in cats)],
            labels=cats,
            step="post",
            colors=[COLORS[c] for c in cats],
        )
        ax.step(edges, data.total + data.total[-1:], where="post", color="#222", linewidth=1.2, label="reserved")
    else:
        ax.text(0.5, 0.5, "no buffer is live at any step", ha="center", va="center", transform=ax.transAxes)
    top = max(data.total, default=0)
    if data.total_bytes and data.total_bytes <= 1.6 * max(top, 1):
        ax.axhline(data.total_bytes, color="#666", linestyle=":", linewidth=1.2, label="Total bytes")
        top = max(top, data.total_bytes)
    _peak_lines(ax, data.allocated_step, data.xla_step)
    ax.set_ylim(0, top * 1.32 if top else 1)
    ax.set_ylabel("reserved")
    _bytes_axis(ax, top)
    ax.set_title("bytes reserved per step (a parameter's buffer is held for the whole program)", loc="left")
    ax.legend(loc="upper left", ncol=4, framealpha=0.9, fontsize=9.5, handlelength=1.5, columnspacing=1.0)


def _rects(ax, rects: list, colors: list[str], thin_edges: bool) -> None:
    """``rects`` as bars (white edges between them while there are few enough to see them)."""
    if not rects:
        return
    ax.bar(
        [r.x0 for r in rects],
        [r.y1 - r.y0 for r in rects],
        width=[r.x1 - r.x0 for r in rects],
        bottom=[r.y0 for r in rects],
        align="edge",
        color=colors,
        **({"linewidth": 0.4, "edgecolor": "white"} if thin_edges else {"linewidth": 0}),
    )


def _peak_handles(matplotlib, allocated: int | None, xla: int | None) -> list:
    """Legend entries of the peak lines `_peak_lines` draws."""
    out = []
    if allocated is not None:
        out.append(matplotlib.lines.Line2D([], [], color="#d62728", linestyle="--", label="allocated peak"))
    if xla is not None and xla != allocated:
        out.append(matplotlib.lines.Line2D([], [], color="#222", linestyle=":", label="XLA peak"))
    return out


def _peak_lines(ax, allocated: int | None, xla: int | None) -> None:
    if allocated is not None:
        ax.axvline(allocated + 0.5, color="#d62728", linestyle="--", linewidth=1.3, label="allocated peak")
    if xla is not None and xla != allocated:
        ax.axvline(xla + 0.5, color="#222", linestyle=":", linewidth=1.3, label="XLA peak")


def _heap_axes(ax, p: HeapPanel, heap: HeapData) -> None:
    _rects(ax, p.bands, [BAND] * len(p.bands), thin_edges=len(p.bands) < 300)
    _rects(ax, p.rects, [COLORS[r.category] for r in p.rects], thin_edges=len(p.rects) < 400)
    _peak_lines(ax, heap.peak_step, heap.xla_step)
    ax.set_ylim(0, max(p.height, 1))
    ax.set_yticks([y for y, _ in p.ticks])
    ax.set_yticklabels([t for _, t in p.ticks], fontsize=9)
    ax.set_title(p.title, fontsize=10.5, loc="left")
    if p.main:
        ax.set_ylabel("allocation, offset")


# ------------------------------------------------------------------------------------------------ static page

_SCRIPT = (
    "<script>(function(){var tip=document.getElementById('tip');"
    "document.addEventListener('mousemove',function(e){var t=e.target.getAttribute&&e.target.getAttribute('data-tip');"
    "if(!t){tip.style.display='none';return;}tip.textContent=t;tip.style.display='block';"
    "var x=e.clientX+14,y=e.clientY+14;if(x+tip.offsetWidth>innerWidth)x=e.clientX-tip.offsetWidth-8;"
    "if(y+tip.offsetHeight>innerHeight)y=e.clientY-tip.offsetHeight-8;tip.style.left=x+'px';tip.style.top=y+'px';});"
    "})();</script>"
)
_TIP_STYLE = (
    "position:fixed;display:none;white-space:pre;background:#fffff0;border:1px solid #888;padding:4px 6px;"
    "font:12px monospace;color:#111;pointer-events:none;box-shadow:1px 1px 4px #0004"
)


def write_static(path: str, title: str, timeline: TimelineData | None, heap: HeapData | None) -> None:
    """The chart as a page of SVG with no third-party package; the same content as the interactive one."""
    body = []
    if timeline is not None:
        body.append(f"<h3>{escape(title or 'Memory by program order')}: reserved bytes per step</h3>")
        body.append(_timeline_svg(timeline))
        legend = " ".join(f'<span style="color:{COLORS[c]}">&#9632; {escape(c)}</span>' for c in timeline.series)
        body.append(f"<p>{legend} &nbsp; <b>&#8212;</b> reserved (total)</p>")
        body.append(f"<pre>{escape(chr(10).join(peak_text(timeline)))}</pre>")
    if heap is not None and heap.panels:
        body.append(f"<h3>{escape(title or 'Memory')}: heap map (each value at its offset over its live range)</h3>")
        legend = " ".join(f'<span style="color:{COLORS[c]}">&#9632; {escape(c)}</span>' for c in heap.categories())
        body.append(f'<p>{legend} <span style="color:#bbb">&#9632;</span> reserved, no live value</p>')
        for p in heap.panels:
            body.append(f'<div style="font-size:13px;margin-top:6px">{escape(p.title)}</div>')
            body.append(_heap_svg(p, heap))
        body.append(heap_note(heap))
    body.append(f"<p><small>A static chart: for the interactive one, {escape(CHARTS_INSTALL)}.</small></p>")
    body.append(f'<div id="tip" style="{_TIP_STYLE}"></div>{_SCRIPT}')
    page = html_page(title, body)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)


class _Frame:
    """The coordinates of one SVG plot: ``n`` steps across, ``top`` bytes up."""

    def __init__(self, n: int, top: float, w: int = 1000, h: int = 360, left: int = 150, bottom: int = 46):
        self.n, self.top, self.w, self.h, self.left, self.bottom, self.tm = (
            max(n, 1),
            max(top, 1),
            w,
            h,
            left,
            bottom,
            8,
        )

    def x(self, i: float) -> float:
        return self.left + (self.w - self.left - 12) * i / self.n

    def y(self, b: float) -> float:
        return self.tm + (self.h - self.tm - self.bottom) * (1 - b / self.top)

    def open(self) -> str:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.w} {self.h}" width="100%" '
            f'style="max-width:{self.w}px;display:block" font-family="DejaVu Sans,Arial,sans-serif" font-size="12">'
        )

    def step_axis(self, marks: list[tuple[int, str]], label: bool = True) -> str:
        vals, text = step_ticks(self.n, marks)
        out = [f'<line x1="{self.left}" x2="{self.w - 12}" y1="{self.y(0):.1f}" y2="{self.y(0):.1f}" stroke="#888"/>']
        for v, t in zip(vals, text):
            first, _, second = t.partition(": ")
            out.append(
                f'<text x="{self.x(v):.1f}" y="{self.y(0) + 15:.1f}" text-anchor="middle">{escape(first)}'
                + (f'<tspan x="{self.x(v):.1f}" dy="14" font-weight="bold">{escape(second)}</tspan>' if second else "")
                + "</text>"
            )
        if label:
            out.append(f'<text x="{self.w - 12}" y="{self.h - 4}" text-anchor="end" fill="#555">program step</text>')
        return "".join(out)

    def peaks(self, allocated: int | None, xla: int | None) -> str:
        out = []
        for step, color, dash, what in (
            (allocated, "#d62728", "6,3", "allocated peak"),
            (xla, "#222", "2,3", "XLA peak"),
        ):
            if step is not None and (what == "allocated peak" or step != allocated):
                out.append(
                    f'<line x1="{self.x(step + 0.5):.1f}" x2="{self.x(step + 0.5):.1f}" y1="{self.tm}" '
                    f'y2="{self.y(0):.1f}" stroke="{color}" stroke-width="1.5" stroke-dasharray="{dash}" '
                    f'data-tip="{what} (step {step})"><title>{what} (step {step})</title></line>'
                )
        return "".join(out)


def _rect(f: _Frame, x0: float, x1: float, y0: float, y1: float, fill: str, tip: str, stroke: bool) -> str:
    px0, px1, py0, py1 = f.x(x0), f.x(x1), f.y(y1), f.y(y0)
    s = ' stroke="#fff" stroke-width="0.5"' if stroke else ""
    t = escape(tip)
    return (
        f'<rect x="{px0:.1f}" y="{py0:.1f}" width="{max(px1 - px0, 0.6):.1f}" height="{max(py1 - py0, 0.6):.1f}" '
        f'fill="{fill}"{s} data-tip="{t}"><title>{t}</title></rect>'
    )


def _timeline_svg(data: TimelineData) -> str:
    top = max(
        max(data.total, default=0), data.total_bytes if data.total_bytes <= 1.6 * max(data.total, default=1) else 0
    )
    f = _Frame(len(data.steps), top * 1.08 if top else 1)
    svg = [f.open()]
    base = [0] * len(data.steps)
    for cat, ys in data.series.items():
        upper = [b + v for b, v in zip(base, ys)]
        pts = [f"{f.x(i):.1f},{f.y(u):.1f} {f.x(i + 1):.1f},{f.y(u):.1f}" for i, u in enumerate(upper)]
        pts += [f"{f.x(i + 1):.1f},{f.y(b):.1f} {f.x(i):.1f},{f.y(b):.1f}" for i, b in reversed(list(enumerate(base)))]
        svg.append(f'<polygon points="{" ".join(pts)}" fill="{COLORS[cat]}" fill-opacity="0.85" data-tip="{cat}"/>')
        base = upper
    line = " ".join(f"{f.x(i):.1f},{f.y(t):.1f} {f.x(i + 1):.1f},{f.y(t):.1f}" for i, t in enumerate(data.total))
    svg.append(f'<polyline points="{line}" fill="none" stroke="#222" stroke-width="1.5"/>')
    for b in range(0, int(f.top) + 1, tick_step(int(f.top))):
        svg.append(
            f'<line x1="{f.left}" x2="{f.w - 12}" y1="{f.y(b):.1f}" y2="{f.y(b):.1f}" stroke="#0001"/>'
            f'<text x="{f.left - 4}" y="{f.y(b) + 4:.1f}" text-anchor="end">{escape(human_size(b))}</text>'
        )
    if data.total_bytes and top >= data.total_bytes:
        yb = f.y(data.total_bytes)
        svg.append(
            f'<line x1="{f.left}" x2="{f.w - 12}" y1="{yb:.1f}" y2="{yb:.1f}" stroke="#666" stroke-dasharray="2,3"/>'
            f'<text x="{f.left + 4}" y="{yb - 4:.1f}" fill="#555">'
            f"Total bytes {escape(human_size(data.total_bytes))}</text>"
        )
    svg.append(f.peaks(data.allocated_step, data.xla_step))
    svg.append(f.step_axis(peak_marks(len(data.steps), data.allocated_step, data.xla_step, data.name_at)))
    svg.append("</svg>")
    return "".join(svg)


def _heap_svg(p: HeapPanel, heap: HeapData) -> str:
    f = _Frame(heap.steps, p.height, h=380 if p.main else 150, left=150)
    svg = [f.open()]
    svg += [_rect(f, r.x0, r.x1, r.y0, r.y1, BAND, r.text, len(p.bands) < 300) for r in p.bands]
    svg += [_rect(f, r.x0, r.x1, r.y0, r.y1, COLORS[r.category], r.text, len(p.rects) < 400) for r in p.rects]
    for y, label in p.ticks:
        svg.append(f'<text x="{f.left - 4}" y="{f.y(y) + 4:.1f}" text-anchor="end">{escape(label)}</text>')
    svg.append(f.peaks(heap.peak_step, heap.xla_step))
    svg.append(f.step_axis(peak_marks(heap.steps, heap.peak_step, heap.xla_step, heap.name_at)))
    svg.append("</svg>")
    return "".join(svg)
