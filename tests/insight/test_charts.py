"""``hlo-lsp timeline --view timeline|heap|both`` on real dumps (issue 19): the printed chart at 2x scale, the
static page (what the VS Code bundled server writes) and the plotly page hold what the dump text says: every
drawn value with its bytes, live range and the instructions at its ends, its source line, one panel per memory
space, the peak instruction named on the step axis, the total reserved as a line, and what was left out.
Expected values come from the dump text (tests/fixtures.py, tests/insight/test_heapmap.py's `expected`)."""

from __future__ import annotations

import html
import re
import struct
import sys

import pytest

from hlo_lsp.cli import main
from tests.fixtures import DATA, parse_assignment_listing
from tests.insight.test_heapmap import expected
from tests.insight.test_peak import independent_allocated
from tests.insight.util import human

TPU = DATA / "memory" / "donation-tpu"
STEM = "module_0000.jit_step.cl_933746096.after_optimizations"
MODULE = TPU / f"{STEM}.txt"
LIVE = TPU / f"{STEM}-live-range.txt"
MESH = DATA / "oom" / "long_mesh" / "module_0000.jit_train_step.cl_933746096.after_optimizations.txt"
GPU = next((DATA / "producers" / "gpu-0.10.2" / "mlp_train").glob("*gpu_after_optimizations.txt"))


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _sequence(text: str) -> dict[int, str]:
    return {int(a): b for a, b in re.findall(r"^    (\d+):(\S+)$", text, re.M)}


def _sources(hlo: str) -> dict[str, str]:
    """Instruction -> ``file:line`` of its innermost stack frame, from the module's source tables."""
    files = dict(re.findall(r'^(\d+) "([^"]*)"$', hlo[hlo.index("FileNames") : hlo.index("FunctionNames")], re.M))
    locs = {
        a: (f, ln) for a, f, ln in re.findall(r"^(\d+) \{file_name_id=(\d+) function_name_id=\d+ line=(\d+)", hlo, re.M)
    }
    frames = dict(re.findall(r"^(\d+) \{file_location_id=(\d+) parent_frame_id=\d+\}$", hlo, re.M))
    out = {}
    for name, sf in re.findall(r"^\s+(?:ROOT )?%?(\S+) = [^\n]*?stack_frame_id=(\d+)", hlo, re.M):
        if sf in frames and frames[sf] in locs:
            f, ln = locs[frames[sf]]
            out[name] = f"{files[f]}:{ln}"
    return out


@pytest.mark.parametrize("view", ["timeline", "heap", "both"])
def test_printed_chart_is_drawn_at_twice_the_scale(capsys, tmp_path, view):
    out = tmp_path / f"{view}.png"
    code, _, err = run(capsys, "timeline", MODULE, "--view", view, "-o", out)
    assert code == 0, err
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 2000  # 10 inches at 200 dpi
    assert 1000 <= height <= 6000
    assert len(data) < 600_000  # a README can carry it


def _static_page(capsys, tmp_path, monkeypatch, dump, *extra) -> str:
    """The page a server without plotly writes (the VS Code bundled server)."""
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    out = tmp_path / "chart.html"
    code, _, err = run(capsys, "timeline", dump, "-o", out, *extra)
    assert code == 0, err
    return out.read_text()


def test_static_heap_map_holds_every_value_with_its_live_range_and_source(capsys, tmp_path, monkeypatch):
    page = _static_page(capsys, tmp_path, monkeypatch, MODULE, "--view", "both")
    live_text = LIVE.read_text()
    seq = _sequence(live_text)
    exp = expected(LIVE)
    sources = _sources(MODULE.read_text())
    tips = [html.unescape(t) for t in re.findall(r'<rect [^>]*data-tip="([^"]*)"', page)]
    shapes = {
        v["key"]: v["shape"]
        for v in parse_assignment_listing(TPU.joinpath(f"{STEM}-buffer-assignment.txt").read_text())
    }
    for v in exp["values"]:
        tip = next((t for t in tips if t.startswith(f"{v['key']}  ")), None)
        assert tip is not None, v["key"]
        lines = tip.split("\n")
        assert lines[0] == f"{v['key']}  {shapes[v['key']]}"
        assert lines[1].startswith(
            f"{human(v['size'])} at bytes [{v['offset']}, {v['offset'] + v['size']}) of allocation {v['allocation']} "
        )
        ends = [seq.get(t, f"step {t}") for t in (v["start"], v["end"])]  # a live-out value ends past the last
        assert lines[2] == f"live {v['start']}–{v['end']} ({ends[0]} … {ends[1]})"
        if v["instruction"] in sources:
            assert any(x.startswith(f"source: {sources[v['instruction']]}") for x in lines), tip
    # one panel per memory space with something drawn, named as the memory-usage report names it
    for color, (name, total) in exp["named"].items():
        if any(exp["allocs"][v["allocation"]]["color"] == color for v in exp["values"]):
            label = name if color == 0 else f"{name} (S({color}))"
            assert f"{label}: Total bytes {human(total)} in " in page
    # the step axis names the allocated peak's instruction, and the total reserved is drawn as a line
    totals, _ = independent_allocated(LIVE)
    peak = totals.index(max(totals))
    assert f'font-weight="bold">{html.escape(seq[peak])}</tspan>' in page
    assert '<polyline points="' in page and 'stroke="#222"' in page


def test_static_timeline_on_a_gpu_dump(capsys, tmp_path, monkeypatch):
    page = _static_page(capsys, tmp_path, monkeypatch, GPU)
    live = GPU.with_name(GPU.stem + "-live-range.txt")
    totals, _ = independent_allocated(live)
    seq = _sequence(live.read_text())
    assert "reserved of Total bytes " in page
    peak = totals.index(max(totals))
    assert f"allocated peak: step {peak} ({seq[peak]}), {human(max(totals))} reserved" in page
    assert "<rect " not in page  # the timeline view draws no heap map


def test_a_large_map_says_what_it_left_out(capsys, tmp_path, monkeypatch):
    page = html.unescape(_static_page(capsys, tmp_path, monkeypatch, MESH, "--view", "heap", "--max-blocks", "60"))
    m = re.search(r"not drawn: (\d+) smaller allocations \(([^,)]+)[,)].*?; (\d+) values in all", page)
    assert m, page[-2000:]
    exp = expected(MESH.with_name(MESH.stem + "-live-range.txt"))
    drawn = len(re.findall(r"<rect ", page))
    bands = sum(1 for t in re.findall(r'data-tip="allocation \d+ ', page))
    assert drawn - bands + int(m.group(3)) == len(exp["values"])
    assert drawn <= 60


def test_interactive_page_holds_the_heap_map(capsys, tmp_path):
    pytest.importorskip("plotly")
    out = tmp_path / "both.html"
    code, _, err = run(capsys, "timeline", MODULE, "--view", "both", "-o", out)
    assert code == 0, err
    page = out.read_text()
    assert page.count('class="plotly-graph-div"') == 2  # the timeline and the heap map
    exp = expected(LIVE)
    for v in exp["values"][:20]:
        assert f"{v['key']}" in page and f"of allocation {v['allocation']} " in page
    assert "reserved (total)" in page and "Total bytes" in page


def test_unknown_view_is_a_usage_error(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["timeline", str(MODULE), "--view", "map", "-o", str(tmp_path / "x.html")])
    assert e.value.code == 2
