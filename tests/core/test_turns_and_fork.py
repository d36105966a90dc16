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

    def wait(limit):
        calls.append(time.monotonic())
        return release.wait(limit)

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


def test_a_background_read_of_a_file_gives_way_before_decoding_it(gate, tmp_path):
    """The decode of a file read in the background (a buffer file's module: 15 ms for 23 MB in one C call) starts
    only when no request is under way: the gate is asked once, after the file's bytes are read. A request's own
    read asks nothing."""
    from hlo_lsp.core.analysis import read_text_file

    path = tmp_path / "m.hlo"
    path.write_text("HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert read_text_file(path).startswith("HloModule m")
    assert gate.calls == []
    gate.release.set()
    with turns.background():
        assert read_text_file(path).startswith("HloModule m")
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


def test_a_pause_under_way_ends_when_a_request_starts_waiting_for_background_work(gate, monkeypatch):
    """The pull of a buffer file waits for the join the worker that read it is making, and while the pull is
    answered the join gives way: the pause it had begun must end once the pull says it waits (in the editor
    replay the pull waited the whole pause, 2 s, for a join of 0.4 s)."""
    monkeypatch.setattr(turns, "MAX_PAUSE_S", 60.0)  # only the waiting request can end this pause
    paused, resumed = threading.Event(), threading.Event()

    def background_step():
        with turns.background():
            turns.give_way()
            resumed.set()

    gate_wait = turns._gate

    def gate_noting_the_pause(limit):
        paused.set()
        return gate_wait(limit)

    turns.set_gate(gate_noting_the_pause)
    t = threading.Thread(target=background_step)
    t.start()
    assert paused.wait(10)
    assert not resumed.is_set()
    with turns.waiting_for_background():
        assert resumed.wait(10)  # without the slices: only after the 60 s pause
    assert not gate.release.is_set()  # requests still under way: it was the waiting request that ended it
    t.join()


def test_a_background_task_gives_way_for_a_bounded_time(monkeypatch):
    monkeypatch.setattr(turns, "MAX_PAUSE_S", 0.2)
    turns.set_gate(lambda limit: time.sleep(limit))  # requests always under way (None: not idle)
    try:
        with turns.background():
            started = time.monotonic()
            for _ in range(20):
                turns.give_way()
            assert time.monotonic() - started < 1.0  # two waits, then no more
    finally:
        turns.set_gate(None)


@pytest.fixture
def yield_gate():
    """A yield gate (`turns.set_yield_gate`) that says 'the event loop has requests to handle' until
    ``yield_gate.release`` is set, counting its calls."""
    release = threading.Event()
    calls = []

    def wait(limit):
        calls.append(limit)
        return release.wait(limit)

    turns.set_yield_gate(wait)
    wait.release, wait.calls = release, calls
    yield wait
    turns.set_yield_gate(None)


def test_an_answers_worker_gives_way_to_the_requests_under_way(yield_gate, monkeypatch):
    """Outside `answering` no wait; inside, a point waits while the event loop has requests to handle and goes on
    as soon as it has none (not at the end of its slice)."""
    monkeypatch.setattr(turns, "YIELD_SLICE_S", 2.0)
    monkeypatch.setattr(turns, "MAX_YIELD_S", 5.0)
    turns.give_way()
    assert yield_gate.calls == []

    def release_soon():
        time.sleep(0.05)
        yield_gate.release.set()

    t = threading.Thread(target=release_soon)
    with turns.answering():
        t.start()
        started = time.monotonic()
        turns.give_way()  # waits for the release (within its slice)
        waited = time.monotonic() - started
        n = len(yield_gate.calls)
        turns.give_way()  # nothing under way: one look, no wait
    t.join()
    assert 0.03 <= waited < 1.5 and len(yield_gate.calls) == n + 1
    assert not getattr(turns._local, "answering", False)  # marked inside the block only


def test_an_answers_worker_gives_way_for_a_bounded_time(yield_gate, monkeypatch):
    monkeypatch.setattr(turns, "YIELD_SLICE_S", 0.05)
    monkeypatch.setattr(turns, "MAX_YIELD_S", 0.12)
    with turns.answering():
        started = time.monotonic()
        for _ in range(50):
            turns.give_way()  # requests always under way
        assert time.monotonic() - started < 1.0  # three slices, then no more waiting


def test_the_token_data_gives_way_a_piece_at_a_time(yield_gate, monkeypatch):
    """The long answers' piece loops (here the tokens' encoding) are points where an answer's worker gives way."""
    from array import array

    from hlo_lsp.core.process import pieces
    from hlo_lsp.ide.semantic_tokens import encode_rows

    yield_gate.release.set()
    monkeypatch.setattr(pieces, "PIECE", 10)
    rows = array("i", [v for k in range(95) for v in (k, 1, 3, 0, 1)])
    with turns.answering():
        encode_rows(rows, "i")
    assert len(yield_gate.calls) == 10


@pytest.mark.parametrize("cum_piece", [1, 3, 16_384])
def test_chunked_split_equals_a_plain_split(monkeypatch, cum_piece):
    monkeypatch.setattr(TextLines, "SPLIT_CHUNK", 7)
    monkeypatch.setattr(TextLines, "CUM_PIECE", cum_piece)
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


@needs_fork
def test_a_child_gives_way_to_nothing():
    """A forked child would see the parent's gates as they were at the fork (requests under way, for good): it
    has none, and its answer's points never wait."""
    turns.set_gate(lambda limit: time.sleep(limit) or False)
    turns.set_yield_gate(lambda limit: time.sleep(limit) or False)
    try:
        with turns.answering():
            got = fork.result(fork.start(lambda _: (turns._gate, turns._yield_gate), None, timeout=10))
        assert got == (None, None)
    finally:
        turns.detach()


@needs_fork
def test_forks_are_made_one_at_a_time_each_after_its_ready():
    """Each fork holds the GIL while the page tables are copied: three at once held it 30-40 ms in a row with a
    hover waiting. Forks go one at a time, each after its ``ready`` (which waits for the messages the event loop
    has to handle), and ``ready`` runs before the fork's locks are taken (a request may need them meanwhile)."""
    lock = threading.Lock()
    spans: list[tuple[float, float]] = []
    results = []

    def ready():
        assert not lock.locked()
        t = time.monotonic()
        time.sleep(0.05)
        spans.append((t, time.monotonic()))

    def run(k):
        results.append(fork.result(fork.start(lambda _: k * 2, None, locks=[lock], timeout=10, ready=ready)))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [0, 2, 4]
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # never two at once


@pytest.mark.parametrize(
    "suffix, kind",
    [
        ("-buffer-assignment.txt", "assignment"),
        ("-buffer-assignment-values.txt", "values"),
        ("-live-range.txt", "live-range"),
    ],
)
def test_a_background_read_of_a_buffer_file_gives_way_within_its_listing(gate, monkeypatch, suffix, kind):
    """A buffer file's listing is read by one fast loop (0.2 s for the benchmark's files), and a values file's
    occurrences a piece of C calls at a time (1-6 ms each): read in the background, both ask the gate as they
    go (here at every line, block and piece), so that a hover is not answered between them in 0.2 ms turns of
    the GIL (27 ms); what is read is the same."""
    from hlo_lsp.core.buffers import read_allocations, read_buffers, read_live_range, read_values
    from hlo_lsp.core.process import pieces

    path = max(DATA.glob(f"jax-cpu/*/module_*{suffix}"), key=lambda p: p.stat().st_size)
    text = path.read_text(encoding="utf-8")
    alone = read_buffers(text, kind)
    assert gate.calls == []
    gate.release.set()
    for module in (read_allocations, read_live_range):
        monkeypatch.setattr(module, "GIVE_WAY_LINES", 0)
    monkeypatch.setattr(read_values, "GIVE_WAY_BLOCKS", 0)
    monkeypatch.setattr(pieces, "PIECE", 8)
    with turns.background():
        got = read_buffers(text, kind)
    records = {
        "assignment": len(alone.assignment_records),
        "values": len(alone.used_values) + len(alone.occurrences) // 8,
        "live-range": len(alone.live_ranges) + len(alone.sequence),
    }[kind]
    assert records > 100 and len(gate.calls) >= records
    assert got.occurrences == alone.occurrences
    assert list(got.assignment_records) == list(alone.assignment_records)
    assert list(got.used_values) == list(alone.used_values)
    assert list(got.live_ranges) == list(alone.live_ranges)
    assert [(d.range, d.message) for d in got.diagnostics] == [(d.range, d.message) for d in alone.diagnostics]


@needs_fork
def test_a_childs_pipe_holds_a_megabyte_and_a_larger_result_still_arrives_whole():
    """A child's result waits in its pipe while the parent works on its own part (the read in two parts,
    `bulk.read_rows`): the pipe holds 1 MB where Linux allows it (`pipes.widen`; the transport's tests check it on
    a pipe and on what is none), and a result of several MB still arrives whole while the parent reads it only
    after the child is done writing what fits."""
    import fcntl

    from hlo_lsp.core.process import pipes

    payload = [("x" * 97) + str(i) for i in range(60_000)]  # about 6 MB pickled
    child = fork.start(lambda _: payload, None, timeout=30)
    assert child is not None
    if hasattr(fcntl, "F_GETPIPE_SZ"):
        assert fcntl.fcntl(child.fd, fcntl.F_GETPIPE_SZ) == pipes.PIPE_BYTES
    time.sleep(0.3)  # the child has filled the pipe and waits for this process
    assert fork.result(child) == payload


def test_a_drained_childs_result_is_read_while_the_parent_works():
    """`fork.drain`: a thread reads the child's result as it comes, so the child writes it all and leaves while
    this process is at its own work (`bulk.read_rows` reads its part meanwhile); `result` then loads it."""
    payload = [("y" * 97) + str(i) for i in range(60_000)]  # about 6 MB pickled, more than the pipe holds
    child = fork.start(lambda _: payload, None, timeout=30)
    assert child is not None
    fork.drain(child)
    thread = child._drained[0]
    thread.join(10)
    assert not thread.is_alive()  # all of it read before it was asked for
    assert fork.result(child) == payload


def test_a_drained_stuck_child_is_given_up_at_a_deadline_moved_while_it_is_read():
    child = fork.start(lambda _: time.sleep(60), None, timeout=30)
    assert child is not None
    fork.drain(child)
    time.sleep(0.1)  # the thread waits for the pipe
    began = time.monotonic()
    child.deadline = began + 0.3  # as `read_rows` moves it once its own part is read
    assert fork.result(child) is None
    assert time.monotonic() - began < 5


def test_a_drained_child_discarded_is_gone_and_its_pipe_closed_once():
    import os

    child = fork.start(lambda _: time.sleep(60), None, timeout=30)
    assert child is not None
    fork.drain(child)
    fd = child.fd
    fork.discard(child)
    assert not child._drained[0].is_alive()
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, 0)  # reaped
    with pytest.raises(OSError):
        os.fstat(fd)  # closed by the thread that read it
