"""The fast HLO reader on every real module: zero errors, exact name ranges, structure matching an independent
reading of the text; truncated and corrupted variants give errors on the right lines and never raise."""

from __future__ import annotations

import os
import re

import pytest

from hlo_lsp.core.hlo.read import read_hlo
from tests.fixtures import DATA, IN_CI, SHARED


def hlo_files(root):
    out = []
    for p in sorted(root.rglob("*.txt")):
        head = p.read_text(errors="replace")[:200]
        if head.startswith("HloModule"):
            out.append(p)
    return out


FILES = hlo_files(DATA)
SHARED_FILES = hlo_files(SHARED) if SHARED.is_dir() else []
# jax before 0.5 and TF print names without `%` (`dot.11 = f32[32,32]{1,0} dot(Arg_.10, Arg_.10)`)
_INSTR = re.compile(r"^\s+(?:ROOT )?%?([^ =]+) = ")
_COMP = re.compile(r"^(ENTRY )?%?(?!HloModule )([^ (]+) ")
_INSTR_LONG = re.compile(r"^\s+(?:ROOT )?%([^ =]+) = ")  # MODULE below is of the long form


def test_found_the_corpus():
    assert len(FILES) >= 48  # 23 after-, 23 before-optimizations modules, the GPU seed, and more


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(DATA)) for p in FILES])
def test_real_module_reads_exactly(path):
    text = path.read_text()
    mod = read_hlo(text)
    assert mod.diagnostics == []
    lines = text.split("\n")
    expected = [(n, m.group(1)) for n, x in enumerate(lines) if (m := _INSTR.match(x))]
    assert [(i.line, i.name) for i in mod.instructions] == expected
    for ins in mod.instructions:  # round trip: the recorded range holds the name
        r = ins.name_range
        assert lines[r.start_line][r.start_col : r.end_col] == ins.name
        assert ins.opcode and not ins.unreadable
        for op in ins.operands:
            assert op in mod.by_name, (ins.name, op)
        for c in ins.called:
            assert c in mod.computation_by_name
    comps = [
        (n, m.group(2), bool(m.group(1))) for n, x in enumerate(lines) if x.endswith("{") and (m := _COMP.match(x))
    ]
    assert [(c.line, c.name, c.is_entry) for c in mod.computations] == comps
    for c in mod.computations:
        assert (
            re.fullmatch(r"\}(?: // \S+)?", lines[c.end_line])
            and lines[c.line][c.name_range.start_col : c.name_range.end_col] == c.name
        )
    assert mod.name == re.match(r"HloModule ([^ ,]+)", text).group(1)


def test_shared_modules_read_cleanly():
    if not SHARED_FILES:
        if IN_CI:
            pytest.fail(f"no HLO modules found under {SHARED} (CI=true: a wrong path must not pass)")
        pytest.skip(f"{SHARED} is not here")
    for p in SHARED_FILES:
        assert read_hlo(p.read_text()).diagnostics == [], p


MODULE = DATA / "jax-cpu" / "cond_switch" / "module_0000.jit_piecewise.cpu_after_optimizations.txt"


def test_truncated_variants_report_on_the_right_line():
    text = MODULE.read_text()
    checked = 0
    for cut in range(len(text) // 7, len(text), max(1, len(text) // 60)):
        part = text[:cut]
        mod = read_hlo(part)  # never raises
        plines = part.split("\n")
        headers = [n for n, x in enumerate(plines) if x.endswith("{") and x.startswith(("%", "ENTRY"))]
        if headers and "}" not in plines[headers[-1] + 1 :]:
            # cut inside the last computation: its header carries the error
            assert any(
                d.code == "unclosed-computation" and d.range.start_line == headers[-1] for d in mod.diagnostics
            ), cut
            checked += 1
    assert checked >= 20


def test_corrupted_lines_report_there_and_reading_goes_on():
    lines = MODULE.read_text().split("\n")
    targets = [n for n, x in enumerate(lines) if _INSTR_LONG.match(x)][::3]
    for n in targets:
        bad = list(lines)
        bad[n] = "  " + "@#!" + lines[n].strip()[3:]
        mod = read_hlo("\n".join(bad))
        errs = [d for d in mod.diagnostics if d.severity.name == "ERROR"]
        assert [d.range.start_line for d in errs] == [n], (n, errs)
        # the rest of the module is still indexed
        assert len(mod.instructions) == sum(1 for x in bad if _INSTR_LONG.match(x))


def test_crlf_bom_and_garbage_never_raise():
    text = MODULE.read_text()
    for variant in (
        text.replace("\n", "\r\n"),
        "\ufeff" + text,
        text.replace("\n", "\r"),
        "\x00" * 100,
        "}}}}{{{{(((",
        "ENTRY %e {\n" * 1000,
        os.urandom(2000).decode("latin-1"),
    ):
        mod = read_hlo(variant)
        assert isinstance(mod.diagnostics, list)
    assert read_hlo(text.replace("\n", "\r\n")).diagnostics == []
    assert [i.name for i in read_hlo(text.replace("\n", "\r\n")).instructions] == [
        i.name for i in read_hlo(text).instructions
    ]


def test_a_syntax_error_keeps_the_instruction_table():
    """A module with one unreadable line takes the per-line structure path; its instructions stay a table (names
    and lines in arrays), not one object each (about 40 MB more on the 23 MB module for as long as a typo stays),
    and equal the indented instruction lines of the text in order."""
    from hlo_lsp.core.hlo.instructions import InstructionTable

    path = DATA / "jax-cpu" / "loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"
    lines = path.read_text().split("\n")
    k = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("  %"))
    lines[k] = "x" + lines[k]
    text = "\n".join(lines)
    mod = read_hlo(text)
    assert isinstance(mod.instructions, InstructionTable)
    assert any(d.range.start_line == k for d in mod.diagnostics)
    expected = [(n, m.group(1)) for n, x in enumerate(lines) if (m := _INSTR.match(x))]
    assert [(ins.line, ins.name) for ins in mod.instructions] == expected
