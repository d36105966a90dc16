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
