"""The last step of a whole-document answer made outside `DocumentAnswers.answer` (the full tokens' JSON, made
from the array it returned) counts as part of the answer: background work gives way meanwhile, and the step
gives way to the requests the event loop gets, as the computation itself does."""

from __future__ import annotations

import pytest

from hlo_lsp.core.process import turns
from hlo_lsp.lsp.doc_answers import DocumentAnswers


async def test_the_json_step_holds_background_work_back_and_gives_way_to_requests():
    answers = DocumentAnswers(lambda path: 1)
    asked: list[float] = []
    seen: dict[str, bool] = {}

    def gate(limit: float) -> bool:
        asked.append(limit)
        return True  # nothing to handle now

    def make_json() -> str:
        seen["idle"] = answers.wait_idle(0.0)  # the gate background work waits at
        turns.give_way()  # as the JSON's pieces do between them
        return "json"

    before = turns._yield_gate
    turns.set_yield_gate(gate)
    try:
        assert answers.wait_idle(0.0)
        assert await answers.part_of_answer(make_json) == "json"
    finally:
        turns.set_yield_gate(before)
    assert seen == {"idle": False} and asked == [0.0]
    assert answers.wait_idle(0.0)  # and free again once it is done


async def test_a_failing_json_step_still_frees_background_work():
    answers = DocumentAnswers(lambda path: 1)

    def fails() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):  # the step's error is the caller's
        await answers.part_of_answer(fails)
    assert answers.wait_idle(0.0)
