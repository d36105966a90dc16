"""A module's pass history (issue 21) on real pass-by-pass dumps: every file name read as the corpus README's
manifest says, the provenance the README's table gives (and the first file a grep finds each name in), previous
and next versions, and the diff of chosen pass pairs against this file's own line comparison of the two files."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from hlo_lsp.core.passes.history import CHANGED, MADE, REMOVED, UNCHANGED, PassHistory
from hlo_lsp.core.passes.names import AFTER, BEFORE, BETWEEN, DURING, parse_pass_name, pass_modules
from hlo_lsp.core.passes.report import pass_diff
from tests.fixtures import DATA, SHARED, require_found
from tests.passes.reading import definitions, pass_order, ran

MLP = DATA / "passes" / "mlp_sgd"
CORPUS = SHARED / "corpus" / "jax-cpu-passes"

AFTER_FUSION = "HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt"
# the corpus README's table: instruction -> the first file (after "module_0000.jit_<fn>.") and the pass that made it
PROVENANCE = {
    "mlp_sgd": [
        ("dot.1", "0008.simplification.after_algsimp.before_simplify-sorts.txt", "algsimp"),
        (
            "multiply_subtract_fusion.1",
            "0035.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt",
            "fusion",
        ),
        ("copy.4", "0038.copy-insertion.after_adding_copies_to_resolve_interference.txt", "copy-insertion"),
    ],
    "scan_rnn": [
        ("while.3", "0024.simplification.after_simplify-while-loops.before_dce.txt", "simplify-while-loops"),
        (
            "reduce_add_fusion.1",
            "0040.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt",
            "fusion",
        ),
        ("copy.37", "0045.copy-insertion.after_adding_special-case_copies.txt", "copy-insertion"),
        ("while.16", "before_optimizations.txt", None),
    ],
}


def _folder(name: str) -> Path:
    if name == "mlp_sgd":
        return MLP
    folder = CORPUS / name
    require_found(list(folder.glob("*.txt")), f"pass files of {folder}")
    return folder


def _history(name: str) -> PassHistory:
    (files,) = pass_modules(str(_folder(name))).values()
    return PassHistory(files)


# -- an independent reading of the files ------------------------------------------------------------------------


def _first_with(files: list[Path], name: str) -> Path:
    pattern = re.compile(rf"%{re.escape(name)}([^A-Za-z0-9_.-]|$)", re.M)
    return next(p for p in files if pattern.search(p.read_text()))


# -- file names -------------------------------------------------------------------------------------------------


def test_every_file_name_reads_as_the_manifest_says():
    manifest = CORPUS / "MANIFEST.tsv"
    require_found([manifest] if manifest.is_file() else [], "the pass corpus manifest")
    rows = list(csv.DictReader(manifest.open(), delimiter="\t"))
    kinds = {
        "hlo-before-optimizations": BEFORE,
        "hlo-between-passes": BETWEEN,
        "hlo-during-pass": DURING,
        "hlo-after-optimizations": AFTER,
    }
    seen = 0
    for row in rows:
        if row["kind"] not in kinds:
            continue
        f = parse_pass_name(row["path"])
        assert f is not None, row
        assert f.kind == kinds[row["kind"]], row
        if f.kind in (BETWEEN, DURING):
            assert f.seq_text == row["seq"] and f.pipeline == row["pipeline_or_pass"], row
        if f.kind == BETWEEN:
            assert (f.after, f.before) == (row["after"], row["before_or_step"]), row
        if f.kind == DURING:
            assert f.step == row["before_or_step"], row
        seen += 1
    assert seen == 95


def test_the_mlp_history_has_the_readme_counts():
    h = _history("mlp_sgd")
    files = [s.file for s in h.steps]
    assert len(files) == 45 and files[0].kind == BEFORE and files[-1].kind == AFTER
    assert [f.seq for f in files[1:-1]] == list(range(43))
    assert sum(f.kind == BETWEEN for f in files) == 40 and sum(f.kind == DURING for f in files) == 3
    assert len({f.pipeline for f in files if f.kind == BETWEEN}) == 13
    assert sum(f.after == "pipeline-start" for f in files) == 17
    assert len({f.after for f in files if f.kind == BETWEEN and f.after != "pipeline-start"}) == 17
    # before_optimizations is file 0000, cpu_after_optimizations the last: no change at either end
    assert h.steps[1].identical and h.steps[-1].identical


@pytest.mark.parametrize("module", ["mlp_sgd", "scan_rnn"])
def test_each_file_says_whether_its_text_and_its_instructions_changed(module):
    """`same_text` exactly where the file is the one before byte for byte; `identical` exactly where every
    instruction has the same line text (the scheduler reorders instructions and sets is_scheduled: text changed,
    no instruction did); the list's wording follows."""
    files = pass_order(_folder(module))
    h = _history(module)
    texts = [p.read_text() for p in files]
    lines = [{n: v[1] for n, v in definitions(p).items()} for p in files]
    reordered = 0
    for k in range(1, len(files)):
        step = h.steps[k]
        assert step.same_text == (texts[k] == texts[k - 1]), k
        assert step.identical == (lines[k] == lines[k - 1]), k
        if step.identical and not step.same_text:
            reordered += 1
            assert step.change_text() == "no instruction changed (their order or the header did)"
    assert reordered >= 1  # the scheduler's file
    assert h.steps[0].change_text(first=True) == "(first file)"


