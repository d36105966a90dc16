"""Buffer-assignment rules: invariants XLA's buffer assigner and live-range analysis guarantee.

Each rule is a function ``rule(ctx) -> Iterator[Finding]`` over one module's joined buffer facts (`BufferSet`),
with a stable ``code`` and a docstring naming the XLA code that guarantees the invariant. A `Finding` says which
document kind (``single``, ``assignment``, ``values``, ``live-range``, ``memory-report``) holds the offending line
and, for each related location, which kind holds it; the IDE layer turns kinds into paths. Errors are invariants
XLA CHECKs (a violation means a corrupted or hand-edited dump); warnings are invariants of its algorithms.

Algorithm: every rule is one pass over the values, allocations or sections with dict lookups, except the overlap
rule, which sorts each allocation's live values by offset and sweeps them, comparing only byte-overlapping pairs
(so its cost is O(n log n + overlapping pairs)). Nothing here raises on odd input: facts a file did not give are
skipped, never guessed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from hlo_lsp.core.buffers.bufferset import BufferSet
from hlo_lsp.core.buffers.rules.allocations import (
    duplicate_value,
    size_below_shape,
    slice_out_of_range,
    total_mismatch,
    used_values_mismatch,
)
from hlo_lsp.core.buffers.rules.context import Context, Finding
from hlo_lsp.core.buffers.rules.live_ranges import live_range_bounds, peak_cumulative, peak_not_live, sequence_steps
from hlo_lsp.core.buffers.rules.overlap import OVERLAP_BUDGET, overlapping_slices
from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.document import Lines

_log = logging.getLogger(__name__)


#: Every rule with the codes it can emit, in the order they run.
BUFFER_RULES: tuple[tuple[Callable[[Context], Iterator[Finding]], tuple[str, ...]], ...] = (
    (slice_out_of_range, ("buffer.slice-out-of-range",)),
    (duplicate_value, ("buffer.duplicate-value",)),
    (total_mismatch, ("buffers.total",)),
    (live_range_bounds, ("live-range.inverted", "live-range.beyond-schedule")),
    (sequence_steps, ("live-range.sequence-index", "live-range.duplicate-step")),
    (size_below_shape, ("buffer.size-below-shape",)),
    (used_values_mismatch, ("buffer.used-values-mismatch",)),
    (overlapping_slices, ("buffer.overlap", "buffer.overlap-incomplete")),
    (peak_not_live, ("live-range.peak-not-live",)),
    (peak_cumulative, ("live-range.peak-cumulative",)),
)


def buffer_findings(bs: BufferSet, lines: dict[str, Lines] | None = None) -> list[Finding]:
    """All findings of every buffer rule on one module's buffer facts; [] for a consistent dump. ``lines`` maps a
    document kind to its lines (used to place the memory report's totals); rules needing absent text skip."""
    broken = frozenset(
        kind for kind, doc in bs.docs.items() if any(d.severity >= Severity.ERROR for d in doc.diagnostics)
    )
    ctx = Context(bs, lines or {}, broken)
    out: list[Finding] = []
    for rule, _codes in BUFFER_RULES:
        try:
            out.extend(rule(ctx))
        except Exception:  # a rule's bug must not take the document's other diagnostics down
            _log.exception("buffer rule %s failed", rule.__name__)
    return out


__all__ = ["BUFFER_RULES", "OVERLAP_BUDGET", "Context", "Finding", "buffer_findings"]
