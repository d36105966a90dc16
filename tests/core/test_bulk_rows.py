"""The rows pass (`hlo_bulk`) against the per-line reader: wherever it reads a computation, it reads what the
per-line path reads, and the structural checks and verifier rules built on it give exactly the per-line
results, on every real module, on every verifier fault of tests/rules, and on random one-line edits."""

from __future__ import annotations

import os
import random
import re
import sys

import pytest

from hlo_lsp.core.hlo.checks import _check_lines, check_computation
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rows import (
    ATTRS,
    NAME,
    OPCODE,
    OPERANDS,
    PARAM,
    ROOT,
    SHAPE,
    called_names,
    computation_rows,
    operand_names,
)
from hlo_lsp.core.hlo.rules.verifier import verify
from hlo_lsp.core.hlo.text import INSTR
from tests.fixtures import DATA
from tests.rules.hlo_faults import BEFORE_FAULTS, HLO_FAULTS, read

LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is Linux-only")
MODULES = sorted(DATA.glob("**/*.txt"))
HLO = [
    p
    for p in MODULES
    if "buffer-assignment" not in p.name
    and "live-range" not in p.name
    and "memory-usage" not in p.name
    and read_hlo(p.read_text()).computations
]


def _key(diags):
    return sorted((d.range, d.code, d.message, d.severity) for d in diags)


def _per_line_verify(mod):
    return verify(mod, [None] * len(mod.computations))


def _assert_rows_match_reader(mod):
    """Each row holds the per-line reader's name, ROOT flag, shape, opcode, operands and parameter number, and
    its calls include the reader's."""
    read_any = 0
    for c in mod.computations:
        rows = computation_rows(mod, c)
        if rows is None:
            continue
        read_any += 1
        for i, row in zip(c.instructions, rows):
            ins = _ins(mod, i)
            m = INSTR.match(mod.lines[ins.line])
            assert (row[NAME], bool(row[ROOT])) == (ins.name, ins.is_root)
            assert row[SHAPE] == (m.group(4) or "")
            assert row[OPCODE] == ins.opcode and ins.unreadable is None
            if ins.opcode not in ("parameter", "constant"):
                assert tuple(operand_names(row[OPERANDS])) == ins.operands
            if ins.opcode == "parameter" and ins.parameter_number is not None:
                assert int(row[PARAM]) == ins.parameter_number
            assert set(ins.called) <= set(called_names(row[ATTRS]))
    return read_any


def _assert_same_results(mod):
    for c in mod.computations:
        assert _key(check_computation(mod, c)) == _key(_check_lines(mod, c)), c.name
    assert _key(verify(mod)) == _key(_per_line_verify(mod))


def test_modules_found():
    assert len(HLO) >= 40


@pytest.mark.parametrize("path", HLO, ids=lambda p: p.name[:60])
def test_rows_read_what_the_reader_reads(path):
    mod = read_hlo(path.read_text())
    n = _assert_rows_match_reader(mod)
    if "after_optimizations" in path.name and "seeds" not in str(path) and _long_form(mod):
        assert n == len(mod.computations)  # machine-written modules are read by rows whole
    _assert_same_results(mod)


def _long_form(mod) -> bool:
    """Names written `%name` (jax from 0.5 on): the rows pass takes that form; the short one of older jax and TF
    (`dot.11 = f32[32,32]{1,0} dot(Arg_.10, Arg_.10)`) is read line by line."""
    return any(line.startswith(("  %", "  ROOT %")) for line in mod.lines)


def _ins(mod, i):
    """Instruction i, from the column store or from the list the line-by-line reader builds."""
    return mod.instructions.make(i) if hasattr(mod.instructions, "make") else mod.instructions[i]


def _faults():
    out = []
    for p in sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt")) + sorted(DATA.glob("seeds/001_*.txt")):
        text = p.read_text()
        for gen in HLO_FAULTS:
            out.extend(gen(p.resolve(), text, read(text)))
    for p in sorted(DATA.glob("jax-cpu/*/*before_optimizations.txt")):
        text = p.read_text()
        for gen in BEFORE_FAULTS:
            out.extend(gen(p.resolve(), text, read(text)))
    return out


def test_every_verifier_fault_gives_the_per_line_result():
    faults = _faults()
    assert len(faults) > 100
    fired = 0
    for f in faults:
        mod = read_hlo(f.text)
        got = verify(mod)
        assert _key(got) == _key(_per_line_verify(mod)), f.name
        fired += bool(got)
    assert fired == len(faults)