def test_not_a_pass_file():
    for name in (
        "module_0000.jit_f.cpu_after_optimizations-buffer-assignment.txt",
        "notes.txt",
        "module_0000.jit_f.ir-no-opt.ll",
        "module_0000.jit_f.0001.txt",
    ):
        assert parse_pass_name(name) is None, name
    f = parse_pass_name("module_0007.jit_f.with.dots.0012.simplification.after_algsimp.before_dce.txt")
    assert f is not None and f.module == "jit_f.with.dots" and (f.seq, f.after, f.before) == (12, "algsimp", "dce")


# -- provenance -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("module,name,first,made_by", [(m, *row) for m, rows in PROVENANCE.items() for row in rows])
def test_provenance(module, name, first, made_by):
    folder = _folder(module)
    h = _history(module)
    v = h.made_by(name)
    assert v is not None and v.change == MADE
    assert v.file.name.split(".", 2)[2] == first
    assert v.file.ran == made_by
    assert Path(v.file.path) == _first_with(pass_order(folder), name)  # the README's grep, here
    defs = definitions(Path(v.file.path))
    assert defs[name][0] == v.line


@pytest.mark.parametrize("module", ["mlp_sgd", "scan_rnn"])
def test_every_version_of_every_final_instruction(module):
    """For each instruction of the final file: each version's line defines it, 'changed' exactly where the line
    text or computation differs from the file before, 'unchanged' where it does not, 'made' where it is new."""
    folder = _folder(module)
    files = pass_order(folder)
    defs = [definitions(p) for p in files]
    h = _history(module)
    assert [Path(s.file.path) for s in h.steps] == files
    for name in defs[-1]:
        versions = h.trace(name)
        assert versions and versions[-1].index == len(files) - 1
        by_index = {v.index: v for v in versions}
        for k, d in enumerate(defs):
            here, before = d.get(name), defs[k - 1].get(name) if k else None
            v = by_index.get(k)
            if here is None:
                assert v is None or v.change == REMOVED
                continue
            assert v is not None and v.line == here[0] and v.computation == here[2]
            if before is None:
                assert v.change == MADE
            else:
                assert v.change == (UNCHANGED if (before[1], before[2]) == (here[1], here[2]) else CHANGED), (name, k)


@pytest.mark.parametrize("module", ["mlp_sgd", "scan_rnn"])
def test_previous_and_next_versions(module):
    files = pass_order(_folder(module))
    defs = [definitions(p) for p in files]
    h = _history(module)
    checked = 0
    for name in defs[-1]:
        lines = [d.get(name) for d in defs]
        for k, here in enumerate(lines):
            if here is None:
                continue
            prev = h.previous_version(k, name)
            # independently: the last file up to k that changed its text (or made it), if a version stood before
            last_change = max(
                (j for j in range(1, k + 1) if lines[j - 1] is None or lines[j - 1][1:] != lines[j][1:]), default=None
            )
            if last_change is not None and lines[last_change - 1] is not None:
                assert prev is not None and prev.index == last_change - 1 and prev.line == lines[last_change - 1][0]
                checked += 1
            nxt = h.next_version(k, name)
            later = next(
                (j for j in range(k + 1, len(lines)) if lines[j] is None or lines[j][1:] != lines[j - 1][1:]), None
            )
            if later is None:
                assert nxt is None
            else:
                assert nxt is not None and nxt.index == later
                assert nxt.change == (REMOVED if lines[later] is None else CHANGED)
    assert checked > 50


