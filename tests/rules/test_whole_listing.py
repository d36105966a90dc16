"""The buffer rules' whole-column tests (`Context.listing`): taken on every real dump as read, and giving the
same diagnostics as the record-by-record checks on every injected fault of the allocation listing (the faults
these tests exist to let through to the per-record loops) and on every clean dump."""

from __future__ import annotations

import pytest

from hlo_lsp.core.buffers.rules import context
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.rules.dumps import modules
from tests.rules.faults import (
    duplicate_id,
    grown_size,
    moved_onto_live,
    moved_onto_touching,
    moved_onto_touching_same,
    shifted_offset,
    shrunk_size,
)

MODULES = modules()
LISTING_FAULTS = (
    shifted_offset,
    grown_size,
    shrunk_size,
    duplicate_id,
    moved_onto_live,
    moved_onto_touching,
    moved_onto_touching_same,
)


def _diagnostics(path, text, check) -> list:
    ws = Workspace()
    ws.open(str(path), text)
    return [(str(p), d.code, d.range, d.message) for p in check for d in document_diagnostics(ws, str(p))]


def _both_ways(monkeypatch, path, text, check) -> tuple[list, list]:
    taken: list[bool] = []
    real = context._listing

    def spied(bs):
        got = real(bs)
        taken.append(got is not None)
        return got

    with monkeypatch.context() as m:
        m.setattr(context, "_listing", spied)
        fast = _diagnostics(path, text, check)
    with monkeypatch.context() as m:
        m.setattr(context, "_listing", lambda bs: None)
        slow = _diagnostics(path, text, check)
    assert taken, "no rule asked for the listing"
    return fast, slow


def test_every_real_listing_is_one_run_of_columns():
    ws = Workspace()
    seen = 0
    for m in MODULES:
        path = str(m.paths["assignment"])
        ws.open(path, m.texts[m.paths["assignment"]])
        ws.prepare_bundle(path)
        bs = ws.bundle(path).buffers
        assert bs is not None and bs.allocations, m.name
        assert context._listing(bs) is not None, m.name
        ws.close(path)
        seen += 1
    assert seen >= 25


@pytest.mark.parametrize("gen", LISTING_FAULTS, ids=lambda g: g.__name__)
def test_faults_of_the_listing_give_the_same_diagnostics_either_way(gen, monkeypatch):
    tried = 0
    for m in MODULES:
        for fault in gen(m)[:2]:
            fast, slow = _both_ways(monkeypatch, fault.path, fault.text, fault.check)
            assert fast == slow and bool(fast) == bool(fault.expected), (fault.name, m.name)
            tried += 1
    assert tried >= 4


def test_clean_dumps_give_the_same_diagnostics_either_way(monkeypatch):
    for m in MODULES:
        path = m.paths["assignment"]
        fast, slow = _both_ways(monkeypatch, path, m.texts[path], sorted(set(m.paths.values())))
        assert fast == slow, m.name
