"""Background work that gives way to the editor's requests.

The server's background reads (a document's sibling files, the users maps) run in worker threads of the same
process as the requests, and Python runs one thread at a time: while they read, a whole-document answer the
editor is waiting for gets every other turn. A thread marks its work as background (`background`); that work
calls `give_way` between its steps, which waits while the server's gate says requests are being answered
(`set_gate`; at most as long as the gate lets it). Nothing else changes: a read made for a request never waits.

A request may itself wait for background work (a sibling being read, an out-of-memory report's dump being
found): it says so (`waiting_for_background`), and background work then never gives way, which would only make
the request wait longer; a pause already begun ends within `PAUSE_SLICE_S` (the gate is asked in slices that
long). A background task gives way for `MAX_PAUSE_S` in all at most.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_local = threading.local()
_gate: Callable[[float], bool] | None = None
_waiters = 0  # requests waiting for background work now (changed under _lock)
_lock = threading.Lock()
MAX_PAUSE_S = 1.5
PAUSE_SLICE_S = 0.005


def set_gate(gate: Callable[[float], bool] | None) -> None:
    """``gate(limit)`` returns True once no request is being answered, False after waiting ``limit`` seconds
    with requests still under way; None: never wait."""
    global _gate
    _gate = gate


@contextmanager
def background() -> Iterator[None]:
    """Mark the work done in this thread, inside the block, as background work."""
    before = getattr(_local, "on", False)
    _local.on = True
    _local.paused = 0.0
    try:
        yield
    finally:
        _local.on = before


@contextmanager
def waiting_for_background() -> Iterator[None]:
    """Around a request's wait for background work: background work does not give way meanwhile."""
    global _waiters
    if getattr(_local, "on", False):  # background work waiting for other background work: nothing to say
        yield
        return
    with _lock:
        _waiters += 1
    try:
        yield
    finally:
        with _lock:
            _waiters -= 1


def in_background() -> bool:
    """True inside `background` in this thread."""
    return getattr(_local, "on", False)


def give_way() -> None:
    """In background work: wait while requests are being answered (the gate), unless a request waits for
    background work or this task has given way for `MAX_PAUSE_S` already; otherwise return at once. The gate
    is asked in slices of `PAUSE_SLICE_S`: a request that starts waiting for background work during the pause
    (a pull waiting for the join this task makes) ends it then, not when the requests under way are done (the
    pull is one of them: the join gave way to the request waiting for it, for the whole pause)."""
    gate = _gate
    if gate is None or not getattr(_local, "on", False) or _waiters:
        return
    paused = getattr(_local, "paused", 0.0)
    if paused >= MAX_PAUSE_S:
        return
    t = time.monotonic()
    end = t + MAX_PAUSE_S - paused
    while not gate(PAUSE_SLICE_S) and not _waiters and time.monotonic() < end:
        pass
    _local.paused = paused + time.monotonic() - t