SEEDS = int(os.environ.get("HLO_BULK_SEEDS", "6"))  # more for a longer search
EDITS = ("%", "(", ")", ",", " ", "x", "f32[7]", "s32[]", "/*index=1*/", "calls=%q", "parameter(1)", '"', "ROOT ")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_line_edits_give_the_per_line_results(seed):
    rng = random.Random(seed)
    paths = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))
    text = rng.choice(paths).read_text()
    lines = text.split("\n")
    for _ in range(40):
        edited = list(lines)
        for _ in range(rng.randint(1, 3)):
            n = rng.randrange(len(edited))
            ln = edited[n]
            a = rng.randrange(len(ln) + 1)
            b = min(len(ln), a + rng.randrange(0, 6))
            edited[n] = ln[:a] + rng.choice(EDITS) + ln[b:]
        mod = read_hlo("\n".join(edited))
        _assert_rows_match_reader(mod)
        _assert_same_results(mod)


def _reference_maps(mod):
    users, callers = {}, {}
    for i in range(len(mod.instructions)):
        ins = _ins(mod, i)
        for op in dict.fromkeys(ins.operands):
            users.setdefault(op, []).append(i)
        for cc in ins.called:
            lst = callers.setdefault(cc, [])
            if not lst or lst[-1] != i:
                lst.append(i)
    return users, callers


def _assert_maps(mod):
    users, callers = _reference_maps(mod)
    line_of = [_ins(mod, i).line for i in range(len(mod.instructions))]
    for name, idx in users.items():
        assert [u.line for u in mod.users(name)] == [line_of[i] for i in idx], name
    for name, idx in callers.items():
        assert [u.line for u in mod.callers(name)] == [line_of[i] for i in idx], name
    assert mod.users("no such name") == [] and mod.callers("no such name") == []


@pytest.mark.parametrize("path", HLO, ids=lambda p: p.name[:60])
def test_users_and_callers_from_rows_equal_the_per_line_maps(path):
    _assert_maps(read_hlo(path.read_text()))


def test_users_and_callers_after_edits_in_place():
    """Edited lines patched in place are judged again on each use; the maps are not rebuilt."""
    from hlo_lsp.core.document import LineDocument
    from hlo_lsp.core.hlo.incremental import patch_module

    rng = random.Random(3)
    path = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))[0]
    doc = LineDocument(path.read_text())
    mod = read_hlo("\n".join(doc.lines))
    mod.lines = mod.instructions._lines = doc.lines  # as Workspace.analysis shares the editor's line store
    mod.build_maps()  # built once
    built = mod._users
    patched = 0
    for _ in range(60):
        ln = rng.choice(mod.instructions.line_of)
        text = doc.lines[ln]
        k = text.find("%", text.find("(") + 1)
        if k < 0:
            continue
        edit = doc.apply(ln, k + 1, ln, k + 2, rng.choice("qzx"))
        patched += patch_module(mod, edit)
        assert mod._users is built
        fresh = read_hlo("\n".join(doc.lines))
        users, callers = _reference_maps(fresh)
        for name in list(users)[:50] + [
            fresh.instructions.make(i).operands[0] for i in sorted(mod._patched) if fresh.instructions.make(i).operands
        ]:
            assert [u.line for u in mod.users(name)] == [fresh.instructions.line_of[i] for i in users.get(name, ())]
    assert patched > 20


