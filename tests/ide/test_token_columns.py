"""The long documents' tokens made by C-level iterators a piece at a time (`semantic_tokens._instruction_tokens`,
`_in_order`, `encode_spans`) equal those of the per-token loops they replace, on every real module and on random
tokens, with pieces far smaller than the documents."""

from __future__ import annotations

import random
from array import array

import pytest

from hlo_lsp.core.process import pieces
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import semantic_tokens as st
from tests.core.test_bulk_rows import HLO


def _loop_definition_tokens(a):
    """`definition_tokens` of an HLO module as the per-instruction loop makes them."""
    mod = a.hlo
    out = []
    if mod.header_line is not None:
        m = st._MODULE_NAME.search(a.lines[mod.header_line])
        if m:
            out.append((mod.header_line, m.start(1), m.end(1), st._T["namespace"], st.DECL))
    names, line_of, col_of = st.name_columns(mod.instructions)
    for c in mod.computations:
        if c.name_start < st.MAX_LINE:
            out.append((c.line, c.name_start, c.name_start + len(c.name), st._T["function"], st.DECL))
        for i in c.instructions:
            if col_of[i] < st.MAX_LINE:
                out.append((line_of[i], col_of[i], col_of[i] + len(names[i]), st._T["variable"], st.DECL))
    if any(out[k] > out[k + 1] for k in range(len(out) - 1)):
        out.sort()
    return out


@pytest.mark.parametrize("path", HLO, ids=lambda p: p.name[:60])
def test_definition_tokens_and_their_encoding_equal_the_loops(path, monkeypatch):
    monkeypatch.setattr(pieces, "PIECE", 7)
    ws = Workspace()
    ws.open(str(path), path.read_text(), 1)
    a = ws.analysis(str(path))
    if a.hlo is None:
        return
    toks = st.definition_tokens(a)
    assert toks == _loop_definition_tokens(a)
    wire = [(line, s, e - s, t, m) for line, s, e, t, m in toks]
    assert st.encode_spans(toks, "i") == array("i", st.encode(wire))


def test_encoding_random_tokens_in_pieces(monkeypatch):
    rng = random.Random(11)
    for piece in (1, 2, 5, 64):
        monkeypatch.setattr(pieces, "PIECE", piece)
        for _ in range(200):
            toks, line, col = [], 0, 0
            for _ in range(rng.randrange(0, 40)):
                if rng.random() < 0.4:
                    line += rng.randrange(1, 4)
                    col = 0
                col += rng.randrange(0, 9)
                end = col + rng.randrange(1, 7)
                toks.append((line, col, end, rng.randrange(12), rng.randrange(2)))
                col = end
            wire = [(ln, s, e - s, t, m) for ln, s, e, t, m in toks]
            assert st.encode_spans(toks, "i") == array("i", st.encode(wire))
            assert st._in_order(toks)
    assert not st._in_order([(1, 0, 2, 0, 0), (0, 0, 1, 0, 0)])


BUFFER_FILES = sorted(
    p
    for p in (HLO[0].parents[2]).rglob("*.txt")
    if p.name.endswith(("-buffer-assignment.txt", "-values.txt", "-live-range.txt"))
)


@pytest.mark.parametrize("path", HLO + BUFFER_FILES, ids=lambda p: p.parent.name + "/" + p.name[-40:])
def test_packed_rows_equal_the_tokens_and_their_encoding(path, monkeypatch):
    """`definition_rows` (the model's columns packed, no tuple per token) gives `definition_tokens` packed, and
    `encode_rows` their `encode`: on every real module and buffer file, in pieces of seven tokens."""
    monkeypatch.setattr(pieces, "PIECE", 7)
    ws = Workspace()
    ws.open(str(path), path.read_text(), 1)
    a = ws.analysis(str(path))
    rows = st.definition_rows(a)
    toks = st.definition_tokens(a)
    if rows is None:
        return
    assert list(rows) == [x for t in toks for x in t]
    wire = [(line, s, e - s, t, m) for line, s, e, t, m in toks]
    assert st.encode_rows(rows, "i") == array("i", st.encode(wire))


def test_packed_rows_are_made_for_the_real_documents():
    made = 0
    for path in HLO[:20] + BUFFER_FILES[:20]:
        ws = Workspace()
        ws.open(str(path), path.read_text(), 1)
        made += st.definition_rows(ws.analysis(str(path))) is not None
    assert made >= 30


@pytest.mark.parametrize("piece", [1, 3, 4, 7, 64, 1 << 20])
def test_packed_rows_unpack_to_themselves_in_pieces_of_any_size(piece, monkeypatch):
    """The token rows kept compressed (`token_reuse.packed_rows`, read where they lie) come back whole when
    decompressed a piece at a time (`unpacked_rows`), a piece ending inside an integer or not, in both of the
    typecodes kept (rows and wire data)."""
    from hlo_lsp.ide import token_reuse

    monkeypatch.setattr(token_reuse, "UNPACK_PIECE", piece)
    rng = random.Random(piece)
    for typecode in (token_reuse.TOKEN_ROWS, "i"):
        for n in (0, 1, 2, 5, 100, 4099, 70_000):
            values = array(typecode, (rng.randrange(0, 1 << rng.choice((3, 12, 31))) for _ in range(n)))
            assert token_reuse.unpacked_rows(token_reuse.packed_rows(values), typecode) == values
