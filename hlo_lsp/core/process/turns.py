"""Background work that gives way to the editor's requests.

The server's background reads (a document's sibling files, the users maps) run in worker threads of the same
process as the requests, and Python runs one thread at a time: while they read, a whole-document answer the
editor is waiting for gets every other turn. A thread marks its work as background (`background`); that work
calls `give_way` between its steps, which waits while the server's gate says requests are being answered
(`set_gate`; at most as long as the gate lets it). A read made for a request never waits for it.

A whole-document answer's worker (`answering`) gives way too, at the same points, but only to the requests
the event loop has to handle now (`set_yield_gate`: messages read and not handled: a hover, the viewport's
requests), for at most `YIELD_SLICE_S` at a point and `MAX_YIELD_S` in all: the 23 MB module's tokens,
computed beside the first hover after the read, took turns of the GIL with it (15-36 ms for 2 ms of work).

A request may itself wait for background work (a sibling being read, an out-of-memory report's dump being
found): it says so (`waiting_for_background`), and background work then never gives way, which would only make
the request wait longer; a pause already begun ends within `PAUSE_SLICE_S` (the gate is asked in slices that
long). A background task gives way for `MAX_PAUSE_S` in all at most.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

_local = threading.local()
_gate: Callable[[float], bool] | None = None
_yield_gate: Callable[[float], bool] | None = None
_waiters = 0  # requests waiting for background work now (changed under _lock)
_lock = threading.Lock()
MAX_PAUSE_S = 1.5
PAUSE_SLICE_S = 0.005
YIELD_SLICE_S = 0.02  # the longest a whole-document answer waits at one point for the requests under way
MAX_YIELD_S = 0.25  # ... and at all its points together


def set_gate(gate: Callable[[float], bool] | None) -> None:
    """``gate(limit)`` returns True once no request is being answered, False after waiting ``limit`` seconds
    with requests still under way; None: never wait."""
    global _gate
    _gate = gate


def set_yield_gate(gate: Callable[[float], bool] | None) -> None:
    """``gate(limit)`` returns True once the event loop has no request to handle now (`answering`), False after
    waiting ``limit`` seconds; None: never wait. A forked child sets both gates to None (`detach`)."""
    global _yield_gate
    _yield_gate = gate


def detach() -> None:
    """In a forked child: nothing to give way to (the gates would report the parent's state at the fork)."""
    set_gate(None)
    set_yield_gate(None)


@contextmanager
def _marked(flag: str, spent: str) -> Iterator[None]:
    """This thread's ``flag`` set inside the block (as it was again after), its time given way (``spent``) at 0."""
    before = getattr(_local, flag, False)
    setattr(_local, flag, True)
    setattr(_local, spent, 0.0)
    try:
        yield
    finally:
        setattr(_local, flag, before)


def answering() -> AbstractContextManager[None]:
    """Mark the work done in this thread, inside the block, as a whole-document answer's (see the module)."""
    return _marked("answering", "yielded")


def background() -> AbstractContextManager[None]:
    """Mark the work done in this thread, inside the block, as background work."""
    return _marked("on", "paused")


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
    if not getattr(_local, "on", False):
        if getattr(_local, "answering", False):
            _yield_to_requests()
        return
    if gate is None or _waiters:
        return
    paused = getattr(_local, "paused", 0.0)
    if paused >= MAX_PAUSE_S:
        return
    t = time.monotonic()
    end = t + MAX_PAUSE_S - paused
    while not gate(PAUSE_SLICE_S) and not _waiters and time.monotonic() < end:
        pass
    _local.paused = paused + time.monotonic() - t


def _yield_to_requests() -> None:
    """A whole-document answer's pause while the event loop has requests to handle (`answering`)."""
    gate = _yield_gate
    if gate is None:
        return
    spent = getattr(_local, "yielded", 0.0)
    if spent >= MAX_YIELD_S or gate(0.0):  # nothing to handle: the common case, at once
        return
    t = time.monotonic()
    gate(min(YIELD_SLICE_S, MAX_YIELD_S - spent))
    _local.yielded = spent + time.monotonic() - t
