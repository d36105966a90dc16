"""Edits on the editor's thread while a worker thread runs the verifier over the same module (what the server
does after each structural edit of a large module): the verifier never sees a half-made summary list
(issue 15: `'object' object has no attribute 'sig'` from the `_UNKNOWN` placeholder of an invalidated one)."""

from __future__ import annotations

import logging
import sys
import threading

import pytest

from hlo_lsp.core.hlo.checks import StructuralChecker
from hlo_lsp.core.hlo.rules.facts import Summary
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import run_verifier
from tests.session.synth import large_module


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    return large_module(tmp_path_factory.mktemp("synth") / "synth.txt")


def _constant_lines(lines: list[str]) -> list[int]:
    """Lines of instructions whose edit keeps every name (a number inside a constant, a metadata string)."""
    return [i for i, line in enumerate(lines) if 'metadata={op_name="' in line][:4000]


def test_verifier_runs_while_edits_land(large, caplog):
    ws = Workspace()
    path = "/nonexistent/race.hlo"
    ws.open(path, large, 1)
    a = ws.analysis(path)
    assert isinstance(a.checker, StructuralChecker)
    targets = _constant_lines(large.split("\n"))
    assert len(targets) > 1000
    seen_bad: list[object] = []
    errors: list[BaseException] = []

    def reader():
        try:
            for _ in range(30):
                got = a.checker.summaries()
                seen_bad.extend(s for s in got if s is not None and not isinstance(s, Summary))
            run_verifier(a)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    caplog.set_level(logging.ERROR)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the threads take turns often, as on a busy machine
    t = threading.Thread(target=reader)
    t.start()
    doc = ws.document(path)
    version = 1
    try:
        while t.is_alive():
            line = targets[version % len(targets)]
            col = doc.lines[line].index('op_name="') + len('op_name="')
            version += 1
            assert ws.edited(path, version, [doc.apply(line, col, line, col, "x")])  # patched: keeps every name
    finally:
        t.join(60)
        sys.setswitchinterval(interval)
    assert not errors
    assert not seen_bad
    assert not [r for r in caplog.records if "failed" in r.getMessage()]
