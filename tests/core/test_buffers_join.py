"""BufferSet: the join of one module's split files (or one old single file), and split-set pairing by stem.

Expected facts come from the dump text read with this test's own regexes."""

from __future__ import annotations

import gc
import os
import re
from pathlib import Path

import pytest

from hlo_lsp.core.buffers import read_buffers
from hlo_lsp.core.buffers.bufferset import BufferSet
from hlo_lsp.core.buffers.siblings import split_sets, split_siblings, split_stem

DATA = Path(__file__).resolve().parent.parent / "data"
CORPUS = DATA / "jax-cpu"
FOLDERS = sorted(p for p in CORPUS.iterdir() if p.is_dir())
SETS = [(stem, files) for folder in FOLDERS for stem, files in split_sets(folder).items()]

VALUE = re.compile(r"^ value: <(\d+) (\S+?)(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\): (.+)$", re.M)
ALLOC = re.compile(r"^allocation (\d+):", re.M)
HEADER = re.compile(r"^<(\d+) (\S+?)(?: \(phi\))? @\d+>$", re.M)
LIVE = re.compile(r"^    (\S+\{[0-9,]*\}):(\d+)-(\d+)$", re.M)
SEQ = re.compile(r"^    (\d+):(\S+)$", re.M)


def canonical(name: str) -> str:
    return name if name.endswith("}") else name + "{}"


def build(files: dict[str, Path]) -> BufferSet:
    return BufferSet.from_docs(
        [read_buffers(p.read_text(encoding="utf-8"), k) for k, p in files.items() if k != "module"]
    )


def test_every_corpus_module_has_a_full_split_set():
    assert len(SETS) == 23
    for stem, files in SETS:
        assert set(files) == {"module", "assignment", "values", "live-range", "memory-report"}, stem
        assert files["module"].name == stem + ".txt" and "before_optimizations" not in stem


@pytest.mark.parametrize("stem, files", SETS, ids=[s for s, _ in SETS])
def test_join_matches_each_file(stem, files):
    bs = build(files)
    assert bs.problems == []
    assignment = files["assignment"].read_text(encoding="utf-8")
    # every value line: allocation, offset, size, shape and where it was read
    current = None
    lines = assignment.split("\n")
    seen = 0
    for ln, line in enumerate(lines):
        m = ALLOC.match(line)
        if m:
            current = int(m.group(1))
            continue
        m = VALUE.match(line)
        if not m:
            continue
        v = bs.value(canonical(m.group(2)))
        assert v is not None and v.value_id == int(m.group(1)) and bs.values_by_id[v.value_id] is v
        assert (v.allocation, v.size, v.offset, v.shape) == (current, int(m.group(3)), int(m.group(4)), m.group(5))
        at = v.assignment_at
        assert at.kind == "assignment" and at.line == ln
        assert lines[ln][at.range.start_col : at.range.end_col] == m.group(2)
        assert bs.allocation_at[current].line < ln
        seen += 1
    assert seen == len(bs.values_by_key)
    # used values: ids agree, and positions/uses/from-instruction are attached
    values = files["values"].read_text(encoding="utf-8")
    for m in HEADER.finditer(values):
        v = bs.value(canonical(m.group(2)))
        assert v.value_id == int(m.group(1)) and v.from_instruction is not None and v.positions
        assert v.used_at.kind == "values"
        assert v.from_instruction.lstrip("%").startswith(v.instruction + " = ")
        assert v.from_instruction_at.kind == "values"
    # live ranges and schedule
    live = files["live-range"].read_text(encoding="utf-8")
    for m in LIVE.finditer(live):
        v = bs.value(m.group(1))
        assert v.live_range == (int(m.group(2)), int(m.group(3))) and v.live_range_at.kind == "live-range"
    for m in SEQ.finditer(live):
        assert bs.step_of(m.group(2)) == int(m.group(1))
    assert bs.total_bytes_used == sum(a.size for a in bs.allocations)
    for p in bs.peak_entries:
        assert bs.value(p.key).peak_bytes == p.bytes


def test_values_of_instruction_and_lookups():
    stem = "module_0002.jit_predict.cpu_after_optimizations"
    bs = build(split_siblings(CORPUS / "mlp_sgd" / f"{stem}.txt"))
    keys = [v.key for v in bs.values_of("iota_reduce_fusion")]
    assert keys == ["iota_reduce_fusion{}", "iota_reduce_fusion{0}", "iota_reduce_fusion{1}"]
    assert bs.value("no-such{}") is None and bs.values_of("no-such") == [] and bs.step_of("no-such") is None
    assert bs.allocation(6).output_shape == "s32[128]" and bs.allocation(999) is None


