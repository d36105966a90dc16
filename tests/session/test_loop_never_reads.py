"""What the server's event loop never does, so that a hover is not held behind it (issue 14): read a large open
document (an edit dropped its model; the worker thread the server scheduled reads it), and join a large buffer
file's own records (a worker does it after reading: `Workspace.prepare_bundle`). Measured before: a hover right
after an edit of the 4.6 MB assignment file joined its records on the loop for 0.6-0.9 s.

Also the inlay hints' value records, made from the record columns without record objects (0.2 s on the loop for
that file when made record by record): the same lines and keys as from the records, on every real buffer file of
the tests' data."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from benchmarks.synth_buffers import DEFAULT_SRC, VALUES, synthesize_set
from hlo_lsp.core import workspace
from hlo_lsp.core.buffers import read_buffers
from hlo_lsp.core.buffers.reader import kind_from_path
from hlo_lsp.core.workspace import NotReady, Workspace
from hlo_lsp.ide import inlay

DATA = Path(__file__).resolve().parents[1] / "data"


def _in_thread(fn):
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except Exception as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join(120)
    if "error" in out:
        raise out["error"]
    return out.get("value")


def test_the_loop_thread_leaves_a_large_open_document_to_another_thread(tmp_path, monkeypatch):
    monkeypatch.setattr(workspace, "LOOP_READ_LINES", 40)
    path = str(tmp_path / "m.hlo")
    text = (
        "HloModule m\n\nENTRY e {\n"
        + "".join(f"  x{i} = f32[] constant({i})\n" for i in range(50))
        + "  ROOT r = f32[] add(x0, x1)\n}\n"
    )
    ws = Workspace()
    ws.loop_thread = threading.get_ident()
    ws.open(path, text, 1)
    with pytest.raises(NotReady):
        ws.analysis(path)
    a = _in_thread(lambda: ws.analysis(path, wait=True))
    assert a.hlo is not None
    assert ws.analysis(path) is a  # read by the worker: the loop thread takes it as it is
    small = str(tmp_path / "s.hlo")
    ws.open(small, "HloModule s\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n", 1)
    assert ws.analysis(small).hlo is not None  # a short document is read where it is asked for


@pytest.fixture(scope="module")
def large_set(tmp_path_factory):
    return synthesize_set(DEFAULT_SRC, tmp_path_factory.mktemp("set"), 3.0)


def test_the_loop_thread_never_joins_a_large_buffer_files_own_records(large_set):
    path = str(large_set[VALUES])
    ws = Workspace()
    ws.defer_large_siblings = True
    ws.loop_thread = threading.get_ident()
    ws.open(path, Path(path).read_text(), 1)
    _in_thread(lambda: ws.analysis(path, wait=True))
    b = ws.bundle(path)
    assert b.partial and b.buffers is None  # not joined yet, and not here
    _in_thread(lambda: ws.prepare_bundle(path))
    b = ws.bundle(path)
    assert b.partial and b.buffers is not None  # the worker's join, kept
    assert b.buffers.value(ws.analysis(path).buffers.used_values[0].key) is not None
    ws.loop_thread = None
    other = Workspace()
    other.defer_large_siblings = True
    other.open(path, Path(path).read_text(), 1)
    assert other.bundle(path).buffers is not None  # any other thread joins as before


def _buffer_files() -> list[Path]:
    files = sorted(p for p in DATA.rglob("*.txt") if kind_from_path(str(p)) is not None)
    files += sorted((DATA / "seeds").glob("*.txt"))
    return files


def test_the_inlay_value_records_are_those_of_the_records_on_every_buffer_file():
    files = _buffer_files()
    assert len(files) >= 20, files
    seen = 0
    for f in files:
        doc = read_buffers(f.read_text(), kind_from_path(str(f)))
        records = sorted(
            [(x.line, x.key) for a in doc.allocations for x in a.assignments]
            + [(u.line, u.key) for u in doc.used_values]
            + [(r.line, r.key) for r in doc.live_ranges]
        )
        lines, keys = inlay._value_records(doc)
        assert list(zip(lines, keys)) == records, f
        seen += bool(records)
    assert seen >= 10


def test_two_threads_asking_for_one_join_make_it_once(large_set, monkeypatch):
    """A pull answered while the worker that read a buffer file joins its records asks for the same join: it
    waits for that one instead of making a second beside it (both took turns for the GIL, each twice as long)."""
    from hlo_lsp.core.buffers.bufferset import BufferSet

    made = []
    real = BufferSet.from_docs
    started = threading.Event()

    def slow_join(docs):
        made.append(threading.get_ident())
        started.set()
        time.sleep(0.3)  # long enough for the second thread to ask meanwhile
        return real(docs)

    monkeypatch.setattr(BufferSet, "from_docs", staticmethod(slow_join))
    path = str(large_set[VALUES])
    ws = Workspace()
    ws.defer_large_siblings = True
    ws.open(path, Path(path).read_text(), 1)
    ws.analysis(path)
    got: list = []
    first = threading.Thread(target=lambda: got.append(ws.bundle(path).buffers))
    first.start()
    assert started.wait(30)
    second = _in_thread(lambda: ws.bundle(path).buffers)
    first.join(60)
    assert len(made) == 1
    assert got[0] is second is not None


LOOPS = DATA / "jax-cpu" / "loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"


def _called_computation(lines: list[str]) -> tuple[str, int, int, int]:
    """(a computation some instruction calls with ``calls=``, its header line, its first parameter's line and that
    parameter's name column)."""
    import re

    callee = next(m.group(1) for x in lines for m in [re.search(r"calls=%([\w.\-]+)", x)] if m)
    header = next(i for i, x in enumerate(lines) if x.startswith(f"%{callee} "))
    param = next(i for i in range(header + 1, len(lines)) if " parameter(0)" in lines[i])
    return callee, header, param, lines[param].index("%") + 1


def test_the_loop_thread_never_builds_a_large_modules_maps(monkeypatch):
    """On the event loop, a large module's users and callers maps are left to the background build: a hover on
    a computation's name says its callers are being indexed, go-to-definition on a parameter goes to the
    parameter (not to the operands its callers pass), and nothing builds them; once another thread has built
    them, the loop's answers are those a workspace without an event loop gives."""
    from hlo_lsp.ide import hover, navigation

    monkeypatch.setattr(workspace, "MAPS_NOW_MAX", 10)  # (the real dump: some hundred instructions)
    path, text = str(LOOPS), LOOPS.read_text()
    lines = text.split("\n")
    callee, header, param, col = _called_computation(lines)
    ws = Workspace()
    ws.loop_thread = threading.get_ident()
    ws.open(path, text, 1)
    mod = ws.analysis(path).hlo
    assert mod is not None and len(mod.instructions) > workspace.MAPS_NOW_MAX
    h = hover.hover(ws, path, header, 1)
    assert h is not None and f"Called by: {hover.INDEXING}" in h.plain.split("\n")
    users = hover.hover(ws, path, param, col)
    assert users is not None and "Users: " in users.plain
    assert [x.range.start_line for x in navigation.definition(ws, path, param, col)] == [param]
    assert not mod.maps_built()

    _in_thread(mod.build_maps)
    off = Workspace()  # no event loop: builds where asked
    off.open(path, text, 1)
    for line, c in ((header, 1), (param, col)):
        assert hover.hover(ws, path, line, c) == hover.hover(off, path, line, c)
        assert navigation.definition(ws, path, line, c) == navigation.definition(off, path, line, c)
    got = hover.hover(ws, path, header, 1)
    assert got is not None and hover.INDEXING not in got.plain and "Called by: " in got.plain
    # (now the parameter's definition is the operand its callers pass)
    assert param not in [x.range.start_line for x in navigation.definition(ws, path, param, col)]


def test_maps_asked_for_while_they_are_built_are_taken_from_that_build(monkeypatch):
    """A thread asking for a module's maps while another builds them (a references request waiting in a worker
    while the background build after the read goes on) waits for that build instead of making its own."""
    from hlo_lsp.core.hlo import model

    text = LOOPS.read_text()
    lines = text.split("\n")
    callee = _called_computation(lines)[0]
    ws = Workspace()
    ws.open(str(LOOPS), text, 1)
    mod = ws.analysis(str(LOOPS)).hlo
    builds, started, gate = [], threading.Event(), threading.Event()
    real = model.users_and_callers

    def slow(m):
        builds.append(m)
        started.set()
        gate.wait(10)
        return real(m)

    monkeypatch.setattr(model, "users_and_callers", slow)
    first = threading.Thread(target=mod.build_maps)
    first.start()
    assert started.wait(10)
    got: list = []
    second = threading.Thread(target=lambda: got.append([x.name for x in mod.callers(callee)]))
    second.start()
    time.sleep(0.05)
    assert second.is_alive() and len(builds) == 1  # waiting for the first build, not making its own
    gate.set()
    first.join(10)
    second.join(10)
    assert len(builds) == 1 and got and got[0]
    fresh = Workspace()
    fresh.open(str(LOOPS), text, 1)
    assert got[0] == [x.name for x in fresh.analysis(str(LOOPS)).hlo.callers(callee)]
