"""Memory follows what is open (issue 15): a superseded version's analysis is released (the workspace kept a
module bundle per document version, up to 64), and closing documents releases what only they used (their
siblings read from disk, the bundles, the analyses)."""

from __future__ import annotations

import gc

from hlo_lsp.core.workspace import Analysis, Workspace
from tests.fixtures import DATA

SET = DATA / "jax-cpu" / "mlp_sgd"
STEM = "module_0000.jit_train_step.cpu_after_optimizations"


def _analyses_alive(path: str) -> int:
    """How many analyses of ``path`` are still reachable (or not yet collected)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Analysis and o.path == path)


def test_superseded_versions_are_released():
    ws = Workspace()
    path = str(SET / f"{STEM}.txt")
    text = (SET / f"{STEM}.txt").read_text()
    lines = text.split("\n")
    at = next(i for i, x in enumerate(lines) if x.startswith("ENTRY")) + 1
    edited = "\n".join(lines[:at] + ["  %a.1 = f32[] constant(0)"] + lines[at:])
    ws.open(path, text, 1)
    for version in range(2, 30):  # full re-reads that return to the same text, each asking for the bundle
        ws.change(path, edited if version % 2 else text, version)
        ws.analysis(path)
        ws.bundle(path, read_large=True)
    assert _analyses_alive(path) == 1  # the current version's alone


def test_closing_releases_what_only_it_used():
    ws = Workspace()
    paths = [str(SET / f"{STEM}{suffix}.txt") for suffix in ("", "-buffer-assignment", "-live-range")]
    for p in paths:
        ws.open(p, open(p).read(), 1)
        ws.bundle(p, read_large=True)  # reads the other siblings from disk
    assert ws._disk  # the values file at least, read as a sibling
    ws.close(paths[0])
    assert ws.is_open(paths[1])
    ws.bundle(paths[1], read_large=True)  # still works after the close, reading the HLO file from disk
    for p in paths[1:]:
        ws.close(p)
    assert not ws._disk and not ws._analyses and not ws._bundles
    assert all(_analyses_alive(p) == 0 for p in paths)


def test_memo_tables_are_registered_and_emptied():
    """The process-wide memo tables fill while documents are read and checked; `memos.clear_all` (which the
    server calls when its last document closes) empties every one of them, including those of the grammar path
    (small modules) and the rows pass."""
    from hlo_lsp.core import memos
    from hlo_lsp.core.hlo.grammar import validate
    from hlo_lsp.core.hlo.rules import summary
    from hlo_lsp.core.shapes.parse import _ARRAY_MEMO
    from hlo_lsp.ide.diagnostics import document_diagnostics

    ws = Workspace()
    path = str(SET / f"{STEM}.txt")
    ws.open(path, (SET / f"{STEM}.txt").read_text(), 1)
    document_diagnostics(ws, path, complete=True)
    ws.analysis(path).checker.summaries()
    tables = {"grammar blocks": validate._cache, "signatures": summary._SIGS, "shapes": _ARRAY_MEMO}
    assert all(tables.values()), {k: len(v) for k, v in tables.items()}
    assert all(any(t is r for r in memos._TABLES) for t in tables.values())
    ws.close(path)
    memos.clear_all()
    assert not any(tables.values())
    assert all(len(t) == 0 for t in memos._TABLES)


def test_what_a_late_background_read_stored_is_swept():
    """A worker thread still reading for a document when it closes (the server's `warm`: its siblings, its
    joins) stores its results after the close; `sweep`, which the server runs once that work is done, forgets
    them (the manyfiles soak kept 5 analyses, 5 files and a bundle of a closed module for good)."""
    ws = Workspace()
    ws.defer_large_siblings = True
    path = str(SET / f"{STEM}.txt")
    ws.open(path, (SET / f"{STEM}.txt").read_text(), 1)
    ws.close(path)
    ws.warm(path)  # what the late thread does: it reads the (now closed) module and its siblings from disk
    assert ws._analyses and ws._disk and ws._bundles
    ws.sweep()
    assert not ws._disk and not ws._analyses and not ws._bundles and not ws._joins
    assert _analyses_alive(path) == 0


def test_a_sweep_keeps_the_siblings_an_open_document_is_reading():
    """The siblings a request thread has read for an open document whose bundle it has not made yet stay
    through a sweep (the server sweeps when a closed document's background work ends, at any moment): CI once
    saw a code lens answered from the live-range file alone ("XLA peak at step None: 0B") because the sweep
    dropped the three siblings just read for it, and the bundle made next left them out."""
    ws = Workspace()
    ws.defer_large_siblings = True
    path = str(SET / f"{STEM}-live-range.txt")
    ws.open(path, (SET / f"{STEM}-live-range.txt").read_text(), 1)
    siblings = [str(SET / f"{STEM}{suffix}.txt") for suffix in ("", "-buffer-assignment", "-buffer-assignment-values")]
    for p in siblings:
        ws.analysis(p)  # what `bundle` reads before it makes and keeps the bundle
    ws.sweep()
    assert all(ws.has_analysis(p) for p in siblings)
    assert not ws.bundle(path).partial
    ws.close(path)
    assert not ws._analyses and not ws._disk


def test_closing_a_pass_file_forgets_its_modules_history():
    """A pass file's module history (every distinct computation of its files, indexed) goes when the last open
    file of that module closes; it stays while another of its files is open."""
    folder = DATA / "passes" / "mlp_sgd"
    first, second = sorted(str(p) for p in folder.glob("*.txt"))[:2]
    ws = Workspace()
    for p in (first, second):
        ws.open(p, open(p).read(), 1)
    assert ws.passes.get(first, build=True) is not None
    ws.close(first)
    assert ws.passes.get(second) is not None  # built, and kept for the file still open
    ws.close(second)
    assert not ws.passes._made and not ws.passes._listings
    assert ws.passes.get(second) is None  # without build, None until built again


def test_a_module_read_again_is_freed_at_once_without_a_collection():
    """An edit that makes the module be read again drops its old model there and then, by reference counting
    alone: no reference cycle (the users map pointed back at its module) and no bundle holds it until a full
    collection, so the new model is built into the old one's memory instead of beside it (the soak's re-reads
    of the 23 MB module left the heap 40% larger, in arenas neither model filled)."""
    from hlo_lsp.core.hlo.model import HloModule
    from hlo_lsp.ide.diagnostics import document_diagnostics

    ws = Workspace()
    path = str(SET / f"{STEM}.txt")
    text = (SET / f"{STEM}.txt").read_text()
    ws.open(path, text, 1)
    a = ws.analysis(path)
    a.hlo.build_maps()  # the users and callers maps, as the server builds them after a read
    document_diagnostics(ws, path, complete=True)
    ws.bundle(path, read_large=True)
    del a
    gc.collect()
    gc.disable()
    try:
        alive = sum(1 for o in gc.get_objects() if type(o) is HloModule)  # this one, and other tests' still kept
        doc = ws.document(path)
        at = next(i for i, x in enumerate(doc.lines) if x.startswith("ENTRY")) + 1
        assert not ws.edited(path, 2, [doc.apply(at, 0, at, 0, "  %a.1 = f32[] constant(0)\n")])  # read again
        assert sum(1 for o in gc.get_objects() if type(o) is HloModule) == alive - 1
    finally:
        gc.enable()
