"""XLA's peak reproduced on every real buffer-assignment set, and the allocated view against an independent sum.

Expected values are read from the dump text with this file's own regexes (and tests/fixtures.py): the peak step
N and the entries under ``Live ranges at N (peak)``, the breakdown total, the allocation listing and the
BufferLiveRange section. Nothing expected is taken from hlo_lsp."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from hlo_lsp.core.memory.peak import analyse_peak, peak_of_bundle, xla_peak_step
from hlo_lsp.core.workspace import Workspace
from tests.fixtures import DATA, IN_CI, SHARED, parse_assignment_listing, parse_live_ranges

PEAK = re.compile(r"^  Live ranges at (\d+) \(peak\):$", re.M)
CURRENT_ENTRY = re.compile(r"^    (\S+\{[\d,]*\}): (\d+) bytes \(cumulative: (\d+) bytes\)$")
OLD_ENTRY = re.compile(r"^    ([^\s{}:]+): (\d+) bytes$")
BREAKDOWN = re.compile(r"^  Stack trace breakdown for peak usage: ([\d ]+) bytes$", re.M)
MAX = re.compile(r"^HloLiveRange \(max (\d+)\):$", re.M)
ALLOC_HEADER = re.compile(r"^allocation (\d+): (.*)$", re.M)


def dump_sets(root: Path) -> list[Path]:
    """The file holding the peak list of every buffer-assignment set under root: old single files (seeds) and
    the -live-range.txt of every split set."""
    out = []
    seeds = root / "seeds"
    if seeds.is_dir():
        for p in sorted(seeds.iterdir()):
            head = p.read_text(encoding="utf-8", errors="replace")[:64]
            if head.startswith("BufferAssignment:"):
                out.append(p)
    corpus = root / "corpus" if (root / "corpus").is_dir() else root
    out += sorted(p for p in corpus.rglob("*-live-range.txt") if "producers" not in p.parts)  # tests/producers
    return out


LOCAL = dump_sets(DATA)
SHARED_SETS = dump_sets(SHARED) if SHARED.is_dir() else []


def expected_peak(text: str) -> dict:
    m = PEAK.search(text)
    assert m, "dump has no peak list"
    entries = []
    for line in text[m.end() + 1 :].split("\n"):
        cm = CURRENT_ENTRY.match(line)
        om = OLD_ENTRY.match(line)
        if cm:
            entries.append((cm.group(1), int(cm.group(2))))
        elif om:
            entries.append((om.group(1), int(om.group(2))))
        else:
            break
    b = BREAKDOWN.search(text)
    return {"step": int(m.group(1)), "entries": entries, "total": int(b.group(1).replace(" ", "")) if b else None}


def report_for(path: Path):
    return peak_of_bundle(Workspace().bundle(str(path.resolve())))


def check_xla_peak(path: Path) -> None:
    exp = expected_peak(path.read_text(encoding="utf-8"))
    r = report_for(path)
    assert r.xla.step == exp["step"]
    current = all("{" in name for name, _ in exp["entries"])
    if current:
        mine = {v.key: v.bytes for v in r.xla.live}
        assert {name: mine.get(name) for name, _ in exp["entries"]} == dict(exp["entries"])
        assert len(r.xla.live) == len(exp["entries"])
        assert exp["total"] is not None and r.xla.bytes == exp["total"]
    else:
        # old dumps print the bare instruction name and its full shape's ByteSizeOf, once per live value
        assert Counter((v.instruction, v.bytes) for v in r.xla.live) == Counter(exp["entries"])
        assert r.xla.bytes == sum(b for _, b in exp["entries"])
    assert r.problems == []


def test_local_copies_cover_both_layouts():
    names = [p.name for p in LOCAL]
    # jax-cpu corpus, diff/old and diff/new, and the samples for issues 19-21: oom (3), diff pairs (5), memory (2)
    assert sum(n.endswith("-live-range.txt") for n in names) == 23 + 2 + 10
    assert sum(not n.endswith("-live-range.txt") for n in names) == 4  # seeds 000, 002, 003, 004


@pytest.mark.parametrize("path", LOCAL, ids=[p.name[:60] for p in LOCAL])
def test_xla_peak_on_local_copies(path):
    check_xla_peak(path)


def test_xla_peak_on_shared():
    if not SHARED.is_dir():
        if IN_CI:
            pytest.fail(f"{SHARED} missing under CI")
        pytest.skip(f"{SHARED} not present")
    if not SHARED_SETS:
        pytest.fail(f"no buffer-assignment sets under {SHARED}")
    assert len(SHARED_SETS) == 27
    for p in SHARED_SETS:
        check_xla_peak(p)


# ------------------------------------------------------------------------------------ allocated view


def _category(header: str) -> str:
    if re.search(r"\bparameter \d+", header):
        return "parameter"
    if "output shape is" in header or "maybe-live-out" in header:
        return "output"
    if re.search(r"\bconstant\b", header):
        return "constant"
    return "temporary"


def independent_allocated(path: Path) -> tuple[list[int], dict[str, list[int]]]:
    """Bytes reserved at each step: per allocation, the union of [offset, offset+size) of the values whose live
    range holds the step, and an entry parameter's allocation whole at every step (the caller's buffer, donated
    or not, is held for the whole program), from the listing and live-range text only."""
    if path.name.endswith("-live-range.txt"):
        stem = path.name[: -len("-live-range.txt")]
        listing = path.with_name(stem + "-buffer-assignment.txt").read_text(encoding="utf-8")
    else:
        listing = path.read_text(encoding="utf-8")
    lr_text = path.read_text(encoding="utf-8")
    ranges = parse_live_ranges(lr_text)
    values = parse_assignment_listing(listing)
    cats = {int(m.group(1)): _category(m.group(2)) for m in ALLOC_HEADER.finditer(listing)}
    sizes = {
        int(m.group(1)): int(re.search(r"\bsize (\d+)", m.group(2)).group(1)) for m in ALLOC_HEADER.finditer(listing)
    }
    steps = max([int(MAX.search(lr_text).group(1))] + [e for _, e in ranges.values()]) + 1
    total = [0] * steps
    per_cat: dict[str, list[int]] = {c: [0] * steps for c in ("parameter", "output", "constant", "temporary")}
    for t in range(steps):
        slices: dict[int, list[tuple[int, int]]] = {a: [(0, sizes[a])] for a, c in cats.items() if c == "parameter"}
        for v in values:
            r = ranges.get(v["key"])
            if r and r[0] <= t <= r[1]:
                slices.setdefault(v["allocation"], []).append((v["offset"], v["offset"] + v["size"]))
        for alloc, sl in slices.items():
            covered = 0
            cur_s, cur_e = None, None
            for s, e in sorted(sl):
                if cur_e is None or s > cur_e:
                    if cur_e is not None:
                        covered += cur_e - cur_s
                    cur_s, cur_e = s, e
                else:
                    cur_e = max(cur_e, e)
            covered += cur_e - cur_s
            total[t] += covered
            per_cat[cats[alloc]][t] += covered
    return total, per_cat


@pytest.mark.parametrize("path", LOCAL, ids=[p.name[:60] for p in LOCAL])
def test_allocated_view_sums(path):
    total, per_cat = independent_allocated(path)
    view = report_for(path).allocated
    assert list(view.total) == total
    assert {c: list(col) for c, col in view.by_category.items()} == per_cat
    assert [sum(col[t] for col in view.by_color.values()) for t in range(len(total))] == total
    assert view.peak_bytes == max(total)
    assert view.peak_step == total.index(max(total))
    # the union never exceeds the sum of live slices, with parameters' allocations whole
    text = path.read_text(encoding="utf-8")
    listing = (
        text
        if not path.name.endswith("-live-range.txt")
        else path.with_name(path.name[: -len("-live-range.txt")] + "-buffer-assignment.txt").read_text(encoding="utf-8")
    )
    params = {
        int(m.group(1)): int(re.search(r"\bsize (\d+)", m.group(2)).group(1))
        for m in ALLOC_HEADER.finditer(listing)
        if _category(m.group(2)) == "parameter"
    }
    outside = sum(v.size for v in view.live if v.allocation not in params)
    assert outside + sum(params.values()) >= view.peak_bytes


def test_allocated_view_padding_on_tpu_seed():
    """Seed 004 is a TPU dump: f32[] is assigned 512 bytes (tiling T(128)) but ByteSizeOf is 4."""
    path = DATA / "seeds" / "004_a3085531593bac68.txt"
    text = path.read_text(encoding="utf-8")
    assert "<42 p0.1 @0> (size=512,offset=0): f32[]{:T(128)}" in text
    view = report_for(path).allocated
    p0 = next(v for v in view.live if v.key == "p0.1{}")
    assert (p0.size, p0.padding) == (512, 508)


# ------------------------------------------------------------------------------------ the algorithm itself


def test_adds_come_before_removes_at_one_time():
    # a ends at 0 (removed at 1); b starts at 1: with adds first the sum at 1 is 10 + 7 > 10
    assert xla_peak_step([(0, 0, 10), (1, 1, 7)]) == (1, 17)


def test_first_moment_wins_on_ties():
    assert xla_peak_step([(0, 0, 5), (3, 3, 5)]) == (0, 5)
    assert xla_peak_step([]) == (None, 0)


def test_source_of_peak_values():
    path = DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations-live-range.txt"
    r = report_for(path)
    hlo = path.with_name("module_0002.jit_predict.cpu_after_optimizations.txt").read_text(encoding="utf-8")
    fused = next(v for v in r.xla.live if v.key == "ynn_fusion.1{}")
    line = next(x for x in hlo.split("\n") if re.match(r"\s+%ynn_fusion\.1 = ", x))
    op = re.search(r'op_name="([^"]*)"', line)
    assert fused.source is not None and fused.source.op_name == op.group(1)
    frame = int(re.search(r"stack_frame_id=(\d+)", line).group(1))
    loc = int(re.search(rf"^{frame} {{file_location_id=(\d+)", hlo, re.M).group(1))
    row = re.search(rf"^{loc} {{file_name_id=(\d+) function_name_id=\d+ line=(\d+)", hlo, re.M)
    fname = re.search(rf'^{row.group(1)} "([^"]*)"', hlo[hlo.index("FileNames") :], re.M).group(1)
    assert (fused.source.frames[0].file, fused.source.frames[0].line) == (fname, int(row.group(2)))


def test_old_dump_source_from_metadata():
    path = DATA / "seeds" / "000_45ad91e6d67cdb55.txt"
    text = path.read_text(encoding="utf-8")
    r = report_for(path)
    with_src = [v for v in r.xla.live if v.source and v.source.frames]
    assert with_src
    for v in with_src:
        m = re.search(
            rf"from instruction: %{re.escape(v.instruction)} = .*source_file=\"([^\"]+)\" source_line=(\d+)", text
        )
        assert m and (v.source.frames[0].file, v.source.frames[0].line) == (m.group(1), int(m.group(2)))


def test_hlo_text_without_buffers_gives_no_report():
    from hlo_lsp.core.buffers.bufferset import BufferSet

    r = analyse_peak(BufferSet())
    assert r.xla.step is None and r.xla.live == [] and r.allocated.peak_step is None
    assert peak_of_bundle(None) is None


@pytest.mark.parametrize("path", LOCAL, ids=lambda p: p.name)
def test_a_report_lets_its_shape_memos_go_and_its_values_sources_stay_the_same(path, monkeypatch):
    """A report done with its sweeps keeps no shape memo (`Shapes.forget`); the sources its values give later
    (parsed again) are the ones a report that kept its memos gives."""
    from hlo_lsp.core.memory.values import Shapes

    r = report_for(path)
    assert r is not None and r.sources is not None
    assert not r.sources.shapes._full and not r.sources.shapes._line
    monkeypatch.setattr(Shapes, "forget", lambda self: None)
    kept = report_for(path)
    assert kept is not None and kept.sources is not None and kept.sources.shapes._full
    for a, b in ((r.xla.live, kept.xla.live), (r.allocated.live, kept.allocated.live)):
        assert [(v.key, v.bytes, v.shape, v.source) for v in a] == [(v.key, v.bytes, v.shape, v.source) for v in b]
