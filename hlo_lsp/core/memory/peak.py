"""Peak memory of one module from its dump files: XLA's own peak reproduced exactly, and the allocated view.

**XLA's view** follows ``HloLiveRange::ComputePeakMemoryMoment`` (xla/hlo/utils/hlo_live_range.cc): every value
with a live range ``[start, end]`` adds the events ``(start, add)`` and ``(end + 1, remove)``; events sort by time
with adds before removes; each value weighs ``ShapeUtil::ByteSizeOf`` of its *defining instruction's full shape*
with 8-byte pointers (so every element ``x{i}`` of a tuple-shaped instruction weighs the tuple's pointer table);
the peak is the first moment the running sum strictly exceeds the best so far. Because the sum only grows during
the adds of one time and only shrinks during its removes, that is the first time ``t`` whose sum after its adds
(values with ``start <= t <= end + 1``) beats every earlier time; one sort and one sweep, O(n log n).

The bytes XLA prints under ``Live ranges at N (peak)`` are another measure, over the values live at N in the
closed sense (``start <= N <= end``): current XLA prints each with ``ByteSizeOf`` of the value's own shape (their
sum is the total under ``Stack trace breakdown for peak usage``); older dumps print the bare instruction name with
its instruction's full shape. `XlaPeak.live` carries that printed measure.

Shapes come, in this order, from the module's HLO text (the instruction's line), the ``from instruction:`` text
of the used-values listing, the ``{}`` value of the allocation listing, and the value's own listed shape for a
non-tuple value; values living only in called computations are often absent from the allocation listing.

**The allocated view** counts bytes actually reserved: at step ``t`` an allocation holds the union of the byte
ranges ``[offset, offset + size)`` of its values live at ``t`` (closed range), so values sharing a buffer are
counted once. Sums are kept per step, per memory colour and per category (``parameter``, ``output``,
``constant``, ``temporary``); its peak is the first step with the largest total, and each value live there
carries its padding (assigned size minus ``ByteSizeOf`` of its shape, the TPU tiling blow-up).

Nothing here raises on odd input: a value whose shape is unknown weighs 0 and is named in `PeakReport.problems`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hlo_lsp.core.buffers.bufferset import BufferSet, BufferValue
from hlo_lsp.core.buffers.records import Allocation
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.source import SourceFrame, instruction_source
from hlo_lsp.core.hlo.text import INSTR
from hlo_lsp.core.shapes import Shape, SizeError, byte_size, parse_shape, shape_text

CATEGORIES = ("parameter", "output", "constant", "temporary")


@dataclass(frozen=True, slots=True)
class ValueSource:
    """Where the program made a value: XLA's ``op_name`` and the Python stack, innermost frame first."""

    op_name: str | None
    frames: tuple[SourceFrame, ...] = ()
    via: str | None = None  # set when borrowed: the fused computation's instruction whose metadata it is

    def label(self) -> str:
        """``file.py:12 (fn)`` of the innermost frame, else the op_name, else ``""``; ``(via ...)`` when the
        value's own instruction names no source and its fused computation's did."""
        text = self.frames[0].label() if self.frames else (self.op_name or "")
        return f"{text} (via {self.via})" if text and self.via else text

    def as_json(self) -> dict:
        return {
            "op_name": self.op_name,
            "file": self.frames[0].file if self.frames else None,
            "line": self.frames[0].line if self.frames else None,
            "function": self.frames[0].function if self.frames else None,
            "via": self.via,
        }


@dataclass(slots=True)
class LiveValue:
    """One value live at a peak."""

    key: str  # canonical value key ``fusion.10{0}``
    instruction: str
    bytes: int  # XLA's printed measure (XLA view) or the assigned size (allocated view)
    shape: str | None  # the value's own shape
    allocation: int | None
    live_range: tuple[int, int]
    size: int | None = None  # assigned size in the allocation listing
    padding: int | None = None  # assigned size minus ByteSizeOf(own shape); None when either is unknown
    category: str | None = None  # of its allocation (`CATEGORIES`); None outside every allocation
    param: str | None = None  # in an entry parameter's allocation: that argument (its op_name, ``params['w']``)
    _source: ValueSource | None = field(default=None, repr=False, compare=False)
    _source_of: Callable[[str], ValueSource | None] | None = field(default=None, repr=False, compare=False)

    @property
    def source(self) -> ValueSource | None:
        """Where the program made the value; found on first use (a peak lists thousands of values, and finding
        each one's Python line parses its instruction's metadata, while a code lens needs only the totals)."""
        if self._source_of is not None:
            self._source = self._source_of(self.instruction)
            self._source_of = None
        return self._source


