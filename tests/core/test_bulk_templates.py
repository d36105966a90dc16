"""The rows pass reads a computation that repeats an earlier one but for its names from that one
(`bulk._Template`): the module it leaves is the module read row by row, on every real module, on faults put into
one copy of a repeated computation (names swapped, renamed, repeated, undefined; callees changed), and on random
renamings of a copy's names; the verifier finds in it what it finds per line."""

from __future__ import annotations

import random
import re

import pytest

from hlo_lsp.core.hlo import bulk
from hlo_lsp.core.hlo.names import NameIndex
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rules.verifier import verify
from hlo_lsp.core.process import pieces
from tests.core.test_bulk_rows import HLO, _key, _read_snapshot
from tests.fixtures import DATA, SHARED, require_found

REPEATING = DATA / "oom" / "long_mesh" / "module_0000.jit_train_step.cl_933746096.after_optimizations.txt"
CORPUS = sorted(p for p in (SHARED / "corpus").rglob("*after_optimizations.txt") if p.is_file())
NAME = re.compile(r"%([\w.\-]+)")


def _read(text: str, templates: bool, monkeypatch) -> tuple:
    with monkeypatch.context() as m:
        m.setattr(bulk, "TEMPLATES", templates)
        mod = read_hlo(text)
        return _read_snapshot(mod), _key(verify(mod)), _key(verify(mod, [None] * len(mod.computations)))


def _assert_same(text: str, monkeypatch) -> tuple:
    got = _read(text, True, monkeypatch)
    want = _read(text, False, monkeypatch)
    assert got[0] == want[0]
    assert got[1] == want[1] == want[2]  # the rows' verifier, with or without templates, is the per-line one
    return got


def _repeats(text: str) -> int:
    """How many computations of ``text`` the rows pass reads from a template."""
    hits = []
    real = bulk._Template.names

    def names(self, occ):
        hits.append(1)
        return real(self, occ)

    bulk._Template.names = names  # type: ignore[method-assign]
    try:
        read_hlo(text)
    finally:
        bulk._Template.names = real  # type: ignore[method-assign]
    return len(hits)


@pytest.mark.parametrize("path", HLO, ids=lambda p: p.name[:60])
def test_a_module_read_with_templates_is_the_module_read_row_by_row(path, monkeypatch):
    _assert_same(path.read_text(), monkeypatch)


def test_templates_are_used_on_real_modules():
    assert _repeats(REPEATING.read_text()) >= 200
    assert sum(_repeats(p.read_text()) > 0 for p in HLO) >= 15


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.parent.name + "/" + p.name[:40])
def test_every_corpus_module_with_templates(path, monkeypatch):
    _assert_same(path.read_text(), monkeypatch)


def test_corpus_found():
    require_found(CORPUS, "after-optimizations modules under corpus/")


def _groups(text: str) -> list[list[tuple[int, int]]]:
    """(first line, end line) of each computation, grouped by their text once names are cut out, in order."""
    lines = text.split("\n")
    groups: dict[str, list[tuple[int, int]]] = {}
    start = None
    for i, ln in enumerate(lines):
        if ln.endswith("{") and not ln.startswith(" ") and not ln.startswith("HloModule"):
            start = i + 1
        elif ln == "}" and start is not None:
            if i > start:
                groups.setdefault("%".join(NAME.split("\n".join(lines[start:i]))[0::2]), []).append((start, i))
            start = None
    return list(groups.values())


def _copies(text: str) -> list[tuple[int, int]]:
    """(first line, end line) of every computation whose lines repeat, but for names, a computation before it."""
    return sorted(span for g in _groups(text) for span in g[1:])


def _edit_copy(text: str, which: int, edit) -> str:
    """``edit`` applied to the lines of a repeated computation: the ``which``-th of those it applies to."""
    lines = text.split("\n")
    edited = []
    for a, b in _copies(text):
        try:
            edited.append((a, b, edit(lines[a:b])))
        except LookupError:
            continue  # the fault does not apply to this copy
    assert len(edited) > 5
    a, b, body = edited[which]
    lines[a:b] = body
    return "\n".join(lines)


def _swap_operands(body: list[str]) -> list[str]:
    for k, ln in enumerate(body):
        m = re.search(r"\((%[\w.\-]+), (%[\w.\-]+)\)", ln)
        if m and m.group(1) != m.group(2):
            body[k] = ln[: m.start()] + f"({m.group(2)}, {m.group(1)})" + ln[m.end() :]
            return body
    raise LookupError("no binary operation in the copy")


def _rename_operand(to: str):
    def edit(body: list[str]) -> list[str]:
        for k, ln in enumerate(body):
            m = re.search(r"\((%[\w.\-]+)", ln)
            if m:
                body[k] = ln[: m.start(1)] + to + ln[m.end(1) :]
                return body
        raise LookupError("no operand in the copy")

    return edit


