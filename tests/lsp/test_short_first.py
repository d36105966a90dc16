"""Short answers first: a long answer's fork waits until the short requests under way (the token delta, the
lenses) are answered, at most a bounded time; and a long answer's child runs at a lower CPU priority."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from hlo_lsp.core.process import fork
from hlo_lsp.lsp import doc_answers
from hlo_lsp.lsp.doc_answers import DocumentAnswers
from hlo_lsp.lsp.stdio import Intake


async def _short_until(answers: DocumentAnswers, done: asyncio.Event) -> None:
    """A short request (a hover, the viewport's tokens) under way until ``done`` is set."""
    with answers.short_request():
        await done.wait()


async def _gives_up(wait, limit: float = 0.1) -> None:
    """``wait(limit)``, in a worker thread, says no, and only once about ``limit`` seconds have passed."""
    t = time.monotonic()
    assert not await asyncio.to_thread(wait, limit)
    assert 0.09 <= time.monotonic() - t < 5


async def test_wait_short_returns_after_the_short_answer_is_written():
    """A thread waiting in `wait_short` goes on only after the short request's answer was sent (the callback
    that writes it, as pygls adds it to the handler's task, has run)."""
    answers = DocumentAnswers(lambda path: 1)
    order: list[str] = []
    release = asyncio.Event()

    async def handler() -> str:
        with answers.short_request():
            await release.wait()
            return "tokens"

    task = asyncio.ensure_future(handler())
    # as pygls writes the answer; the request still counts as under way at that moment
    task.add_done_callback(lambda t: order.append(f"sent {t.result()}, free: {answers.wait_short(0.0)}"))
    await asyncio.sleep(0)  # the handler is inside its short request

    def long_answer() -> None:
        assert answers.wait_short(10)
        order.append("forked")

    waiter = asyncio.ensure_future(asyncio.to_thread(long_answer))
    await asyncio.sleep(0.05)
    assert order == []  # still waiting: the short request is under way
    release.set()
    await waiter
    assert order == ["sent tokens, free: False", "forked"]


async def test_wait_short_is_bounded_and_free_when_nothing_short_runs():
    answers = DocumentAnswers(lambda path: 1)
    assert await asyncio.to_thread(answers.wait_short, 0.0)  # nothing under way: at once

    task = asyncio.ensure_future(_short_until(answers, asyncio.Event()))
    await asyncio.sleep(0)
    await _gives_up(answers.wait_short)  # gives up after the limit
    task.cancel()  # a cancelled short request ends too
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert await asyncio.to_thread(answers.wait_short, 0.0)


async def test_overlapping_short_requests_all_count():
    answers = DocumentAnswers(lambda path: 1)
    first, second = asyncio.Event(), asyncio.Event()
    tasks = [asyncio.ensure_future(_short_until(answers, first)), asyncio.ensure_future(_short_until(answers, second))]
    await asyncio.sleep(0)
    first.set()
    await tasks[0]
    for _ in range(3):
        await asyncio.sleep(0)
    assert not answers.wait_short(0.0)  # the second is still under way
    second.set()
    await tasks[1]
    for _ in range(3):
        await asyncio.sleep(0)
    assert answers.wait_short(0.0)


@pytest.mark.skipif(not fork.ENABLED, reason="forked children only on Linux")
def test_a_long_answers_child_runs_at_lower_priority():
    here = os.nice(0)
    assert fork.result(fork.start(lambda _: os.nice(0), None, freeze=False, nice=5)) == min(here + 5, 19)
    assert fork.result(fork.start(lambda _: os.nice(0), None, freeze=False)) == here


def test_the_wait_for_short_answers_grows_with_the_document():
    """The short answers are given a tenth of the yardstick, which grows with the text: a long answer on a
    document past `SHORT_FIRST_CHARS` waits for them in proportion (on the 100 MB module the token delta alone
    is a tenth of a second of work), and never less than `SHORT_FIRST_S` on a smaller one."""
    from hlo_lsp.lsp.doc_answers import SHORT_FIRST_CHARS, SHORT_FIRST_S, short_wait

    assert short_wait(0) == short_wait(SHORT_FIRST_CHARS) == SHORT_FIRST_S
    assert short_wait(4 * SHORT_FIRST_CHARS) == pytest.approx(4 * SHORT_FIRST_S)
    assert short_wait(100_000_000) > short_wait(23_000_000)


async def test_wait_dispatched_lets_the_requests_of_the_batch_start_first():
    """A long answer's worker, before it forks, waits until the messages read before it were handled: a short
    request later in the same batch is then under way, and `wait_short` waits for it."""
    intake = Intake()
    answers = DocumentAnswers(lambda path: 1, intake)
    queue = ["outline", "folding", "range tokens"]  # read, handed to the loop, not handled yet
    intake.arrived()
    for _ in queue:
        intake.received()
    intake.drained()  # the reader waits for the client
    held = asyncio.Event()

    async def transport() -> None:  # one message a turn, as `stdio._serve` handles them
        tasks = []
        while queue:
            await asyncio.sleep(0.02)  # the worker is waiting by now
            if queue.pop(0) == "range tokens":
                tasks.append(asyncio.ensure_future(_short_until(answers, held)))
            await asyncio.sleep(0)
            intake.handled()
        return tasks

    def long_answer() -> tuple[bool, bool]:
        return answers.wait_dispatched(10), answers.wait_short(0.0)

    worker = asyncio.ensure_future(asyncio.to_thread(long_answer))
    tasks = await transport()
    dispatched, short_free = await worker
    assert dispatched and not short_free  # it saw the short request of its batch under way
    held.set()
    await asyncio.gather(*tasks)


async def test_wait_dispatched_is_bounded():
    intake = Intake()
    answers = DocumentAnswers(lambda path: 1, intake)
    assert await asyncio.to_thread(answers.wait_dispatched, 0.0)  # nothing read yet
    intake.arrived()  # a transport that never catches up
    await _gives_up(answers.wait_dispatched)
    intake.drained()
    assert await asyncio.to_thread(answers.wait_dispatched, 5)


async def test_wait_dispatched_with_quiet_waits_for_a_batch_written_a_request_at_a_time():
    """An editor writes its batch a request at a time: after the first is handled the input is empty for a
    moment, and a fork then (10 ms of GIL) kept the reader from reading the rest. With ``quiet`` the worker goes
    on only once the input stayed empty that long: here after the second request, written 10 ms after the first
    was handled, is handled too; without it, at once."""
    intake = Intake()
    answers = DocumentAnswers(lambda path: 1, intake)
    order: list[str] = []

    def worker(quiet: float) -> None:
        assert answers.wait_dispatched(10, quiet)
        order.append("fork")

    for quiet, expected in ((0.1, ["second request", "fork"]), (0.0, ["fork", "second request"])):
        order.clear()
        intake.arrived()
        intake.received()  # the outline
        intake.handled()
        intake.drained()  # caught up: the input is empty for now
        fork_at = asyncio.ensure_future(asyncio.to_thread(worker, quiet))
        await asyncio.sleep(0.01)
        intake.arrived()  # the rest of the batch
        intake.received()
        await asyncio.sleep(0.02)
        order.append("second request")
        intake.handled()
        intake.drained()
        await fork_at
        assert order == expected, quiet


async def test_wait_dispatched_with_quiet_is_bounded():
    """A client that never stops writing does not hold the worker past ``limit``."""
    intake = Intake()
    answers = DocumentAnswers(lambda path: 1, intake)
    stop = asyncio.Event()

    async def chatter() -> None:  # a message every 2 ms, each handled at once
        while not stop.is_set():
            intake.arrived()
            intake.received()
            intake.handled()
            intake.drained()
            await asyncio.sleep(0.002)

    talk = asyncio.ensure_future(chatter())
    t = time.monotonic()
    await asyncio.to_thread(answers.wait_dispatched, 0.1, 0.05)
    assert time.monotonic() - t < 5
    stop.set()
    await talk


async def test_background_work_gives_way_between_the_requests_of_a_batch():
    """Between two requests of a batch no short request is under way (each answered at once: every answer kept),
    yet the gate of background work says no until the batch is handled (`stdio.Intake`)."""
    intake = Intake()
    answers = DocumentAnswers(lambda path: 1, intake)
    intake.arrived()
    intake.received()  # the inlay hints, read and not handled yet
    intake.drained()
    await _gives_up(answers.wait_idle)
    gate = asyncio.ensure_future(asyncio.to_thread(answers.wait_idle, 10))
    await asyncio.sleep(0.02)
    assert not gate.done()
    intake.handled()
    assert await gate


async def test_a_whole_document_answer_is_computed_once_its_batch_is_handled(monkeypatch):
    """`DocumentAnswers.answer` computes only once the event loop has handled the requests read with it (the
    viewport's requests of the batch are then answered, without its worker taking turns of the GIL with them)."""
    monkeypatch.setattr(doc_answers, "BATCH_WAIT_S", 30.0)
    intake = Intake()
    answers = DocumentAnswers(lambda path: 1, intake)
    intake.arrived()
    intake.received()  # the outline, being handled ...
    intake.received()  # ... and the inlay hints after it
    order: list[str] = []
    outline = asyncio.ensure_future(answers.answer("/m.hlo", "documentSymbol", lambda: order.append("outline")))
    intake.handled()
    await asyncio.sleep(0.1)
    assert order == []  # the inlay hints still to be handled
    order.append("inlay hints")
    intake.handled()
    intake.drained()
    await outline
    assert order == ["inlay hints", "outline"]


async def test_background_work_gives_way_to_short_requests_too():
    """The gate of background work (`DocumentAnswers.wait_idle`, `process.turns`) says no while a short request
    (a hover, the viewport's range tokens or inlay hints) is under way, not only while a whole-document answer
    is computed; it says yes once that request's answer is written."""
    answers = DocumentAnswers(lambda path: 1)
    assert await asyncio.to_thread(answers.wait_idle, 0.0)  # nothing under way
    release = asyncio.Event()
    task = asyncio.ensure_future(_short_until(answers, release))  # a hover
    await asyncio.sleep(0)
    await _gives_up(answers.wait_idle)  # the hover under way: background work waits
    gate = asyncio.ensure_future(asyncio.to_thread(answers.wait_idle, 10))
    await asyncio.sleep(0.02)
    assert not gate.done()
    release.set()
    await task
    assert await gate  # let go once the hover's answer is written


async def test_hovers_and_definitions_are_short_requests(monkeypatch):
    """A hover and a go-to-definition count as short requests while they are computed (`short_request`): long
    answers' forks wait for them and background work gives way to them."""
    from hlo_lsp.lsp import handlers_navigation as nav
    from hlo_lsp.lsp.app import server

    seen: list[bool] = []

    def record(*args):
        seen.append(server.answers.wait_short(0.0))  # True: no short request under way
        return None

    monkeypatch.setattr(server, "at", lambda params: ("/m.hlo", 0, 0))
    monkeypatch.setattr(nav.oom, "oom_hover", lambda *a: None)
    monkeypatch.setattr(nav.hover, "hover", record)
    monkeypatch.setattr(nav.oom, "oom_definition", lambda *a: None)
    monkeypatch.setattr(nav.navigation, "definition", record)
    assert nav.on_hover(server, None) is None
    nav.on_definition(server, None)
    assert seen == [False, False]
    for _ in range(3):  # counted as ended once their answers were written (two loop turns later)
        await asyncio.sleep(0)
    assert server.answers.wait_short(0.0)


async def test_the_yield_gate_says_no_while_the_event_loop_has_messages_to_handle():
    """The gate a whole-document answer gives way at (`process.turns.answering`): no while a message is read and
    not handled (a hover's handler answers before its message counts as handled), yes as soon as none is, even
    while a short request awaits such an answer (the token delta, the lenses: with them counted, the delta's
    worker waited for its own request)."""
    intake = Intake()
    answers = DocumentAnswers(lambda path: 1, intake)
    assert await asyncio.to_thread(answers.wait_dispatched, 0.0)
    intake.arrived()
    intake.received()  # a hover, read
    intake.drained()
    assert not await asyncio.to_thread(answers.wait_dispatched, 0.0)
    gate = asyncio.ensure_future(asyncio.to_thread(answers.wait_dispatched, 10))
    await asyncio.sleep(0.02)
    assert not gate.done()
    intake.handled()
    assert await gate
    release = asyncio.Event()
    delta = asyncio.ensure_future(_short_until(answers, release))  # the delta, awaiting its worker
    await asyncio.sleep(0)
    assert await asyncio.to_thread(answers.wait_dispatched, 0.0)
    release.set()
    await delta