def test_old_single_file_joins_alone():
    path = DATA / "seeds" / "002_b0117d631587537a.txt"
    text = path.read_text()
    bs = BufferSet.from_docs([read_buffers(text)])
    assert bs.problems == []
    v = bs.value("fusion.10{}")
    assert v.size == 96 and v.live_range is not None and v.assignment_at.kind == "single"
    assert len(bs.values_by_key) == len(VALUE.findall(text))
    assert bs.peak_step == 78 and bs.total_bytes_used == 2885767252


def test_split_stem():
    assert split_stem("m.x-buffer-assignment-values.txt") == ("m.x", "values")
    assert split_stem("m.x-buffer-assignment.txt") == ("m.x", "assignment")
    assert split_stem("m.x-live-range.txt") == ("m.x", "live-range")
    assert split_stem("m.x-memory-usage-report.txt") == ("m.x", "memory-report")
    assert split_stem("m.x.txt") == ("m.x", "module")
    assert split_stem("m.hlo") is None


def test_siblings_exact_stem_and_no_escape(tmp_path):
    d = tmp_path / "dump"
    d.mkdir()
    for name in (
        "m.txt",
        "m-buffer-assignment.txt",
        "m-live-range.txt",
        "m2-buffer-assignment-values.txt",
        "m.before_optimizations.txt",
    ):
        (d / name).write_text("x\n")
    outside = tmp_path / "secret-buffer-assignment-values.txt"
    outside.write_text("x\n")
    os.symlink(outside, d / "m-buffer-assignment-values.txt")
    (d / "m-memory-usage-report.txt").mkdir()  # a folder is not a file
    sib = split_siblings(d / "m-live-range.txt")
    assert sib == {
        "module": d / "m.txt",
        "assignment": d / "m-buffer-assignment.txt",
        "live-range": d / "m-live-range.txt",
    }
    # a symlink that stays inside the folder is fine
    os.symlink(d / "m-buffer-assignment.txt", d / "n-buffer-assignment.txt")
    assert split_siblings(d / "n.txt") == {"assignment": d / "n-buffer-assignment.txt"}
    assert split_siblings(d / "m.before_optimizations.txt") == {"module": d / "m.before_optimizations.txt"}
    assert split_siblings(d / "notes.md") == {}
    assert set(split_sets(d)) == {"m", "m2", "n"}


def test_fact_sources_point_at_their_text():
    stem = "module_0002.jit_predict.cpu_after_optimizations"
    files = split_siblings(CORPUS / "mlp_sgd" / f"{stem}.txt")
    bs = build(files)
    texts = {k: p.read_text(encoding="utf-8").split("\n") for k, p in files.items()}
    at = bs.total_at
    assert texts[at.kind][at.line][at.range.start_col : at.range.end_col] == str(bs.total_bytes_used)
    at = bs.peak_at
    assert texts[at.kind][at.line][at.range.start_col : at.range.end_col] == str(bs.peak_step)
    for v in bs.values_by_key.values():
        for src, want in (
            (v.assignment_at, v.name),
            (v.from_instruction_at, v.instruction),
            (v.live_range_at, None),
            (v.used_at, None),
        ):
            if src is None:
                continue
            got = texts[src.kind][src.line][src.range.start_col : src.range.end_col]
            assert got == want if want is not None else (got == v.key or got + "{}" == v.key)
    for index, src in bs.allocation_at.items():
        assert texts[src.kind][src.line].startswith(f"allocation {index}:")


def test_occurrence_roles():
    seed = read_buffers((DATA / "seeds" / "004_a3085531593bac68.txt").read_text())
    folder = CORPUS / "mlp_sgd"
    stem = "module_0002.jit_predict.cpu_after_optimizations"
    for doc in [seed] + [
        read_buffers(p.read_text(encoding="utf-8"), k)
        for k, p in split_siblings(folder / f"{stem}.txt").items()
        if k != "module"
    ]:
        listing_lines = {a.line for a in doc.assignments()} | {a.line for a in doc.allocations}
        for o in doc.occurrences:
            assert o.role == ("def" if o.line in listing_lines else "use"), (doc.kind, o)
            if o.kind == "allocation":
                assert o.line in {a.line for a in doc.allocations}