@dataclass(slots=True)
class XlaPeak:
    step: int | None  # None when no value has a live range
    weight: int  # XLA's internal running sum at the peak (instruction full shapes, end + 1 semantics)
    live: list[LiveValue]  # values live at ``step`` (closed), largest printed bytes first
    layout: str  # "current" (values, own shapes) or "old" (instruction names, full shapes)

    @property
    def bytes(self) -> int:
        return sum(v.bytes for v in self.live)


@dataclass(slots=True)
class AllocatedView:
    steps: int  # number of steps (live-range max + 1)
    total: list[int]
    by_category: dict[str, list[int]]
    by_color: dict[int, list[int]]
    peak_step: int | None
    peak_bytes: int
    live: list[LiveValue]  # at peak_step, largest assigned size first


@dataclass(slots=True)
class PeakReport:
    xla: XlaPeak
    allocated: AllocatedView
    sequence: list[str]  # instruction name of each step ("" where the dump lists none)
    dump_peak_step: int | None  # N as the dump printed it
    dump_total: int | None  # the printed total of the peak breakdown (current dumps)
    problems: list[str] = field(default_factory=list)
    memory_spaces: dict[int, str] = field(default_factory=dict)  # colour -> the memory-usage report's name

    @property
    def peak_instruction(self) -> str | None:
        """The instruction scheduled at XLA's peak step (None when the dump lists no sequence there)."""
        step = self.xla.step
        if step is None or step >= len(self.sequence):
            return None
        return self.sequence[step] or None

    def space_name(self, color: int) -> str:
        """A memory colour as the memory-usage report names it (``default``, ``S(1)`` ...), else ``color N``."""
        return self.memory_spaces.get(color) or f"color {color}"

    def as_json(self, top: int | None = None) -> dict:
        """The report as data: every value live at each peak unless ``top`` cuts the lists (then ``omitted``
        says how many XLA-peak values were left out), and the reserved bytes of every step."""
        live = self.xla.live[:top] if top else self.xla.live
        a = self.allocated
        return {
            "peak_step": self.xla.step,
            "peak_bytes": self.xla.bytes,
            "peak_instruction": self.peak_instruction,
            "live_at_peak": [_value_json(v) for v in live],
            "omitted": len(self.xla.live) - len(live),
            "allocated": {
                "peak_step": a.peak_step,
                "peak_bytes": a.peak_bytes,
                "peak_instruction": self.sequence[a.peak_step] or None
                if a.peak_step is not None and a.peak_step < len(self.sequence)
                else None,
                "live_at_peak": [_value_json(v) for v in (a.live[:top] if top else a.live)],
                "steps": [
                    {
                        "step": t,
                        "bytes": a.total[t],
                        "by_category": {c: a.by_category[c][t] for c in CATEGORIES},
                        "by_memory_space": {self.space_name(c): col[t] for c, col in a.by_color.items()},
                    }
                    for t in range(len(a.total))
                ],
            },
            "dump": {"peak_step": self.dump_peak_step, "total": self.dump_total},
            "problems": self.problems,
        }


def _value_json(v: LiveValue) -> dict:
    return {
        "name": v.key,
        "bytes": v.bytes,
        "shape": v.shape,
        "allocation": v.allocation,
        "live_range": list(v.live_range),
        "size": v.size,
        "padding": v.padding,
        "category": v.category,
        "param": v.param,
        "source": v.source.as_json() if v.source else None,
    }


# ------------------------------------------------------------------------------------------------ shapes


