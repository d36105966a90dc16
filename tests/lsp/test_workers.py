"""The server's worker threads (`hlo_lsp.lsp.workers`): all started before the first message, and as many as
the computations that may wait at once (asyncio's default pool held 6 here and started each thread on demand)."""

from __future__ import annotations

import asyncio
import threading

from hlo_lsp.lsp.workers import use_started_workers


def _workers() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.name.startswith("hlo-lsp-worker") and t.ident is not None}


def test_every_worker_thread_is_started_at_once_and_no_later():
    async def main() -> tuple[int, int, set[int]]:
        loop = asyncio.get_running_loop()
        pool = use_started_workers(loop, 12)
        before = _workers()
        ran_in = await asyncio.gather(*(asyncio.to_thread(threading.get_ident) for _ in range(40)))
        after = _workers()
        pool.shutdown(wait=True)
        return len(before), len(after), set(ran_in) - before

    before, after, elsewhere = asyncio.run(main())
    assert before == 12 and after == 12
    assert not elsewhere  # every call ran in a thread started before it


def test_computations_that_wait_do_not_queue_behind_each_other():
    """Twenty computations that each wait for all the others: with asyncio's default pool (six threads on two
    cores) the seventh would sit in the queue and the barrier would break."""

    async def main() -> bool:
        loop = asyncio.get_running_loop()
        pool = use_started_workers(loop, 24)
        barrier = threading.Barrier(20)

        def meet() -> bool:
            try:
                barrier.wait(5)
                return True
            except threading.BrokenBarrierError:
                return False

        ok = await asyncio.gather(*(asyncio.to_thread(meet) for _ in range(20)))
        pool.shutdown(wait=True)
        return all(ok)

    assert asyncio.run(main())
