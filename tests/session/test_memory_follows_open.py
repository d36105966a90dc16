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
