"""A read that finishes after edits landed hands its work over: typing inside lines while a large module is
read is patched into the finished analysis, which is cached for the current version (before, it was thrown
away and the module read again, which under steady typing never caught up and published nothing)."""

from __future__ import annotations

from hlo_lsp.core import workspace
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.session.synth import large_module


def test_edits_during_a_read_are_patched_into_it(tmp_path, monkeypatch):
    text = large_module(tmp_path / "synth.txt")
    path = "/nonexistent/hand_over.hlo"
    ws = Workspace()
    ws.open(path, text, 1)
    doc = ws.document(path)
    lines = text.split("\n")
    ln = next(i for i, x in enumerate(lines) if "(%" in x and " parameter(" not in x)
    col = lines[ln].index("(%") + 2
    original = workspace.analyse

    def analyse_then_type(*args, **kw):  # an edit lands while the read runs (as from the editor's thread)
        a = original(*args, **kw)
        if ws.document(path) is doc and doc.lines[ln] == lines[ln]:
            assert not ws.edited(path, 2, [doc.apply(ln, col, ln, col, "nosuch_")])
        return a

    monkeypatch.setattr(workspace, "analyse", analyse_then_type)
    a = ws.analysis(path)
    monkeypatch.setattr(workspace, "analyse", original)
    assert a.source.version == 2 and ws.analysis(path) is a  # cached for the current version: no second read
    got = {(d.range.start_line, d.code) for d in document_diagnostics(ws, path, complete=True)}
    fresh = Workspace()
    fresh.open(path, "\n".join(doc.lines), 1)
    want = {(d.range.start_line, d.code) for d in document_diagnostics(fresh, path, complete=True)}
    assert (ln, "undefined-operand") in want
    assert got == want
