"""Memory timeline charts: bytes reserved at each step of the schedule, stacked by category, peaks marked, the
buffers at the peak listed.

Interactive HTML comes from plotly, SVG and PNG from matplotlib (plotly's PNG export needs a browser). Both are
optional (the ``charts`` extra) and imported only when a chart is written, so the server and the CLI start
without them. The data is the allocated view of `hlo_lsp.core.memory.peak` (what the allocations really hold at each
step); XLA's own peak step is marked too, since it is the step XLA prints.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass

from hlo_lsp.core.memory.peak import PeakReport
from hlo_lsp.core.memory.values import CATEGORIES
from hlo_lsp.core.shapes import human_size

FORMATS = ("html", "svg", "png")
COLORS = {"parameter": "#4c78a8", "output": "#f58518", "constant": "#9d755d", "temporary": "#54a24b"}
# hlo-lsp is installed from a clone (it is on no package index), so the extra is named from there
CHARTS_INSTALL = (
    "run pip install '.[charts]' in the hlo-lsp clone, with the pip of that Python "
    "(installed with pipx: pipx inject hlo-lsp plotly matplotlib)"
)


class ChartError(Exception):
    """A chart that cannot be written (unknown format, missing extra, I/O); the message is one line."""


@dataclass(slots=True)
class TimelineData:
    steps: list[int]
    series: dict[str, list[int]]  # category -> bytes per step (only categories that hold anything)
    labels: list[str]  # instruction scheduled at each step
    xla_step: int | None
    xla_bytes: int
    allocated_step: int | None
    allocated_bytes: int
    top: list[tuple[str, int, str]]  # (value, bytes, source) at the allocated peak, largest first


def timeline_data(report: PeakReport, top: int = 10) -> TimelineData:
    view = report.allocated
    steps = list(range(view.steps))
    series = {c: view.by_category[c] for c in CATEGORIES if any(view.by_category[c])}
    labels = [report.sequence[t] if t < len(report.sequence) else "" for t in steps]
    tops = [(v.key, v.bytes, v.source.label() if v.source else "") for v in view.live[:top]]
    return TimelineData(steps, series, labels, report.xla.step, report.xla.bytes, view.peak_step, view.peak_bytes, tops)


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


def cached_chart_path(dump_path: str, fmt: str = "html") -> str:
    """The cache file for the chart of ``dump_path`` (one per dump and format; ``html`` for an unknown
    format)."""
    fmt = fmt if fmt in FORMATS else "html"
    digest = hashlib.sha1(dump_path.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    stem = os.path.basename(dump_path).removesuffix(".txt")[:80]
    return os.path.join(cache_dir(), f"{stem}-{digest}.{fmt}")


def write_timeline(report: PeakReport, path: str, title: str = "", top: int = 10) -> str:
    """Write the chart of ``report`` to ``path`` (format from its extension); returns the path."""
    fmt = format_of(path)
    data = timeline_data(report, top)
    if not data.steps:
        raise ChartError("no live ranges in this dump: nothing to chart")
    try:
        if fmt == "html":
            _plotly(data, path, title)
        else:
            _matplotlib(data, path, title, fmt)
    except OSError as e:
        raise ChartError(f"{path}: cannot write: {e.strerror or e}") from None
    return path


def _peak_text(data: TimelineData) -> list[str]:
    lines = [
        f"XLA peak: step {data.xla_step}, {human_size(data.xla_bytes)} live (as XLA prints it)",
        f"allocated peak: step {data.allocated_step}, {human_size(data.allocated_bytes)} reserved:",
    ]
    for name, b, src in data.top:
        lines.append(f"{human_size(b):>10}  {name}" + (f"  ({src})" if src else ""))
    return lines


def _plotly(data: TimelineData, path: str, title: str) -> None:
    try:
        import plotly.graph_objects as go
    except ImportError:  # the server bundled in the VS Code extension has no plotly: a static chart instead
        _static_html(data, path, title)
        return
    fig = go.Figure()
    for cat, ys in data.series.items():
        fig.add_trace(
            go.Scatter(
                x=data.steps,
                y=ys,
                name=cat,
                stackgroup="bytes",
                line_shape="hv",
                line={"color": COLORS[cat]},
                customdata=data.labels,
                hovertemplate="step %{x} %{customdata}<br>" + cat + ": %{y:,} bytes<extra></extra>",
            )
        )
    if data.allocated_step is not None:
        fig.add_vline(
            x=data.allocated_step,
            line_dash="dash",
            line_color="red",
            annotation_text=f"allocated peak {human_size(data.allocated_bytes)}",
        )
    if data.xla_step is not None and data.xla_step != data.allocated_step:
        fig.add_vline(
            x=data.xla_step,
            line_dash="dot",
            line_color="black",
            annotation_text="XLA peak",
            annotation_position="bottom right",
        )
    fig.add_annotation(
        text="<br>".join(_escape(x) for x in _peak_text(data)),
        xref="paper",
        yref="paper",
        x=1.02,
        y=1,
        xanchor="left",
        yanchor="top",
        showarrow=False,
        align="left",
        font={"family": "monospace", "size": 11},
    )
    fig.update_layout(
        title=title or "Memory by program order",
        xaxis_title="step (InstructionSequence)",
        yaxis_title="bytes reserved",
        margin={"r": 420},
        hovermode="x unified",
    )
    fig.write_html(path, include_plotlyjs=True, full_html=True)


def _static_html(data: TimelineData, path: str, title: str) -> None:
    """The same chart as a static SVG in an HTML page, written with no third-party package (for a server without
    the charts extra): the categories stacked as steps, the peaks marked, the peak's buffers listed."""
    w, h, left, top_m, bottom = 900, 360, 80, 20, 40
    n = max(len(data.steps), 1)
    totals = [sum(ys[i] for ys in data.series.values()) for i in range(len(data.steps))]
    ymax = max(max(totals, default=0), 1)
    tick = _tick_step(ymax)

    def x(i: float) -> float:
        return left + (w - left - 10) * i / n

    def y(b: float) -> float:
        return top_m + (h - top_m - bottom) * (1 - b / ymax)

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">']
    base = [0] * len(data.steps)
    for cat, ys in data.series.items():
        upper = [b + v for b, v in zip(base, ys)]
        pts = [f"{x(i):.1f},{y(u):.1f} {x(i + 1):.1f},{y(u):.1f}" for i, u in enumerate(upper)]
        pts += [f"{x(i + 1):.1f},{y(b):.1f} {x(i):.1f},{y(b):.1f}" for i, b in reversed(list(enumerate(base)))]
        svg.append(
            f'<polygon points="{" ".join(pts)}" fill="{COLORS[cat]}" fill-opacity="0.85">'
            f"<title>{_escape(cat)}</title></polygon>"
        )
        base = upper
    for b in range(0, ymax + 1, tick):
        svg.append(
            f'<line x1="{left}" x2="{w - 10}" y1="{y(b):.1f}" y2="{y(b):.1f}" stroke="#ddd"/>'
            f'<text x="{left - 4}" y="{y(b) + 4:.1f}" text-anchor="end">{_escape(human_size(b))}</text>'
        )
    for step, color, dash, label in (
        (data.allocated_step, "red", "6,3", "allocated peak"),
        (data.xla_step, "black", "2,3", "XLA peak"),
    ):
        if step is not None:
            svg.append(
                f'<line x1="{x(step + 0.5):.1f}" x2="{x(step + 0.5):.1f}" y1="{top_m}" y2="{h - bottom}" '
                f'stroke="{color}" stroke-dasharray="{dash}"><title>{label} (step {step})</title></line>'
            )
    svg.append(f'<text x="{(left + w) / 2:.0f}" y="{h - 8}" text-anchor="middle">step (InstructionSequence)</text>')
    svg.append("</svg>")
    legend = " ".join(f'<span style="color:{COLORS[c]}">&#9632; {_escape(c)}</span>' for c in data.series)
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>'
        f'{_escape(title or "Memory by program order")}</title></head><body style="font-family:sans-serif">'
        f"<h3>{_escape(title or 'Memory by program order')}</h3>{''.join(svg)}<p>{legend}</p>"
        f"<pre>{_escape(chr(10).join(_peak_text(data)))}</pre>"
        f"<p><small>A static chart: for the interactive one, {_escape(CHARTS_INSTALL)}.</small></p>"
        "</body></html>\n"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _tick_step(top: int) -> int:
    """The smallest power of two that puts at most 8 ticks below ``top`` (so ticks read 4.00MiB, 8.00MiB...)."""
    step = 1
    while top / step > 8:
        step *= 2
    return step


