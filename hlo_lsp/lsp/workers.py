"""The worker threads the server's `asyncio.to_thread` calls run in, all started before the first message.

asyncio's default executor starts a thread the first time it has no idle one, and `Thread.start` waits until the
new thread has run: with the background read and an answer's worker taking turns with it, the event loop waited
5 ms there in the middle of VS Code's batch on open, in front of the viewport's range tokens. Its size was
`min(32, cores + 4)`, 6 here: the batch's five whole-document answers, a background read and a pull already
fill it, and a seventh computation would wait in its queue for one of them to end, though most of them only
wait (for the batch, for a child). So the server has its own, `WORKER_THREADS` large, every thread started
at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)

WORKER_THREADS = 24
START_TIMEOUT_S = 5.0  # the longest the threads are waited for (they start in well under a millisecond each)


def use_started_workers(loop: asyncio.AbstractEventLoop, threads: int = WORKER_THREADS) -> ThreadPoolExecutor:
    """Make ``loop``'s default executor a pool of ``threads`` threads, each started now (each first task waits
    until every thread runs one, so the pool starts a new thread for every task)."""
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hlo-lsp-worker")
    barrier = threading.Barrier(threads)

    def meet() -> None:
        try:
            barrier.wait(START_TIMEOUT_S)
        except threading.BrokenBarrierError:
            pass

    started = [pool.submit(meet) for _ in range(threads)]
    for f in started:
        f.result()
    if barrier.broken:
        log.warning("worker threads: not all %d started within %.0f s", threads, START_TIMEOUT_S)
    loop.set_default_executor(pool)
    return pool
