"""An edit of a buffer file leaves the join made from its old model to be freed at an idle moment
(`Workspace.release_dropped`) or by the thread making the next join, before it makes it; not on the event loop
that applies the edit, nor in the worker patching the file's model (the after-edit requests wait for that)."""

from __future__ import annotations

import gc
import shutil
import weakref

from hlo_lsp.core.workspace import Workspace
from tests.core.test_buffers_patch import FILES


class _Probe:
    """Kept in a bundle's memo: alive exactly as long as the bundle."""


def _probe(ws: Workspace, path: str) -> weakref.ref:
    probe = _Probe()
    ws.bundle(path, read_large=True).memo["probe"] = probe
    return weakref.ref(probe)


def _edit(ws: Workspace, path: str, version: int) -> None:
    doc = ws.document(path)
    line = len(doc.lines) // 2
    ws.edited(path, version, [doc.apply(line, 0, line, 0, " ")])


def _opened(tmp_path, kind: str) -> tuple[Workspace, str]:
    for src in FILES.values():
        shutil.copy(src, tmp_path / src.name)
    path = str(tmp_path / FILES[kind].name)
    ws = Workspace()
    ws.open(path, FILES[kind].read_text(), 1)
    return ws, path


def test_the_join_an_edit_dropped_is_freed_when_released(tmp_path):
    ws, path = _opened(tmp_path, "assignment")
    joined = _probe(ws, path)
    _edit(ws, path, 2)
    gc.collect()
    assert joined() is not None  # kept for later
    ws.release_dropped()
    gc.collect()
    assert joined() is None
    assert "probe" not in ws.bundle(path, read_large=True).memo  # the file's bundle is a new one


def test_the_old_join_is_freed_after_the_patch_and_before_the_next_join(tmp_path, monkeypatch):
    ws, path = _opened(tmp_path, "values")
    alive_at_join = []
    join = ws._join

    def noting_join(docs, kinds_sources, warm=False):
        gc.collect()
        alive_at_join.append(joined() is not None)
        return join(docs, kinds_sources, warm)

    for version in range(2, 5):
        joined = _probe(ws, path)
        _edit(ws, path, version)
        gc.collect()
        assert joined() is not None
        a = ws.analysis(path)
        gc.collect()
        assert joined() is not None  # the patch did not wait for the free
        assert a.buffers.patched is not None  # patched from the old model, which lived on for it
        monkeypatch.setattr(ws, "_join", noting_join)
        ws.bundle(path, read_large=True)
        monkeypatch.setattr(ws, "_join", join)
        assert alive_at_join == [False] * (version - 1)
        assert joined() is None


def test_a_join_an_edit_dropped_is_freed_by_reference_counting_alone(tmp_path):
    """The server freezes what survives its idle-time collections (`gc.freeze`: later collections skip the
    documents' model), so a join frozen there and dropped by an edit is freed by reference counting or never:
    it must hold no reference cycle (its values once pointed back at their set: 16 MB an edit of the benchmark's
    values file, kept for as long as the file stayed open). Unfrozen afterwards, a collection finds nothing."""
    for kind in ("assignment", "values", "live-range"):
        ws, path = _opened(tmp_path, kind)
        assert len(ws.bundle(path, read_large=True).buffers.values_by_key) > 100
        gc.collect()
        gc.freeze()  # as `server._collect_and_trim` does
        try:
            for version in range(2, 8):  # past the workspace's few recent joins (`_joins`), which keep theirs
                _edit(ws, path, version)
                ws.analysis(path)
                ws.bundle(path, read_large=True)  # the next join (the dropped one released before it is made)
            ws.release_dropped()
        finally:
            gc.unfreeze()
        assert gc.collect() == 0, kind


def test_a_large_modules_line_snapshot_waits_for_release_and_a_small_ones_does_not(monkeypatch):
    """The snapshot of a large open module's lines the read made (the model reads the editor's line store once read)
    is freed when released (at an idle moment: `lsp.server._collect_when_idle`), a piece at a
    time, not as the read returns; a short document's is freed at once. A snapshot something else still holds is
    left whole to it."""
    from hlo_lsp.core import workspace

    def module(n: int) -> str:
        body = "\n".join(f"  %a.{k} = f32[] add(f32[] %p, f32[] %p)" for k in range(n))
        return f"HloModule m\n\nENTRY %e (p: f32[]) -> f32[] {{\n  %p = f32[] parameter(0)\n{body}\n}}\n"

    emptied = []
    release = workspace.pieces.release
    monkeypatch.setattr(workspace.pieces, "release", lambda *ls: emptied.append(len(ls[0])) or release(*ls))
    ws = Workspace()
    ws.open("/large.hlo", module(workspace.LOOP_READ_LINES + 10), 1)
    ws.open("/small.hlo", module(100), 1)
    a = ws.analysis("/large.hlo")
    assert ws.analysis("/small.hlo").hlo is not None
    assert len(ws._dropped) == 1
    held = ws._dropped[0]
    assert held == a.hlo.lines and held is not a.hlo.lines  # a snapshot, not the store the model reads
    ws.release_dropped()  # something else holds it: left whole
    assert ws._dropped == [] and held == a.hlo.lines and emptied == []
    ws._dropped.append(list(a.hlo.lines))
    ws.release_dropped()  # nothing else does: emptied a piece at a time
    assert emptied == [len(a.hlo.lines)] and ws._dropped == []
