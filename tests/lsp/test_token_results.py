"""The token arrays kept for deltas (`DocumentAnswers._keep`): the newest as it is, the one before it compressed
(by a thread of its own, off the event loop); a delta from either, compressed yet or not, gives the newest exactly,
and from one no longer kept a full answer."""

from __future__ import annotations

import json
import random
import time
from array import array

from hlo_lsp.lsp.doc_answers import KEEP_TOKEN_RESULTS, DocumentAnswers, TokenArray


def _apply(data: list[int], edits: list[dict]) -> list[int]:
    for e in sorted(edits, key=lambda e: e["start"], reverse=True):
        data[e["start"] : e["start"] + e["deleteCount"]] = e.get("data", [])
    return data


def _wait_packed(kept: list, k: int) -> None:
    """Until the packing thread has compressed entry ``k`` (it was started by the `_keep` before)."""
    deadline = time.monotonic() + 10
    while not isinstance(kept[k][1], bytes) and time.monotonic() < deadline:
        time.sleep(0.005)


def test_a_delta_from_an_array_not_compressed_yet(monkeypatch):
    import threading

    started = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self))  # the packing never runs
    answers = DocumentAnswers(lambda path: 1)
    v1, v2 = array("i", range(50)), array("i", range(5, 55))
    rid = _answer(answers.tokens_result("/m", TokenArray(v1)))["resultId"]
    answers.tokens_result("/m", TokenArray(v2))
    assert started and isinstance(answers._tokens["/m"][0][1], array)
    got = _answer(answers.tokens_delta("/m", rid, TokenArray(array("i", range(10, 60)))))
    assert _apply(list(v1), got["edits"]) == list(range(10, 60))


def _answer(raw) -> dict:
    return json.loads(b"".join(raw.parts))


def test_a_delta_from_the_newest_or_an_older_kept_array():
    assert KEEP_TOKEN_RESULTS == 2
    rng = random.Random(3)
    answers = DocumentAnswers(lambda path: 1)
    versions = [array("i", [rng.randrange(50) for _ in range(5 * rng.randrange(1, 400))]) for _ in range(4)]
    ids = [_answer(answers.tokens_result("/m", TokenArray(v)))["resultId"] for v in versions[:3]]
    kept = answers._tokens["/m"]
    _wait_packed(kept, 0)
    assert [r for r, _ in kept] == ids[1:] and isinstance(kept[0][1], bytes) and isinstance(kept[1][1], array)
    for previous in (1, 2):  # the one before the newest (compressed), the newest
        got = _answer(answers.tokens_delta("/m", ids[previous], TokenArray(versions[3])))
        assert "edits" in got
        assert _apply(list(versions[previous]), got["edits"]) == list(versions[3])
        ids.append(got["resultId"])
    gone = _answer(answers.tokens_delta("/m", ids[0], TokenArray(versions[0])))
    assert "data" in gone and gone["data"] == list(versions[0])
