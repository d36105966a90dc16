"""Background work that gives way (`process.turns`), answers computed in forked children (`process.fork.start`
with its locks) and the workspace in such a child (issue 14: nothing waits)."""

from __future__ import annotations

import threading
import time

import pytest

from hlo_lsp.core.document import TextLines
from hlo_lsp.core.process import fork, turns
from hlo_lsp.core.workspace import NotReady, Workspace
from tests.fixtures import DATA


@pytest.fixture
def gate():
    """A gate that says 'requests under way' until ``gate.release`` is set, counting its calls."""
    release = threading.Event()
    calls = []

    def wait():
        calls.append(time.monotonic())
        release.wait(5)

    turns.set_gate(wait)
    wait.release, wait.calls = release, calls
    yield wait
    turns.set_gate(None)


def test_only_background_work_gives_way(gate):
    turns.give_way()  # a request's own read never waits
    assert gate.calls == []
    gate.release.set()
    with turns.background():
        turns.give_way()
    assert len(gate.calls) == 1


def test_background_work_does_not_give_way_while_a_request_waits_for_it(gate):
    """A request waiting for background work (a sibling being read) would only wait longer: no pause then."""
    done = threading.Event()

    def request():
        with turns.waiting_for_background():
            done.wait(5)

    t = threading.Thread(target=request)
    t.start()
    time.sleep(0.05)
    with turns.background():
        started = time.monotonic()
        turns.give_way()
        assert time.monotonic() - started < 1 and gate.calls == []
    done.set()
    t.join()


def test_a_background_task_gives_way_for_a_bounded_time(monkeypatch):
    monkeypatch.setattr(turns, "MAX_PAUSE_S", 0.2)
    turns.set_gate(lambda: time.sleep(0.15))  # requests always under way
    try:
        with turns.background():
            started = time.monotonic()
            for _ in range(20):
                turns.give_way()
            assert time.monotonic() - started < 1.0  # two waits, then no more
    finally:
        turns.set_gate(None)


def test_chunked_split_equals_a_plain_split(monkeypatch):
    monkeypatch.setattr(TextLines, "SPLIT_CHUNK", 7)
    for text in ["", "a", "\n", "ab\ncd\n", "x" * 30 + "\n" + "\n".join("y" * k for k in range(40)), "\n\n\n"]:
        lines = TextLines(text)
        assert lines.split() == text.split("\n")
        assert list(lines.offsets()) == [
            sum(len(x) for x in text.split("\n")[:i]) for i in range(len(text.split("\n")) + 1)
        ]


needs_fork = pytest.mark.skipif(not fork.ENABLED, reason="fork is Linux-only")


@needs_fork
def test_a_lock_held_by_another_thread_at_the_fork_is_free_in_the_child():
    """`start` takes the locks before forking: a lock another thread held at that moment would stay held in the
    child for good (that thread does not exist there), and a child taking it would hang until its deadline."""
    lock = threading.Lock()
    holding = threading.Event()

    def hold():
        with lock:
            holding.set()
            time.sleep(0.3)

    t = threading.Thread(target=hold)
    t.start()
    holding.wait(5)

    def in_child(_):
        with lock:
            return "took it"

    assert fork.result(fork.start(in_child, None, locks=[lock], timeout=5)) == "took it"
    t.join()
    assert lock.acquire(timeout=1)  # released again in the parent
    lock.release()


@needs_fork
def test_the_workspace_in_a_child_never_waits_for_a_read_of_the_parent():
    """A read under way in the parent when it forked never ends in the child: `analysis(wait=True)` there says
    NotReady at once instead of waiting for it."""
    ws = Workspace()
    path = str(DATA / "jax-cpu" / "mlp_sgd" / "module_0000.jit_train_step.cpu_after_optimizations.txt")
    ws.open(path, open(path).read(), 1)
    ws._busy[path] = (-1, threading.Event())  # as if another thread were reading it

    def in_child(_):
        try:
            ws.analysis(path, wait=True)
        except NotReady:
            return "not ready"
        return "read"

    started = time.monotonic()
    assert fork.result(fork.start(in_child, None, locks=ws.fork_locks(), timeout=10)) == "not ready"
    assert time.monotonic() - started < 5
