"""The interactive charts (plotly): one HTML page holding the timeline, the heap map or both, plotly.js inline (a
page that works offline and in an editor's webview).

- Timeline: the categories stacked as steps, the total reserved as a line, Total bytes as a dotted line when it
  is within reach of the chart, both peaks marked and named on the step axis; hover gives every category at a
  step and the instruction there.
- Heap map: one row per memory space sharing the step axis; each allocation a grey band (hover: its kind, size
  and state at the peak), each value a horizontal bar over its live range at its offset (hover: value, shape,
  bytes, live range, source line, padding); the largest allocations named on the y axis.
"""

from __future__ import annotations

from hlo_lsp.charts.data import (
    BAND,
    COLORS,
    HeapData,
    TimelineData,
    escape,
    heap_note,
    html_page,
    peak_marks,
    peak_text,
    step_ticks,
)
from hlo_lsp.core.shapes import human_size

FONT = {"family": "DejaVu Sans, Arial, sans-serif", "size": 13}


def write_html(path: str, title: str, timeline: TimelineData | None, heap: HeapData | None) -> None:
    import plotly.graph_objects as go  # the caller checked it imports

    parts: list[str] = []
    include = True
    for fig in (_timeline(go, timeline, title) if timeline else None, _heap(go, heap, title) if heap else None):
        if fig is None:
            continue
        parts.append(fig.to_html(full_html=False, include_plotlyjs=include, config={"responsive": True}))
        include = False
    if timeline is not None:
        parts.append("<pre>" + escape("\n".join(peak_text(timeline))) + "</pre>")
    if heap is not None:
        parts.append(heap_note(heap))
    page = html_page(title, parts)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)


def _timeline(go, data: TimelineData, title: str):
    fig = go.Figure()
    for cat, ys in data.series.items():
        fig.add_trace(
            go.Scatter(
                x=data.steps,
                y=ys,
                name=cat,
                stackgroup="bytes",
                line_shape="hv",
                line={"color": COLORS[cat], "width": 0.5},
                customdata=data.labels,
                hovertemplate=cat + ": %{y:,} bytes<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=data.steps,
            y=data.total,
            name="reserved (total)",
            line_shape="hv",
            line={"color": "#222", "width": 1.5},
            customdata=data.labels,
            hovertemplate="%{customdata}: %{y:,} bytes reserved<extra></extra>",
        )
    )
    top = max(data.total, default=0)
    if data.total_bytes and data.total_bytes <= 1.6 * max(top, 1):
        fig.add_hline(
            y=data.total_bytes,
            line_dash="dot",
            line_color="#666",
            annotation_text=f"Total bytes {human_size(data.total_bytes)} (every allocation whole)",
            annotation_position="top left",
        )
    _peak_lines(fig, data.allocated_step, data.xla_step)
    marks = peak_marks(len(data.steps), data.allocated_step, data.xla_step, data.name_at)
    vals, text = step_ticks(len(data.steps), marks)
    fig.update_xaxes(tickvals=vals, ticktext=[t.replace(": ", "<br>", 1) for t in text], title="program step")
    fig.update_yaxes(title="bytes reserved", tickformat="~s", ticksuffix="B")
    fig.update_layout(
        title=f"{title or 'Memory by program order'}: reserved bytes per step",
        hovermode="x unified",
        font=FONT,
        height=480,
        margin={"l": 70, "r": 20, "t": 60, "b": 90},
        legend={"orientation": "h", "y": 1.02, "x": 0, "yanchor": "bottom"},
        template="plotly_white",
    )
    return fig


def _peak_lines(fig, allocated: int | None, xla: int | None, **where) -> None:
    if allocated is not None:
        fig.add_vline(x=allocated + 0.5, line_dash="dash", line_color="#d62728", line_width=1.5, **where)
    if xla is not None and xla != allocated:
        fig.add_vline(x=xla + 0.5, line_dash="dot", line_color="#222", line_width=1.5, **where)


def _heap(go, data: HeapData, title: str):
    from plotly.subplots import make_subplots

    panels = data.panels
    if not panels:
        return None
    heights = [3.0 if p.main else 1.0 for p in panels]
    fig = make_subplots(
        rows=len(panels),
        cols=1,
        shared_xaxes=True,
        row_heights=heights,
        vertical_spacing=0.08 if len(panels) > 1 else 0.0,
        subplot_titles=[p.title for p in panels],
    )
    shown: set[str] = set()
    for row, p in enumerate(panels, start=1):
        _bars(go, fig, p.bands, row, BAND, "allocation", show=False, line=len(p.bands) < 300)
        by_cat: dict[str, list] = {}
        for r in p.rects:
            by_cat.setdefault(r.category, []).append(r)
        for cat, rects in by_cat.items():
            _bars(go, fig, rects, row, COLORS[cat], cat, show=cat not in shown, line=len(rects) < 400)
            shown.add(cat)
        fig.update_yaxes(
            row=row,
            col=1,
            range=[0, p.height],
            tickvals=[y for y, _ in p.ticks],
            ticktext=[t for _, t in p.ticks],
            title="allocation, offset" if p.main else None,
        )
        _peak_lines(fig, data.peak_step, data.xla_step, row=row, col=1)
    marks = peak_marks(data.steps, data.peak_step, data.xla_step, data.name_at)
    vals, text = step_ticks(data.steps, marks)
    fig.update_xaxes(range=[0, data.steps], tickvals=vals, ticktext=[t.replace(": ", "<br>", 1) for t in text])
    fig.update_xaxes(title="program step", row=len(panels), col=1)
    fig.update_annotations(font={"size": 12}, x=0, xanchor="left")
    height = int(220 + 170 * sum(heights))
    fig.update_layout(
        title=f"{title or 'Memory'}: heap map (each value at its offset in its allocation, over its live range)",
        barmode="overlay",
        hovermode="closest",
        font=FONT,
        height=height,
        margin={"l": 150, "r": 20, "t": 120, "b": 90},
        legend={"orientation": "h", "yref": "container", "y": 1 - 58 / height, "yanchor": "top", "x": 0},
        template="plotly_white",
    )
    return fig


def _bars(go, fig, rects, row: int, color: str, name: str, show: bool, line: bool) -> None:
    if not rects:
        return
    fig.add_trace(
        go.Bar(
            orientation="h",
            base=[r.x0 for r in rects],
            x=[r.x1 - r.x0 for r in rects],
            y=[(r.y0 + r.y1) / 2 for r in rects],
            width=[r.y1 - r.y0 for r in rects],
            marker={"color": color, "line": {"color": "#ffffff", "width": 0.5 if line else 0}},
            hovertext=[escape(r.text).replace("\n", "<br>") for r in rects],
            hoverinfo="text",
            name=name,
            legendgroup=name,
            showlegend=show,
        ),
        row=row,
        col=1,
    )
