"""The heap map of a module: where each value sits in its allocation and when, with the state of every allocation
and memory space at the allocated peak.

**Blocks.** Each value with a live range is one rectangle: its steps ``[start, end + 1)`` (the live range is
closed) by its bytes ``[offset, offset + size)`` within its allocation, coloured by the allocation's category
(`HEAP_CATEGORIES`). Thread-local allocations never have a live range in the dumps (their values live in called
computations' frames): they are counted, not drawn.

**At the allocated peak** (the step with the most bytes held, `allocated`): an allocation *holds* the union of
its live values' slices, or its whole size when it is an entry parameter's (held for the whole program, donated
or not). Its *fragmentation* is its size minus what it holds: reserved bytes with no live value in them. So per
memory space, and in all: ``Total bytes = held at the peak + fragmentation + thread-local bytes``. *Padding* is
what the buffer assignment gives the values live there beyond their shapes' bytes (``ByteSizeOf``, no tiling):
their assigned size minus that, for array values (tuples are pointer tables), each slice counted once when
several values share it (with the most padding among them).

**What is drawn** (`heap_map`'s ``budget`` of rectangles, so a module of tens of thousands of values stays
readable): allocations holding bytes at the peak first, then the others, each group largest first; an allocation
whose values do not all fit (none takes more than a quarter of the budget) gets those live at the peak first,
then its largest. Everything left out is counted
(`HeapMap.left_out_*`). Drawn allocations are stacked per memory space by category, then size, largest first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_lsp.core.buffers.bufferset import BufferSet
from hlo_lsp.core.buffers.records import Allocation
from hlo_lsp.core.memory.allocated import union_bytes
from hlo_lsp.core.memory.peak import PeakReport
from hlo_lsp.core.memory.values import CATEGORIES, category_of, size_of
from hlo_lsp.core.shapes import human_size, parse_shape

HEAP_CATEGORIES = (*CATEGORIES, "thread-local")
MAX_BLOCKS = 4000  # rectangles a chart draws at most (plotly and matplotlib stay quick, the map readable)


@dataclass(frozen=True, slots=True)
class Block:
    """One value drawn: steps ``[start, end]`` (closed) by bytes ``[offset, offset + size)`` of its allocation."""

    key: str
    instruction: str
    start: int
    end: int
    offset: int
    size: int
    shape: str | None
    padding: int | None  # assigned size minus the shape's bytes (arrays only); None when unknown


@dataclass(slots=True)
class HeapAllocation:
    index: int
    size: int
    color: int
    category: str  # one of `HEAP_CATEGORIES`
    kinds: str  # as the listing prints its flags: ``parameter 2, maybe-live-out``; ``temp`` for none
    values: int  # its values with a live range
    held_at_peak: int  # bytes held at the allocated peak (a parameter's allocation: all of it)
    in_use_at_peak: int  # bytes of its values live at the allocated peak (union of their slices)
    padding_at_peak: int
    blocks: list[Block] = field(default_factory=list)  # the drawn ones
    left_out: int = 0  # its values not drawn
    base: int = 0  # where its band starts in its memory space's stack (bytes)

    @property
    def fragmentation(self) -> int:
        """Reserved bytes holding no live value at the allocated peak (0 for thread-local allocations, which
        are counted apart)."""
        return 0 if self.category == "thread-local" else self.size - self.held_at_peak


@dataclass(slots=True)
class MemorySpace:
    color: int
    name: str  # as the memory-usage report names it (``default``, ``vmem`` ...), else ``color N``
    allocations: int
    total_bytes: int  # every allocation of this colour whole
    thread_local_bytes: int
    held_at_peak: int  # at the module's allocated peak step
    fragmentation: int
    padding: int
    peak_step: int | None  # this space's own peak (the first step holding the most bytes of it)
    peak_bytes: int

    def label(self) -> str:
        """``default``; ``vmem (S(1))`` for a non-zero colour, the memory space it is on TPU layouts."""
        return self.name if self.color == 0 else f"{self.name} (S({self.color}))"

    def as_json(self) -> dict:
        return {
            "color": self.color,
            "name": self.name,
            "allocations": self.allocations,
            "total_bytes": self.total_bytes,
            "thread_local_bytes": self.thread_local_bytes,
            "held_at_peak": self.held_at_peak,
            "fragmentation_at_peak": self.fragmentation,
            "padding_at_peak": self.padding,
            "peak_step": self.peak_step,
            "peak_bytes": self.peak_bytes,
        }


@dataclass(slots=True)
class HeapMap:
    steps: int
    peak_step: int | None  # the allocated peak
    peak_bytes: int
    xla_step: int | None
    spaces: list[MemorySpace]
    allocations: list[HeapAllocation]  # every allocation, by index
    drawn: dict[int, list[HeapAllocation]]  # colour -> its drawn allocations, bottom to top
    left_out_allocations: int = 0  # allocations with live values that are not drawn
    left_out_bytes: int = 0  # their sizes
    left_out_held: int = 0  # how many of them hold bytes at the peak
    left_out_values: int = 0  # values not drawn (in allocations left out, or cut from a drawn one)
    unranged: int = 0  # allocations (not thread-local) none of whose values has a live range: nothing to draw

    @property
    def fragmentation(self) -> int:
        return sum(s.fragmentation for s in self.spaces)

    @property
    def padding(self) -> int:
        return sum(s.padding for s in self.spaces)

    def space_of(self, color: int) -> str:
        """The label of colour ``color``'s memory space (`MemorySpace.label`); ``color N`` when unknown."""
        return next((s.label() for s in self.spaces if s.color == color), f"color {color}")

    def blocks(self) -> int:
        return sum(len(a.blocks) for drawn in self.drawn.values() for a in drawn)

    def left_out_text(self) -> str:
        """What the chart does not draw, in one line; "" when it draws every allocation and value."""
        parts = []
        if self.left_out_allocations:
            held = f", {self.left_out_held} of them holding bytes at the peak" if self.left_out_held else ""
            parts.append(f"{self.left_out_allocations} smaller allocations ({human_size(self.left_out_bytes)}{held})")
        if self.left_out_values:
            parts.append(f"{self.left_out_values} values in all")
        tl = [a for a in self.allocations if a.category == "thread-local"]
        if tl:
            parts.append(f"{len(tl)} thread-local allocations ({human_size(sum(a.size for a in tl))}, no live range)")
        if self.unranged:
            parts.append(f"{self.unranged} allocations with no live range")
        return "not drawn: " + "; ".join(parts) if parts else ""


