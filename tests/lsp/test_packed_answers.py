"""Kept answers packed once the server is idle (`DocumentAnswers.pack_kept`): a large outline's or token array's
JSON text kept compressed, the same text sent when the editor asks again; small answers left as they are; the
token memo's rows (what the next version's tokens are spliced from) compressed too."""

from __future__ import annotations

import asyncio
import json
import random
from array import array

import pytest

from hlo_lsp.ide.token_reuse import TOKEN_ROWS, TokenMemo
from hlo_lsp.lsp import doc_answers
from hlo_lsp.lsp.doc_answers import DocumentAnswers, OutlineMemo, Provisional, TokenArray, token_edits
from hlo_lsp.lsp.protocol import RawResult


def _text(raw: RawResult) -> bytes:
    return b"".join(raw.parts)


def _outline(n: int) -> RawResult:
    rng = random.Random(n)
    items = [json.dumps({"name": f"fusion.{rng.randrange(10**6)}", "kind": 12, "line": i}) for i in range(n)]
    return RawResult.array(items)


def test_a_packed_result_sends_the_same_text_and_unpacks_to_a_new_one():
    raw = _outline(5_000)
    before = _text(raw)
    size = raw.size()
    assert not raw.packed and size == len(before)
    raw.pack()
    assert raw.packed and raw.size() < size // 3  # an outline's text compresses several times
    assert _text(raw) == before  # a send of the packed answer decompresses it
    raw.pack()  # packed already: nothing changes
    assert _text(raw) == before
    fresh = raw.unpacked()
    assert fresh is not raw and not fresh.packed and _text(fresh) == before
    assert raw.packed  # the kept one stays packed
    plain = RawResult("[]")
    assert plain.unpacked() is plain


def test_a_packed_token_array_gives_the_same_json_and_deltas():
    data = array("i", [random.Random(1).randrange(300) for _ in range(5 * 20_000)])
    tokens = TokenArray(data)
    made = b"".join(tokens.json_parts())
    assert json.loads(made) == list(data) and tokens.json is not None
    assert tokens.text is not None
    tokens.text.pack()  # (as `DocumentAnswers.pack_kept` packs it)
    assert tokens.json is None and tokens.text.size() < len(made)
    assert b"".join(tokens.json_parts()) == made
    assert tokens.json is None  # decompressed for the answer, kept packed
    answers = DocumentAnswers(lambda path: 1)
    rid = json.loads(_text(answers.tokens_result("/m", tokens)))["resultId"]
    changed = array("i", data)
    changed[7] += 1
    got = json.loads(_text(answers.tokens_delta("/m", rid, TokenArray(changed))))
    edit = token_edits(data, changed)
    assert edit is not None
    assert got["edits"] == [{"start": edit[0], "deleteCount": edit[1], "data": edit[2]}]


def test_pack_kept_packs_the_large_answers_and_a_request_again_gets_the_same_text(monkeypatch):
    monkeypatch.setattr(doc_answers, "PACK_MIN_BYTES", 50_000)
    big, small = _outline(3_000), _outline(10)
    tokens = TokenArray(array("i", range(5 * 10_000)))
    big_text, small_text = _text(big), _text(small)
    tokens_text = b"".join(tokens.json_parts())
    kept_calls = []

    async def run():
        answers = DocumentAnswers(lambda path: 1)
        answers.on_kept = lambda: kept_calls.append(1)
        assert await answers.answer("/m", "documentSymbol", lambda: big) is big
        await answers.answer("/m", "foldingRange", lambda: small)
        await answers.answer("/m", "semanticTokens", lambda: tokens)
        answers.wait_for_join("/m", "codeLens")  # (a provisional answer is kept, as it is, until the join)
        await answers.answer("/m", "codeLens", lambda: Provisional(_outline(3_000)))
        answers.outline_memo["/m"] = OutlineMemo(shape=None, answer=big)  # type: ignore[arg-type]
        rows = array(TOKEN_ROWS, [k % 7 for k in range(5 * 20_000)])
        memo = answers.token_memo["/m"] = TokenMemo([], array(TOKEN_ROWS, rows), [], 0, array("i"), "utf-16")
        freed = answers.pack_kept()
        assert freed > 0 and big.packed and not small.packed and tokens.json is None
        assert isinstance(memo.tokens, bytes) and memo.rows() == rows  # the token memo's rows, compressed
        assert answers.pack_kept() == 0  # nothing more to pack
        again = await answers.answer("/m", "documentSymbol", lambda: pytest.fail("kept: not made again"))
        assert again is not big and not again.packed and _text(again) == big_text
        assert await answers.answer("/m", "foldingRange", lambda: pytest.fail("kept")) is small
        kept_tokens = await answers.answer("/m", "semanticTokens", lambda: pytest.fail("kept"))
        assert kept_tokens is tokens and b"".join(tokens.json_parts()) == tokens_text
        assert _text(small) == small_text
        provisional = answers.cached("/m", "codeLens")
        assert isinstance(provisional, Provisional) and not provisional.value.packed

    asyncio.run(run())
    assert len(kept_calls) == 4  # the server is told of each answer kept (it packs them once idle)


def test_a_packed_answer_decompressed_while_an_edit_came_is_not_sent(monkeypatch):
    """The kept answer is decompressed in a worker thread: an edit that lands meanwhile makes the request get
    ``ContentModified`` (ask again), never the text of the version before."""
    from pygls.exceptions import JsonRpcContentModified

    version = [1]
    big = _outline(3_000)

    async def run():
        answers = DocumentAnswers(lambda path: version[0])
        await answers.answer("/m", "documentSymbol", lambda: big)
        monkeypatch.setattr(doc_answers, "PACK_MIN_BYTES", 1)
        answers.pack_kept()
        assert big.packed
        real = RawResult.unpacked

        def edited_meanwhile(self):
            version[0] = 2
            return real(self)

        monkeypatch.setattr(RawResult, "unpacked", edited_meanwhile)
        with pytest.raises(JsonRpcContentModified):
            await answers.answer("/m", "documentSymbol", lambda: pytest.fail("kept: not made again"))

    asyncio.run(run())
