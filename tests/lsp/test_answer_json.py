"""The JSON text of whole-document answers, made in pieces so that a worker holds the GIL only briefly, is
exactly what one ``json.dumps`` call makes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from hlo_lsp.lsp import doc_answers
from hlo_lsp.lsp.doc_answers import JSON_ENCODE, ints_json_bytes
from hlo_lsp.lsp.handlers_document import _dumps

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
    max_leaves=12,
)


@given(st.lists(st.integers(0, 4200) | st.integers(0, 2**31 - 1), max_size=300), st.integers(1, 40))
def test_token_json_equals_json_dumps(data, chunk):
    old = doc_answers.INT_CHUNK
    doc_answers.INT_CHUNK = chunk  # many pieces, and pieces that end exactly at the end
    try:
        text = b"".join(ints_json_bytes(data)).decode("ascii")
        assert json.loads(text) == data
        assert text == json.dumps(data, separators=(",", ":"))
    finally:
        doc_answers.INT_CHUNK = old


@given(st.lists(JSONISH, max_size=6))
def test_list_answers_equal_json_dumps(items):
    """A list answer (`handlers_document._dumps`: each element encoded alone, `RawResult.array`) is one
    ``json.dumps`` of the list."""
    assert b"".join(_dumps(items).parts).decode("utf-8") == json.dumps(items, separators=(",", ":"), ensure_ascii=False)
    assert [JSON_ENCODE(x) for x in items] == [json.dumps(x, separators=(",", ":"), ensure_ascii=False) for x in items]


@given(st.lists(JSONISH, max_size=40), st.integers(1, 5))
def test_raw_result_array_and_joined_equal_json_dumps(items, per_piece):
    """`RawResult.array` (elements joined and encoded a few at a time) and `RawResult.joined` (any pieces of
    text) send exactly the UTF-8 of one ``json.dumps``."""
    from hlo_lsp.lsp import protocol
    from hlo_lsp.lsp.protocol import RawResult

    old = protocol.ITEMS_A_PIECE
    protocol.ITEMS_A_PIECE = per_piece
    try:
        whole = json.dumps(items, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        assert (
            b"".join(RawResult.array([json.dumps(x, separators=(",", ":"), ensure_ascii=False) for x in items]).parts)
            == whole
        )
        text = whole.decode("utf-8")
        cuts = sorted({0, len(text), *range(0, len(text), 3)})
        pieces = [text[a:b] for a, b in zip(cuts, cuts[1:])]
        assert b"".join(RawResult.joined(pieces).parts) == whole
    finally:
        protocol.ITEMS_A_PIECE = old


LINE_TEXT = st.text(alphabet=st.sampled_from("ab %=(é€😀\t"), max_size=12)


@given(
    st.lists(LINE_TEXT, max_size=4),
    st.sampled_from(["utf-8", "utf-16", "utf-32"]),
    st.lists(st.tuples(*[st.integers(-2, 14)] * 4), min_size=1, max_size=6),
)
def test_wire_ranges_equal_per_column_conversion(lines, encoding, ranges):
    """`_Wire.range` (its ASCII fast path inlined) gives what `col_to_wire` gives column by column, for lines in
    and out of the document, columns past either end, and every encoding."""
    from types import SimpleNamespace

    from hlo_lsp.lsp.convert import col_to_wire
    from hlo_lsp.lsp.handlers_document import _Wire

    w = _Wire.__new__(_Wire)
    w.encoding, w.lines = encoding, lines

    def col(line: int, c: int) -> int:
        return col_to_wire(lines[line], c, encoding) if 0 <= line < len(lines) else c

    for sl, sc, el, ec in ranges:
        r = SimpleNamespace(start_line=sl, start_col=sc, end_line=el, end_col=ec)
        assert w.range(r) == {
            "start": {"line": sl, "character": col(sl, sc)},
            "end": {"line": el, "character": col(el, ec)},
        }
