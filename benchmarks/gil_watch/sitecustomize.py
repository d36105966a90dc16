"""A GIL watcher inside the server, for finding what holds a hover up (not part of the server: loaded as the
``sitecustomize`` of a server started by `serve`).

A thread sleeps 1 ms at a time. A wake-up later than ``GIL_WATCH_MS`` means some other thread held the GIL that
long without letting go (a long C call: a sort, a copy or a free of millions of items, a collection of the cyclic
collector, a fork), or that several busy threads kept taking it first. For each, it writes the time
(``time.monotonic()``, the clock `bench_editor.py` and ``HLO_LSP_TRACE`` print) and the innermost frames of every
other thread to ``GIL_WATCH_OUT``; the thread that held the GIL is usually just past the call that did it.
"""

import os
import sys
import threading
import time
import traceback

LIMIT = float(os.environ.get("GIL_WATCH_MS", "0")) / 1000


def _watch(out) -> None:
    me = threading.get_ident()
    while True:
        t = time.monotonic()
        time.sleep(0.001)
        late = time.monotonic() - t - 0.001
        if late <= LIMIT:
            continue
        now = time.monotonic()
        names = {th.ident: th.name for th in threading.enumerate()}
        lines = [f"{now:.4f} late {late * 1000:.1f} ms"]
        for tid, frame in sys._current_frames().items():
            if tid == me:
                continue
            stack = traceback.extract_stack(frame)[-4:]
            where = " <- ".join(f"{os.path.basename(s.filename)}:{s.lineno} {s.name}" for s in reversed(stack))
            lines.append(f"   [{names.get(tid, tid)}] {where}")
        out.write("\n".join(lines) + "\n")
        out.flush()


if LIMIT:
    _out = open(os.environ.get("GIL_WATCH_OUT", "gil_watch.txt"), "w")  # noqa: SIM115 - written for the process's life
    threading.Thread(target=_watch, args=(_out,), name="gil-watch", daemon=True).start()
