"""The allocated view: bytes actually reserved per step. At step ``t`` an allocation holds the union of the byte
ranges ``[offset, offset + size)`` of its values live at ``t`` (closed range), so values sharing a buffer are
counted once; an entry parameter's allocation is held whole at every step (the caller's buffer stays reserved
for the whole program, and a donated one is reused by later values: between its parameter's last use and the
next value assigned to it, it holds no live value but is not free). Sums are kept per step, per memory colour
and per category (``parameter``, ``output``,
``constant``, ``temporary``); its peak is the first step with the largest total, and each value live there
carries its padding (assigned size minus ``ByteSizeOf`` of its shape, the TPU tiling blow-up). Each
allocation's reserved bytes over time come from one sweep over its values' start and end events
(`_reserved_segments`; a coverage tree, `_Coverage`, when many values share it)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from hlo_lsp.core.buffers.bufferset import BufferSet, BufferValue
from hlo_lsp.core.memory.values import CATEGORIES, LiveValue, Shapes, Sources, category_of, live_value


@dataclass(slots=True)
class AllocatedView:
    steps: int  # number of steps (live-range max + 1)
    # bytes per step, as machine integers: a list of int objects took 1 MB per series for the benchmark module's
    # 25,715 steps, kept with its peak report for the session
    total: Sequence[int]
    by_category: dict[str, Sequence[int]]
    by_color: dict[int, Sequence[int]]
    peak_step: int | None
    peak_bytes: int
    live: list[LiveValue]  # at peak_step, largest assigned size first
    held_whole: frozenset[int] = frozenset()  # allocations counted whole at every step (entry parameters')


MAX_STEPS = 1 << 20  # per-step lists stop here; real programs have far fewer steps


def allocated_view(bs: BufferSet, shapes: Shapes | None = None, sources: Sources | None = None) -> AllocatedView:
    """Bytes reserved per step (union of live slices per allocation), per category and colour, and its peak."""
    shapes = shapes or Shapes(bs, None)
    sources = sources or Sources(shapes, None)
    last = -1
    by_alloc: dict[int, list[_Slice]] = {}
    for v in bs.values_by_key.values():
        lr, index, size, offset = v.live_range, v.allocation, v.size, v.offset  # each looked up in the columns
        if lr is None or index is None or size is None or offset is None:
            continue
        by_alloc.setdefault(index, []).append(_Slice(v, lr, offset, size))
        if lr[1] > last:
            last = lr[1]
    if bs.live_range_max is not None:
        last = max(last, bs.live_range_max)
    n = min(max(last + 1, 0), MAX_STEPS)  # a hostile live range (0-999999999999) must not size the lists
    if bs.sequence:  # live ranges end at most one step past the program's last instruction
        n = min(n, max(s.step for s in bs.sequence) + 2)
    # difference arrays: a segment [t0, t1) holding b bytes adds b at t0 and removes it at t1
    d_total = [0] * (n + 1)
    d_cat = {c: [0] * (n + 1) for c in CATEGORIES}
    d_color: dict[int, list[int]] = {a.color: [0] * (n + 1) for a in bs.allocations}  # every memory space
    whole = frozenset(a.index for a in bs.allocations if a.is_parameter and a.size > 0) if n else frozenset()
    for index in sorted(whole | by_alloc.keys()):
        alloc = bs.allocation(index)
        cat = category_of(alloc) if alloc is not None else "temporary"
        color = alloc.color if alloc is not None else (by_alloc[index][0].value.color or 0)
        dc = d_color.setdefault(color, [0] * (n + 1))
        if alloc is not None and index in whole:
            segments: Iterable[tuple[int, int, int]] = [(0, n, alloc.size)]
        else:
            segments = _reserved_segments(by_alloc[index], n)
        for t0, t1, b in segments:
            for arr in (d_total, d_cat[cat], dc):
                arr[t0] += b
                arr[t1] -= b
    total = _running(d_total, n)
    by_category = {c: _running(d, n) for c, d in d_cat.items()}
    by_color = {c: _running(d, n) for c, d in sorted(d_color.items())}
    peak_step = None
    peak = 0
    for t, b in enumerate(total):
        if b > peak:
            peak, peak_step = b, t
    live: list[LiveValue] = []
    if peak_step is not None:
        for vals in by_alloc.values():
            for sl in vals:
                if sl.live_range[0] <= peak_step <= sl.live_range[1]:
                    live.append(live_value(sl.value, sl.live_range, sl.size or 0, shapes.own(sl.value), sources))
    live.sort(key=lambda x: (-x.bytes, x.key))
    return AllocatedView(n, total, by_category, by_color, peak_step, peak, live, whole)


class _Slice:
    """One value's facts the allocated view sweeps over, read once from the files' columns."""

    __slots__ = ("value", "key", "live_range", "offset", "size")

    def __init__(self, value: BufferValue, live_range: tuple[int, int], offset: int, size: int):
        self.value, self.key, self.live_range, self.offset, self.size = value, value.key, live_range, offset, size


def _running(diff: list[int], n: int) -> Sequence[int]:
    """The running sum of ``diff``'s first ``n`` entries: machine integers, or Python's where a sum is past
    them (sizes of 30 digits in a damaged file)."""
    sums = list(accumulate(diff[:n]))
    try:
        return array("q", sums)
    except OverflowError:
        return sums


def union_bytes(slices) -> int:
    """Bytes covered by (start, end) byte ranges, overlaps counted once."""
    b, end = 0, -1
    for s, e in sorted(slices):
        if e > end:
            b += e - max(s, end)
            end = e
    return b


def _reserved_segments(vals: list, n: int):
    """(t0, t1, bytes) segments of one allocation: between consecutive times where a value starts or ends, the
    union of the live slices. A sweep over start/end events keeps the active slices; with more than a few values,
    their union is kept by a `_Coverage` tree (O(log slices) per event) instead of being recomputed at each time
    (`union_bytes` over every active slice: the 23 MB module's temporary allocation has ~280 live at a time)."""
    events: dict[int, list[tuple[int, str, tuple[int, int]]]] = {}
    for v in vals:
        lr = v.live_range
        s, e = max(0, lr[0]), lr[1] + 1
        if s >= n or e <= s:
            continue
        offset = v.offset
        piece = (offset, offset + v.size)
        events.setdefault(s, []).append((1, v.key, piece))
        events.setdefault(min(e, n), []).append((0, v.key, piece))
    active: dict[str, tuple[int, int]] = {}
    times = sorted(events)
    tree = _Coverage([p for evs in events.values() for _, _, p in evs]) if len(vals) > _TREE_MIN_VALUES else None
    for i, t0 in enumerate(times):
        for is_add, key, piece in events[t0]:
            if is_add:
                if tree is not None:
                    old = active.get(key)
                    if old is not None:  # a key added twice holds its latest slice, as the dict does
                        tree.add(old, -1)
                    tree.add(piece, 1)
                active[key] = piece
            else:
                old = active.pop(key, None)
                if tree is not None and old is not None:
                    tree.add(old, -1)
        t1 = times[i + 1] if i + 1 < len(times) else n
        if active and t1 > t0:
            b = tree.covered() if tree is not None else union_bytes(active.values())
            if b:
                yield t0, t1, b


_TREE_MIN_VALUES = 32  # below this, sorting the few active slices at each time is cheaper than a tree


class _Coverage:
    """Bytes covered by a multiset of [start, end) slices under insertion and removal: a segment tree over the
    slices' distinct endpoints, each node counting the slices that cover it whole and the bytes covered below it
    (the classic union-of-intervals tree). `add` is O(log endpoints); `covered` is O(1). Equals `union_bytes` of
    the slices present."""

    __slots__ = ("_xs", "size_of", "_len", "_cnt", "_cov")

    def __init__(self, pieces: list[tuple[int, int]]):
        xs = sorted({x for p in pieces for x in p})
        self._xs = {x: i for i, x in enumerate(xs)}
        size = 1
        while size < max(1, len(xs) - 1):
            size *= 2
        self.size_of = size
        length = [0] * (2 * size)
        for i in range(len(xs) - 1):
            length[size + i] = xs[i + 1] - xs[i]
        for i in range(size - 1, 0, -1):
            length[i] = length[2 * i] + length[2 * i + 1]
        self._len = length
        self._cnt = [0] * (2 * size)
        self._cov = [0] * (2 * size)

    def _pull(self, i: int) -> None:
        if self._cnt[i] > 0:
            self._cov[i] = self._len[i]
        elif i >= self.size_of:
            self._cov[i] = 0
        else:
            self._cov[i] = self._cov[2 * i] + self._cov[2 * i + 1]

    def add(self, piece: tuple[int, int], delta: int) -> None:
        """Insert (``delta`` 1) or remove (-1) the slice ``piece``."""
        s, e = piece
        if e <= s:
            return
        lo = self._xs[s] + self.size_of
        hi = self._xs[e] + self.size_of
        left, right = lo, hi
        cnt, pull = self._cnt, self._pull
        while left < right:
            if left & 1:
                cnt[left] += delta
                pull(left)
                left += 1
            if right & 1:
                right -= 1
                cnt[right] += delta
                pull(right)
            left >>= 1
            right >>= 1
        for leaf in (lo, hi - 1):
            i = leaf >> 1
            while i:
                pull(i)
                i >>= 1

    def covered(self) -> int:
        return self._cov[1]


def allocation_in_use(bs: BufferSet, step: int) -> dict[int, int]:
    """Bytes of each allocation in use at ``step``: the union of its live values' slices (a parameter's
    allocation, which the allocated view holds whole, may be in use in part or not at all); allocations with no
    live value there are absent."""
    slices: dict[int, list[tuple[int, int]]] = {}
    for v in bs.values_by_key.values():
        if v.live_range and v.allocation is not None and v.size is not None and v.offset is not None:
            if v.live_range[0] <= step <= v.live_range[1]:
                slices.setdefault(v.allocation, []).append((v.offset, v.offset + v.size))
    return {index: union_bytes(sl) for index, sl in slices.items()}