def test_a_renamed_instruction_leads_to_what_replaced_it():
    """Where a pass removes a name and adds another with the same op_name and stack frame, the trace of the old
    name says what it became, and the new name's previous version is the old one."""
    h = _history("mlp_sgd")
    pairs = [(s, old, new) for s in h.steps for old, news in s.successors.items() for new in news]
    assert pairs
    files = pass_order(MLP)
    for step, old, new in pairs[:40]:
        k = h.steps.index(step)
        a, b = definitions(files[k - 1]), definitions(files[k])
        tags = lambda line: (
            re.search(r'op_name="((?:[^"\\]|\\.)*)"', line).group(1),  # noqa: E731
            (re.search(r"stack_frame_id=(\d+)", line) or [None, None])[1],
        )
        assert old in a and old not in b and new in b and new not in a
        assert tags(a[old][1]) == tags(b[new][1])
        gone = next(v for v in h.trace(old) if v.change == REMOVED and v.index == k)
        assert new in gone.successors
        prev = h.previous_version(k, new)
        if len([o for o, ns in step.successors.items() if new in ns]) == 1:
            assert prev is not None and prev.line == a[old][0]


@pytest.mark.parametrize("folder", ["mlp_sgd", "sharded"])
def test_successors_matched_later_equal_those_matched_while_building(folder, monkeypatch):
    """A file with few removed and added instructions has them matched when a trace first asks (issue 21's
    build time: a sixth of the transformer's): the same successors and made_from, for every file, as when
    every file is matched while building; matched once, then kept."""
    import hlo_lsp.core.passes.history as history

    files = max(pass_modules(str(DATA / "passes" / folder)).values(), key=len)
    later = PassHistory(files)
    deferred = [s for s in later.steps if s.pending is not None]
    assert deferred  # the small dumps' files are all matched later
    monkeypatch.setattr(history, "MATCH_LATER_LINES", -1)
    now = PassHistory(files)
    assert not any(s.pending for s in now.steps)
    assert any(s.successors for s in now.steps)
    for a, b in zip(later.steps, now.steps, strict=True):
        assert (a.successors, a.made_from) == (b.successors, b.made_from)
    assert all(s.pending is None for s in deferred)
    first = deferred[0].successors
    assert deferred[0].successors is first


# -- what a pass did ----------------------------------------------------------------------------------------------


# chosen pass pairs: each file against the one before it (the pass named is the one that ran)
DIFFS = [
    ("mlp_sgd", seq)
    for seq in ["0005", "0006", "0008", "0026", "0027", "0032", "0035", "0036", "0038", "0039", "0041", "0042"]
] + [
    ("scan_rnn", seq)  # flatten-call-graph, while-loop-invariant-code-motion, simplify-while-loops, cse, ...
    for seq in ["0003", "0011", "0014", "0024", "0030", "0031", "0032", "0037", "0040", "0041", "0043", "0046"]
]


@pytest.mark.parametrize("module,seq", DIFFS)
def test_pass_diff_against_a_line_comparison(module, seq):
    files = pass_order(_folder(module))
    h = _history(module)
    k = next(i for i, s in enumerate(h.steps) if s.file.seq_text == seq)
    old, new = definitions(files[k - 1]), definitions(files[k])
    d = pass_diff(h, k)
    added = {(c.computation, n, ln) for c in d.computations for n, ln in c.added}
    removed = {(c.computation, n, ln) for c in d.computations for n, ln in c.removed}
    changed = {(c.computation, n, a, b) for c in d.computations for n, a, b in c.changed}
    assert added == {(v[2], n, v[0]) for n, v in new.items() if n not in old}
    assert removed == {(v[2], n, v[0]) for n, v in old.items() if n not in new}
    # changed: the same name with another line text (a move between computations with the same text is no change
    # of the line, the trace reports it)
    assert changed == {(new[n][2], n, old[n][0], new[n][0]) for n in new if n in old and old[n][1] != new[n][1]}
    assert added or removed or changed or files[k - 1].read_text() != files[k].read_text()
    # the file list says the same, and names the pass of the file's name
    step = h.steps[k]
    assert (len(step.added), len(step.removed), len(step.changed)) == (len(added), len(removed), len(changed))
    assert d.by == (ran(files[k]) or d.by)


def test_fusion_absorbed_what_stood_before_the_fusion_pass():
    h = _history("mlp_sgd")
    files = pass_order(MLP)
    final = definitions(files[-1])
    line = final["multiply_subtract_fusion.1"][1]
    called = re.search(r"calls=%([\w.\-]+)", line).group(1)
    got = h.absorbed(len(files) - 1, called)
    assert got is not None
    k, absorbed = got
    assert h.steps[k + 1].file.ran == "fusion"
    before, made = definitions(files[k]), definitions(files[k + 1])
    inside = [n for n, v in final.items() if v[2] == called]

    def tags(line):
        op = re.search(r'op_name="((?:[^"\\]|\\.)*)"', line)
        frame = re.search(r"stack_frame_id=(\d+)", line)
        return (op.group(1), frame.group(1) if frame else None) if op else None

    inside_tags = {tags(final[n][1]) for n in inside} - {None}
    assert absorbed
    for n, ln in absorbed:
        assert before[n][0] == ln  # its line in the file before the fusion pass
        # moved in under its own name, or removed by the fusion pass while an instruction of its tags came in
        assert n in inside or (n not in made and tags(before[n][1]) in inside_tags), n
    # everything of the fused computation that stood before under its own name is listed
    assert {n for n in inside if n in before} <= {n for n, _ in absorbed}


