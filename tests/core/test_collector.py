"""The cyclic collector around large reads (`process.collector`): paused while a read runs, and a large module's
model frozen after it, so that no automatic collection walks it again; freed by reference counting once dropped."""

from __future__ import annotations

import gc

import pytest

from benchmarks.synth_module import synthesize
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.process import collector
from tests.fixtures import DATA

SRC = DATA / "jax-cpu" / "loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"


@pytest.fixture
def unfrozen():
    """Start and end with nothing frozen and the collector in the state it was."""
    enabled = gc.isenabled()
    gc.unfreeze()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def test_paused_restores_the_collector_and_freezes_only_when_asked(unfrozen):
    for start in (True, False):
        (gc.enable if start else gc.disable)()
        with collector.paused():
            assert not gc.isenabled()
            made = [[i] for i in range(1000)]
        assert gc.isenabled() is start
        assert gc.get_freeze_count() == 0
        with collector.paused(keep=True):
            made = [[i] for i in range(1000)]
        assert gc.isenabled() is start
        assert gc.get_freeze_count() >= len(made)
        gc.unfreeze()


def test_pauses_overlapping_across_threads_enable_the_collector_when_the_last_ends(unfrozen):
    """Thread A pauses, thread B pauses, A ends: B still runs paused; the collector is enabled when B ends (the
    uncounted pause enabled it when A ended, under B's lists of tuples)."""
    import threading

    gc.enable()
    a_in, b_in, a_out, b_out = (threading.Event() for _ in range(4))
    seen = {}

    def a():
        with collector.paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b():
        a_in.wait(5)
        with collector.paused():
            b_in.set()
            a_out.wait(5)
            seen["during"] = gc.isenabled()
        b_out.set()

    threads = [threading.Thread(target=f) for f in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen["during"] is False
    assert gc.isenabled()
    with collector.paused(), collector.paused():  # nested in one thread
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_failed_block_freezes_nothing(unfrozen):
    gc.enable()
    with pytest.raises(ValueError), collector.paused(keep=True):
        raise ValueError("the read failed")
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


@pytest.fixture(scope="module")
def large_text(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("collector") / "module_0000.jit_big.cpu_after_optimizations.txt"
    synthesize(SRC.read_text(), path, 3)
    text = path.read_text()
    assert len(text) >= collector.KEEP_MIN_CHARS
    return text


def test_a_large_module_is_frozen_after_its_read_and_freed_by_reference_counting(unfrozen, large_text):
    read_hlo(large_text)  # the modules a read imports on first use
    gc.collect()
    gc.freeze()  # what the test process holds already
    before = gc.get_freeze_count()
    mod = read_hlo(large_text)
    model = gc.get_freeze_count() - before
    assert len(mod.instructions) > 10_000
    assert model > 1000  # frozen: nothing left in the young generation for the next collection to walk
    del mod
    # the model holds no reference cycle: dropping it frees every object of it that was frozen
    assert gc.get_freeze_count() - before < model / 20


def test_a_small_module_is_left_to_the_collector(unfrozen):
    gc.unfreeze()
    mod = read_hlo(SRC.read_text())
    assert mod.computations
    assert gc.get_freeze_count() == 0
