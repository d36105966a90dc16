"""The bulk structure (`structure.bulk_computations`: the first header, then each closing line with the header
after it, found in one pass) against the per-line reader of the column-0 lines: on real modules and on random
changes of their column-0 lines (stray closing braces and headers inside computations, junk and blank lines
between them, closing lines with text after the brace, `HloModule` lines, lost braces), the module read (model,
structural checks, verifier) is the one the per-line reader makes; and a module read in two parts finds the
same computations as read whole."""

from __future__ import annotations

import random

import pytest

from hlo_lsp.core.hlo import bulk, structure
from hlo_lsp.core.hlo.checks import structural_diagnostics
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rules.verifier import verify
from tests.core.test_bulk_rows import HLO
from tests.fixtures import DATA


def _facts(mod) -> tuple:
    return (
        mod.name,
        mod.header_line,
        [
            (c.name, c.line, c.name_start, c.is_entry, c.signature, c.end_line, c.instructions, c.root)
            for c in mod.computations
        ],
        [(i.name, i.line, i.name_start, i.is_root) for i in mod.instructions],
        sorted((d.range, d.code, d.message) for d in structural_diagnostics(mod)),
        sorted((d.range, d.code, d.message) for d in verify(mod)),
    )


def _per_line(text: str, monkeypatch) -> HloModule:
    with monkeypatch.context() as m:
        m.setattr(bulk, "read_rows", lambda mod, scan: False)
        m.setattr(structure, "_read_structure_bulk", lambda *a: False)
        return read_hlo(text)


HEADERS = ("%stray (p: f32[]) -> f32[] {", "ENTRY %e2 () -> f32[] {", "other {", "HloModule again, x={ {0} } {")
JUNK = ("}", "} x", "}  ", "", "   ", "junk", "  %j = f32[] constant(1)", "HloModule m2", "FileNames")


def _mutate(rng: random.Random, lines: list[str]) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(1, 3)):
        col0 = [k for k, ln in enumerate(out) if ln and not ln[0].isspace()]
        inside = [k for k, ln in enumerate(out) if ln.startswith("  ")]
        kind = rng.random()
        if kind < 0.2 and inside:  # a header or a closing brace inside a computation
            out.insert(rng.choice(inside), rng.choice(HEADERS + ("}", "} ")))
        elif kind < 0.4 and col0:  # junk or blank lines after a closing line, or before a header
            k = rng.choice(col0)
            out.insert(k + (1 if out[k].startswith("}") else 0), rng.choice(JUNK))
        elif kind < 0.55 and col0:  # a column-0 line lost
            del out[rng.choice(col0)]
        elif kind < 0.7 and col0:  # a closing line with text after it, or blanks
            k = rng.choice([k for k in col0 if out[k].startswith("}")] or col0)
            out[k] = out[k] + rng.choice((" x", "   ", "}", " {"))
        elif kind < 0.85:  # a closing brace and a header (a computation split in two)
            k = rng.choice(inside or [len(out) - 1])
            out[k:k] = ["}", "", rng.choice(HEADERS)]
        else:  # junk at the end, or the end without a newline
            out.append(rng.choice(JUNK)) if rng.random() < 0.5 else out.extend(["", ""])
    return out


def test_real_modules_read_by_the_bulk_structure_as_per_line(monkeypatch):
    read = 0
    for path in HLO:
        text = path.read_text(errors="replace")
        mod = read_hlo(text)
        read += mod.rows_read
        assert _facts(mod) == _facts(_per_line(text, monkeypatch)), path
    assert read >= 40


@pytest.mark.parametrize("seed", range(8))
def test_column_0_changes_read_as_per_line(seed, monkeypatch):
    rng = random.Random(seed)
    paths = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))
    text = rng.choice(paths).read_text()
    lines = text.split("\n")
    bulk_read = 0
    for _ in range(30):
        changed = "\n".join(_mutate(rng, lines))
        mod = read_hlo(changed)
        bulk_read += mod.rows_read
        assert _facts(mod) == _facts(_per_line(changed, monkeypatch)), changed[:200]
    assert bulk_read  # some changes leave a module the bulk path reads (blank lines, a split computation)


def test_the_parts_of_a_module_find_the_computations_of_the_whole():
    """`bulk_computations` of a module cut after any closing line, over the two parts, makes the computations
    (and offsets) it makes over the whole; a cut elsewhere or a part not all structure gives None."""
    for path in HLO[:20]:
        scan = "\n" + path.read_text(errors="replace")
        whole = HloModule(lines=[])
        spans = structure.bulk_computations(whole, scan)
        if spans is None:
            continue
        for _, c in spans[:-1]:
            cut = scan.find("\n", c + 1)
            a, b = HloModule(lines=[]), HloModule(lines=[])
            first = structure.bulk_computations(a, scan, 0, cut)
            later = structure.bulk_computations(b, scan, cut)
            assert first is not None and later is not None and first + later == spans, path
            key = [(x.name, x.line, x.end_line, x.signature, x.is_entry) for x in whole.computations]
            assert [
                (x.name, x.line, x.end_line, x.signature, x.is_entry) for x in a.computations + b.computations
            ] == key
            for junk in ("\njunk", "\n  %j = f32[] constant(1)", "\n}"):  # a later part holds structure only
                changed = scan[:cut] + junk + scan[cut:]
                assert structure.bulk_computations(HloModule(lines=[]), changed, cut) is None, (path, junk)
                # (a part's last closing brace is its last one: a brace line before it is one of its lines)
                if junk != "\n}":
                    assert structure.bulk_computations(HloModule(lines=[]), changed, 0, cut + len(junk)) is None


def test_a_text_split_in_pieces_is_the_text_split_at_once(monkeypatch):
    """`read.split_in_pieces` (a background read's lines): the lines `str.split` makes, wherever the pieces end."""
    from hlo_lsp.core.hlo import read as reader

    rng = random.Random(2)
    for _ in range(400):
        text = "".join(rng.choice(["a", "bc", "\n", "\n\n", "%x = f32[] y"]) for _ in range(rng.randrange(0, 60)))
        monkeypatch.setattr(reader, "SPLIT_PIECE_CHARS", rng.randrange(1, 12))
        assert reader.split_in_pieces(text) == text.split("\n")


@pytest.mark.parametrize("split", [False, True], ids=["one part", "two parts"])
def test_a_module_read_from_its_own_text_is_read_as_with_a_newline_before_it(split, monkeypatch):
    """`read.read_hlo` gives the rows pass the text itself when it begins with its module header (no copy with a
    newline before it, `structure.lead`): every such module of tests/data reads as it reads with that newline,
    in one part or in two at once (the child's donation hints and layout check included), and its header line,
    name and tables are the per-line reader's."""
    from tests.core.test_bulk_rows import _read_snapshot

    monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 0 if split else 10**12)
    read = 0
    for path in HLO:
        text = path.read_text(errors="replace")
        if not text.startswith("HloModule"):
            continue
        own = read_hlo(text)
        if not own.rows_read:
            continue
        lines = text.split("\n")
        led = HloModule(lines=lines)
        assert bulk.read_rows(led, "\n" + text), path
        assert _read_snapshot(own) == _read_snapshot(led), path
        assert (own.name, _tables(own), own.table_lines, own.read_hints) == (
            led.name,
            _tables(led),
            led.table_lines,
            led.read_hints,
        ), path
        assert own.header_line == 0 == _per_line(text, monkeypatch).header_line
        read += 1
    assert read >= 40


def _tables(mod) -> dict:
    return {k: {i: (r.id, r.line, r.text, r.text_start) for i, r in rows.items()} for k, rows in mod.tables.items()}
