"""The real samples for issues 19-21 (tests/data/oom, tests/data/diff, tests/data/memory) are present, read without a
finding, and hold what the tests of those issues will rely on.

- oom: XLA's TPU out-of-memory reports (long form on one device and on a 2x2 mesh, short form) beside the dump of
  the failed compilation: every `XLA label` instruction name is defined in the after-optimizations HLO and names a
  value of the buffer assignment whose size and shape the entry states; the short form's total is the memory-usage
  report's `Total bytes`.
- diff: pairs that differ by one thing (jax version, dtype, remat policy, a moved source line).
- memory: a donated and a not-donated entry parameter beside outputs of the same shape.

Every expected value is read from the sample text with this file's own regexes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hlo_lsp.cli import main as cli_main
from tests.fixtures import DATA

OOM = DATA / "oom"
DIFF = DATA / "diff"
MEMORY = DATA / "memory"
LONG = ("long_1dev", "long_mesh")
BUFFER_SUFFIXES = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
)

ENTRY = re.compile(r"^\s+(\d+)\. Size: (\S+)\n(?P<body>(?:\s{5}.*\n)*?)\s+=+\n", re.M)
FIELD = re.compile(r"^\s+(Operator|Shape|Unpadded size|XLA label|Allocation type): (.*)$", re.M)
VALUE = re.compile(r"^ value: <\d+ ([^\s<>{}]+)(\{[\d,]*\})? @\d+> \(size=(\d+),offset=\d+\): (.*)$", re.M)
UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def one(folder: Path, suffix: str) -> Path:
    found = [p for p in folder.iterdir() if p.name.endswith(suffix)]
    assert len(found) == 1, (folder, suffix, found)
    return found[0]


def approx_bytes(text: str) -> tuple[float, float]:
    """XLA's human-readable size (`32.00M`, `387.5K`, `512B`) as bytes, and the rounding of its last digit."""
    m = re.fullmatch(r"([\d.]+)([BKMG])", text)
    assert m, text
    decimals = len(m[1].split(".")[1]) if "." in m[1] else 0
    unit = UNITS[m[2]]
    return float(m[1]) * unit, 0.5 * 10**-decimals * unit


def entries(log: str) -> list[dict]:
    """The numbered entries of `Largest program allocations in hbm` (the arguments-and-outputs part excluded)."""
    head = log.index("Largest program allocations in hbm:")
    tail = log.find("Largest program arguments and outputs", head)
    out = []
    for m in ENTRY.finditer(log[head : tail if tail > 0 else None]):
        fields = dict(FIELD.findall(m["body"]))
        out.append({"rank": int(m[1]), "size": m[2], **fields})
    return out


@pytest.mark.parametrize("name", LONG)
def test_long_form_labels_resolve_to_instructions_and_buffers(name):
    folder = OOM / name
    log = one(folder, ".log").read_text(encoding="utf-8")
    assert "RESOURCE_EXHAUSTED" in log and "Ran out of memory in memory space hbm" in log
    used, cap = re.search(r"Used (\S+) of (\S+) hbm\. Exceeded hbm capacity by (\S+)\.", log).groups()[:2]
    assert approx_bytes(used)[0] >= approx_bytes(cap)[0]
    found = entries(log)
    assert [e["rank"] for e in found] == list(range(1, len(found) + 1)) and len(found) >= 10
    hlo = one(folder, ".after_optimizations.txt").read_text(encoding="utf-8")
    defined = set(re.findall(r"^\s*(?:ROOT )?%?([^\s=%]+) = ", hlo, re.M))
    values = VALUE.findall(one(folder, "-buffer-assignment.txt").read_text(encoding="utf-8"))
    checked = 0
    for e in found:
        label = e["XLA label"]
        m = re.fullmatch(r"(\S+) = \S+\(.*", label)
        if not m:  # not an instruction: `overlays` (program code)
            assert e["Allocation type"] == label == "overlays", e
            continue
        inst = m[1]
        assert inst in defined, f"{name}: {inst} not defined in the after-optimizations HLO"
        size, slack = approx_bytes(e["size"])
        same = [
            (n, idx, s, shape)
            for n, idx, s, shape in values
            if n == inst and abs(int(s) - size) <= slack and shape == e["Shape"]
        ]
        assert same, f"{name}: no buffer value {inst} of {e['size']} {e['Shape']}"
        checked += 1
    assert checked >= len(found) - 1


@pytest.mark.parametrize("name", LONG)
def test_long_form_arguments_and_outputs_part(name):
    log = one(OOM / name, ".log").read_text(encoding="utf-8")
    part = log[log.index("Largest program arguments and outputs in hbm:") :]
    labels = re.findall(r"XLA label: (.*)", part)
    assert labels and all(re.fullmatch(r"(Argument \d+|Output) index \{[\d,]*\}", x) for x in labels)
    layout = re.search(
        r"entry_computation_layout=\{\((.*?)\)->",
        one(OOM / name, ".after_optimizations.txt").read_text(encoding="utf-8"),
    ).group(1)
    n_params = len(re.findall(r"[a-z]\w*\[[\d,]*\]", layout))
    assert all(int(a) < n_params for a in re.findall(r"Argument (\d+) index", part))


def test_mesh_report_is_per_device():
    """On the 2x2 mesh the weights f32[16384,16384] are split over `model`: the report lists per-device halves."""
    log = one(OOM / "long_mesh", ".log").read_text(encoding="utf-8")
    hlo = one(OOM / "long_mesh", ".after_optimizations.txt").read_text(encoding="utf-8")
    assert "num_partitions=4" in hlo.splitlines()[0]
    shapes = set(re.findall(r"Shape: (f32\[\d+,\d+\])", log[log.index("Largest program arguments") :]))
    assert "f32[16384,8192]" in shapes and "f32[16384,16384]" not in shapes


