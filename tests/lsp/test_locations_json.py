"""`Converter.spans_json` (the references answer written as JSON text) equals the lsprotocol Locations that
`Converter.location` builds, unstructured by pygls' own converter, in every position encoding: ASCII lines,
astral-plane and other non-ASCII characters before and inside a name, ranges past a line's end and lines
beyond the document."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types as lsp

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.ide.types import Location
from hlo_lsp.lsp.convert import Converter
from hlo_lsp.lsp.server import server

LINES = {
    "/m/a.txt": ["  %x = f32[] add(%a, %b)", "  %y = f32[] negate(%x) // 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 %x", "é%x", ""],
    "/m/b-buffer-assignment.txt": ["allocation 0: size 4", " value: <1 x @0> (size=4,offset=0): f32[]"],
}
LOCS = [
    Location("/m/a.txt", Range(0, 3, 0, 4)),
    Location("/m/a.txt", Range(1, 20, 1, 21)),
    Location("/m/a.txt", Range(1, 33, 1, 35)),  # after astral characters
    Location("/m/a.txt", Range(2, 1, 2, 3)),  # after a two-byte character
    Location("/m/a.txt", Range(0, 20, 0, 99)),  # past the end of the line
    Location("/m/a.txt", Range(9, 0, 9, 2)),  # beyond the document
    Location("/m/b-buffer-assignment.txt", Range(1, 11, 1, 12)),
]


@pytest.mark.parametrize(
    "encoding", [lsp.PositionEncodingKind.Utf16, lsp.PositionEncodingKind.Utf8, lsp.PositionEncodingKind.Utf32]
)
def test_spans_json_equals_the_lsprotocol_locations(encoding):
    conv = Converter(encoding, LINES.get)
    expected = server.protocol._converter.unstructure([conv.location(x) for x in LOCS])
    groups: dict[str, list[tuple[int, int, int]]] = {}
    for x in LOCS:
        groups.setdefault(x.path, []).append((x.range.start_line, x.range.start_col, x.range.end_col))
    assert json.loads(Converter(encoding, LINES.get).spans_json(list(groups.items()))) == expected
