"""Run pure computations over an in-memory model on the machine's other cores, in forked children.

Checking the computations the read could not (`checks.StructuralChecker.check_forked`) and the whole-document
answers of a large document (`lsp.handlers_document`) are pure Python over text and data in memory; in a thread
they share one GIL with the requests, on one core. A forked child starts with the parent's memory as it is
(copy-on-write: nothing is serialized on the way in), computes, and sends its result back through a pipe as a
pickle (diagnostics, or an answer's JSON: a few MB). The child never
touches the parent's files or sockets: it writes only to its own pipe and leaves with ``os._exit``, so no
buffered output, ``atexit`` handler or event loop of the parent runs twice.

Only on Linux (fork of a threaded process is well defined there for code that takes no lock another thread
may hold: the work functions are pure computations); elsewhere, or when a child fails, `result` (and
`map_forked`) returns None for that part and the caller computes it in-process, so the result never depends on
whether forking worked.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from hlo_lsp.core.process import pipes, turns

ENABLED = sys.platform.startswith("linux") and os.environ.get("HLO_LSP_NO_FORK") != "1"
TIMEOUT_S = 120.0
WAIT_SLICE_S = 0.05  # the longest wait for a child's output before its deadline is looked at again


def map_forked(fn: Callable[[Any], Any], parts: Sequence[Any]) -> list[Any | None]:
    """``[fn(p) for p in parts]``, each part computed in its own forked child at the same time; an entry is
    None where the child could not be started or did not answer with a result (compute it in-process)."""
    children = [start(fn, part) for part in parts]
    return [result(c) for c in children]


class Child:
    """A forked child computing one result; `result` collects it (read meanwhile by a thread of its own after
    `drain`). ``deadline`` may be moved while it runs: the reading looks at it again at each wait."""

    __slots__ = ("pid", "fd", "deadline", "_drained")

    def __init__(self, pid: int, fd: int, deadline: float):
        self.pid, self.fd, self.deadline = pid, fd, deadline
        self._drained: tuple[threading.Thread, list] | None = None


_IN_CHILD = False
# forks one after another: each holds the GIL while the process's page tables are copied (10 ms at 280 MB), and
# three answers forking at once held it 30-40 ms in a row, a hover waiting behind them (`start`'s ``ready``)
_ONE_AT_A_TIME = threading.Lock()


def in_child() -> bool:
    """True in a forked child: no other thread runs here, so nothing may wait for another thread's work (a
    read under way in the parent when it forked never ends in the child)."""
    return _IN_CHILD


def start(
    fn: Callable[[Any], Any],
    arg: Any,
    locks: Sequence[Any] = (),
    timeout: float | None = None,
    freeze: bool = True,
    nice: int = 0,
    ready: Callable[[], object] | None = None,
) -> Child | None:
    """Fork a child computing ``fn(arg)`` on the parent's memory as it is now; None when forking is off or
    fails (compute in-process). ``locks`` are held across the fork (taken before it, released after it on both
    sides), so that no lock the child needs was held by a thread the child does not have; ``timeout`` (default
    `TIMEOUT_S`) bounds the child's life; ``freeze`` puts the parent's objects out of the child's collections (a
    checking child, which allocates much; an answer's child runs without collecting anyway, and leaves the
    parent's frozen set as it was); ``nice`` lowers the child's CPU priority by that much (`os.nice`): work whose
    answer may take longer leaves the cores to the parent's shorter work first. Forks are made one at a time;
    ``ready()``, called in turn before ``locks`` are taken, may wait for what should go before the fork (the
    messages the event loop has to handle)."""
    if not ENABLED:
        return None
    with _ONE_AT_A_TIME:
        if ready is not None:
            ready()
        return _start(fn, arg, locks, timeout, freeze, nice)


def _start(
    fn: Callable[[Any], Any], arg: Any, locks: Sequence[Any], timeout: float | None, freeze: bool, nice: int
) -> Child | None:
    try:
        r, w = os.pipe()
    except OSError:
        return None
    # the child's result waits in the pipe until this process, busy with its own part of the work, reads it: a
    # 5 MB result crossed a 64 kB pipe in 80 turns of the two (the 100 MB module's read: 0.13 s)
    pipes.widen(w)
    held = []
    try:
        for lock in locks:
            lock.acquire()
            held.append(lock)
        if freeze:
            gc.freeze()  # the child then never walks (and so never copies) the parent's objects in a collection
        try:
            with warnings.catch_warnings():  # Python 3.12 warns of any fork in a process with threads
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:  # the child: computes, writes, and leaves without returning here
            for lock in reversed(held):
                lock.release()
            _ONE_AT_A_TIME.release()
            os.close(r)
            _child(fn, arg, w, nice)
        if freeze:
            gc.unfreeze()
    finally:
        for lock in reversed(held):
            lock.release()
    os.close(w)
    if pid < 0:
        os.close(r)
        return None
    return Child(pid, r, time.monotonic() + (TIMEOUT_S if timeout is None else timeout))


def drain(child: Child | None) -> None:
    """Read ``child``'s result from its pipe in a thread as the child writes it (the thread waits for the pipe
    with the GIL released), while this process does its own part of the work: the child finishes writing and
    leaves, and `result` is left to load what was read. A 9 MB result waited in the pipe for this process to
    read it a MB at a time once its own part was done (the 100 MB module's read: 57-120 ms)."""
    if child is None or child._drained is not None:
        return
    box: list = []
    t = threading.Thread(target=lambda: box.append(_read_all(child)), name="hlo-lsp-fork-drain", daemon=True)
    child._drained = (t, box)
    t.start()


def result(child: Child | None) -> Any | None:
    """What ``child`` computed, once it has exited; None when it failed, missed its deadline (it is then
    killed: a stuck child never holds the parent up) or was never started."""
    if child is None:
        return None
    if child._drained is None:
        return _finish(child.pid, *_read_all(child))
    t, box = child._drained
    t.join()
    return _finish(child.pid, *box[0]) if box else _finish(child.pid, [], False)


def discard(child: Child | None) -> None:
    """Stop ``child`` (its result is no longer wanted) and reap it."""
    if child is None:
        return
    if child._drained is None:
        os.close(child.fd)  # (else the thread reading it closes it: its end of output comes with the kill)
    try:
        os.kill(child.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(child.pid, 0)
    except ChildProcessError:
        pass
    if child._drained is not None:
        child._drained[0].join()


def _child(fn: Callable[[Any], Any], part: Any, w: int, nice: int = 0) -> None:
    global _IN_CHILD
    _IN_CHILD = True
    code = 1
    turns.detach()  # the parent's requests are not this process's to give way to
    try:
        if nice:
            try:
                os.nice(nice)
            except OSError:
                pass  # the priority is a preference: the result is the same without it
        gc.unfreeze()
        gc.disable()
        data = pickle.dumps(fn(part), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(w, view) :]
        code = 0
    except BaseException:  # noqa: BLE001 - nothing may escape into the parent's code in the child
        pass
    finally:
        os._exit(code)


def _read_all(child: Child) -> tuple[list[bytes], bool]:
    """The chunks ``child`` wrote until its end of output, and whether that end came before its deadline (looked
    at again at each wait: `read_rows` moves it once its own part is read). The pipe is closed after."""
    r = child.fd
    chunks = []
    ok = True
    try:
        while True:
            left = child.deadline - time.monotonic()
            if left <= 0:
                ok = False
                break
            if not select.select([r], [], [], min(left, WAIT_SLICE_S))[0]:
                continue  # (the deadline looked at again: it may have been moved meanwhile)
            b = os.read(r, 1 << 20)
            if not b:
                break
            chunks.append(b)
    except OSError:
        ok = False
    finally:
        os.close(r)
    return chunks, ok


def _finish(pid: int, chunks: list[bytes], ok: bool) -> Any | None:
    """The result in ``chunks`` once child ``pid`` has exited; None when it failed or missed its deadline (``ok``
    false: it is then killed, a stuck child never holds the parent up)."""
    if not ok:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        status = 1
    if not ok or status != 0 or not chunks:
        return None
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - a truncated result is no result
        return None
