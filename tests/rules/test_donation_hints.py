"""``hlo.donation-hint`` (issue 19): an information diagnostic on an entry parameter that input_output_alias does not
donate while an output of the same element type and dimensions (aliased to no parameter) exists; never on an
aliased one. Checked on every real module of tests/data against this file's own reading of the text (the header's
alias list, the ENTRY parameters, the root's shape), with a fault injected into the donation sample (its alias
list taken away: its four donated parameters get hints too)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.fixtures import DATA, tuple_elements

CODE = "hlo.donation-hint"
MODULES = sorted(p for p in DATA.rglob("*after_optimizations.txt") if p.is_file())
DONATION = DATA / "memory" / "donation-cpu" / "module_0000.jit_step.cpu_after_optimizations.txt"
PARAM = re.compile(r"^\s*%?([\w.\-]+) = (\S+) parameter\((\d+)\)")
ARRAY = re.compile(r"^([a-z][a-z0-9]*)\[([\d,]*)\]")


def _key(shape: str):
    m = ARRAY.match(shape)
    return (m.group(1), m.group(2)) if m else None


def expected(text: str) -> dict[int, tuple[int, ...]]:
    """Line -> output index of each hint, read from the text alone."""
    lines = text.split("\n")
    header = lines[0]
    alias = re.search(r"input_output_alias=\{(.*?)\}\s*(?:,\s*[a-z_]+=|$)", header)
    aliased_params, aliased_outs = set(), set()
    if alias:
        for idx, p in re.findall(r"\{([\d,]*)\}: \((\d+),", alias.group(1)):
            aliased_params.add(int(p))
            aliased_outs.add(tuple(int(x) for x in idx.split(",") if x))
    start = next(i for i, x in enumerate(lines) if x.startswith("ENTRY "))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("}"))
    body = lines[start + 1 : end]
    root = next(x for x in body if x.lstrip().startswith("ROOT "))
    root_shape = re.match(r"\s*ROOT %?[\w.\-]+ = (.*?) [a-z][\w\-]*\(", root).group(1)
    if root_shape.startswith("("):
        outs = [((k,), s) for k, s in enumerate(tuple_elements(root_shape) or []) if _key(s)]
    else:
        outs = [((), root_shape)] if _key(root_shape) else []
    free = [(i, _key(s)) for i, s in outs if i not in aliased_outs]
    params = sorted((int(m.group(3)), start + 1 + n, m.group(2)) for n, x in enumerate(body) if (m := PARAM.match(x)))
    want = {}
    for num, line, shape in params:
        if num in aliased_params or not _key(shape):
            continue
        j = next((j for j, (_, k) in enumerate(free) if k == _key(shape)), None)
        if j is not None:
            want[line] = free.pop(j)[0]
    return want


def _hints(path: Path, text: str | None = None) -> dict[int, str]:
    ws = Workspace()
    if text is not None:
        ws.open(str(path), text)
    return {d.range.start_line: d.message for d in document_diagnostics(ws, str(path)) if d.code == CODE}


@pytest.mark.parametrize("path", MODULES, ids=[p.parent.name + "/" + p.name[:40] for p in MODULES])
def test_hints_on_every_real_module(path):
    text = path.read_text()
    want = expected(text)
    got = _hints(path)
    assert set(got) == set(want), (sorted(got), sorted(want))
    for line, index in want.items():
        out = "the output" if not index else f"output {{{','.join(map(str, index))}}}"
        assert f", and {out} has its shape " in got[line]


def test_hints_are_found_somewhere_and_never_on_a_donated_parameter():
    assert sum(len(expected(p.read_text())) for p in MODULES) >= 20
    text = DONATION.read_text()
    donated = {int(p) for p in re.findall(r"\{\d+\}: \((\d+), \{\}, may-alias\)", text.split("\n", 1)[0])}
    assert donated == {0, 1, 2, 3}
    got = _hints(DONATION)
    lines = text.split("\n")
    for line in got:
        assert int(PARAM.match(lines[line]).group(3)) not in donated


def test_fault_taking_the_alias_list_away_gives_the_donated_parameters_hints(tmp_path):
    text = DONATION.read_text()
    header, rest = text.split("\n", 1)
    stripped = re.sub(r"input_output_alias=\{.*?\}, ", "", header)
    assert stripped != header
    before = _hints(DONATION)
    after = _hints(tmp_path / DONATION.name, stripped + "\n" + rest)
    lines = text.split("\n")
    new = {int(PARAM.match(lines[ln]).group(3)) for ln in set(after) - set(before)}
    assert new == {0, 1, 2, 3}
    assert set(before) <= set(after)


def test_parameter_lines_the_rows_pattern_does_not_read_give_the_same_hints(tmp_path):
    """The entry's parameters are found by the rows pattern where it reads the line (number and shape from the
    row) and by the instruction's own parse elsewhere: a parameter written ``parameter( 0 )`` (which the reader
    accepts and the rows pattern does not) gets the hint it gets written plainly, and a parameter whose row shape
    has no free output of its kind gets none either way."""
    text = DONATION.read_text()
    header, rest = text.split("\n", 1)
    plain = re.sub(r"input_output_alias=\{.*?\}, ", "", header) + "\n" + rest
    want = _hints(tmp_path / "a" / DONATION.name, plain)
    assert len(want) >= 4
    entry = plain.index("\nENTRY ")
    spaced = plain[:entry] + re.sub(r" parameter\((\d+)\)", r" parameter( \1 )", plain[entry:])
    assert spaced.count("parameter( ") >= len(want)
    got = _hints(tmp_path / "b" / DONATION.name, spaced)
    assert got == want


def _variants(text: str) -> list[str]:
    """``text``, and with its alias list taken away (every parameter a candidate)."""
    header, rest = text.split("\n", 1)
    stripped = re.sub(r"input_output_alias=\{.*?\}, ", "", header)
    return [text] if stripped == header else [text, stripped + "\n" + rest]


def test_the_entry_summary_gives_the_hints_the_entry_lines_give():
    """The verifier's run passes the entry's summary (`donation.entry_summary`): its root shape text and its
    parameters' shape texts by number stand in for the entry's lines, and a parameter's line is read for a
    hint only. On every real module of tests/data, with and without its alias list, the hints are those read
    from the lines; among them, hints found through the summary's parameters (its lazy lookup of their lines)."""
    from hlo_lsp.core.hlo.read import read_hlo
    from hlo_lsp.core.hlo.rules.donation import donation_hints, entry_summary
    from hlo_lsp.core.hlo.rules.summary import summarize

    through_sig = 0
    for path in MODULES:
        for text in _variants(path.read_text()):
            mod = read_hlo(text)
            summaries = [summarize(mod, c) for c in mod.computations]
            es = entry_summary(mod, summaries)
            assert es is summaries[mod.computations.index(mod.entry)]
            want = donation_hints(mod)
            assert donation_hints(mod, es) == want, path
            through_sig += len(want) if es is not None and es.sig is not None else 0
    assert through_sig >= 20