class _Shapes:
    """Instruction and value shapes of one module, from the HLO text and the buffer listings (memoised)."""

    def __init__(self, bs: BufferSet, hlo: HloModule | None):
        self.bs, self.hlo = bs, hlo
        self._full: dict[str, Shape | None] = {}
        self._line: dict[str, object] = {}

    def detail(self, instruction: str):
        """The parsed instruction line (HLO text first, else ``from instruction:``); None when neither has it."""
        if instruction in self._line:
            return self._line[instruction]
        d = None
        if self.hlo is not None:
            ins = self.hlo.instruction(instruction)
            if ins is not None and ins.line < len(self.hlo.lines):
                d = parse_instruction_line(self.hlo.lines[ins.line])
        if d is None:
            for v in self.bs.values_of(instruction):
                if v.from_instruction:
                    cand = parse_instruction_line(v.from_instruction)
                    if cand is not None and cand.name.text == instruction:
                        d = cand
                        break
        self._line[instruction] = d
        return d

    def full(self, instruction: str) -> Shape | None:
        """The defining instruction's full shape; None when no file gives it."""
        if instruction in self._full:
            return self._full[instruction]
        s = None
        if instruction not in self._line and self.hlo is not None:
            # the shape alone, from the instruction pattern every reader shares (`text.INSTR`: the text between
            # ``=`` and the opcode), without the full parse of the line's operands and attributes (`detail`)
            ins = self.hlo.instruction(instruction)
            if ins is not None and ins.line < len(self.hlo.lines):
                m = INSTR.match(self.hlo.lines[ins.line])
                if m is not None and m.group(3) == instruction and m.group(4):
                    s = parse_shape(m.group(4))
        if s is None:
            d = self.detail(instruction)
            if d is not None and d.shape is not None:
                s = parse_shape(d.shape.text)
        if s is None:
            vals = self.bs.values_of(instruction)
            root = next((v for v in vals if v.index == () and v.shape), None)
            if root is not None and root.shape:
                s = parse_shape(root.shape)
            elif len(vals) == 1 and not vals[0].index and vals[0].shape:
                s = parse_shape(vals[0].shape)
                if s is not None and s.is_tuple:
                    s = None  # a tuple's {} value is not itself: its elements are unknown
        self._full[instruction] = s
        return s

    def own(self, v: BufferValue) -> Shape | None:
        """The value's own shape: its listed shape, else the full shape's subshape at its index."""
        if v.shape:
            s = parse_shape(v.shape)
            if s is not None:
                return s
        s = self.full(v.instruction)
        for i in v.index or ():
            if s is None or not s.is_tuple or not 0 <= i < len(s.tuple_shapes):
                return None
            s = s.tuple_shapes[i]
        return s


def _size(s: Shape | None) -> int | None:
    if s is None:
        return None
    b = byte_size(s, 8)
    return None if isinstance(b, SizeError) else b


# ------------------------------------------------------------------------------------------------ analysis


def xla_peak_step(ranges: list[tuple[int, int, int]]) -> tuple[int | None, int]:
    """(peak time, running sum there) of ``(start, end, weight)`` triples, exactly as
    ``ComputePeakMemoryMoment``; (None, 0) when the sum never exceeds 0."""
    events = [(s, 0, w) for s, _, w in ranges] + [(e + 1, 1, w) for _, e, w in ranges]
    events.sort(key=lambda ev: (ev[0], ev[1]))
    usage = best = 0
    when: int | None = None
    for t, is_end, w in events:
        usage += -w if is_end else w
        if best < usage:
            best, when = usage, t
    return when, best


def analyse_peak(bs: BufferSet, hlo: HloModule | None = None) -> PeakReport:
    """Both peaks of a joined buffer set (``hlo``: the module's after-optimizations text, when present)."""
    shapes = _Shapes(bs, hlo)
    problems: list[str] = []
    ranged = [(v, lr) for v in bs.values_by_key.values() if (lr := v.live_range) is not None]
    triples = []
    for v, lr in ranged:
        w = _size(shapes.full(v.instruction))
        if w is None:
            problems.append(f"{v.key}: shape of {v.instruction} unknown, counted as 0 bytes")
            w = 0
        triples.append((lr[0], lr[1], w))
    step, weight = xla_peak_step(triples)
    old = _is_old_layout(bs)
    sources = _Sources(shapes, hlo)
    live: list[LiveValue] = []
    if step is not None:
        for v, lr in ranged:
            if lr[0] <= step <= lr[1]:
                own = shapes.own(v)
                b = _size(shapes.full(v.instruction)) if old else _size(own)
                live.append(_live_value(v, lr, b or 0, own, sources))
    live.sort(key=lambda x: (-x.bytes, x.key))
    view = allocated_view(bs, shapes, sources)
    _label_allocations(live + view.live, bs, hlo, sources)
    report = PeakReport(
        xla=XlaPeak(step, weight, live, "old" if old else "current"),
        allocated=view,
        sequence=_sequence(bs),
        dump_peak_step=bs.peak_step,
        dump_total=_dump_total(bs),
        problems=problems,
        memory_spaces={t.color: t.memory_space for t in bs.memory_report},
    )
    if report.allocated.steps >= MAX_STEPS:
        problems.append(f"live ranges reach past step {MAX_STEPS:,}; the per-step view stops there")
    return report


