"""`read_buffers`: a buffer file read into its model (`reader`), a large one in two parts at once (`halves`)."""

from __future__ import annotations

import logging

from hlo_lsp.core.buffers import halves
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.read_common import CODE_INTERNAL
from hlo_lsp.core.buffers.reader import _Reader
from hlo_lsp.core.diagnostics import Range, error
from hlo_lsp.core.document import TextLines
from hlo_lsp.core.process import collector

log = logging.getLogger(__name__)


def read_buffers(text: str | TextLines, kind_hint: str | None = None) -> BufferDoc:
    """Read any XLA buffer dump (old single file or one split file) into a `BufferDoc`; never raises.

    ``kind_hint`` ('single'|'assignment'|'values'|'live-range'|'memory-report', e.g. from the file name) sets
    ``doc.kind``; without it the kind follows the sections found. Problems are in ``doc.diagnostics``."""
    if not isinstance(text, (str, TextLines)):
        doc = BufferDoc(kind=kind_hint or "assignment")
        doc.diagnostics.append(error(Range(0, 0, 0, 0), CODE_INTERNAL, "buffer reader was given no text"))
        return doc
    # The reader allocates hundreds of thousands of small tuples that never form cycles; pausing the cyclic
    # garbage collector while it runs saves most of the time it would spend rescanning them. What a large read
    # made is frozen, as a large module's model is: else the first young and middle collections after it walk
    # all of it (7 and 12 ms after the benchmark's values file, between its read and its diagnostics)
    size = len(text) if isinstance(text, str) else text.offsets()[-1]
    with collector.paused(keep=size >= collector.KEEP_MIN_CHARS):
        try:
            if size >= halves.SPLIT_MIN_CHARS:  # a large file's later part read at the same time by a forked child
                if isinstance(text, str):
                    text = TextLines(text)
                try:
                    doc = halves.read_in_two(text, kind_hint)
                except Exception:  # a bug of the read in parts: the whole read still gives the model
                    log.exception("reading %s in two parts failed; read whole", kind_hint)
                    doc = None
                if doc is not None:
                    return doc
            return _Reader(text, kind_hint).run()
        except Exception as exc:  # pragma: no cover - a last resort; the per-line guard should catch everything
            doc = BufferDoc(kind=kind_hint or "assignment")
            doc.diagnostics.append(error(Range(0, 0, 0, 0), CODE_INTERNAL, f"internal reader error: {exc!r}"))
            return doc
