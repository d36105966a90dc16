"""The token arrays kept for deltas (`DocumentAnswers._keep`): the newest as it is, the one before it compressed;
a delta from either gives the newest exactly, and from one no longer kept a full answer."""

from __future__ import annotations

import json
import random
from array import array

from hlo_lsp.lsp.doc_answers import KEEP_TOKEN_RESULTS, DocumentAnswers, TokenArray


def _apply(data: list[int], edits: list[dict]) -> list[int]:
    for e in sorted(edits, key=lambda e: e["start"], reverse=True):
        data[e["start"] : e["start"] + e["deleteCount"]] = e.get("data", [])
    return data


def _answer(raw) -> dict:
    return json.loads(b"".join(raw.parts))


def test_a_delta_from_the_newest_or_an_older_kept_array():
    assert KEEP_TOKEN_RESULTS == 2
    rng = random.Random(3)
    answers = DocumentAnswers(lambda path: 1)
    versions = [array("i", [rng.randrange(50) for _ in range(5 * rng.randrange(1, 400))]) for _ in range(4)]
    ids = [_answer(answers.tokens_result("/m", TokenArray(v)))["resultId"] for v in versions[:3]]
    kept = answers._tokens["/m"]
    assert [r for r, _ in kept] == ids[1:] and isinstance(kept[0][1], bytes) and isinstance(kept[1][1], array)
    for previous in (1, 2):  # the one before the newest (compressed), the newest
        got = _answer(answers.tokens_delta("/m", ids[previous], TokenArray(versions[3])))
        assert "edits" in got
        assert _apply(list(versions[previous]), got["edits"]) == list(versions[3])
        ids.append(got["resultId"])
    gone = _answer(answers.tokens_delta("/m", ids[0], TokenArray(versions[0])))
    assert "data" in gone and gone["data"] == list(versions[0])