def test_short_form_total_is_the_reports_total():
    folder = OOM / "short"
    log = one(folder, ".log").read_text(encoding="utf-8")
    m = re.search(r"HLO temporaries \((\S+)\) exceeds available HBM \((\S+)\)", log)
    assert m and "Largest program allocations" not in log
    total = int(re.search(r"^Total bytes: (\d+)", one(folder, "-memory-usage-report.txt").read_text(), re.M)[1])
    size, slack = approx_bytes(m[1])
    assert abs(total - size) <= slack and size > approx_bytes(m[2])[0]


def stem_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.endswith("after_optimizations.txt"))


@pytest.mark.parametrize(
    "folder",
    [p.parent for p in sorted(OOM.rglob("*after_optimizations.txt"))]
    + [p.parent for p in sorted(DIFF.glob("*/*/*after_optimizations.txt"))]
    + [p.parent for p in sorted(MEMORY.glob("*/*after_optimizations.txt"))],
    ids=lambda p: str(p.relative_to(DATA)),
)
def test_each_set_is_whole_and_reads_without_a_finding(folder, capsys):
    (hlo,) = stem_files(folder)
    stem = hlo.name[: -len(".txt")]
    old_single = not (folder / (stem + "-buffer-assignment-values.txt")).exists()
    wanted = BUFFER_SUFFIXES[:1] if old_single else BUFFER_SUFFIXES
    for suffix in wanted:
        assert (folder / (stem + suffix)).is_file(), (folder, suffix)
    assert cli_main(["check", "--format", "json", "--fail-on", "warning", str(folder)]) == 0
    findings = json.loads(capsys.readouterr().out)
    # the only findings are the information-level donation hints (issue 19), never a warning or an error
    assert {(f["severity"], f["code"]) for f in findings} <= {("information", "hlo.donation-hint")}, findings


def instructions(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if re.match(r"\s*(ROOT )?%", ln)]


def test_moved_source_line_changes_only_the_location_table():
    base, moved = (stem_files(DIFF / "jax-0.10.2" / v)[0] for v in ("base", "moved"))
    assert instructions(base) == instructions(moved)
    b, m = base.read_text().splitlines(), moved.read_text().splitlines()
    assert len(b) == len(m)
    table = range(b.index("FileLocations"), b.index("StackFrames"))
    changed = [i for i, (x, y) in enumerate(zip(b, m)) if x != y]
    assert changed and all(i in table for i in changed)
    # the program's own lines after the inserted comments moved, all by the same amount
    shifts = {int(re.search(r" line=(\d+)", m[i])[1]) - int(re.search(r" line=(\d+)", b[i])[1]) for i in changed}
    shifts.discard(0)
    assert len(shifts) == 1 and shifts.pop() > 0


def test_dtype_pair_differs_in_element_type_only_where_expected():
    base, bf16 = (stem_files(DIFF / "jax-0.10.2" / v)[0].read_text() for v in ("base", "bf16"))
    layout = lambda t: re.search(r"entry_computation_layout=\{\((.*?)\)->", t)[1]
    assert "bf16" not in layout(base) and "f32" in layout(base)
    assert "bf16[256,512]" in layout(bf16) and "f32[256,512]" not in layout(bf16)


def test_version_pair_is_one_program_under_two_buffer_layouts():
    old, new = (stem_files(DIFF / v / "base")[0] for v in ("jax-0.4.30", "jax-0.10.2"))
    header = lambda p: re.search(r"entry_computation_layout=\{(.*?)\}, ", p.read_text()).group(1)
    strip = lambda s: re.sub(r"\{[\d,]*\}", "", s)  # layouts may be printed differently
    assert strip(header(old)) == strip(header(new))
    assert not (old.parent / (old.name[:-4] + "-live-range.txt")).exists()
    assert (new.parent / (new.name[:-4] + "-live-range.txt")).exists()


def test_remat_pair_differs_in_the_recomputed_matmuls():
    base, remat = (stem_files(DIFF / "tpu-0.10.2" / v)[0].read_text() for v in ("base", "remat"))
    count = lambda t: len(re.findall(r"= \S+ convolution\(", t))
    assert count(remat) > count(base) > 0


@pytest.mark.parametrize("name", ("donation-cpu", "donation-tpu"))
def test_donation_sample_has_donated_and_undonated_parameters(name):
    text = stem_files(MEMORY / name)[0].read_text(encoding="utf-8")
    header = text.splitlines()[0]
    aliased = {int(p) for p in re.findall(r"\{\d+\}: \((\d+), \{\}, may-alias\)", header)}
    start = text.index("\nENTRY ")
    entry = text[start : text.index("\n}", start)]
    params = {
        int(m[2]): (m[1], m[3].replace("\\'", "'"))
        for m in re.finditer(r"^\s*%\S+ = (\S+) parameter\((\d+)\),.*?metadata=\{op_name=\"(.*?)\"", entry, re.M)
    }
    outputs = re.search(r"->\((.*)\)\}", header)[1]
    out_shapes = re.findall(r"[a-z]\w*\[[\d,]*\]", outputs)
    donated = {params[i][1] for i in aliased if i in params}
    undonated = {
        params[i][1]
        for i in params
        if i not in aliased and re.sub(r"\{.*", "", params[i][0]) in out_shapes and params[i][1].startswith("momentum")
    }
    assert donated and all(n.startswith("params[") for n in donated)
    assert undonated and all(n.startswith("momentum[") for n in undonated)