@pytest.mark.parametrize("stem, files", SETS[:6], ids=[s for s, _ in SETS[:6]])
def test_a_join_is_freed_by_reference_counting(stem, files):
    """A join holds no reference cycle (a value reads its facts through its set's `Roles`, not the set): the
    server freezes its survivors (`gc.freeze`), and a frozen cycle is never collected."""
    docs = [read_buffers(p.read_text(encoding="utf-8"), k) for k, p in files.items() if k != "module"]
    gc.collect()
    bs = BufferSet.from_docs(docs)
    values = list(bs.values_by_key.values())
    assert values and all(v.size is not None or v.live_range is not None for v in values)
    del bs
    assert all(v.size is not None or v.live_range is not None for v in values)  # a value outlives its set
    del values
    assert gc.collect() == 0


def _joined_state(bs: BufferSet):
    return (
        [(v.key, v.instruction, v.index, v.value_id, v.phi, v.color, v.n) for v in bs.values_by_key.values()],
        [list(r) for r in bs.roles.records],
        [bytes(d) for d in bs.roles.docs],
        [(kind, d.range, d.code, d.message) for kind, d in bs.problems],
    )


def _files_alone_and_together():
    """Each split file of six corpus modules joined alone, and each module's files joined in two orders, plus the
    seeds' old single files (their listing and used values name the same values: the per-record loop joins the
    used values there)."""
    out = []
    for stem, files in SETS[:6]:
        docs = {k: read_buffers(p.read_text(encoding="utf-8"), k) for k, p in files.items() if k != "module"}
        out += [(f"{stem}:{k}", [d]) for k, d in docs.items()]
        out.append((f"{stem}:all", list(docs.values())))
        out.append((f"{stem}:reversed", list(docs.values())[::-1]))
    for seed in sorted((DATA / "seeds").glob("*.txt")):
        text = seed.read_text(encoding="utf-8")
        if "Used values:" in text:
            out.append((f"seed {seed.name}", [read_buffers(text)]))
    return out


def _counting(monkeypatch):
    """`join._new_values` wrapped: the list of what each call returned."""
    from hlo_lsp.core.buffers import join

    taken: list[bool] = []
    real = join._new_values

    def counted(*args):
        got = real(*args)
        taken.append(got)
        return got

    monkeypatch.setattr(join, "_new_values", counted)
    return taken


@pytest.mark.parametrize("name, docs", _files_alone_and_together(), ids=lambda x: x if isinstance(x, str) else "")
def test_new_values_joined_at_once_as_one_by_one(name, docs, monkeypatch):
    """`join._new_values` (a file whose values are all new to the set, made at once) joins exactly as the
    per-record loop does: the same values with the same facts and numbers, roles and problems."""
    from hlo_lsp.core.buffers import join

    taken = _counting(monkeypatch)
    fast = _joined_state(BufferSet.from_docs(docs))
    monkeypatch.setattr(join, "_new_values", lambda *args: False)
    slow = _joined_state(BufferSet.from_docs(docs))
    assert fast == slow
    assert fast[0] or name.endswith(":memory-report"), name  # a memory report names no value
    if name.endswith((":assignment", ":values", ":all")) or name.startswith("seed"):
        assert True in taken, "the path joining new values at once was not taken"


@pytest.mark.parametrize("piece", [1, 7])
def test_new_values_joined_in_pieces_as_one_by_one(piece, monkeypatch):
    """`join._new_values` checks the keys, makes the values and writes their roles a piece at a time (tiny pieces
    here, and a few values a step of giving way): the same join as the per-record loop."""
    from hlo_lsp.core.buffers import join
    from hlo_lsp.core.process import pieces

    stem, files = SETS[0]
    docs = [read_buffers(p.read_text(encoding="utf-8"), k) for k, p in files.items() if k != "module"]
    monkeypatch.setattr(pieces, "PIECE", piece)
    monkeypatch.setattr(join, "GIVE_WAY_EVERY", 7)
    taken = _counting(monkeypatch)
    fast = _joined_state(BufferSet.from_docs(docs))
    assert True in taken
    monkeypatch.setattr(join, "_new_values", lambda *args: False)
    assert fast == _joined_state(BufferSet.from_docs(docs))


def test_new_values_declined_when_a_key_repeats():
    """A values listing that names one value twice (with another id) is joined record by record, and the
    mismatch is reported."""
    stem, files = SETS[0]
    text = files["values"].read_text(encoding="utf-8")
    first = text.index("\n<") + 1
    block = text[first : text.index("\n<", first) + 1]
    vid = re.match(r"<(\d+) ", block).group(1)
    doc = read_buffers(text + block.replace(f"<{vid} ", f"<{int(vid) + 100000} ", 1), "values")
    with pytest.MonkeyPatch.context() as mp:
        taken = _counting(mp)
        bs = BufferSet.from_docs([doc])
    assert taken == [False, False]  # the listing's value lines (none here), then the used values
    assert [d.code for _, d in bs.problems] == ["bufferset.id-mismatch"]