def heap_map(report: PeakReport, budget: int = MAX_BLOCKS) -> HeapMap:
    """The heap map of ``report``'s module (an empty one when the report keeps no buffer set)."""
    bs = report.buffers
    view = report.allocated
    t = view.peak_step
    hm = HeapMap(view.steps, t, view.peak_bytes, report.xla.step, [], [], {})
    if bs is None:
        return hm
    by_alloc = _values_by_allocation(bs, view.steps)
    for alloc in bs.allocations:
        hm.allocations.append(_allocation(alloc, by_alloc.get(alloc.index, []), t, alloc.index in view.held_whole))
    _choose(hm, by_alloc, budget)
    hm.spaces = _spaces(hm, report)
    return hm


_Slice = tuple[int, int, int, int, str, str, str | None]  # start, end, offset, size, key, instruction, shape


def _values_by_allocation(bs: BufferSet, steps: int) -> dict[int, list[_Slice]]:
    out: dict[int, list[_Slice]] = {}
    for v in bs.values_by_key.values():
        lr, index, size, offset = v.live_range, v.allocation, v.size, v.offset
        if lr is None or index is None or size is None or offset is None or lr[0] > lr[1] or lr[0] >= steps:
            continue
        out.setdefault(index, []).append((lr[0], min(lr[1], steps - 1), offset, size, v.key, v.instruction, v.shape))
    return out


def _allocation(alloc: Allocation, vals: list[_Slice], t: int | None, whole: bool) -> HeapAllocation:
    category = "thread-local" if alloc.thread_local else category_of(alloc)
    live = [x for x in vals if t is not None and x[0] <= t <= x[1]]
    in_use = union_bytes((x[2], x[2] + x[3]) for x in live)
    held = alloc.size if whole else in_use
    pads: dict[tuple[int, int], int] = {}  # each slice once, with the most padding of the values sharing it
    for x in live:
        pads[(x[2], x[3])] = max(pads.get((x[2], x[3]), 0), _padding(x[6], x[3]) or 0)
    padding = sum(pads.values())
    kinds = ", ".join(alloc.kinds()) or "temp"
    return HeapAllocation(alloc.index, alloc.size, alloc.color, category, kinds, len(vals), held, in_use, padding)


