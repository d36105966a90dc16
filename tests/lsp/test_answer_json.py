"""The JSON text of whole-document answers, made in pieces so that a worker holds the GIL only briefly, is
exactly what one ``json.dumps`` call makes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from hlo_lsp.lsp import doc_answers
from hlo_lsp.lsp.doc_answers import ints_json, list_json

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
    max_leaves=12,
)


@given(st.lists(st.integers(0, 2**31 - 1), max_size=300), st.integers(1, 40))
def test_ints_json_equals_json_dumps(data, chunk):
    old = doc_answers.INT_CHUNK
    doc_answers.INT_CHUNK = chunk  # many pieces, and pieces that end exactly at the end
    try:
        assert json.loads(ints_json(data)) == data
        assert ints_json(data) == json.dumps(data, separators=(",", ":"))
    finally:
        doc_answers.INT_CHUNK = old


@given(st.lists(JSONISH, max_size=6))
def test_list_json_equals_json_dumps(items):
    assert list_json(items) == json.dumps(items, separators=(",", ":"), ensure_ascii=False)
