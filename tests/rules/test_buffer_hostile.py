"""Hostile buffer files: the rules never raise and never take quadratic time; absurd numbers are findings."""

from __future__ import annotations

import time

from hlo_lsp.core.buffers import read_buffers
from hlo_lsp.core.buffers.bufferset import BufferSet
from hlo_lsp.core.buffers.rules import buffer_findings
from hlo_lsp.core.diagnostics import Severity


def _single(n_values: int, same_offset: bool) -> str:
    lines = ["BufferAssignment:", f"allocation 0: size {n_values * 4}, preallocated-temp:"]
    for i in range(n_values):
        off = 0 if same_offset else 4 * i
        lines.append(f" value: <{i} v.{i} @0> (size=4,offset={off}): f32[]")
    lines += ["", f"Total bytes used: {n_values * 4} (x)", "", "Used values:"]
    lines += [f"<{i} v.{i} @0>\n positions:\n  v.{i}\n uses:\n  (none)" for i in range(n_values)]
    lines += ["", f"HloLiveRange (max {n_values}):", "  InstructionSequence:"]
    lines += [f"    {i}:v.{i}" for i in range(n_values)]
    lines += ["  BufferLiveRange:"] + [f"    v.{i}{{}}:{i}-{i}" for i in range(n_values)]
    return "\n".join(lines) + "\n"


def test_many_values_on_one_offset_end_fast():
    """30,000 values at offset 0, each live at its own step: legal (no two touch), and the sweep must not take
    the 450 million comparisons of a naive pairwise check."""
    text = _single(30_000, same_offset=True)
    bs = BufferSet.from_docs([read_buffers(text, "single")])
    t = time.perf_counter()
    found = buffer_findings(bs)
    assert time.perf_counter() - t < 30
    assert [(f.diagnostic.code, f.diagnostic.severity.label) for f in found] == [
        ("buffer.overlap-incomplete", "information")
    ]


def test_absurd_numbers_are_findings_not_exceptions():
    text = _single(3, same_offset=False)
    text = text.replace("v.1{}:1-1", "v.1{}:1-" + "9" * 40).replace(
        "(size=4,offset=8)", "(size=" + "9" * 30 + ",offset=8)"
    )
    bs = BufferSet.from_docs([read_buffers(text, "single")])
    codes = sorted(f.diagnostic.code for f in buffer_findings(bs))
    assert "live-range.beyond-schedule" in codes and "buffer.slice-out-of-range" in codes


def test_a_cut_listing_gives_the_reader_error_not_a_flood_of_rule_errors():
    """An assignment file cut mid-line (a truncated copy): the reader says so once; the section-comparing rules
    (used values, totals) stay silent instead of flagging every value after the cut."""
    from hlo_lsp.core.workspace import Workspace
    from hlo_lsp.ide.diagnostics import document_diagnostics
    from tests.rules.dumps import modules

    checked = 0
    for m in modules():
        if m.single:
            continue
        ba = m.paths["assignment"]
        text = m.texts[ba]
        cut = text[: int(len(text) * 0.6)]
        if cut.endswith("\n"):
            cut = cut[:-1]
        ws = Workspace()
        ws.open(str(ba), cut)
        codes = [
            d.code
            for p in (ba, m.paths["values"])
            for d in document_diagnostics(ws, str(p))
            if d.severity >= Severity.WARNING
        ]
        assert codes and all(c.startswith("buffers.") for c in codes), (ba.name, codes)
        checked += 1
    assert checked >= 20
