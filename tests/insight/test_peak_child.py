"""A large module's peak report made in a forked child and sent back in parts (`peak.detached`, `peak.attached`,
`lens.report_for`): the same report as one made in the server's process, on every buffer set of tests/data."""

from __future__ import annotations

import json
import pickle

import pytest

from hlo_lsp.core.memory.peak import ReportParts, attached, detached, peak_of_bundle
from hlo_lsp.core.process import fork
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import lens
from tests.insight.test_peak import LOCAL


def _bundle(path):
    return Workspace().bundle(str(path.resolve()))


def _facts(report) -> tuple:
    """Everything a report answers with, its values' sources included (looked up now)."""
    live = [
        (v.key, v.bytes, v.shape, v.allocation, v.live_range, v.category, v.param, v.source) for v in report.xla.live
    ]
    alloc = [(v.key, v.bytes, v.source) for v in report.allocated.live]
    return json.dumps(report.as_json(), sort_keys=True), live, alloc, report.peak_instruction


@pytest.mark.parametrize("path", LOCAL, ids=lambda p: p.name)
def test_a_report_taken_apart_and_made_whole_again_is_the_same_report(path, monkeypatch):
    monkeypatch.setattr("hlo_lsp.core.memory.peak.PARTS_CHUNK", 7)  # many chunks
    bundle = _bundle(path)
    made = peak_of_bundle(bundle)
    assert made is not None
    expected = _facts(made)
    parts = pickle.loads(pickle.dumps(detached(peak_of_bundle(bundle))))  # as a child's result crosses the pipe
    got = attached(parts, bundle.buffers, bundle.hlo.hlo if bundle.hlo is not None else None)
    assert got.buffers is bundle.buffers and got.sources is not None
    assert _facts(got) == expected
    by_key = bundle.buffers.values_by_key
    shared = [v for v in got.xla.live if v.key in by_key]
    assert all(v.key is by_key[v.key].key for v in shared)  # the buffer set's strings, not copies
    for a, b in ((got, made),):  # the values the two peaks share are shared objects again, and only those
        a_ids, b_ids = {id(v) for v in a.xla.live}, {id(v) for v in b.xla.live}
        assert [id(v) in a_ids for v in a.allocated.live] == [id(v) in b_ids for v in b.allocated.live]
    assert detached(None) is None


@pytest.mark.skipif(not fork.ENABLED, reason="forking is Linux's")
@pytest.mark.parametrize("path", LOCAL[:6], ids=lambda p: p.name)
def test_report_for_a_large_buffer_set_is_made_by_a_child_and_equals_one_made_here(path, monkeypatch):
    monkeypatch.setattr(lens, "CHILD_MIN_VALUES", 0)
    results = []
    result = fork.result
    monkeypatch.setattr(fork, "result", lambda child: results.append(result(child)) or results[-1])
    bundle = _bundle(path)
    readied: list[int] = []
    got = lens.report_for(bundle, ready=lambda: readied.append(1))
    assert got is not None and [type(r) for r in results] == [ReportParts]  # the child's parts, not a fallback
    assert readied == [1]  # what was to go first (the messages read) went before the fork
    assert lens.report_for(bundle) is got  # kept for the bundle
    assert _facts(got) == _facts(peak_of_bundle(_bundle(path)))


@pytest.mark.parametrize("path", LOCAL[:3], ids=lambda p: p.name)
def test_a_child_that_fails_leaves_the_report_to_this_process(path, monkeypatch):
    monkeypatch.setattr(lens, "CHILD_MIN_VALUES", 0)
    monkeypatch.setattr(fork, "result", lambda child: fork.discard(child))  # every child lost
    bundle = _bundle(path)
    got = lens.report_for(bundle)
    assert got is not None and _facts(got) == _facts(peak_of_bundle(_bundle(path)))


@pytest.mark.parametrize("path", LOCAL[:4], ids=lambda p: p.name)
def test_a_hover_on_the_peak_line_never_waits_for_a_large_report(path, monkeypatch):
    """A hover on ``Live ranges at N (peak):`` of a large buffer set whose report is not made yet says it is being
    made and starts it in a thread of its own (the event loop does not wait 1.2 s for it); once made, the hover
    groups the values as one made at once does."""
    import re
    import time

    from hlo_lsp.ide import hover

    m = re.search(r"^  Live ranges at \d+ \(peak\):$", path.read_text(encoding="utf-8"), re.M)
    assert m is not None
    line = path.read_text(encoding="utf-8")[: m.start()].count("\n")
    expected = hover.hover(Workspace(), str(path.resolve()), line, 4)  # small: made at once
    assert expected is not None and "being grouped" not in expected.markdown
    monkeypatch.setattr(lens, "CHILD_MIN_VALUES", 0)
    ws = Workspace()
    first = hover.hover(ws, str(path.resolve()), line, 4)
    assert first is not None and "being grouped" in first.markdown and first.range == expected.range
    bundle = ws.bundle(str(path.resolve()))
    deadline = time.monotonic() + 60
    while ("peak_report" not in bundle.memo or lens._making) and time.monotonic() < deadline:
        time.sleep(0.01)  # (until the thread is done with it)
    assert hover.hover(ws, str(path.resolve()), line, 4) == expected