def test_unreadable_file_is_an_empty_step_with_its_reason(tmp_path):
    for p in pass_order(MLP)[:4]:
        (tmp_path / p.name).write_bytes(p.read_bytes())
    bad = tmp_path / "module_0000.jit_train_step.0003.SubbytePacker_pipeline.after_pipeline-start.before_x.txt"
    bad.write_bytes(b"\xff\xfe garbage \x00")
    (files,) = pass_modules(str(tmp_path)).values()
    h = PassHistory(files)
    step = next(s for s in h.steps if s.file.path == str(bad))
    assert step.error and "UnicodeDecodeError" in step.error and step.instructions == 0


SHARDED = DATA / "passes" / "sharded"


def test_sharded_parameters_go_from_global_to_per_device_shapes_across_spmd_partitioning():
    """The sharded case (4x2 mesh, 8 host devices): each ENTRY parameter's global shape before spmd-partitioning,
    its per-device shape after (each dimension divided by its tile count in the sharding), the pass named
    spmd-partitioning although its work first shows in the start file of the pipeline it runs (spmd-cleanup), and
    the per-device parameter's previous version is the global one."""
    (files,) = pass_modules(str(SHARDED)).values()
    h = PassHistory(files)
    order = pass_order(SHARDED)
    assert [Path(s.file.path) for s in h.steps] == order
    k = next(i for i, s in enumerate(h.steps) if h.pass_at(i) == "spmd-partitioning" and not s.identical)
    old, new = definitions(order[k - 1]), definitions(order[k])
    param = re.compile(r"= f32\[([\d,]+)\]\{[\d,]*\} parameter\((\d)\), sharding=\{devices=\[([\d,]+)\]")
    before = {m.group(2): (n, m) for n, (_, line, _) in old.items() for m in [param.search(line)] if m}
    after = {m.group(2): (n, m) for n, (_, line, _) in new.items() for m in [param.search(line)] if m}
    assert set(before) == set(after) == {"0", "1"}
    for number, (global_name, g) in before.items():
        local_name, p = after[number]
        dims = [int(x) for x in g.group(1).split(",")]
        tiles = [int(x) for x in g.group(3).split(",")][: len(dims)]
        assert [int(x) for x in p.group(1).split(",")] == [d // t for d, t in zip(dims, tiles)]
        assert dims != [int(x) for x in p.group(1).split(",")]  # a real change of shape
        gone = next(v for v in h.trace(global_name) if v.change == REMOVED)
        assert gone.index == k and gone.by == "spmd-partitioning" and local_name in gone.successors
        made = h.made_by(local_name)
        assert made is not None and made.index == k and made.by == "spmd-partitioning"
        prev = h.previous_version(k, local_name)
        assert prev is not None and prev.index == k - 1 and prev.line == old[global_name][0]
    d = pass_diff(h, k)
    status = {c.computation: c.status for c in d.computations}
    entry_before = next(v[2] for v in old.values() if param.search(v[1]))
    entry_after = next(v[2] for v in new.values() if param.search(v[1]))
    assert status[entry_before] == "removed" and status[entry_after] == "added"


def test_a_fusion_instructions_previous_version_is_the_root_it_replaced():
    """Where the fusion pass made a fusion instruction, its previous version is the one instruction that pass
    removed with its op_name, stack frame and shape (the root it replaced; the opcode is now fusion)."""
    files = pass_order(MLP)
    h = _history("mlp_sgd")
    k = next(i for i, p in enumerate(files) if ".after_fusion." in p.name)
    old, new = definitions(files[k - 1]), definitions(files[k])

    def key(line):
        op = re.search(r'op_name="((?:[^"\\]|\\.)*)"', line)
        frame = re.search(r"stack_frame_id=(\d+)", line)
        shape = re.search(r" = (\S+) ", line)
        return (op and op.group(1), frame and frame.group(1), shape and shape.group(1))

    checked = 0
    for name, (_, line, _) in new.items():
        if name in old or not re.search(r" fusion\(", line) or key(line)[0] is None:
            continue
        roots = [n for n, v in old.items() if n not in new and key(v[1]) == key(line)]
        prev = h.previous_version(k, name)
        if len(roots) == 1:
            assert prev is not None and prev.index == k - 1 and prev.line == old[roots[0]][0], name
            checked += 1
    assert checked >= 5