@pytest.mark.parametrize("seed", range(4))
def test_users_after_renames_in_place(seed):
    """Definitions renamed (and uses edited) after the maps were built: every name's users, old and new names
    alike, are those of the module read again."""
    from hlo_lsp.core.document import LineDocument
    from hlo_lsp.core.hlo.incremental import patch_module

    rng = random.Random(seed)
    paths = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt")) + sorted(DATA.glob("seeds/001_*.txt"))
    path = paths[seed % len(paths)]
    doc = LineDocument(path.read_text())
    mod = read_hlo("\n".join(doc.lines))
    mod.lines = mod.instructions._lines = doc.lines
    mod.build_maps()
    built = mod._users
    touched = set()
    for _ in range(30):
        i = rng.randrange(len(mod.instructions))
        ln = mod.instructions.line_of[i]
        text = doc.lines[ln]
        if rng.random() < 0.6:  # rename the definition: to a new name, or to another instruction's name
            old = mod.instructions.names[i]
            new = rng.choice([old + "_r", mod.instructions.names[rng.randrange(len(mod.instructions))]])
            k = mod.instructions.col_of[i]
            edit = doc.apply(ln, k, ln, k + len(old), new)
            touched.update((old, new))
        else:  # an operand renamed
            k = text.find("%", text.find("(") + 1)
            if k < 0:
                continue
            edit = doc.apply(ln, k + 1, ln, k + 2, rng.choice("qzx"))
        if not patch_module(mod, edit):
            mod = read_hlo("\n".join(doc.lines))
            mod.lines = mod.instructions._lines = doc.lines
            mod.build_maps()
            built = mod._users
    assert mod._users is built
    fresh = read_hlo("\n".join(doc.lines))
    users, _ = _reference_maps(fresh)
    for name in touched | set(list(users)[:200]):
        assert [u.line for u in mod.users(name)] == [fresh.instructions.line_of[i] for i in users.get(name, ())], name


@pytest.mark.parametrize("path", HLO, ids=lambda p: p.name[:60])
@pytest.mark.parametrize("joined", [False, True], ids=["lines", "joined-text"])
def test_users_before_the_maps_are_built_equal_the_maps(path, joined, monkeypatch):
    """A module read by rows answers `users` from one computation until its maps are built, and only when
    every operand is local and names are unique; the answers equal the maps'. A long computation's lines are
    searched joined (`HloModule._in_joined_text`: every computation of these modules, with the bound lowered)."""
    from hlo_lsp.core.hlo import model as hlo_model

    monkeypatch.setattr(hlo_model, "JOINED_MIN", 1 if joined else 10**9)
    mod = read_hlo(path.read_text())
    if not mod.local_names:
        return
    early = {name: [u.line for u in mod.users(name)] for name in mod.by_name}
    assert mod._users is None  # answered without building the maps
    assert (mod._comp_text is not None) == (joined and any(len(c.instructions) for c in mod.computations))
    mod.build_maps()
    assert mod._comp_text is None
    assert {name: [u.line for u in mod.users(name)] for name in mod.by_name} == early


def test_local_names_only_when_operands_are_local():
    path = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))[0]
    assert read_hlo(path.read_text()).local_names
    text = path.read_text()
    k = text.index("(%", text.index("ENTRY"))
    broken = text[: k + 2] + "nowhere" + text[k + 2 + len("nowhere") :]
    assert not read_hlo(broken).local_names  # an undefined operand: the maps are built on first use


def test_checks_in_forked_children_equal_the_checks_here(monkeypatch):
    """`StructuralChecker.check_forked` (children on the other cores, for computations the read could not
    check) gives exactly the in-process result, and without fork the in-process path does it all."""
    from hlo_lsp.core.hlo.checks import StructuralChecker
    from hlo_lsp.core.process import fork as forked

    path = sorted(DATA.glob("seeds/001_*.txt"))[0]  # old-style operands: the rows cannot read it
    text = path.read_text()
    lines = text.split("\n")
    k = next(i for i, x in enumerate(lines) if "(f32" in x and " = " in x)
    lines[k] = lines[k].replace("(f32", "(f32[7] %nowhere, f32", 1)  # one undefined operand
    mod = read_hlo("\n".join(lines))
    assert mod.pre_checked is None
    expected = _key(StructuralChecker(mod).diagnostics())
    assert any(d[1] == "undefined-operand" for d in expected)
    if forked.ENABLED:
        checker = StructuralChecker(mod)
        assert checker.check_forked(2) == len(mod.computations)
        assert _key(checker.diagnostics()) == expected
        assert checker.checked == len(mod.computations)  # nothing was left to check here
    monkeypatch.setattr(forked, "ENABLED", False)
    checker = StructuralChecker(mod)
    assert checker.check_forked(2) == 0
    assert _key(checker.diagnostics()) == expected


def test_a_failing_child_leaves_the_work_to_the_parent():
    from hlo_lsp.core.process import fork as forked

    if not forked.ENABLED:
        pytest.skip("fork is Linux-only")

    def boom(part):
        raise RuntimeError(part)

    assert forked.map_forked(boom, [1, 2]) == [None, None]
    assert forked.map_forked(lambda p: p * 2, [1, 2]) == [2, 4]


