"""`entry_layout` found quiet where the read read the entry (`entry_layout.quiet`, made by the child reading a
long module's later part and taken by the verifier's run): with every module of tests/data read so, the verifier
finds what it finds on a read in one part; a layout that disagrees is found all the same; and once an instruction
is edited in place since the read, the rule looks again."""

from __future__ import annotations

import re

import pytest

from hlo_lsp.core.hlo import bulk
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import diagnostics as dg
from tests.fixtures import DATA
from tests.rules.hlo_faults import entry_layout_param, read

MODULES = sorted(p for p in DATA.rglob("*after_optimizations.txt") if p.is_file())
LINUX_ONLY = pytest.mark.skipif(not bulk.fork.ENABLED, reason="the read's child is forked (Linux)")


def _verified(path: str, text: str, split: bool, monkeypatch) -> tuple[list, object]:
    with monkeypatch.context() as m:
        m.setattr(bulk, "SPLIT_MIN_CHARS", 0 if split else 10**12)
        ws = Workspace()
        ws.open(path, text, 1)
        a = ws.analysis(path)
        made = a.hlo.read_hints
        assert dg.run_verifier(a, 1)
        return sorted((d.range, d.code, d.message) for d in a.verified), made


@LINUX_ONLY
def test_the_reads_quiet_layout_gives_the_verifiers_findings(monkeypatch):
    quiet = 0
    for path in MODULES:
        text = path.read_text()
        one, _ = _verified(str(path), text, False, monkeypatch)
        two, made = _verified(str(path), text, True, monkeypatch)
        assert two == one, path
        quiet += made is not None and made[3]
    assert quiet >= 30, quiet


@LINUX_ONLY
def test_a_layout_that_disagrees_is_found_by_a_split_read(monkeypatch):
    found = 0
    for path in MODULES:
        text = path.read_text()
        for fault in entry_layout_param(path, text, read(text)):
            got, made = _verified(str(path), fault.text, True, monkeypatch)
            assert made is None or not made[3], path
            assert ("verifier.entry-layout", fault.line) in {(code, rng.start_line) for rng, code, _ in got}, path
            found += 1
    assert found >= 10, found


@LINUX_ONLY
def test_an_edit_in_place_since_the_read_makes_the_rule_look_again(monkeypatch):
    """The ENTRY root's shape edited in place (its line still a row): the layout's result no longer agrees, and the
    rule says so although the read found the layout quiet."""
    monkeypatch.setattr(bulk, "SPLIT_MIN_CHARS", 0)
    path = next(p for p in MODULES if "donation-cpu" in str(p))
    ws = Workspace()
    ws.open(str(path), path.read_text(), 1)
    a = ws.analysis(str(path))
    assert a.hlo.read_hints is not None and a.hlo.read_hints[3]
    entry = a.hlo.entry
    root = a.hlo.make_instruction(entry.root)
    doc = ws.document(str(path))
    line = doc.lines[root.line]
    m = re.search(r"= \(?(\w+)\[(\d+)", line)
    assert m is not None
    edit = doc.apply(root.line, m.start(2), root.line, m.end(2), str(int(m.group(2)) + 1))
    assert ws.edited(str(path), 2, [edit])  # patched in place
    a = ws.analysis(str(path))
    assert a.hlo.patched
    assert dg.run_verifier(a, 2)
    assert any(d.code == "verifier.entry-layout" for d in a.verified)
