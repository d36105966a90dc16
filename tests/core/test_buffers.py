"""The buffer-assignment reader on every real buffer dump: zero diagnostics, exact ranges, and every record
checked against an independent line-by-line parse written in this test. Also the sweep of ../shared."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_lsp.core.buffers import kind_from_path, read_buffers
from hlo_lsp.core.occurrences import OccurrenceIndex
from tests.fixtures import DATA, SHARED, require_found


def is_buffer_file(path: Path) -> bool:
    name = path.name
    if kind_from_path(name) is not None:
        return True
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read(64).startswith("BufferAssignment:")


def buffer_files(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*.txt")) if is_buffer_file(p)]


FILES = buffer_files(DATA)
IDS = [str(p.relative_to(DATA)) for p in FILES]


def read(path: Path):
    return read_buffers(path.read_text(encoding="utf-8"), kind_from_path(path.name))


def test_data_has_every_kind():
    kinds = {read(p).kind for p in FILES}
    assert kinds == {"single", "assignment", "values", "live-range", "memory-report"}
    # the old single files (four, plus old jax's in tests/data/diff, named `-buffer-assignment.txt`) plus four
    # files per split set (the corpus's 23 and any added since); the producers' samples mix layouts
    # (tests/producers checks those)
    files = [p for p in FILES if "producers" not in p.parts]
    old_named = [
        p
        for p in files
        if p.name.endswith("-buffer-assignment.txt")
        and not p.with_name(p.name.replace("-buffer-assignment.txt", "-buffer-assignment-values.txt")).exists()
    ]
    singles = sum(1 for p in files if read(p).kind == "single") + len(old_named)
    split_sets = sum(1 for p in files if p.name.endswith("-buffer-assignment.txt")) - len(old_named)
    assert singles >= 4 and split_sets >= 23
    assert len(files) == singles + 4 * split_sets


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_reads_with_zero_diagnostics(path):
    doc = read(path)
    assert doc.diagnostics == []


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_every_occurrence_range_is_its_name(path):
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    doc = read(path)
    assert bool(doc.occurrences) == (doc.kind != "memory-report")  # the report names no instruction or value
    for o in doc.occurrences:
        got = lines[o.line][o.start : o.end]
        if o.kind == "allocation":
            assert got == "allocation " + o.key
        elif o.kind == "value":
            assert got == o.key or got + "{}" == o.key, (o, got)
        else:
            assert got == o.key, (o, got)
    order = [(o.line, o.start) for o in doc.occurrences]
    assert order == sorted(order)
    if not doc.occurrences:
        return
    index = OccurrenceIndex(doc.occurrences)
    first = doc.occurrences[len(doc.occurrences) // 2]
    assert index.at(first.line, first.start) == first


# --------------------------------------------------------------------- independent parse of the text

ALLOC_RE = re.compile(r"^allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)(.*):$")
VALUE_RE = re.compile(r"^ value: <(\d+) (\S+?)( \(phi\))? @(\d+)> \(size=(\d+),offset=(\d+)\): (.+)$")
HEADER_RE = re.compile(r"^<(\d+) (\S+?)( \(phi\))? @(\d+)>$")
GLUED_RE = re.compile(r"<(\d+) ([^\s<>]+?)( \(phi\))? @(\d+)>$")  # jaxlib 0.4.30/0.4.35: after the from line


def independent(text: str) -> dict:
    """Counts and fields read with plain string operations, section by section."""
    out = {
        "allocs": [],
        "values": [],
        "used": [],
        "seq": [],
        "lr": [],
        "peak": [],
        "stack": 0,
        "positions": 0,
        "uses": 0,
        "from": 0,
    }
    section = None
    report = "\nAllocations sorted by size" in text  # an old memory report repeats allocation headers in KiB
    for line in text.split("\n"):
        if line.startswith("allocation ") and report:
            continue
        if line.startswith("allocation "):
            m = ALLOC_RE.match(line)
            flags = m.group(3)
            param = re.search(r", parameter (\d+)", flags)
            out["allocs"].append(
                (
                    int(m.group(1)),
                    int(m.group(2)),
                    int(param.group(1)) if param else None,
                    "maybe-live-out" in flags,
                    "thread-local" in flags,
                    ", constant" in flags,
                    "preallocated-temp" in flags,
                    "output shape is" in flags,
                )
            )
        elif line.startswith(" value: "):
            m = VALUE_RE.match(line)
            out["values"].append(
                (int(m.group(1)), m.group(2), bool(m.group(3)), int(m.group(5)), int(m.group(6)), m.group(7))
            )
        elif line.startswith("<"):
            m = HEADER_RE.match(line)
            out["used"].append((int(m.group(1)), m.group(2), bool(m.group(3))))
            section = "used"
        elif line in (" positions:", " uses:"):
            section = line.strip()
        elif line.startswith(" from instruction:"):
            out["from"] += 1
            m = GLUED_RE.search(line)
            if m:  # the next value's header, glued to this line's end
                out["used"].append((int(m.group(1)), m.group(2), bool(m.group(3))))
                section = "used"
        elif section in ("positions:", "uses:") and line.startswith("  ") and line != "  (none)":
            out["positions" if section == "positions:" else "uses"] += 1
        elif line == "  InstructionSequence:":
            section = "seq"
        elif line == "  BufferLiveRange:":
            section = "lr"
        elif line.startswith("  Live ranges at "):
            section = "peak"
        elif line.startswith("  Stack trace breakdown"):
            section = "stack"
        elif line.startswith("    ") and section == "seq":
            step, name = line.strip().split(":", 1)
            out["seq"].append((int(step), name))
        elif line.startswith("    ") and section == "lr":
            name, span = line.strip().rsplit(":", 1)
            a, b = span.split("-")
            out["lr"].append((name if "{" in name else name + "{}", int(a), int(b)))
        elif line.startswith("    ") and section == "peak":
            name, rest = line.strip().split(": ", 1)
            out["peak"].append((name, int(rest.split(" ")[0])))
        elif line.startswith("    ") and section == "stack":
            out["stack"] += 1
        elif line and not line.startswith(" "):
            section = None
    return out


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_records_match_independent_parse(path):
    text = path.read_text(encoding="utf-8")
    exp = independent(text)
    doc = read(path)
    got_allocs = [
        (
            a.index,
            a.size,
            a.parameter,
            a.maybe_live_out,
            a.thread_local,
            a.constant,
            a.preallocated_temp,
            a.output_shape is not None,
        )
        for a in doc.allocations
    ]
    assert got_allocs == exp["allocs"]
    got_values = [(a.value_id, a.name, a.phi, a.size, a.offset, a.shape) for a in doc.assignments()]
    assert got_values == exp["values"]
    assert [(u.value_id, u.name, u.phi) for u in doc.used_values] == exp["used"]
    assert sum(len(u.positions) for u in doc.used_values) == exp["positions"]
    assert sum(len(u.uses) for u in doc.used_values) == exp["uses"]
    assert sum(u.from_instruction is not None for u in doc.used_values) == exp["from"]
    assert [(s.step, s.name) for s in doc.sequence] == exp["seq"]
    assert [(lr.key, lr.start, lr.end) for lr in doc.live_ranges] == exp["lr"]
    assert [(p.name, p.bytes) for p in doc.peak_entries] == exp["peak"]
    assert len(doc.stack_trace) == exp["stack"]
    if doc.live_range_max is not None:
        assert len(doc.sequence) == doc.live_range_max


def test_name_forms_and_keys():
    doc = read(DATA / "seeds" / "002_b0117d631587537a.txt")
    by_name = {a.name: a for a in doc.assignments()}
    assert by_name["fusion.10{0}"].key == "fusion.10{0}" and by_name["fusion.10{0}"].index == (0,)
    assert by_name["fusion.10{}"].index == () and by_name["fusion.10{}"].size == 96
    assert by_name["convert.2"].key == "convert.2{}" and by_name["convert.2"].index is None
    assert by_name["convert.1"].color == 1
    # old peak lists name bare instructions
    assert doc.peak_step == 78 and all(p.key is None for p in doc.peak_entries)
    assert {"fusion.10", "fusion.17"} <= {p.instruction for p in doc.peak_entries}


def test_allocation_kinds_and_addresses():
    doc = read(DATA / "seeds" / "003_6f652c95ac4cfb4d.txt")
    a0 = doc.allocations[0]
    assert a0.address == "0x7f56c8061d90" and a0.parameter == 3 and a0.parameter_shape == "f32[784,128]"
    assert a0.parameter_shape_index == ()
    assert doc.allocations[5].output_shape == "(s32[], f32[], f32[], f32[])" and doc.allocations[5].maybe_live_out
    assert doc.allocations[7].thread_local and doc.allocations[13].constant
    # from instruction without a space after the colon
    first = doc.used_values[0]
    assert first.from_instruction.startswith("%lhs_value.36 = f32[]")
    seed2 = read(DATA / "seeds" / "002_b0117d631587537a.txt")
    a7 = seed2.allocations[7]
    assert a7.color == 1 and a7.preallocated_temp and a7.kinds() == ["color 1", "preallocated-temp"]


def test_phi_values_and_current_peak_list():
    folder = DATA / "jax-cpu" / "cond_switch"
    stem = "module_0000.jit_piecewise.cpu_after_optimizations"
    doc = read(folder / f"{stem}-buffer-assignment.txt")
    phis = [a for a in doc.assignments() if a.phi]
    assert phis and all(" (phi)" not in a.name for a in phis)
    assert len(phis) == (folder / f"{stem}-buffer-assignment.txt").read_text().count("(phi)")
    lr = read(DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations-live-range.txt")
    assert lr.peak_step == 9 and lr.peak_entries[0].key == "params_0___w__.1{}"
    assert lr.peak_entries[-1].cumulative == 2937896 == lr.peak_breakdown_total
    root = lr.stack_trace[0]
    assert root.parent is None and root.depth == 0 and root.total == 2937896
    assert all(n.parent == 0 and n.depth == 1 for n in lr.stack_trace[1:])
    assert lr.stack_trace[1].name == "params[0]['w']"


def test_stack_tree_depths_follow_parents():
    for path in FILES:
        doc = read(path)
        for n in doc.stack_trace:
            if n.parent is not None:
                assert doc.stack_trace[n.parent].depth == n.depth - 1


def test_memory_report_tables():
    doc = read(DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations-memory-usage-report.txt")
    assert len(doc.memory_report) == 23
    t = doc.memory_report[3]
    assert (t.color, t.memory_space, t.total_bytes) == (0, "default", 2938471)
    assert [(r.size_text, r.offset, r.n_values) for r in t.rows][:2] == [("256.0KiB", 0, 3), ("128.0KiB", 262144, 2)]


def test_crlf_reads_the_same():
    path = DATA / "seeds" / "004_a3085531593bac68.txt"
    text = path.read_text()
    a = read_buffers(text)
    b = read_buffers(text.replace("\n", "\r\n"))
    assert b.diagnostics == [] and b.occurrences == a.occurrences


def test_live_range_not_available():
    doc = read_buffers("HloLiveRange not available (finalized or constructed from proto)\n", "live-range")
    assert doc.live_range_available is False
    assert [d.severity.label for d in doc.diagnostics] == ["information"]


# ------------------------------------------------------------------------------------- shared sweep


def test_sweep_shared_dumps():
    files = buffer_files(SHARED / "seeds") + buffer_files(SHARED / "corpus") if SHARED.is_dir() else []
    require_found(files, "buffer dumps in the shared corpus")
    bad = {str(p): read(p).diagnostics[:3] for p in files if read(p).diagnostics}
    assert bad == {}
    assert len(files) >= 4 + 4 * 23


def _xla_human(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    u = 0
    while n >= 1024 * 1024:
        n //= 1024
        u += 1
    return f"{n / 1024.0:.1f}KiB" if u == 0 else f"{n / 1024.0:.2f}{'KMGTPE'[u]}iB"


def test_older_memory_report_layout():
    """XLA before the per-memory-space report wrote `Allocations sorted by size:` lists (format strings of
    BufferAssignment::MemoryUsageReport, transcribed here); build one from a real listing and read it."""
    listing = (
        DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations-buffer-assignment.txt"
    ).read_text()
    allocs = []
    for block in listing.split("\nallocation ")[1:]:
        head, *values = block.split("\n")
        idx, rest = head.split(": size ", 1)
        size, flags = (rest.split(",", 1) + [""])[:2] if "," in rest else (rest[:-1], "")
        vals = [tuple(int(x) for x in re.search(r"size=(\d+),offset=(\d+)", v).groups()) for v in values if v.strip()]
        allocs.append((int(idx), int(size), ("," + flags) if flags else ":", vals))
    total = sum(a[1] for a in allocs)
    out = [
        f"Total bytes used: {total} ({_xla_human(total)})",
        "",
        "Allocations sorted by size:",
        "",
        "cumulative_size; total_size - cumulative_size; allocation",
        "-" * 78,
    ]
    cum = 0
    ordered = sorted(allocs, key=lambda a: (-a[1], a[0]))
    for idx, size, flags, _ in ordered:
        cum += size
        out.append(
            "%10s(%3.0f%%); %10s; allocation %d: size %s%s"
            % (_xla_human(cum), 100.0 * cum / total, _xla_human(total - cum), idx, _xla_human(size), flags)
        )
    out += ["", "", "Allocations sorted by size with their values:"]
    multi = 0
    for idx, size, flags, vals in ordered:
        out.append(f"allocation {idx}: size {_xla_human(size)}{flags}")
        if len(vals) > 1:
            multi += 1
            out += ["", "\tcumulative_size;       size;       offset; used_by_n_values; shapes_list", "\t" + "-" * 60]
            by_off: dict[int, list[int]] = {}
            for s, o in vals:
                by_off.setdefault(o, []).append(s)
            c = 0
            for off, sizes in sorted(by_off.items(), key=lambda kv: -max(kv[1])):
                c += max(sizes)
                out.append(
                    "\t%9s(%3.0f%%); %10s; %12d; %16d; f32[1]"
                    % (_xla_human(c), 100.0, _xla_human(max(sizes)), off, len(sizes))
                )
            out.append("")
    text = "\n".join(out) + "\n"
    doc = read_buffers(text)
    assert doc.kind == "memory-report" and doc.diagnostics == []
    assert [t.allocation for t in doc.memory_report] == [a[0] for a in ordered]
    with_rows = [t for t in doc.memory_report if t.rows]
    assert len(with_rows) == multi >= 1
    assert doc.total_bytes_used == total
