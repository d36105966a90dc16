"""What a module's peak report keeps: it lives as long as its bundle (a whole session for an open module), so it
keeps its results and no per-instruction scaffolding: no instruction object of the module's table, a bounded
number of parsed instruction lines (`values.DETAIL_MEMO`), and one bound source lookup shared by its values.
The answers are the same as with everything kept."""

from __future__ import annotations

from hlo_lsp.core.memory import values
from hlo_lsp.core.memory.peak import peak_of_bundle
from hlo_lsp.core.workspace import Workspace
from tests.fixtures import DATA

MODULE = DATA / "jax-cpu" / "transformer_block_f32"


def _module_path() -> str:
    found = sorted(MODULE.glob("*after_optimizations.txt"))
    assert found, f"no module under {MODULE}"
    return str(found[0].resolve())


def _answers(report) -> tuple:
    labels = [(v.key, v.category, v.param, v.bytes) for v in report.xla.live]
    sources = [(v.key, v.source.label() if v.source else None) for v in report.allocated.live]
    return report.xla.step, labels, sources, list(report.allocated.total)


def test_the_report_keeps_no_instruction_objects_and_few_parsed_lines(monkeypatch):
    path = _module_path()
    full = _answers(peak_of_bundle(Workspace().bundle(path)))
    monkeypatch.setattr(values, "DETAIL_MEMO", 3)
    bundle = Workspace().bundle(path)
    table = bundle.hlo.hlo.instructions
    kept_before = len(table._objs)
    report = peak_of_bundle(bundle)
    live = report.xla.live + report.allocated.live
    assert len(live) > 3 and len({id(v._source_of) for v in live}) == 1  # one lookup, not one per value
    assert len(table._objs) == kept_before
    assert _answers(report) == full  # every value's source asked for too, through the bounded memo
    assert len(report.sources.shapes._line) <= 3