def _label_allocations(values: list[LiveValue], bs: BufferSet, hlo: HloModule | None, sources: _Sources) -> None:
    """Set each value's allocation category and, in an entry parameter's allocation (donated buffers reused by
    later values included), the argument it holds: the parameter instruction's op_name, else ``parameter N``."""
    allocs: dict[int, Allocation | None] = {}
    for v in values:
        if v.allocation is not None and v.allocation not in allocs:
            allocs[v.allocation] = bs.allocation(v.allocation)
    wanted = {a.parameter for a in allocs.values() if a is not None and a.parameter is not None}
    params: dict[int, str] = {}
    entry = hlo.entry if hlo is not None and wanted else None
    if hlo is not None and entry is not None:
        for i in entry.instructions:
            ins = hlo.make_instruction(i)
            if ins.opcode != "parameter":
                continue
            n = ins.parameter_number
            if n in wanted:
                d = sources.shapes.detail(ins.name)
                op = d.metadata.get("op_name") if d is not None and d.metadata else None
                params[n] = op.text.replace("\\'", "'") if op is not None else f"parameter {n}"
                if len(params) == len(wanted):
                    break
    for v in values:
        if v.allocation is None:
            continue
        alloc = allocs[v.allocation]
        v.category = category_of(alloc) if alloc is not None else "temporary"
        if alloc is not None and alloc.parameter is not None:
            v.param = params.get(alloc.parameter, f"parameter {alloc.parameter}")


def _live_value(
    v: BufferValue, live_range: tuple[int, int], nbytes: int, own: Shape | None, sources: _Sources
) -> LiveValue:
    unpadded = _size(own)
    padding = v.size - unpadded if v.size is not None and unpadded is not None else None
    return LiveValue(
        v.key,
        v.instruction,
        nbytes,
        v.shape or (shape_text(own) if own else None),
        v.allocation,
        live_range,
        v.size,
        padding,
        _source_of=sources.of,
    )


def _is_old_layout(bs: BufferSet) -> bool:
    if bs.peak_entries:
        return all(p.key is None for p in bs.peak_entries)
    return "single" in bs.docs


def _dump_total(bs: BufferSet) -> int | None:
    for doc in bs.docs.values():
        if doc.peak_breakdown_total is not None:
            return doc.peak_breakdown_total
    if bs.peak_entries and bs.peak_entries[-1].cumulative is not None:
        return bs.peak_entries[-1].cumulative
    return None


def _sequence(bs: BufferSet) -> list[str]:
    if not bs.sequence:
        return []
    n = max(s.step for s in bs.sequence) + 1
    out = [""] * min(n, MAX_STEPS)
    for s in bs.sequence:
        if s.step < len(out):
            out[s.step] = s.name
    return out


class _Sources:
    """Python source of each instruction (memoised)."""

    def __init__(self, shapes: _Shapes, hlo: HloModule | None):
        self.shapes, self.hlo = shapes, hlo
        self._memo: dict[str, ValueSource | None] = {}

    def of(self, instruction: str) -> ValueSource | None:
        """op_name and frames of the defining instruction; None when its line carries no metadata."""
        if instruction in self._memo:
            return self._memo[instruction]
        d = self.shapes.detail(instruction)
        out = None
        if d is not None and d.metadata:
            frames: list[SourceFrame] = []
            if self.hlo is not None:
                frames = instruction_source(self.hlo, d)
            elif "source_file" in d.metadata and "source_line" in d.metadata:
                ln = d.metadata["source_line"].text
                if ln.isdigit() and len(ln) < 12:
                    frames = [SourceFrame(d.metadata["source_file"].text, None, int(ln))]
            op = d.metadata.get("op_name")
            if op is not None or frames:
                out = ValueSource(op.text if op else None, tuple(frames))
        if out is None and self.hlo is not None:
            out = self._fused(instruction)
        self._memo[instruction] = out
        return out

    def _fused(self, instruction: str) -> ValueSource | None:
        """For a fusion whose line has no metadata: the fused computation's root's source, else its first
        instruction with a stack frame (else with an op_name), marked ``via`` that instruction."""
        hlo = self.hlo
        if hlo is None:
            return None
        ins = hlo.instruction(instruction)
        if ins is None or ins.opcode != "fusion" or not ins.called:
            return None
        k = hlo.computation_by_name.get(ins.called[0])
        if k is None:
            return None
        comp = hlo.computations[k]
        order = ([comp.root] if comp.root is not None else []) + [i for i in comp.instructions if i != comp.root]
        named: ValueSource | None = None
        for i in order:
            inner = hlo.make_instruction(i)
            d = parse_instruction_line(hlo.lines[inner.line]) if inner.line < len(hlo.lines) else None
            if d is None or not d.metadata:
                continue
            frames = instruction_source(hlo, d)
            op = d.metadata.get("op_name")
            where = f"{'root ' if i == comp.root else ''}{inner.name} of {comp.name}"
            if frames or i == comp.root and op is not None:
                return ValueSource(op.text if op else None, tuple(frames), via=where)
            if named is None and op is not None:
                named = ValueSource(op.text, (), via=where)
        return named


