"""Memory charts of one module: the **timeline** (bytes reserved at each step of the schedule, stacked by
category, the total as a line, both peaks marked and named on the step axis, the buffers at the peak listed) and
the **heap map** (each value a rectangle at its offset in its allocation over its live range, one panel per
memory space, with fragmentation and padding at the allocated peak), or both on one page.

Interactive HTML comes from plotly (`interactive`), SVG and PNG from matplotlib (`static`; plotly's PNG export
needs a browser). Both are optional (the ``charts`` extra) and imported only when a chart is written, so the
server and the CLI start without them; without plotly an HTML chart is a static page of SVG (`static`). What is
drawn is computed once in `data` from the allocated view of `hlo_lsp.core.memory.peak` and the heap map of
`hlo_lsp.core.memory.heapmap`.
"""

from __future__ import annotations

from hlo_lsp.charts.data import (
    CHARTS_INSTALL,
    FORMATS,
    VIEWS,
    ChartError,
    cache_dir,
    cached_chart_path,
    format_of,
    heap_data,
    timeline_data,
)
from hlo_lsp.core.memory.heapmap import MAX_BLOCKS, heap_map
from hlo_lsp.core.memory.peak import PeakReport

__all__ = [
    "CHARTS_INSTALL",
    "FORMATS",
    "VIEWS",
    "ChartError",
    "cache_dir",
    "cached_chart_path",
    "format_of",
    "write_timeline",
]


def write_timeline(
    report: PeakReport, path: str, title: str = "", top: int = 10, view: str = "timeline", budget: int = MAX_BLOCKS
) -> str:
    """Write the chart of ``report`` to ``path`` (format from its extension): ``view`` is ``timeline``, ``heap``
    or ``both``; the heap map draws at most ``budget`` rectangles. Returns the path; ChartError when it cannot."""
    fmt = format_of(path)
    if view not in VIEWS:
        raise ChartError(f"unknown view {view!r} (use {', '.join(VIEWS)})")
    timeline = timeline_data(report, top)
    if not timeline.steps:
        raise ChartError("no live ranges in this dump: nothing to chart")
    heap = heap_data(report, heap_map(report, budget), timeline) if view != "timeline" else None
    shown = timeline if view != "heap" else None
    try:
        if fmt == "html":
            try:
                import plotly.graph_objects  # noqa: F401
            except ImportError:  # the server bundled in the VS Code extension has no plotly: a static chart
                from hlo_lsp.charts.static import write_static

                write_static(path, title, shown, heap)
            else:
                from hlo_lsp.charts.interactive import write_html

                write_html(path, title, shown, heap)
        else:
            from hlo_lsp.charts.static import write_printed

            write_printed(path, fmt, title, shown, heap)
    except OSError as e:
        raise ChartError(f"{path}: cannot write: {e.strerror or e}") from None
    return path