def _padding(shape: str | None, size: int) -> int | None:
    s = parse_shape(shape) if shape else None
    if s is None or not s.is_array:
        return None
    b = size_of(s)
    return size - b if b is not None else None


def _choose(hm: HeapMap, by_alloc: dict[int, list[_Slice]], budget: int) -> None:
    """Fill ``hm.drawn`` within ``budget`` rectangles (a band counts as one) and count what is left out."""
    t = hm.peak_step
    candidates = [a for a in hm.allocations if a.category != "thread-local" and (a.values or a.held_at_peak)]
    hm.unranged = sum(1 for a in hm.allocations if a.category != "thread-local") - len(candidates)
    candidates.sort(key=lambda a: (a.held_at_peak == 0, -a.size, a.index))
    chosen: list[HeapAllocation] = []
    cap = max(1, budget // 4)  # one allocation of many small values must not take the whole map
    for a in candidates:
        if budget <= 0:
            hm.left_out_allocations += 1
            hm.left_out_bytes += a.size
            hm.left_out_held += a.held_at_peak > 0
            hm.left_out_values += a.values
            continue
        budget -= 1
        vals = by_alloc.get(a.index, [])
        room = min(budget, cap)
        if len(vals) > room:
            vals = sorted(vals, key=lambda x: (not (t is not None and x[0] <= t <= x[1]), -x[3], x[4]))
            a.left_out = len(vals) - room
            hm.left_out_values += a.left_out
            vals = vals[:room]
        budget -= len(vals)
        a.blocks = [Block(x[4], x[5], x[0], x[1], x[2], x[3], x[6], _padding(x[6], x[3])) for x in vals]
        a.blocks.sort(key=lambda b: (b.start, b.offset, b.key))
        chosen.append(a)
    order = {c: i for i, c in enumerate(HEAP_CATEGORIES)}
    chosen.sort(key=lambda a: (order[a.category], -a.size, a.index))
    for a in chosen:
        drawn = hm.drawn.setdefault(a.color, [])
        a.base = drawn[-1].base + drawn[-1].size if drawn else 0
        drawn.append(a)
    hm.drawn = dict(sorted(hm.drawn.items()))


def _spaces(hm: HeapMap, report: PeakReport) -> list[MemorySpace]:
    view = report.allocated
    out = []
    for color in sorted({a.color for a in hm.allocations}):
        allocs = [a for a in hm.allocations if a.color == color]
        series = view.by_color.get(color, [])
        best = max(series, default=0)
        out.append(
            MemorySpace(
                color,
                report.space_name(color),
                len(allocs),
                sum(a.size for a in allocs),
                sum(a.size for a in allocs if a.category == "thread-local"),
                sum(a.held_at_peak for a in allocs if a.category != "thread-local"),
                sum(a.fragmentation for a in allocs),
                sum(a.padding_at_peak for a in allocs),
                series.index(best) if best else None,
                best,
            )
        )
    return out


def peak_state_json(hm: HeapMap, space_name) -> dict:
    """The allocations and memory spaces at the allocated peak as data: the keys ``hlo-lsp peak --format json``
    adds to ``allocated`` (``fragmentation``, ``padding``, ``thread_local_bytes``, ``allocations``) and at the
    top (``memory_spaces``). ``space_name`` names a colour."""
    allocations = [
        {
            "index": a.index,
            "size": a.size,
            "memory_space": space_name(a.color),
            "category": a.category,
            "kinds": a.kinds,
            "held": a.held_at_peak,
            "in_use": a.in_use_at_peak,
            "fragmentation": a.fragmentation,
            "padding": a.padding_at_peak,
        }
        for a in hm.allocations
    ]
    return {
        "fragmentation": hm.fragmentation,
        "padding": hm.padding,
        "thread_local_bytes": sum(s.thread_local_bytes for s in hm.spaces),
        "allocations": allocations,
        "memory_spaces": [s.as_json() for s in hm.spaces],
    }
