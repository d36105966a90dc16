"""Fault injection over the real buffer dumps in tests/data (4 old single files, every jax-cpu split set): each
fault gives its diagnostic on the right line with the right code, and nothing else on the files concerned.
Prints the recall/precision table per code (``pytest -s``)."""

from __future__ import annotations

from collections import Counter

from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.rules.dumps import modules
from tests.rules.faults import BUFFER_FAULTS, format_table, score

MODULES = modules()


def _observed(fault) -> set:
    ws = Workspace()
    ws.open(str(fault.path), fault.text)
    out = set()
    for p in fault.check:
        for d in document_diagnostics(ws, str(p)):
            if d.severity >= Severity.INFORMATION:
                out.add((p, d.code, d.range.start_line))
    return out


def _run_all():
    results = []
    for m in MODULES:
        for gen in BUFFER_FAULTS:
            for fault in gen(m):
                results.append((fault, _observed(fault)))
    return results


RESULTS = None


def _results():
    global RESULTS
    if RESULTS is None:
        RESULTS = _run_all()
    return RESULTS


def test_enough_real_modules():
    assert sum(m.single for m in MODULES) == 4 and len(MODULES) >= 25


def test_every_fault_kind_was_injected_many_times():
    counts = Counter(f.name for f, _ in _results())
    for gen in BUFFER_FAULTS:
        assert any(counts[n] >= 4 for n in counts), gen.__name__
    assert len(counts) == len(BUFFER_FAULTS), counts
    assert min(counts.values()) >= 4, counts


def test_each_fault_gives_exactly_its_diagnostics():
    bad = []
    for fault, observed in _results():
        if observed != fault.expected:
            bad.append(
                f"{fault.name} in {fault.module}: missing {sorted(fault.expected - observed)}, "
                f"extra {sorted(observed - fault.expected)}"
            )
    assert not bad, "\n".join(bad[:30])


def test_recall_and_precision_table():
    table = score(_results())
    print("\n" + format_table(table, "buffer rules: fault injection over real dumps"))
    for code, r in table.items():
        assert r["fn"] == 0 and r["fp"] == 0, (code, r)
    assert len(table) >= 10
