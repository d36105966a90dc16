"""The cyclic garbage collector around the reads of large documents (`paused`).

A read makes hundreds of thousands of small objects and long lists (a 100 MB module's line list holds two
million strings), none of them in a reference cycle. While it runs, collections would walk them again and again
(a third of the read's time), so they are paused. After it, what it made is the document's model, which lives
until the next edit or the close and is then freed by reference counting. Left to the collector, the first young
collection after the read walks all of it, and so does the middle collection that follows: on the 100 MB module
0.12 s and then 0.10 s with the GIL held, between the read and the diagnostics, with a hover waiting. Frozen
(``gc.freeze``) on the way out, no automatic collection walks it. The server's own full collection at an idle
moment freezes what survives anyway (`hlo_lsp.lsp.server`), and after closes it unfreezes and collects
everything, so nothing frozen here outlives its document.

The same holds for the other bulk work of the server's threads (the tokens of a long document, the users map, the
buffer files read and joined in the background): each makes lists of hundreds of thousands of tuples that are
freed by reference counting, and a young collection that meets such a list walks all of it (25-36 ms, then as much
again in the middle generation, with the GIL held: a GIL watcher inside the server found them behind the slow
hovers of the 100 MB module). Pauses nest and may overlap across threads: the collector is enabled again when
the last one ends, as it was before the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

KEEP_MIN_CHARS = 2_000_000  # a read of at least this much text freezes what it made (`paused` with ``keep``)

_lock = threading.Lock()
_depth = 0  # pauses under way, in every thread
_enabled_before = False  # whether the collector was enabled when the first of them began


@contextmanager
def paused(keep: bool = False) -> Iterator[None]:
    """No collection while the block runs (nor while any other thread's pause runs). With ``keep``, when the
    block ends without an exception, every object that exists then is frozen (`gc.freeze`): the block made a
    large model meant to live."""
    global _depth, _enabled_before
    with _lock:
        if _depth == 0:
            _enabled_before = gc.isenabled()
            gc.disable()
        _depth += 1
    done = False
    try:
        yield
        done = True
    finally:
        with _lock:
            if done and keep:
                gc.freeze()
            _depth -= 1
            if _depth == 0 and _enabled_before:
                gc.enable()
