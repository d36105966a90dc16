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
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

KEEP_MIN_CHARS = 2_000_000  # a read of at least this much text freezes what it made (`paused` with ``keep``)


@contextmanager
def paused(keep: bool = False) -> Iterator[None]:
    """No collection while the block runs. With ``keep``, when the block ends without an exception, every object
    that exists then is frozen (`gc.freeze`): the block made a large model meant to live."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if keep:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()
