"""With large siblings deferred (the server's mode), a request never reads them: hovers say the buffer files
are still being read, never that a fact is absent; once the worker has read them (`warm`), hovers have them."""

from __future__ import annotations

import shutil

from hlo_lsp.core import workspace as wsmod
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.hover import hover
from tests.fixtures import DATA, find

STEM = "module_0000.jit_piecewise.cpu_after_optimizations"


def test_deferred_siblings_never_claim_absence(tmp_path, monkeypatch):
    for f in (DATA / "jax-cpu" / "cond_switch").glob(f"{STEM}*"):
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.setattr(wsmod, "LARGE_SIBLING_BYTES", 100)  # every sibling counts as large
    ws = Workspace()
    ws.defer_large_siblings = True
    hlo = str(tmp_path / f"{STEM}.txt")
    lines = (tmp_path / f"{STEM}.txt").read_text().split("\n")
    ln, col = find(lines, "%wrapped_convert = ")
    before = hover(ws, hlo, ln, col + 2).markdown
    assert "still being read" in before and "**Buffer** " not in before
    ba = str(tmp_path / f"{STEM}-buffer-assignment.txt")
    ba_lines = (tmp_path / f"{STEM}-buffer-assignment.txt").read_text().split("\n")
    bl, bc = find(ba_lines, "<17 wrapped_convert @0>")
    value = hover(ws, ba, bl, bc + 5).markdown
    assert "no live range in this dump" not in value and "not read yet" in value
    ws.warm(hlo)  # what the server's worker thread does after the first publish
    after = hover(ws, hlo, ln, col + 2).markdown
    assert "still being read" not in after and "**Buffer** `wrapped_convert{}`" in after
    assert "**Live range** `[3, 12]`" in hover(ws, ba, bl, bc + 5).markdown


def test_closing_a_sibling_names_the_open_documents_to_warm_again(tmp_path, monkeypatch):
    """Closing the module drops the bundle the open assignment file shared with it; `close` names that file
    (the server warms it again), keeps its other siblings read, and one `warm` brings its full hover back."""
    for f in (DATA / "jax-cpu" / "cond_switch").glob(f"{STEM}*"):
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.setattr(wsmod, "LARGE_SIBLING_BYTES", 100)
    ws = Workspace()
    ws.defer_large_siblings = True
    hlo = str(tmp_path / f"{STEM}.txt")
    ba = str(tmp_path / f"{STEM}-buffer-assignment.txt")
    ba_lines = (tmp_path / f"{STEM}-buffer-assignment.txt").read_text().split("\n")
    bl, bc = find(ba_lines, "<17 wrapped_convert @0>")
    for p in (hlo, ba):
        ws.open(p, open(p).read(), 1)
    ws.warm(ba)
    assert "**Live range** `[3, 12]`" in hover(ws, ba, bl, bc + 5).markdown
    disk_before = set(ws._disk)
    assert ws.close(hlo) == [ba]
    assert disk_before <= set(ws._disk)  # the values and live-range files read from disk stay read
    assert "not read yet" in hover(ws, ba, bl, bc + 5).markdown  # what the server's re-warm is for
    ws.warm(ba)
    assert "**Live range** `[3, 12]`" in hover(ws, ba, bl, bc + 5).markdown
    assert ws.close(ba) == []
    assert not ws._disk and not ws._bundles