def test_a_stuck_child_is_killed_at_its_deadline(monkeypatch):
    import time

    from hlo_lsp.core.process import fork as forked

    if not forked.ENABLED:
        pytest.skip("fork is Linux-only")
    monkeypatch.setattr(forked, "TIMEOUT_S", 0.5)
    t = time.monotonic()
    assert forked.map_forked(lambda p: time.sleep(30), [0]) == [None]
    assert time.monotonic() - t < 5


def _read_snapshot(mod):
    """Everything the read leaves in a module, as plain values."""
    t = mod.instructions
    table = (
        ([i.name for i in t], [i.line for i in t], [i.name_range.start_col for i in t], [i.is_root for i in t])
        if isinstance(t, list)
        else (list(t.names), list(t.line_of), list(t.col_of), [bool(f) for f in t.root_flags])
    )
    return (
        *table,
        [
            (c.name, c.line, c.name_start, c.is_entry, c.signature, c.end_line, c.instructions, c.root)
            for c in mod.computations
        ],
        mod.computation_by_name,
        mod.by_name,
        mod.pre_checked,
        mod.local_names,
        _key(mod.diagnostics),
        mod.header_line,
    )


@LINUX_ONLY
def test_a_discarded_child_is_gone():
    import time

    from hlo_lsp.core.process import fork as forked

    child = forked.start(lambda p: time.sleep(30), None)
    assert child is not None
    t = time.monotonic()
    forked.discard(child)
    assert time.monotonic() - t < 5
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, 0)


def test_users_after_an_edit_look_up_unrelated_names_without_a_search():
    """After an edit in place, the users of a name no patched instruction had are found through the name index,
    not by searching every name the table was built with (two million in the 100 MB module); the names the
    patched instructions had are still searched, and both answer as a module read again."""
    from hlo_lsp.core.document import LineDocument
    from hlo_lsp.core.hlo.incremental import patch_module

    class Unsearchable(list):
        searched: list[str] = []

        def index(self, name, *args):
            self.searched.append(name)
            return super().index(name, *args)

    path = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))[0]
    doc = LineDocument(path.read_text())
    mod = read_hlo("\n".join(doc.lines))
    mod.lines = mod.instructions._lines = doc.lines
    mod.build_maps()
    table = mod._users
    table._names = Unsearchable(table._names)
    i = next(i for i in range(len(mod.instructions)) if mod.instructions.make(i).operands)
    old = mod.instructions.names[i]
    k = mod.instructions.col_of[i]
    assert patch_module(
        mod, doc.apply(mod.instructions.line_of[i], k, mod.instructions.line_of[i], k + len(old), old + "_r")
    )
    fresh = read_hlo("\n".join(doc.lines))
    users, _ = _reference_maps(fresh)
    unrelated = [n for n in users if n not in (old, old + "_r")][:50]
    for name in unrelated:
        assert [u.line for u in mod.users(name)] == [fresh.instructions.line_of[j] for j in users.get(name, ())]
    assert Unsearchable.searched == []
    for name in (old, old + "_r"):
        assert [u.line for u in mod.users(name)] == [fresh.instructions.line_of[j] for j in users.get(name, ())]
    assert old in Unsearchable.searched


def test_long_computations_freed_a_piece_at_a_time_read_the_same(monkeypatch):
    """The rows of a computation longer than `pieces.PIECE` rows are freed a piece at a time once read (by the
    rows pass when no template keeps them, and by the users map): with a piece of three rows and no templates,
    so that nearly every computation is such, every module reads and maps as the reader does, and every injected
    verifier fault gives the per-line result."""
    from hlo_lsp.core.hlo import bulk
    from hlo_lsp.core.process import pieces

    monkeypatch.setattr(bulk, "TEMPLATES", False)
    whole = {p: read_hlo(p.read_text()).pre_checked for p in HLO}
    monkeypatch.setattr(pieces, "PIECE", 3)
    long = 0
    for path in HLO:
        mod = read_hlo(path.read_text())
        _assert_rows_match_reader(mod)
        _assert_same_results(mod)
        _assert_maps(mod)
        if mod.rows_read:  # checked and summarized by the rows pass, as with whole pieces
            clean, summaries = mod.pre_checked
            assert clean == whole[path][0] and summaries == whole[path][1], path
        long += sum(len(c.instructions) > 3 for c in mod.computations)
    assert long > 100
    for f in _faults():
        mod = read_hlo(f.text)
        assert _key(verify(mod)) == _key(_per_line_verify(mod)), f.name


