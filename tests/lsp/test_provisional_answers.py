"""`DocumentAnswers` and provisional answers (made before a document's large siblings were joined): kept while
the document waits for its join, dropped when the join ends, never kept when the join ended while it was made,
and a request after the join never joins a provisional computation still running."""

from __future__ import annotations

import asyncio
import threading

from hlo_lsp.lsp.doc_answers import DocumentAnswers, Provisional

PATH = "/dump/m-buffer-assignment.txt"


def _answers() -> DocumentAnswers:
    return DocumentAnswers(lambda path: 1)  # one open version


async def test_a_provisional_answer_is_kept_until_the_join_then_dropped():
    answers = _answers()
    calls = []

    def compute():
        calls.append(1)
        answers.wait_for_join(PATH, "codeLens")
        return Provisional(["own"])

    assert await answers.answer(PATH, "codeLens", compute) == ["own"]
    assert await answers.answer(PATH, "codeLens", compute) == ["own"]  # kept: asked again before the join
    assert len(calls) == 1
    assert answers.joined(PATH) == ["codeLens"]
    assert answers.joined(PATH) == []  # once

    def full():
        answers.not_waiting(PATH, "codeLens")
        return ["own", "joined"]

    assert await answers.answer(PATH, "codeLens", full) == ["own", "joined"]
    assert await answers.answer(PATH, "codeLens", compute) == ["own", "joined"]  # the full one is kept


async def test_a_provisional_answer_finished_after_the_join_is_not_kept():
    answers = _answers()
    release = threading.Event()

    def compute():
        answers.wait_for_join(PATH, "diagnostic")
        release.wait(10)
        return Provisional(["own"])

    first = asyncio.ensure_future(answers.answer(PATH, "diagnostic", compute))
    await asyncio.sleep(0.05)
    assert answers.joined(PATH) == ["diagnostic"]  # the join ends while it is made
    second = asyncio.ensure_future(answers.answer(PATH, "diagnostic", lambda: ["own", "joined"]))
    assert await second == ["own", "joined"]  # did not wait on the provisional computation
    release.set()
    assert await first == ["own"]  # its own request still gets it
    await asyncio.sleep(0)
    assert answers.cached(PATH, "diagnostic") == ["own", "joined"]
