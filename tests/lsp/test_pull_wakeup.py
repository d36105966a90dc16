"""A pull at open that waits for the server's read is woken when the read takes a step
(`HloLanguageServer.read_step` / `read_stepped`), not at the next turn of a 50 ms poll."""

from __future__ import annotations

import asyncio

from hlo_lsp.lsp.app import server


async def test_a_waiting_pull_goes_on_when_the_read_takes_a_step():
    waiter = asyncio.ensure_future(server.read_step("/m.txt", 30.0))
    other = asyncio.ensure_future(server.read_step("/other.txt", 30.0))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    server.read_stepped("/m.txt")
    await asyncio.wait_for(waiter, 5)  # long before its 30 s limit
    assert not other.done()  # another document's read did not move
    other.cancel()
    await asyncio.gather(other, return_exceptions=True)
    assert "/m.txt" not in server._read_waiters and "/other.txt" not in server._read_waiters


async def test_the_wait_is_bounded():
    await asyncio.wait_for(server.read_step("/never.txt", 0.01), 5)
    assert "/never.txt" not in server._read_waiters
