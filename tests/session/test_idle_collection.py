"""The server's full garbage collection waits for an idle moment (issue 14): made right after the background
reads of a large document, it held the GIL 0.1-0.2 s (it walks the new model, which is not frozen yet) while the
editor's hovers and on-open requests waited; it found a few hundred objects of garbage. Now it runs once the
client has been silent for `IDLE_S` and no whole-document answer is being computed, or after
`IDLE_WAIT_LIMIT_S` at the latest; a close asks for the frozen objects to be collected too, and that request
survives a later one that does not."""

from __future__ import annotations

import asyncio
import time

import pytest

from hlo_lsp.lsp import server as srv
from hlo_lsp.lsp.app import HloLanguageServer


@pytest.fixture
def collections(monkeypatch):
    made: list[tuple[float, bool]] = []
    monkeypatch.setattr(srv, "_collect_and_trim", lambda release=False: made.append((time.monotonic(), release)))
    monkeypatch.setattr(srv, "IDLE_S", 0.2)
    return made


def _talk(ls: HloLanguageServer, seconds: float, every: float = 0.05):
    """The client sending a message every ``every`` seconds for ``seconds``."""

    async def run():
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ls.protocol.last_heard = time.monotonic()
            await asyncio.sleep(every)

    return run()


def test_collection_waits_until_the_client_is_silent(collections):
    async def main():
        ls = HloLanguageServer()
        ls.protocol.last_heard = time.monotonic()
        srv._collect_when_idle(ls)
        talked_until = time.monotonic() + 1.0
        await _talk(ls, 1.0)
        assert collections == []  # never while the client was talking
        await asyncio.sleep(0.6)
        assert len(collections) == 1
        at, release = collections[0]
        assert at >= talked_until + 0.1 and release is False

    asyncio.run(main())


def test_collection_waits_for_answers_being_computed(collections):
    async def main():
        ls = HloLanguageServer()
        ls.protocol.last_heard = 0.0  # silent for long
        ls.answers._idle.clear()  # a whole-document answer under way
        srv._collect_when_idle(ls)
        await asyncio.sleep(0.5)
        assert collections == []
        ls.answers._idle.set()
        await asyncio.sleep(0.5)
        assert len(collections) == 1

    asyncio.run(main())


def test_a_close_asks_for_the_frozen_objects_and_keeps_asking(collections):
    async def main():
        ls = HloLanguageServer()
        ls.protocol.last_heard = time.monotonic()
        srv._collect_when_idle(ls, release=True, delay=0.1)  # a close
        srv._collect_when_idle(ls)  # background work done, replacing the pending collection
        await asyncio.sleep(0.8)
        assert [r for _, r in collections] == [True]  # one collection, which releases the frozen objects
        srv._collect_when_idle(ls)
        await asyncio.sleep(0.6)
        assert [r for _, r in collections] == [True, False]

    asyncio.run(main())


def test_a_client_that_never_falls_silent_still_gets_a_collection(collections, monkeypatch):
    monkeypatch.setattr(srv, "IDLE_WAIT_LIMIT_S", 0.5)

    async def main():
        ls = HloLanguageServer()
        srv._collect_when_idle(ls)
        await _talk(ls, 1.5)
        assert len(collections) == 1

    asyncio.run(main())