def test_an_entry_summary_whose_parameters_are_not_plainly_numbered_falls_back_to_the_lines(tmp_path):
    """A parameter the rows pattern cannot read (``parameter( 0 )``) leaves the summary without a signature
    (or without a summary): the hints are then read from the entry's lines, as without one."""
    from hlo_lsp.core.hlo.read import read_hlo
    from hlo_lsp.core.hlo.rules.donation import donation_hints, entry_summary
    from hlo_lsp.core.hlo.rules.summary import summarize

    text = _variants(DONATION.read_text())[1]
    entry = text.index("\nENTRY ")
    spaced = text[:entry] + re.sub(r" parameter\(0\)", " parameter( 0 )", text[entry:], count=1)
    assert spaced != text
    mod = read_hlo(spaced)
    es = entry_summary(mod, [summarize(mod, c) for c in mod.computations])
    assert es is None or es.sig is None
    want = donation_hints(mod)
    assert len(want) >= 4
    assert donation_hints(mod, es) == want


def test_hints_made_by_the_reads_child_are_the_ones_made_after_the_read(monkeypatch):
    """A long module's later part is read in a forked child, which makes the ENTRY's donation hints there
    (`bulk._entry_hints`), and the verifier's first run takes them (`donation.read_donation_diagnostics`): with
    every module of tests/data read so, the diagnostics equal those of a read in one part, the child's hints were
    taken for each module (none made again after the read) and a module with hints is among them. An edit since the
    read, or another header line or entry, makes them again."""
    from hlo_lsp.core.hlo import bulk
    from hlo_lsp.core.hlo.model import HloModule
    from hlo_lsp.core.hlo.rules import donation
    from hlo_lsp.ide import diagnostics as dg

    def diagnostics(path: Path, split: bool) -> tuple[list, int]:
        monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 0 if split else 10**12)
        made = []
        monkeypatch.setattr(dg, "donation_diagnostics", lambda *a: made.append(1) or donation.donation_diagnostics(*a))
        ws = Workspace()
        ws.open(str(path), path.read_text(), 1)
        a = ws.analysis(str(path))
        by_child = a.hlo.read_hints is not None
        assert not by_child or split
        assert dg.run_verifier(a, 1)
        assert len(made) == (not by_child)
        return [(d.range, d.code, d.message) for d in a.donations], by_child

    with_hints = by_child = 0
    for path in MODULES:
        one, _ = diagnostics(path, False)
        two, child = diagnostics(path, True)
        assert two == one, path
        by_child += child
        with_hints += child and bool(one)
    assert with_hints >= 10 and by_child >= 30, (with_hints, by_child, len(MODULES))  # 28 and 49 of 57

    text = DONATION.read_text()
    mod = HloModule(lines=text.split("\n"))
    entry_line = next(i for i, x in enumerate(mod.lines) if x.startswith("ENTRY "))
    mod.computations = [bulk.Computation("main", entry_line, 6, True, "", entry_line + 1)]
    mod.header_line = 0
    for made, edited, ok in (
        ((0, entry_line, [], True), False, True),
        ((0, entry_line, [], True), True, False),
        ((1, entry_line, [], True), False, False),
        ((0, entry_line + 1, [], True), False, False),
    ):
        mod.read_hints = made
        assert (donation.read_donation_diagnostics(mod, edited) is not None) == ok
        assert mod.read_hints is None
