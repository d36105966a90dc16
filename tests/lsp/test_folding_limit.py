"""End-to-end: the folding ranges of a client that takes at most ``rangeLimit`` of them (VS Code sends 5000),
on a real module with more computations than that limit: the module's block and its longest computations."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from tests.fixtures import DATA
from tests.lsp.util import open_doc
from tests.server_client import vscode_client

HLO = DATA / "jax-cpu" / "cond_switch" / "module_0000.jit_piecewise.cpu_after_optimizations.txt"
LIMIT = 3


def _limit(caps: lsp.ClientCapabilities) -> None:
    assert caps.text_document is not None and caps.text_document.folding_range is not None
    assert caps.text_document.folding_range.range_limit == 5000  # VS Code's own
    caps.text_document.folding_range.range_limit = LIMIT


client = vscode_client(capabilities=_limit)


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Each computation's (header line, closing line), from the text."""
    out, start = [], None
    for k, x in enumerate(lines):
        if re.match(r"^(ENTRY )?%.*\{$", x):
            start = k
        elif x == "}" and start is not None:
            out.append((start, k))
            start = None
    return out


async def test_folding_within_the_clients_limit_keeps_the_module_and_the_longest_computations(client):
    lines = HLO.read_text().split("\n")
    blocks = _blocks(lines)
    assert len(blocks) > LIMIT  # the limit bites
    u = open_doc(client, HLO)
    folds = await client.text_document_folding_range_async(
        lsp.FoldingRangeParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    got = [(f.start_line, f.end_line) for f in folds]
    assert len(got) == LIMIT
    header = next(k for k, x in enumerate(lines) if x.startswith("HloModule "))
    assert got[0][0] == header  # the module's own block, the outermost
    longest = sorted(blocks, key=lambda b: (b[0] - b[1], b[0]))[: LIMIT - 1]
    assert got[1:] == sorted(longest)
