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
