"""The three memory figures of a module, reconciled: why XLA's printed peak, the allocated peak and the
memory-usage report's ``Total bytes`` differ on this module, in one line each.

- **XLA peak**: the dump's own ``Live ranges at N (peak)``: the values live at step N by XLA's liveness, each
  counted by its shape's byte size (`XlaPeak`).
- **allocated peak**: the most bytes of allocations in use at one step: at each step, the union of the byte
  slices of the values live there, per allocation, and every entry parameter's allocation whole
  (`AllocatedView`); what the device must hold.
- **Total bytes**: every allocation whole (the sum of their sizes; the memory-usage report's ``Total bytes``).

At XLA's peak step the first two part on four things, each measured here: values that share an allocation's
bytes (an in-place output over its operand, a while loop's carried buffer) are counted once per value by XLA and
once in all when reserved; a value's assigned size may differ from its shape's bytes (padding, alignment); a
donated parameter's buffer is held while no value lives in it; and the allocated view may hold bytes XLA's list
leaves out at that step. The allocated peak may also fall on another step. Total bytes is the allocated peak plus
the fragmentation there (bytes of allocations holding no live value) plus the thread-local allocations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_lsp.core.buffers.bufferset import BufferSet
from hlo_lsp.core.memory.allocated import AllocatedView, allocation_in_use, union_bytes
from hlo_lsp.core.memory.values import LiveValue
from hlo_lsp.core.shapes import human_size

NAMES = {"xla": "XLA peak", "allocated": "allocated peak", "total": "Total bytes"}  # as every view names them


@dataclass(slots=True)
class Figures:
    xla_step: int | None
    xla_bytes: int  # XLA peak: its values' shape bytes
    assigned_bytes: int  # the same values' assigned sizes
    shared_bytes: int  # bytes those values share within allocations (counted more than once by XLA)
    reserved_at_xla_step: int  # the allocated view at XLA's step
    allocated_step: int | None
    allocated_bytes: int
    total_bytes: int
    sharing: tuple[str, str, int] | None = None  # (value, value, allocation): the largest pair sharing bytes
    idle_parameters: int = 0  # at XLA's step: bytes of parameters' allocations (held whole) with no live value
    fragmentation: int = 0  # at the allocated peak: bytes of allocations holding no live value
    thread_local: int = 0  # bytes of thread-local allocations (never live in the schedule)
    reasons: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "xla_peak": {"step": self.xla_step, "bytes": self.xla_bytes},
            "assigned_bytes_at_xla_peak": self.assigned_bytes,
            "shared_bytes_at_xla_peak": self.shared_bytes,
            "reserved_at_xla_step": self.reserved_at_xla_step,
            "allocated_peak": {"step": self.allocated_step, "bytes": self.allocated_bytes},
            "total_bytes": self.total_bytes,
            "idle_parameters_at_xla_step": self.idle_parameters,
            "fragmentation_at_allocated_peak": self.fragmentation,
            "thread_local_bytes": self.thread_local,
            "why": self.reasons,
        }


def _largest_sharing(values: list[LiveValue], bs: BufferSet) -> tuple[int, tuple[str, str, int] | None]:
    """(bytes shared, the pair of values sharing the most) among ``values`` live at one step."""
    by_alloc: dict[int, list[tuple[int, int, str]]] = {}
    for v in values:
        rec = bs.value(v.key)
        if rec is None or rec.allocation is None or rec.offset is None or rec.size is None:
            continue
        by_alloc.setdefault(rec.allocation, []).append((rec.offset, rec.offset + rec.size, v.key))
    shared = 0
    best: tuple[int, tuple[str, str, int] | None] = (0, None)
    for index, slices in by_alloc.items():
        shared += sum(e - s for s, e, _ in slices) - union_bytes([(s, e) for s, e, _ in slices])
        slices.sort()
        for i, (s1, e1, k1) in enumerate(slices):
            for s2, e2, k2 in slices[i + 1 : i + 9]:  # neighbours by offset: the overlaps that matter
                overlap = min(e1, e2) - max(s1, s2)
                if overlap > best[0]:
                    best = (overlap, (k1, k2, index))
    return shared, best[1]


def reconcile(
    live: list[LiveValue], step: int | None, view: AllocatedView, bs: BufferSet, sequence: list[str]
) -> Figures:
    """The figures and the one-line reasons they differ on this module."""
    xla = sum(v.bytes for v in live)
    assigned = sum(v.size if v.size is not None else v.bytes for v in live)
    shared, pair = _largest_sharing(live, bs)
    at_step = view.total[step] if step is not None and 0 <= step < len(view.total) else 0
    whole = sum(a.size for a in bs.allocations)
    total = bs.total_bytes_used if bs.total_bytes_used is not None else whole
    f = Figures(step, xla, assigned, shared, at_step, view.peak_step, view.peak_bytes, total, pair)
    f.thread_local = sum(a.size for a in bs.allocations if a.thread_local)
    f.fragmentation = max(0, whole - f.thread_local - view.peak_bytes) if view.peak_step is not None else 0
    h = human_size
    if step is None:
        return f
    if view.held_whole:
        in_use = allocation_in_use(bs, step)
        f.idle_parameters = sum(a.size - in_use.get(a.index, 0) for a in bs.allocations if a.index in view.held_whole)
    if assigned != xla:
        more = "more" if assigned > xla else "less"
        f.reasons.append(
            f"the buffer assignment gives the values at the XLA peak {h(abs(assigned - xla))} {more} than their shapes "
            f"({h(assigned)} against {h(xla)}: padding and alignment)"
        )
    if shared and pair is not None:
        f.reasons.append(
            f"{h(shared)} of the XLA peak is bytes that its values share within an allocation (largest: "
            f"`{pair[0]}` and `{pair[1]}` in allocation {pair[2]}, an in-place reuse): XLA counts each value, the "
            "allocated view once"
        )
    if f.idle_parameters:
        f.reasons.append(
            f"at step {step} the allocated view holds {h(f.idle_parameters)} of parameters' buffers with no live "
            "value in them (a donated buffer between its parameter's last use and the next value XLA puts there): "
            "the caller's buffers stay reserved for the whole program, XLA's list does not count them"
        )
    extra = at_step - (assigned - shared) - f.idle_parameters
    if extra:
        f.reasons.append(
            f"at step {step} the allocated view holds {h(abs(extra))} "
            + ("more, for values XLA's liveness does not list there" if extra > 0 else "less than those values")
        )
    if view.peak_step is not None and view.peak_step != step:
        where = sequence[view.peak_step] if view.peak_step < len(sequence) and sequence[view.peak_step] else ""
        f.reasons.append(
            f"the allocated peak is at step {view.peak_step}"
            + (f" ({where})" if where else "")
            + f": {h(view.peak_bytes)}, {h(abs(view.peak_bytes - at_step))} "
            + ("more" if view.peak_bytes >= at_step else "less")
            + f" than at XLA's step {step}"
        )
    if total != view.peak_bytes:
        parts = [f"fragmentation {h(f.fragmentation)} (reserved, holding no live value)"]
        if f.thread_local:
            parts.append(f"thread-local {h(f.thread_local)}")
        f.reasons.append(
            f"Total bytes ({h(total)}) is every allocation whole; at the allocated peak "
            f"{100 * view.peak_bytes / total:.1f}% of it is in use, the rest is " + " and ".join(parts)
            if total
            else f"Total bytes is {h(total)}"
        )
    return f
