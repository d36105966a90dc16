"""End-to-end: a large machine-written module through the real server, the way the benchmark module goes.

Above 2 MB the server reads a document in a worker thread under a `$/progress` (above 4 MB), the rows pass
reads it (repeated computations from their first copy) and the verifier runs in the same thread hop. The
module here is the synthetic scaler's copy of a real dump (`benchmarks/synth_module.py`), 5 MB, with faults
put in both halves; the server's diagnostics must be exactly those of the in-process analysis with forking
off, and requests must answer on it as on the small modules.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from lsprotocol import types as lsp

from benchmarks.synth_module import synthesize
from tests.fixtures import DATA
from tests.lsp.util import change_line, open_doc, tdp
from tests.server_client import record_published

SRC = DATA / "jax-cpu" / "loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"
USE = re.compile(r"%([\w.\-]+)(?=[,)])")


def _instruction_lines(lines: list[str]) -> list[int]:
    return [i for i, x in enumerate(lines) if re.match(r"\s+(ROOT\s+)?%[\w.\-]+ = ", x)]


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """(path, text, lines, fault lines): the 5 MB module, an operand renamed to an undefined name at about a
    fifth and at about nine tenths of its instruction lines."""
    path = tmp_path_factory.mktemp("large") / "module_0000.jit_big.cpu_after_optimizations.txt"
    synthesize(SRC.read_text(), path, 5)
    lines = path.read_text().split("\n")
    instr = [i for i in _instruction_lines(lines) if "(%" in lines[i]]
    faults = []
    for frac in (0.2, 0.9):
        ln = instr[int(len(instr) * frac)]
        k = lines[ln].index("(%") + 2
        lines[ln] = lines[ln][:k] + "nowhere_" + lines[ln][k:]
        faults.append(ln)
    text = "\n".join(lines)
    path.write_text(text)
    return path, text, lines, faults


def _expected(path, text, monkeypatch) -> list[tuple]:
    """The in-process diagnostics, read in one part (no fork)."""
    from hlo_lsp.core.process import fork as forked
    from hlo_lsp.core.workspace import Workspace
    from hlo_lsp.ide.diagnostics import document_diagnostics

    monkeypatch.setattr(forked, "ENABLED", False)
    ws = Workspace()
    ws.open(str(path), text, 1)
    return sorted((d.range.start_line, d.range.start_col, d.code) for d in document_diagnostics(ws, str(path)))


async def _diagnostics_for(client, u: str, version: int, timeout: float = 60) -> list[lsp.Diagnostic]:
    """The diagnostics published for ``u`` at ``version`` (waiting for them)."""

    async def wait():
        while True:
            got = [p for p in client.published if p.uri == u and p.version == version]
            if got:
                return got[-1].diagnostics
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), timeout)


@pytest.fixture(scope="module", autouse=True)
def _record_publications(client):
    """Every publishDiagnostics with its version (the client keeps only the latest per document)."""
    record_published(client)
    yield


async def test_large_module_diagnostics_progress_and_requests(client, big, monkeypatch):
    path, text, lines, faults = big
    assert len(text) > 4_000_000
    expected = _expected(path, text, monkeypatch)
    assert {(ln, "undefined-operand") for ln in faults} <= {(d[0], d[2]) for d in expected}

    tokens_before = set(client.progress_reports)
    u = open_doc(client, path, text=text)
    diags = await _diagnostics_for(client, u, 1)
    assert sorted((d.range.start.line, d.range.start.character, str(d.code)) for d in diags) == expected

    # the read was shown as a progress that began and ended (its end comes after the publication)
    def ended() -> bool:
        reports = [client.progress_reports[t] for t in set(client.progress_reports) - tokens_before]
        return any(
            r and isinstance(r[0], lsp.WorkDoneProgressBegin) and isinstance(r[-1], lsp.WorkDoneProgressEnd)
            for r in reports
        )

    for _ in range(300):
        if ended():
            break
        await asyncio.sleep(0.1)
    assert ended()

    # hover on the last instruction (in the child's part): its name and opcode
    last = _instruction_lines(lines)[-1]
    name = re.match(r"\s+(?:ROOT\s+)?%([\w.\-]+)", lines[last]).group(1)
    h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, last, lines[last].index(name))))
    assert h is not None and name in h.contents.value

    # references of the most used name: its definition and every use, counted from the text here
    counts: dict[str, int] = {}
    for ln in _instruction_lines(lines):
        x = lines[ln]
        ops = x[x.find("(%") + 1 : x.find(")", x.find("(%"))] if "(%" in x else ""
        for op in dict.fromkeys(USE.findall(ops + ")")):
            counts[op] = counts.get(op, 0) + 1
    busy = max(counts, key=counts.get)
    assert counts[busy] >= 5
    def_line = next(
        ln for ln in _instruction_lines(lines) if re.match(rf"\s+(ROOT\s+)?%{re.escape(busy)} = ", lines[ln])
    )
    refs = await client.text_document_references_async(
        lsp.ReferenceParams(
            **tdp(u, def_line, lines[def_line].index(busy)), context=lsp.ReferenceContext(include_declaration=True)
        )
    )
    in_signature = " parameter(" in lines[def_line]  # a parameter is named in its computation's header too
    assert len(refs) == counts[busy] + 1 + in_signature
    assert len({(r.range.start.line, r.range.start.character) for r in refs}) == len(refs)

    # an edit mends the second fault: its diagnostic goes, the first stays
    ln = faults[1]
    k = lines[ln].index("nowhere_")
    change_line(client, u, 2, ln, k, k + len("nowhere_"), "")
    after = await _diagnostics_for(client, u, 2)
    codes = {(d.range.start.line, str(d.code)) for d in after}
    assert (faults[0], "undefined-operand") in codes and (faults[1], "undefined-operand") not in codes
    assert path.read_text() == text  # the server never writes the file
