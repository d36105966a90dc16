"""Every value of every split buffer-assignment set in tests/data: hover holds its exact size and both
live-range ends, definition lands on the instruction's line in the after-optimizations HLO file, and type
definition lands on its allocation header. Expected values come from the dump text (tests.fixtures)."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from tests.fixtures import DATA, instruction_lines, parse_assignment_listing, parse_live_ranges, split_sets
from tests.lsp.util import open_doc, tdp

SETS = split_sets(DATA / "jax-cpu")


def _field(text: str, label: str) -> str | None:
    m = re.search(rf"\*\*{label}\*\* ([^\n]*)", text)
    return m.group(1) if m else None


async def test_every_corpus_value(client):
    assert len(SETS) >= 20, "the corpus copy in tests/data is missing"
    checked = 0
    for files in SETS:
        ba = files["assignment"]
        u = open_doc(client, ba)
        values = parse_assignment_listing(ba.read_text())
        live = parse_live_ranges(files["live-range"].read_text())
        instr = instruction_lines(files["hlo"].read_text())
        hlo_uri = files["hlo"].resolve().as_uri()
        for v in values:
            h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, v["line"], v["col"] + 1)))
            assert h is not None, (ba.name, v)
            text = h.contents.value
            assert _field(text, "Size").startswith(f"{v['size']} bytes"), (v, text)
            assert _field(text, "Allocation").startswith(f"{v['allocation']} "), (v, text)
            assert _field(text, "Offset").startswith(f"{v['offset']} "), (v, text)
            if v["key"] in live:
                s, e = live[v["key"]]
                assert _field(text, "Live range").startswith(f"`[{s}, {e}]`"), (v, text)
            d = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, v["line"], v["col"] + 1)))
            assert d and d[0].uri == hlo_uri and d[0].range.start.line == instr[v["instruction"]], (v, d)
            t = await client.text_document_type_definition_async(
                lsp.TypeDefinitionParams(**tdp(u, v["line"], v["col"] + 1))
            )
            assert t and t[0].uri == u and t[0].range.start.line == v["allocation_line"], (v, t)
            checked += 1
    print(f"checked {checked} values in {len(SETS)} split sets")
    assert checked >= 300