def _model(mod) -> tuple:
    """What the rows pass leaves in a module, for comparing two reads of one text (but which computation each
    repeats: a part read in a child learns its own templates, `_repeats_agree`)."""
    t = mod.instructions
    return (
        list(t.names) if hasattr(t, "names") else [x.name for x in t],
        list(getattr(t, "line_of", [])),
        list(getattr(t, "col_of", [])),
        bytes(getattr(t, "flags", b"")),
        [(c.name, c.instructions, c.root) for c in mod.computations],
        mod.pre_checked,
        mod.rows_read,
        dict(mod.by_name),
        mod.local_names,
        mod.diagnostics,
    )


@pytest.mark.parametrize("share", [0.05, 0.32, 0.7])
def test_a_module_read_in_two_parts_at_once_reads_as_one_pass(share, monkeypatch):
    """A long module's later computations are read in a forked child (`bulk._split_offset`): with every module of
    tests/data so split (at three shares of the work), the read leaves what one pass leaves; and where forking is
    off, the split point is the end."""
    from hlo_lsp.core.hlo import bulk
    from hlo_lsp.core.process import fork

    one = {p: read_hlo(p.read_text()) for p in HLO}
    whole = {p: _model(m) for p, m in one.items()}
    monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 0)
    monkeypatch.setattr(bulk, "SPLIT_SHARE", share)
    split = 0
    for path in HLO:
        text = path.read_text()
        scan = "\n" + text
        mod = read_hlo(text)
        assert _model(mod) == whole[path], path
        _repeats_agree(mod, one[path])
        _assert_maps(mod)
        if mod.rows_read and len(mod.computations) > 1:
            split += bulk._split_offset(scan) is not None
    assert split > 20
    monkeypatch.setattr(fork, "ENABLED", False)
    assert bulk._split_offset("\nHloModule m\n\nf {\n  ROOT %a = f32[] constant(0)\n}\n\nENTRY e {\n}\n") is None


def test_a_call_of_a_computation_no_part_holds_is_found_at_the_join(monkeypatch):
    """Each part of a split read knows its own computations only (`bulk._known` with ``outside``): a call in the
    later part of a computation of the earlier one leaves its caller clean, and a call of one the module does not
    have leaves it unclean (for the per-line checks), exactly as one pass decides, with the same diagnostics."""
    from hlo_lsp.core.hlo import bulk

    paths = [p for p in HLO if "jax-cpu" in str(p) and "after_optimizations" in str(p)][:6]
    assert paths
    changed = unclean = 0
    for path in paths:
        text = path.read_text()
        entry = text.rfind("\nENTRY")
        at = text.find("calls=%", entry)
        if at < 0:
            continue
        changed += 1
        broken = text[:at] + re.sub(r"calls=%[\w.\-]+", "calls=%no_such_computation", text[at:], count=1)
        for t in (text, broken):
            monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 10**12)
            one = read_hlo(t)
            monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 0)
            two = read_hlo(t)
            assert _model(two) == _model(one), path
            if t is broken:
                assert one.rows_read and None in one.pre_checked[0], path
                unclean += 1
            assert verify(two, two.pre_checked[1] if two.pre_checked else None) == verify(
                one, one.pre_checked[1] if one.pre_checked else None
            )
    assert changed >= 3 and unclean == changed


def _repeats_agree(split, whole) -> None:
    """Each computation repeats the one it repeats in one pass or a repeat of that one (the first of its kind in
    the child's part), or is read on its own (its template was learned in the other part); a template's uses kept
    are the same."""
    if whole.repeats is None:
        assert split.repeats is None
        return
    assert len(split.repeats) == len(whole.repeats)
    for r, w in zip(split.repeats, whole.repeats):
        assert r == -1 or r == w or (w >= 0 and whole.repeats[r] == w)
    for k, (d, s, c) in split.repeat_uses.items():
        assert k not in whole.repeat_uses or (list(d), list(s), c) == tuple(map(list, whole.repeat_uses[k][:2])) + (
            whole.repeat_uses[k][2],
        )


