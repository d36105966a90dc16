"""The heap map (issue 19) on every real buffer-assignment set of tests/data (producers' TPU and GPU dumps
included), examples and ../shared: each rectangle is a value of the listing at its offset over its live range,
two rectangles of one allocation overlap only where the buffer rules let their values share bytes, and the state
at the allocated peak (bytes held, fragmentation, padding, per memory space) equals a computation from the dump
text. Expected values come from this file's regexes and tests/fixtures.py, never from hlo_lsp."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hlo_lsp.cli import main
from hlo_lsp.core.memory.heapmap import heap_map
from tests.fixtures import DATA, REPO, SHARED, parse_assignment_listing, parse_live_ranges, require_found
from tests.insight.test_peak import independent_allocated, report_for
from tests.insight.util import array_bytes, human, module_sets, union_length

ALLOC = re.compile(r"^allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)(.*):$", re.M)
SPACE = re.compile(r"^Memory Space: (\S*) ?\(color=(\d+)\)\nTotal bytes: (\d+)", re.M)
MAX = re.compile(r"^HloLiveRange \(max (\d+)\):$", re.M)


LOCAL = module_sets(DATA) + module_sets(REPO / "examples")
SHARING: list[tuple[str, str, str]] = []  # overlapping rectangles met (values sharing a slice in place)
SHARED_SETS = module_sets(SHARED) if SHARED.is_dir() else []


def _texts(path: Path) -> tuple[str, str, str | None]:
    """(allocation listing, live-range text, memory-usage report or None)."""
    for suffix in ("-live-range.txt", "-buffer-assignment.txt"):
        if path.name.endswith(suffix):
            stem = path.name[: -len(suffix)]
            report = path.with_name(stem + "-memory-usage-report.txt")
            listing = path.with_name(stem + "-buffer-assignment.txt").read_text(encoding="utf-8")
            return (
                listing,
                path.read_text(encoding="utf-8"),
                report.read_text(encoding="utf-8") if report.exists() else None,
            )
    text = path.read_text(encoding="utf-8")
    return text, text, None


def _allocations(listing: str) -> dict[int, dict]:
    out = {}
    for m in ALLOC.finditer(listing):
        rest = m.group(3)
        color = re.search(r"\bcolor (\d+)", rest)
        if "thread-local" in rest:
            cat = "thread-local"
        elif re.search(r"\bparameter \d+", rest):
            cat = "parameter"
        elif "output shape is" in rest or "maybe-live-out" in rest:
            cat = "output"
        elif re.search(r"\bconstant\b", rest):
            cat = "constant"
        else:
            cat = "temporary"
        out[int(m.group(1))] = {"size": int(m.group(2)), "color": int(color.group(1)) if color else 0, "category": cat}
    return out


def _interferes(a: dict, b: dict) -> bool:
    """The buffer rules' overlap condition (rules.overlapping_slices), written again: closed live ranges that
    share more than one step, or touch at one step with different byte slices."""
    lo, hi = max(a["start"], b["start"]), min(a["end"], b["end"])
    return lo < hi or lo == hi and (a["offset"], a["size"]) != (b["offset"], b["size"])


def expected(path: Path) -> dict:
    """The heap map computed from the dump text alone."""
    listing, live_text, usage = _texts(path)
    allocs = _allocations(listing)
    ranges = parse_live_ranges(live_text)
    totals, _ = independent_allocated(path)
    steps = len(totals)
    peak = totals.index(max(totals)) if max(totals, default=0) > 0 else None
    values = []
    for v in parse_assignment_listing(listing):
        r = ranges.get(v["key"])
        if r is None or r[0] > r[1] or allocs[v["allocation"]]["category"] == "thread-local":
            continue
        values.append({**v, "start": r[0], "end": min(r[1], steps - 1)})
    per_alloc: dict[int, dict] = {}
    for index, a in allocs.items():
        live = [v for v in values if v["allocation"] == index and peak is not None and v["start"] <= peak <= v["end"]]
        in_use = union_length((v["offset"], v["offset"] + v["size"]) for v in live)
        held = a["size"] if a["category"] == "parameter" and steps else in_use
        pads: dict[tuple[int, int], int] = {}  # each slice once, the most padding of the values sharing it
        for v in live:
            u = array_bytes(v["shape"])
            pad = max(0, v["size"] - u) if u is not None else 0
            pads[(v["offset"], v["size"])] = max(pads.get((v["offset"], v["size"]), 0), pad)
        padding = sum(pads.values())
        frag = 0 if a["category"] == "thread-local" else a["size"] - held
        per_alloc[index] = {"held": held, "in_use": in_use, "fragmentation": frag, "padding": padding}
    spaces = {}
    for color in sorted({a["color"] for a in allocs.values()}):
        mine = [i for i, a in allocs.items() if a["color"] == color]
        spaces[color] = {
            "total": sum(allocs[i]["size"] for i in mine),
            "thread_local": sum(allocs[i]["size"] for i in mine if allocs[i]["category"] == "thread-local"),
            "held": sum(per_alloc[i]["held"] for i in mine if allocs[i]["category"] != "thread-local"),
            "fragmentation": sum(per_alloc[i]["fragmentation"] for i in mine),
            "padding": sum(per_alloc[i]["padding"] for i in mine),
        }
    named = {int(m.group(2)): (m.group(1), int(m.group(3))) for m in SPACE.finditer(usage or "")}
    return {
        "allocs": allocs,
        "values": values,
        "peak": peak,
        "peak_bytes": max(totals, default=0),
        "per_alloc": per_alloc,
        "spaces": spaces,
        "named": named,
    }


def check_heap_map(path: Path) -> None:
    exp = expected(path)
    report = report_for(path)
    hm = heap_map(report, budget=10**7)
    assert (hm.peak_step, hm.peak_bytes) == (exp["peak"], exp["peak_bytes"])
    assert hm.left_out_values == hm.left_out_allocations == 0
    drawn = {a.index: a for allocs in hm.drawn.values() for a in allocs}
    blocks = {(a.index, b.key, b.start, b.end, b.offset, b.size) for a in drawn.values() for b in a.blocks}
    want = {(v["allocation"], v["key"], v["start"], v["end"], v["offset"], v["size"]) for v in exp["values"]}
    assert blocks == want
    for a in drawn.values():  # the allocation's category colours its rectangles
        assert a.category == exp["allocs"][a.index]["category"]
    # rectangles [start, end + 1) x [offset, offset + size) of one allocation overlap only where the rules let
    # their values share bytes (the values as the dump text gives them)
    text_of = {(v["allocation"], v["key"]): v for v in exp["values"]}
    for a in drawn.values():
        if exp["allocs"][a.index]["color"]:
            continue  # the rules leave other memory spaces alone (memory-space assignment reuses bytes)
        for i, x in enumerate(a.blocks):
            for y in a.blocks[i + 1 :]:
                if (
                    x.start < y.end + 1
                    and y.start < x.end + 1
                    and x.offset < y.offset + y.size
                    and y.offset < x.offset + x.size
                ):
                    assert not _interferes(text_of[(a.index, x.key)], text_of[(a.index, y.key)]), (
                        path.name,
                        x.key,
                        y.key,
                    )
                    SHARING.append((path.name, x.key, y.key))
    for a in hm.allocations:
        e = exp["per_alloc"][a.index]
        assert (a.held_at_peak, a.in_use_at_peak, a.fragmentation, a.padding_at_peak) == (
            e["held"],
            e["in_use"],
            e["fragmentation"],
            e["padding"],
        ), (path.name, a.index)
    assert {s.color for s in hm.spaces} == set(exp["spaces"])
    for s in hm.spaces:
        e = exp["spaces"][s.color]
        assert (s.total_bytes, s.thread_local_bytes, s.held_at_peak, s.fragmentation, s.padding) == (
            e["total"],
            e["thread_local"],
            e["held"],
            e["fragmentation"],
            e["padding"],
        )
        if s.color in exp["named"]:  # the memory-usage report's name and Total bytes of that space
            name, total = exp["named"][s.color]
            assert s.name == (name or f"color {s.color}") and s.total_bytes == total
        # Total bytes = held at the peak + fragmentation + thread-local, in each space
        assert s.total_bytes == s.held_at_peak + s.fragmentation + s.thread_local_bytes
    assert sum(s.held_at_peak for s in hm.spaces) == exp["peak_bytes"]


@pytest.mark.parametrize("path", LOCAL, ids=[str(p.relative_to(REPO))[-70:] for p in LOCAL])
def test_heap_map_equals_the_dump_text(path):
    check_heap_map(path)


def test_heap_map_on_every_shared_dump():
    require_found(SHARED_SETS, "buffer-assignment sets")
    for path in SHARED_SETS:
        check_heap_map(path)


@pytest.mark.parametrize("path", LOCAL, ids=[str(p.relative_to(REPO))[-70:] for p in LOCAL])
def test_peak_json_adds_the_heap_state(path, capsys):
    """``hlo-lsp peak --format json`` keeps its keys and adds each allocation and memory space at the allocated
    peak (held, in use, fragmentation, padding), as the dump text gives them."""
    assert main(["peak", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"peak_step", "peak_bytes", "peak_instruction", "live_at_peak", "omitted", "allocated", "dump"} <= set(data)
    exp = expected(path)
    a = data["allocated"]
    assert {"peak_step", "peak_bytes", "steps", "live_at_peak"} <= set(a)
    got = {x["index"]: (x["held"], x["in_use"], x["fragmentation"], x["padding"]) for x in a["allocations"]}
    want = {i: (e["held"], e["in_use"], e["fragmentation"], e["padding"]) for i, e in exp["per_alloc"].items()}
    assert got == want
    assert a["fragmentation"] == sum(e["fragmentation"] for e in exp["per_alloc"].values())
    assert a["padding"] == sum(e["padding"] for e in exp["per_alloc"].values())
    assert a["thread_local_bytes"] == sum(x["size"] for x in exp["allocs"].values() if x["category"] == "thread-local")
    spaces = {s["color"]: s for s in data["memory_spaces"]}
    assert set(spaces) == set(exp["spaces"])
    for color, e in exp["spaces"].items():
        s = spaces[color]
        assert (s["total_bytes"], s["held_at_peak"], s["fragmentation_at_peak"], s["padding_at_peak"]) == (
            e["total"],
            e["held"],
            e["fragmentation"],
            e["padding"],
        )
        if color in exp["named"]:
            assert s["name"] == (exp["named"][color][0] or f"color {color}")
        assert s["peak_bytes"] == max(st["by_memory_space"][s["name"]] for st in a["steps"])


def test_peak_text_prints_the_memory_spaces_of_a_tpu_dump(capsys):
    path = DATA / "memory" / "donation-tpu" / "module_0000.jit_step.cl_933746096.after_optimizations.txt"
    assert main(["peak", str(path), "--top", "3"]) == 0
    out = capsys.readouterr().out
    exp = expected(path.with_name(path.stem + "-live-range.txt"))
    assert f"fragmentation {human(sum(e['fragmentation'] for e in exp['per_alloc'].values()))} " in out
    for color, e in exp["spaces"].items():
        name = exp["named"][color][0]
        label = name if color == 0 else f"{name} (S({color}))"
        row = next(ln for ln in out.split("\n") if ln.startswith(f"  {label} "))
        n = sum(1 for a in exp["allocs"].values() if a["color"] == color)
        cells = [str(n), human(e["total"]), human(e["held"]), human(e["fragmentation"]), human(e["padding"])]
        assert row[len(label) + 2 :].split()[:5] == cells, row


def test_rectangles_that_overlap_are_in_place_reuses():
    """Some real dumps hold values that share a slice (an output written over its operand at the operand's last
    use): their rectangles touch at that step, which the overlap check above allows; this makes sure it met
    such pairs, so it can fail."""
    for path in LOCAL[:12]:
        check_heap_map(path)
    assert SHARING


def test_local_sets_cover_tpu_gpu_and_every_layout():
    names = [str(p) for p in LOCAL]
    assert any("gpu-0.10.2" in n for n in names) and any("tpu-0.10.2" in n for n in names)
    assert any("examples" in n for n in names) and any("seeds" in n for n in names)
    assert sum(1 for p in LOCAL if len(_allocations(_texts(p)[0])) and _texts(p)[2] and "vmem" in _texts(p)[2]) >= 5


def test_a_budget_draws_the_allocations_that_matter_and_counts_the_rest():
    """On the 8-device TPU dump (877 values): 100 rectangles at most, allocations holding bytes at the peak
    first, largest first; every value is drawn or counted as left out."""
    path = DATA / "oom" / "long_mesh" / "module_0000.jit_train_step.cl_933746096.after_optimizations-live-range.txt"
    exp = expected(path)
    hm = heap_map(report_for(path), budget=100)
    drawn = [a for allocs in hm.drawn.values() for a in allocs]
    assert hm.blocks() + len(drawn) <= 100
    candidates = sorted(
        (
            i
            for i, a in exp["allocs"].items()
            if a["category"] != "thread-local" and any(v["allocation"] == i for v in exp["values"])
        ),
        key=lambda i: (exp["per_alloc"][i]["held"] == 0, -exp["allocs"][i]["size"], i),
    )
    assert sorted(a.index for a in drawn) == sorted(candidates[: len(drawn)])
    assert hm.left_out_allocations == len(candidates) - len(drawn)
    assert hm.left_out_bytes == sum(exp["allocs"][i]["size"] for i in candidates[len(drawn) :])
    assert hm.blocks() + hm.left_out_values == len(exp["values"])
    for a in drawn:  # a cut allocation keeps its values live at the peak first
        if a.left_out:
            live = [v for v in exp["values"] if v["allocation"] == a.index and v["start"] <= exp["peak"] <= v["end"]]
            keys, live_keys = {b.key for b in a.blocks}, {v["key"] for v in live}
            assert live_keys <= keys if len(keys) >= len(live_keys) else keys <= live_keys
    text = hm.left_out_text()
    assert f"{hm.left_out_allocations} smaller allocations" in text and f"{hm.left_out_values} values" in text


def test_the_overlap_check_fails_on_values_the_rules_keep_apart(tmp_path):
    """Fault injection: in a copy of a real dump, move broadcast_multiply_fusion (live 17-21) onto copy.3's bytes
    (live 12-29) in the same allocation. The heap map draws the two overlapping, as the dump says, and the check
    above names the pair (the buffer rules' buffer.overlap would flag the same pair)."""
    import shutil

    src = DATA / "memory" / "donation-cpu"
    shutil.copytree(src, tmp_path / "d")
    listing = next((tmp_path / "d").glob("*-buffer-assignment.txt"))
    text = listing.read_text()
    line = " value: <113 broadcast_multiply_fusion @0> (size=32768,offset=262144): f32[64,128]{1,0}"
    assert line in text
    listing.write_text(text.replace(line, line.replace("offset=262144", "offset=0")))
    live = next((tmp_path / "d").glob("*-live-range.txt"))
    with pytest.raises(AssertionError, match="broadcast_multiply_fusion"):
        check_heap_map(live)