def _matplotlib(data: TimelineData, path: str, title: str, fmt: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        raise ChartError(
            f"SVG/PNG charts need matplotlib, which the Python running hlo-lsp lacks: {CHARTS_INSTALL}"
        ) from None
    fig, (ax, side) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    try:
        cats = list(data.series)
        if cats and data.steps:  # a dump with no live buffers draws empty axes (stackplot needs a series)
            ax.stackplot(
                data.steps, *[data.series[c] for c in cats], labels=cats, step="post", colors=[COLORS[c] for c in cats]
            )
        else:
            ax.text(0.5, 0.5, "no buffer is live at any step", ha="center", va="center", transform=ax.transAxes)
        if data.allocated_step is not None:
            ax.axvline(data.allocated_step, color="red", linestyle="--", label="allocated peak")
        if data.xla_step is not None:
            ax.axvline(data.xla_step, color="black", linestyle=":", label="XLA peak")
        ax.set_xlabel("step (InstructionSequence)")
        ax.set_ylabel("reserved")
        ax.yaxis.set_major_locator(matplotlib.ticker.MultipleLocator(_tick_step(max(data.allocated_bytes, 1))))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda y, _: human_size(int(y))))
        ax.set_title(title or "Memory by program order", fontsize=10)
        ax.legend(loc="upper left", fontsize=8)
        side.axis("off")
        side.text(0, 1, "\n".join(_peak_text(data)), family="monospace", fontsize=7, va="top")
        fig.tight_layout()
        fig.savefig(path, format=fmt, dpi=80)
    finally:
        plt.close(fig)
