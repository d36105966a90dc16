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
