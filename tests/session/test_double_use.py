"""An undefined name used twice in one instruction gets one error at each use, in a module read by the bulk rows
pass (over 2 MB) as in a small one read per line (issue 15: the large one had the same error twice at one use)."""

from __future__ import annotations

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.session.synth import entry_line, large_module

BAD = "  %a.2 = f32[] multiply(f32[] %nosuch, f32[] %nosuch)"
SMALL = "HloModule m\n\nENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n"


def _uses(line: str, name: str) -> list[tuple[int, int]]:
    out, at = [], line.find("%" + name)
    while at >= 0:
        out.append((at, at + 1 + len(name)))
        at = line.find("%" + name, at + 1)
    return out


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    return large_module(tmp_path_factory.mktemp("synth") / "synth.txt")


@pytest.mark.parametrize("which", ["small", "large"])
def test_each_use_of_an_undefined_name_is_reported(which, large):
    text = SMALL if which == "small" else large
    if which == "large":
        assert len(text) > 2_000_000
    lines = text.split("\n")
    at = entry_line(text) + 1
    lines.insert(at, BAD)
    ws = Workspace()
    path = f"/nonexistent/{which}.hlo"
    ws.open(path, "\n".join(lines), 1)
    got = sorted(
        (d.range.start_col, d.range.end_col)
        for d in document_diagnostics(ws, path, True)
        if d.range.start_line == at and d.code == "undefined-operand"
    )
    # the grammar (small documents) covers the `%` too, the structural checks the name alone
    want = _uses(BAD, "nosuch")
    assert len(got) == len(want) == 2
    for (start, end), (pct, name_end) in zip(got, want):
        assert end == name_end and start in (pct, pct + 1)
