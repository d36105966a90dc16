"""Donation hints over the real server (issue 19): the pulled diagnostics of a real train step hold an
information on each undonated parameter that has an output of its shape, and a hover on that parameter says so."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from tests.fixtures import DATA
from tests.lsp.util import open_doc, pos

MODULE = DATA / "jax-cpu" / "mlp_sgd" / "module_0000.jit_train_step.cpu_after_optimizations.txt"


async def test_donation_hint_is_an_information_and_a_hover_line(client):
    u = open_doc(client, MODULE)
    doc = lsp.TextDocumentIdentifier(uri=u)
    report = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=doc))
    hints = [d for d in report.items if d.code == "hlo.donation-hint"]
    lines = MODULE.read_text().split("\n")
    ln = next(
        i for i, x in enumerate(lines) if re.match(r"\s*%params_0___w__\.1 = f32\[784,512\]\{1,0\} parameter\(1\)", x)
    )
    assert any(d.range.start.line == ln and d.severity == lsp.DiagnosticSeverity.Information for d in hints), hints
    assert all(d.severity == lsp.DiagnosticSeverity.Information for d in hints)
    col = lines[ln].index("params_0___w__.1")
    h = await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=pos(ln, col + 2)))
    assert "**Donation** parameter 1 (params[0]['w']) is not donated" in h.contents.value, h.contents.value
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=doc))