def category_of(alloc) -> str:
    """``parameter``, ``output``, ``constant`` or ``temporary`` for an Allocation."""
    if alloc.is_parameter:
        return "parameter"
    if alloc.output_shape is not None or alloc.maybe_live_out:
        return "output"
    if alloc.constant:
        return "constant"
    return "temporary"


MAX_STEPS = 1 << 20  # per-step lists stop here; real programs have far fewer steps


def allocated_view(bs: BufferSet, shapes: _Shapes | None = None, sources: _Sources | None = None) -> AllocatedView:
    """Bytes reserved per step (union of live slices per allocation), per category and colour, and its peak."""
    shapes = shapes or _Shapes(bs, None)
    sources = sources or _Sources(shapes, None)
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
    d_color: dict[int, list[int]] = {}
    for index, vals in by_alloc.items():
        alloc = bs.allocation(index)
        cat = category_of(alloc) if alloc is not None else "temporary"
        color = alloc.color if alloc is not None else (vals[0].value.color or 0)
        dc = d_color.setdefault(color, [0] * (n + 1))
        for t0, t1, b in _reserved_segments(vals, n):
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
                    live.append(_live_value(sl.value, sl.live_range, sl.size or 0, shapes.own(sl.value), sources))
    live.sort(key=lambda x: (-x.bytes, x.key))
    return AllocatedView(n, total, by_category, by_color, peak_step, peak, live)


class _Slice:
    """One value's facts the allocated view sweeps over, read once from the files' columns."""

    __slots__ = ("value", "key", "live_range", "offset", "size")

    def __init__(self, value: BufferValue, live_range: tuple[int, int], offset: int, size: int):
        self.value, self.key, self.live_range, self.offset, self.size = value, value.key, live_range, offset, size


def _running(diff: list[int], n: int) -> list[int]:
    out = [0] * n
    acc = 0
    for t in range(n):
        acc += diff[t]
        out[t] = acc
    return out


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

    __slots__ = ("_xs", "_size", "_len", "_cnt", "_cov")

    def __init__(self, pieces: list[tuple[int, int]]):
        xs = sorted({x for p in pieces for x in p})
        self._xs = {x: i for i, x in enumerate(xs)}
        size = 1
        while size < max(1, len(xs) - 1):
            size *= 2
        self._size = size
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
        elif i >= self._size:
            self._cov[i] = 0
        else:
            self._cov[i] = self._cov[2 * i] + self._cov[2 * i + 1]

    def add(self, piece: tuple[int, int], delta: int) -> None:
        """Insert (``delta`` 1) or remove (-1) the slice ``piece``."""
        s, e = piece
        if e <= s:
            return
        lo = self._xs[s] + self._size
        hi = self._xs[e] + self._size
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
    """Bytes of each allocation held at ``step``: the union of its live values' slices."""
    slices: dict[int, list[tuple[int, int]]] = {}
    for v in bs.values_by_key.values():
        if v.live_range and v.allocation is not None and v.size is not None and v.offset is not None:
            if v.live_range[0] <= step <= v.live_range[1]:
                slices.setdefault(v.allocation, []).append((v.offset, v.offset + v.size))
    return {index: union_bytes(sl) for index, sl in slices.items()}


def peak_of_bundle(bundle) -> PeakReport | None:
    """The report of a workspace `ModuleBundle`; None when it has no buffer files."""
    if bundle is None or bundle.buffers is None:
        return None
    hlo = bundle.hlo.hlo if bundle.hlo is not None else None
    return analyse_peak(bundle.buffers, hlo)
