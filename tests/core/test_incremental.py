"""Incremental analysis: after any sequence of edits, the patched model and its diagnostics equal a full
re-read of the edited text; a one-line edit re-reads one line and re-checks one computation."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_lsp.core.hlo import incremental
from hlo_lsp.core.hlo.checks import structural_diagnostics
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rules.verifier import verify
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import analysis_diagnostics
from tests.fixtures import DATA

MODULE = DATA / "jax-cpu" / "transformer_block_f32" / "module_0002.jit_block_train_step_f32.cpu_after_optimizations.txt"
TEXT = MODULE.read_text()
PATH = "/mem/big.cpu_after_optimizations.txt"


def model_facts(mod):
    """Everything a request reads from the module, as plain values."""
    return (
        [(c.name, c.line, c.end_line, c.is_entry, list(c.instructions), c.root) for c in mod.computations],
        [
            (i.name, i.line, i.name_start, i.is_root, i.opcode, i.operands, i.called, i.parameter_number)
            for i in mod.instructions
        ],
        dict(mod.by_name),
    )


def diag_facts(diags):
    return sorted((d.range, d.code, d.message) for d in diags)


def random_edit(rng: random.Random, lines: list[str]) -> tuple[int, int, int, int, str]:
    """An edit an editor could send: inside an instruction line (typing, deleting, renaming, breaking an
    operand), or one that adds/removes lines or touches structure."""
    n = rng.randrange(len(lines))
    line = lines[n]
    kind = rng.random()
    col = rng.randrange(len(line) + 1)
    if kind < 0.35:  # type a character
        return n, col, n, col, rng.choice("abcx%._1(), =")
    if kind < 0.6 and line:  # delete a few characters
        end = min(len(line), col + rng.randrange(1, 4))
        return n, col, n, end, ""
    if kind < 0.75 and "%" in line:  # break or mend an operand name
        i = line.rfind("%", 0, max(1, col)) if rng.random() < 0.5 else line.find("%")
        return n, i + 1, n, i + 2, rng.choice("qzx")
    if kind < 0.85:  # split or join lines
        return (n, col, n, col, "\n") if rng.random() < 0.5 else (n, len(line), min(n + 1, len(lines) - 1), 0, "")
    return n, 0, n, len(line), line.replace("ROOT ", "") if "ROOT " in line else line  # toggle nothing/ROOT


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=1, max_value=12))
def test_random_edit_sequences_match_full_reanalysis(seed, n_edits):
    edit_at_random(random.Random(seed), n_edits, _matches_full_reanalysis)


def edit_at_random(rng: random.Random, n_edits: int, after_each=None) -> Workspace:
    """A workspace with `MODULE` open and read, then edited ``n_edits`` times at random (`random_edit`),
    ``after_each(ws)`` called after each edit."""
    ws = Workspace()
    ws.open(PATH, TEXT, 1)
    ws.analysis(PATH)
    version = 1
    for _ in range(n_edits):
        doc = ws.document(PATH)
        edit = doc.apply(*random_edit(rng, doc.lines))
        version += 1
        ws.edited(PATH, version, [edit])
        if after_each is not None:
            after_each(ws)
    return ws


def _matches_full_reanalysis(ws: Workspace) -> None:
    a = ws.analysis(PATH)
    fresh = read_hlo(ws.document(PATH).text)
    assert model_facts(a.hlo) == model_facts(fresh)
    assert diag_facts(a.checker.diagnostics()) == diag_facts(structural_diagnostics(fresh))
    # the verifier from the summaries kept per computation (edited ones made again) == a fresh run
    assert diag_facts(verify(a.hlo, a.checker.summaries())) == diag_facts(verify(fresh))


def _problems(ws, a, complete=True):
    """The module's diagnostics but its donation hints (advice on its parameters, issue 19)."""
    return [d for d in analysis_diagnostics(ws, a, complete=complete) if d.code != "hlo.donation-hint"]


def test_one_line_edit_rereads_one_line_and_one_computation():
    ws = Workspace()
    ws.open(PATH, TEXT, 1)
    a = ws.analysis(PATH)
    assert _problems(ws, a) == [] and a.checker.diagnostics() == []
    checked = a.checker.checked
    assert checked == len(a.hlo.computations)
    lines = ws.document(PATH).lines
    n = next(i for i, x in enumerate(lines) if x.startswith("  %") and "(%" in x and " ROOT " not in x)
    col = lines[n].index("(%") + 2
    original = lines[n][col]
    patched = incremental.patched_lines
    edit = ws.document(PATH).apply(n, col, n, col + 1, "Q")  # break the first operand's name
    assert ws.edited(PATH, 2, [edit])
    assert ws.analysis(PATH) is a  # patched in place, not read again
    found = a.checker.diagnostics()
    assert incremental.patched_lines - patched == 1  # one line re-read
    assert a.checker.checked - checked == 1  # one computation checked again
    assert [(d.code, d.range.start_line) for d in found] == [("undefined-operand", n)]
    assert [(d.code, d.range.start_line) for d in _problems(ws, a, complete=False)] == [("undefined-operand", n)]
    mend = ws.document(PATH).apply(n, col, n, col + 1, original)
    assert ws.edited(PATH, 3, [mend])
    assert a.checker.diagnostics() == [] and _problems(ws, a) == []
    assert ws.document(PATH).text == TEXT