def _operand_to_other_definition(body: list[str]) -> list[str]:
    defined = [NAME.search(ln).group(0) for ln in body if NAME.search(ln)]
    for k, ln in enumerate(body):
        m = re.search(r"\((%[\w.\-]+)", ln)
        if m:
            other = next((d for d in defined if d != m.group(1)), None)
            if other is None:
                raise LookupError("no other instruction")
            body[k] = ln[: m.start(1)] + other + ln[m.end(1) :]
            return body
    raise LookupError("no operand in the copy")


def _repeat_a_name(body: list[str]) -> list[str]:
    if len(body) < 2:
        raise LookupError("one instruction")
    first = NAME.search(body[0]).group(0)
    m = NAME.search(body[1])
    body[1] = body[1][: m.start()] + first + body[1][m.end() :]
    return body


def _second_root(body: list[str]) -> list[str]:
    body[0] = body[0].replace("  %", "  ROOT %", 1)
    return body


FAULTS = {
    "operands swapped": _swap_operands,
    "operand undefined": _rename_operand("%no.such.name"),
    "operand names another instruction": _operand_to_other_definition,
    "a name repeated": _repeat_a_name,
    "a second ROOT": _second_root,
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("which", [0, 5, -1])
def test_a_fault_in_one_copy_is_read_as_row_by_row(fault, which, monkeypatch):
    text = REPEATING.read_text()
    edited = _edit_copy(text, which, FAULTS[fault])
    assert edited != text
    _assert_same(edited, monkeypatch)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_in_every_copy_the_first_included_is_read_as_row_by_row(fault, monkeypatch):
    """The template itself faulty (its checks or summary then differ), and its copies with the same fault read
    from it."""
    edited, done = _fault_in_every_copy(REPEATING.read_text(), fault)
    assert done >= 2
    assert _repeats(edited) >= 20
    _assert_same(edited, monkeypatch)


def _fault_in_every_copy(text: str, fault: str) -> tuple[str, int]:
    """``text`` with ``fault`` made in every copy of each group of three or more repeated computations (the
    first, their template, included), and how many groups took it."""
    lines = text.split("\n")
    done = 0
    for group in _groups(text):
        if len(group) < 3:
            continue
        try:
            bodies = [FAULTS[fault](lines[a:b]) for a, b in group]
        except LookupError:
            continue
        for (a, b), body in zip(group, bodies):
            lines[a:b] = body
        done += 1
    return "\n".join(lines), done


def _calling_copies(text: str) -> list[tuple[int, int]]:
    lines = text.split("\n")
    return [(a, b) for a, b in _copies(text) if any("to_apply=%" in ln or "calls=%" in ln for ln in lines[a:b])]


@pytest.mark.parametrize("callee", ["%no_such_computation", "first other"])
def test_a_copy_calling_another_computation_is_read_as_row_by_row(callee, monkeypatch):
    text = REPEATING.read_text()
    lines = text.split("\n")
    spans = _calling_copies(text)
    assert spans, "no repeated computation that calls one"
    names = [m.group(1) for m in re.finditer(r"(?m)^(?:ENTRY )?%([\w.\-]+) ", text)]
    a, b = spans[-1]
    for k in range(a, b):
        m = re.search(r"(?:to_apply|calls)=(%[\w.\-]+)", lines[k])
        if m:
            to = callee if callee.startswith("%") else "%" + next(n for n in names if "%" + n != m.group(1))
            lines[k] = lines[k][: m.start(1)] + to + lines[k][m.end(1) :]
            break
    _assert_same("\n".join(lines), monkeypatch)


@pytest.mark.parametrize("seed", range(8))
def test_random_renamings_of_copies(seed, monkeypatch):
    """Every name occurrence of a few copies renamed at random: to another name of the same copy, to one of the
    computation it copies, to a fresh one, or left alone."""
    rng = random.Random(seed)
    text = REPEATING.read_text()
    lines = text.split("\n")
    spans = _copies(text)
    for a, b in rng.sample(spans, 4):
        pool = [m.group(1) for ln in lines[a:b] for m in NAME.finditer(ln)]
        for k in range(a, b):
            if rng.random() < 0.5:
                continue
            lines[k] = NAME.sub(lambda m, pool=pool: _renamed(m, pool, rng), lines[k])
    _assert_same("\n".join(lines), monkeypatch)


UNICODE = ("é", "ß", "٣", "ǅ")  # letters and a digit beyond ASCII that ``\w`` (the rows pattern's names) takes


@pytest.mark.parametrize("seed", range(6))
def test_copies_with_names_beyond_ascii(seed, monkeypatch):
    """Names holding characters beyond ASCII (the split of such a computation's text is the Unicode one): every
    name of a few copies renamed so (repeats of the ASCII copies but for their names), single lines of others,
    read as row by row."""
    rng = random.Random(seed)
    text = REPEATING.read_text()
    lines = text.split("\n")
    for n, (a, b) in enumerate(rng.sample(_copies(text), 6)):
        ch = rng.choice(UNICODE)
        for k in range(a, b):
            if n < 3 or rng.random() < 0.2:
                lines[k] = NAME.sub(lambda m, ch=ch: m.group(0)[:2] + ch + m.group(0)[2:], lines[k])
    _assert_same("\n".join(lines), monkeypatch)


def _renamed(m: re.Match, pool: list[str], rng: random.Random) -> str:
    """The name ``m`` matched, kept (most often), or another of ``pool``, or a fresh one."""
    r = rng.random()
    if r < 0.8:
        return m.group(0)
    return "%" + (rng.choice(pool) if r < 0.95 else f"fresh.{rng.randrange(3)}")


def _maps(text: str, templates: bool, monkeypatch) -> tuple[dict, dict]:
    """Every name's users and every computation's callers, as instruction numbers."""
    with monkeypatch.context() as m:
        m.setattr(bulk, "TEMPLATES", templates)
        mod = read_hlo(text)
    mod.build_maps()  # (before the maps are built, `users` scans the defining computation instead)
    names = set(mod.by_name) | {n for ln in mod.lines for n in NAME.findall(ln)}
    users = {n: mod._user_indices(n) for n in names}
    users = {n: u for n, u in users.items() if u}
    callers = {c.name: [i.line for i in mod.callers(c.name)] for c in mod.computations}
    return users, callers


@pytest.mark.parametrize("path", HLO, ids=lambda p: p.name[:60])
def test_the_users_map_takes_a_repeats_uses_from_its_template(path, monkeypatch):
    """A repeat's uses come from its template, renumbered (`HloModule.repeat_uses`), its callers from its own
    lines: the maps are those of the module read row by row (whose maps are checked against the per-line
    reader in test_bulk_rows)."""
    text = path.read_text()
    assert _maps(text, True, monkeypatch) == _maps(text, False, monkeypatch)


def test_repeats_lend_their_uses_on_a_repeating_module(monkeypatch):
    """Building the maps reads the rows of the computations read row by row, not those of their repeats."""
    from hlo_lsp.core.hlo import rows as hlo_rows

    mod = read_hlo(REPEATING.read_text())
    assert mod.local_names and len(mod.repeat_uses) >= 10
    repeats = sum(r >= 0 for r in mod.repeats)
    assert repeats >= 200
    read = []
    real = hlo_rows.computation_rows
    monkeypatch.setattr(hlo_rows, "computation_rows", lambda m, c: read.append(c) or real(m, c))
    mod.build_maps()
    assert len(read) == len(mod.computations) - repeats


@pytest.mark.parametrize("fault", FAULTS)
def test_maps_with_a_fault_in_every_copy(fault, monkeypatch):
    edited, _ = _fault_in_every_copy(REPEATING.read_text(), fault)
    assert _maps(edited, True, monkeypatch) == _maps(edited, False, monkeypatch)


@pytest.mark.parametrize("path", HLO, ids=lambda p: p.name[:60])
def test_long_computations_and_the_name_index_made_in_pieces(path, monkeypatch):
    """A long computation's rows are found a piece at a time and the name index is made a piece at a time (the
    GIL free between pieces): with tiny pieces, the module is the one read in one piece each."""
    text = path.read_text()
    whole = _read(text, True, monkeypatch)
    with monkeypatch.context() as m:
        m.setattr(bulk, "PIECE_CHARS", 97)
        m.setattr(pieces, "PIECE", 7)
        assert _read(text, True, monkeypatch) == whole


def test_the_name_index_keeps_each_names_first_place():
    rng = random.Random(3)
    for n in (0, 1, 6, 7, 8, 50, 300):
        names = [rng.choice("abcdefghij") for _ in range(n)]
        want = {}
        for i, x in enumerate(names):
            want.setdefault(x, i)
        for piece in (1, 2, 7, 1000):
            pieces.PIECE, old = piece, pieces.PIECE
            try:
                assert NameIndex.first_of(names) == want
            finally:
                pieces.PIECE = old


def test_the_read_keeps_its_longest_computation_joined_as_the_lines_join(monkeypatch):
    from hlo_lsp.core.hlo import model as hlo_model

    monkeypatch.setattr(hlo_model, "JOINED_MIN", 2)
    for path in HLO[:30]:
        mod = read_hlo(path.read_text())
        if not mod.rows_read:
            continue
        k, text, starts, lo, hi = mod._comp_text
        c = mod.computations[k]
        assert len(c.instructions) == max(len(x.instructions) for x in mod.computations)
        lines = mod.lines[c.line + 1 : c.end_line]
        assert text[lo:hi] == "\n".join(lines)
        assert list(starts) == [sum(len(x) + 1 for x in lines[:j]) for j in range(len(lines) + 1)]
        assert list(starts) == [sum(len(x) + 1 for x in lines[:j]) for j in range(len(lines) + 1)]
