"""Background work that gives way to the editor's requests.

The server's background reads (a document's sibling files, the users maps) run in worker threads of the same
process as the requests, and Python runs one thread at a time: while they read, a whole-document answer the
editor is waiting for gets every other turn. A thread marks its work as background (`background`); that work
calls `give_way` between its steps, which waits while the server's gate says requests are being answered
(`set_gate`; at most as long as the gate lets it). Nothing else changes: a read made for a request never waits.

A request may itself wait for background work (a sibling being read, an out-of-memory report's dump being
found): it says so (`waiting_for_background`), and background work then never gives way, which would only make
the request wait longer. A background task gives way for `MAX_PAUSE_S` in all at most.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_local = threading.local()
_gate: Callable[[], None] | None = None
_waiters = 0  # requests waiting for background work now (changed under _lock)
_lock = threading.Lock()
MAX_PAUSE_S = 1.5


def set_gate(gate: Callable[[], None] | None) -> None:
    """``gate()`` returns once no request is being answered (or after a bounded wait); None: never wait."""
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
    background work or this task has given way for `MAX_PAUSE_S` already; otherwise return at once."""
    gate = _gate
    if gate is None or not getattr(_local, "on", False) or _waiters:
        return
    paused = getattr(_local, "paused", 0.0)
    if paused >= MAX_PAUSE_S:
        return
    t = time.monotonic()
    gate()
    _local.paused = paused + time.monotonic() - t
