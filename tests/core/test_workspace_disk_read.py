"""A file read from disk is read outside the workspace's lock (`Workspace.source`): while one thread reads a
large file (the background read of a buffer file's module: 20-30 ms for 23 MB), another thread's lookups of
other documents (every request's `analysis`) go on; two threads reading the same file keep one `Source`."""

from __future__ import annotations

import threading

from hlo_lsp.core import workspace as workspace_module
from hlo_lsp.core.workspace import Workspace

HLO = "HloModule m\n\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n"


def test_a_disk_read_does_not_hold_the_lock_for_other_documents(tmp_path, monkeypatch):
    slow, other = tmp_path / "slow.hlo", tmp_path / "other.hlo"
    slow.write_text(HLO)
    other.write_text(HLO)
    ws = Workspace()
    ws.open(str(other), HLO, 1)
    ws.analysis(str(other))
    reading, finish = threading.Event(), threading.Event()
    real = workspace_module.read_text_file

    def read_slowly(path):
        if str(path) == str(slow):
            reading.set()
            assert finish.wait(10)
        return real(path)

    monkeypatch.setattr(workspace_module, "read_text_file", read_slowly)
    reader = threading.Thread(target=ws.analysis, args=(str(slow),))
    reader.start()
    try:
        assert reading.wait(10)
        looked_up = threading.Event()
        lookup = threading.Thread(target=lambda: (ws.analysis(str(other)), ws.has_analysis(str(slow)), looked_up.set()))
        lookup.start()
        assert looked_up.wait(5), "a request's lookup waited for another file's read"
        lookup.join()
    finally:
        finish.set()
        reader.join(10)
    assert ws.has_analysis(str(slow))


def test_two_threads_reading_one_file_keep_one_source(tmp_path, monkeypatch):
    path = tmp_path / "m.hlo"
    path.write_text(HLO)
    ws = Workspace()
    both, real = threading.Barrier(2), workspace_module.read_text_file

    def read_together(p):
        text = real(p)
        both.wait(10)  # each thread has read the file before either stores it
        return text

    monkeypatch.setattr(workspace_module, "read_text_file", read_together)
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(ws.source(str(path)))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(got) == 2 and got[0] is got[1]
    assert ws.source(str(path)) is got[0]