def test_a_failed_or_stuck_child_leaves_the_later_part_to_the_parent(monkeypatch):
    """A child that fails (or is killed at its deadline) gives no result: the parent reads the later part itself,
    to the same model; a later part that is not all rows fails the rows pass as one pass does."""
    from hlo_lsp.core.hlo import bulk
    from hlo_lsp.core.process import fork

    monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 0)
    paths = [p for p in HLO if "jax-cpu" in str(p)][:6]
    whole = {p: _model(read_hlo(p.read_text())) for p in paths}
    monkeypatch.setattr(fork, "result", lambda child: fork.discard(child))  # every child lost
    for path in paths:
        assert _model(read_hlo(path.read_text())) == whole[path], path
    monkeypatch.undo()
    monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 0)
    text = paths[0].read_text()
    lines = text.split("\n")
    last = max(i for i, line in enumerate(lines) if line.startswith("  %"))
    lines[last] = lines[last].replace("%", "% ", 1)  # the last computation's line is no row now
    broken = "\n".join(lines)
    monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 10**12)
    one = _model(read_hlo(broken))
    monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 0)
    assert _model(read_hlo(broken)) == one and not one[6]


@pytest.mark.parametrize("every", [False, True], ids=["one-rename", "renamed-throughout"])
def test_users_of_maps_built_while_definitions_are_renamed(every, monkeypatch):
    """The maps are built from the name index itself, not a copy of it (one C call of 12 ms for the 100 MB
    module's): a definition renamed while they are built (the editor's thread, between two of the build's pieces)
    makes them again, and renamed throughout, they are built from a copy after `LIVE_INDEX_TRIES` tries. Every
    name's users are then those of the module read again."""
    from hlo_lsp.core.document import LineDocument
    from hlo_lsp.core.hlo import rows
    from hlo_lsp.core.hlo.incremental import patch_module

    path = max(sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt")), key=lambda p: p.stat().st_size)
    doc = LineDocument(path.read_text())
    mod = read_hlo("\n".join(doc.lines))
    mod.lines = mod.instructions._lines = doc.lines
    rng = random.Random(7)
    touched: set[str] = set()
    builds = []
    real_build = rows._users_and_callers

    def counting(m, copy):
        builds.append(copy)
        return real_build(m, copy)

    def rename() -> None:
        for _ in range(20):  # a definition that others use, renamed to a new name
            i = rng.randrange(len(mod.instructions))
            old = mod.instructions.names[i]
            if mod.users(old) if mod._users is not None else True:
                break
        ln, k = mod.instructions.line_of[i], mod.instructions.col_of[i]
        assert patch_module(mod, doc.apply(ln, k, ln, k + len(old), old + "_r"))
        touched.update((old, old + "_r"))

    calls = []

    def give_way() -> None:
        calls.append(1)
        if (every or len(calls) == 1) and len(builds) <= rows.LIVE_INDEX_TRIES and not builds[-1]:
            rename()

    assert mod.by_name  # (made first: renamed throughout its making, it would be made again for good)
    monkeypatch.setattr(rows, "_users_and_callers", counting)
    monkeypatch.setattr(rows.turns, "give_way", give_way)
    mod.build_maps()
    assert builds == ([False] * rows.LIVE_INDEX_TRIES + [True] if every else [False, False]), builds
    fresh = read_hlo("\n".join(doc.lines))
    users, _ = _reference_maps(fresh)
    assert touched
    for name in touched | set(list(users)[:200]):
        assert [u.line for u in mod.users(name)] == [fresh.instructions.line_of[i] for i in users.get(name, ())], name


def test_a_summarys_calls_with_equal_operand_shapes_share_one_tuple():
    """`summarize` keeps each distinct operand-shapes tuple of a computation's calls once (a forked child's
    part pickles a repeated tuple as a reference): on every real module, the calls' shapes are equal to the
    shapes read from their rows and no two equal tuples of one summary are distinct objects."""
    from hlo_lsp.core.hlo.rules.summary import summarize

    shared = 0
    for path in HLO:
        mod = read_hlo(path.read_text())
        for c in mod.computations:
            s = summarize(mod, c)
            if s is None or not s.calls:
                continue
            rows = computation_rows(mod, c)
            shapes = dict(zip((r[NAME] for r in rows), (r[SHAPE] for r in rows)))
            for k, _op, _callees, operands, _result in s.calls:
                want = tuple(shapes.get(n) for n in operand_names(rows[k][OPERANDS]))
                assert operands == want, (path.name, c.name, k)
            by_value: dict = {}
            for call in s.calls:
                assert by_value.setdefault(call[3], call[3]) is call[3], (path.name, c.name)
            shared += len(s.calls) - len(by_value)
    assert shared > 100  # (the real modules' fusion calls repeat their operand shapes)
