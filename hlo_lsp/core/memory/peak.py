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

Shapes, sources and categories of values: `values`. **The allocated view** (bytes actually reserved per step,
per memory colour and category, values sharing a buffer counted once): `allocated`. `analyse_peak` puts both
views together in one `PeakReport`.

Nothing here raises on odd input: a value whose shape is unknown weighs 0 and is named in `PeakReport.problems`.
"""

from __future__ import annotations

import pickle
from array import array
from dataclasses import dataclass, field
from itertools import compress

from hlo_lsp.core.buffers.bufferset import BufferSet
from hlo_lsp.core.buffers.records import Allocation
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.memory.allocated import MAX_STEPS, AllocatedView, allocated_view
from hlo_lsp.core.memory.figures import Figures, reconcile
from hlo_lsp.core.memory.values import (
    CATEGORIES,
    LiveValue,
    Shapes,
    Sources,
    category_of,
    live_value,
    size_of,
    value_json,
)
from hlo_lsp.core.process import turns


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
class PeakReport:
    xla: XlaPeak
    allocated: AllocatedView
    sequence: list[str]  # instruction name of each step ("" where the dump lists none)
    dump_peak_step: int | None  # N as the dump printed it
    dump_total: int | None  # the printed total of the peak breakdown (current dumps)
    problems: list[str] = field(default_factory=list)
    memory_spaces: dict[int, str] = field(default_factory=dict)  # colour -> the memory-usage report's name
    figures: Figures | None = None  # the three figures reconciled (`figures.reconcile`)
    buffers: BufferSet | None = field(default=None, repr=False)  # the joined buffer set it was computed from
    sources: Sources | None = field(default=None, repr=False)  # the Python line of each instruction (memoised)

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
            "live_at_peak": [value_json(v) for v in live],
            "omitted": len(self.xla.live) - len(live),
            "allocated": {
                "peak_step": a.peak_step,
                "peak_bytes": a.peak_bytes,
                "peak_instruction": self.sequence[a.peak_step] or None
                if a.peak_step is not None and a.peak_step < len(self.sequence)
                else None,
                "live_at_peak": [value_json(v) for v in (a.live[:top] if top else a.live)],
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
            "figures": self.figures.as_json() if self.figures is not None else None,
            "problems": self.problems,
        }


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
    shapes = Shapes(bs, hlo)
    problems: list[str] = []
    ranged = [(v, lr) for v in bs.values_by_key.values() if (lr := v.live_range) is not None]
    triples = []
    for v, lr in ranged:
        w = size_of(shapes.full(v.instruction))
        if w is None:
            problems.append(f"{v.key}: shape of {v.instruction} unknown, counted as 0 bytes")
            w = 0
        triples.append((lr[0], lr[1], w))
    step, weight = xla_peak_step(triples)
    old = _is_old_layout(bs)
    sources = Sources(shapes, hlo)
    live: list[LiveValue] = []
    if step is not None:
        for v, lr in ranged:
            if lr[0] <= step <= lr[1]:
                own = shapes.own(v)
                b = size_of(shapes.full(v.instruction)) if old else size_of(own)
                live.append(live_value(v, lr, b or 0, own, sources))
    live.sort(key=lambda x: (-x.bytes, x.key))
    view = allocated_view(bs, shapes, sources)
    sources.live.clear()  # the two peaks share their objects now; the report keeps no index of them
    _label_allocations(live + view.live, bs, hlo, sources)
    report = PeakReport(
        xla=XlaPeak(step, weight, live, "old" if old else "current"),
        allocated=view,
        sequence=_sequence(bs),
        dump_peak_step=bs.peak_step,
        dump_total=_dump_total(bs),
        problems=problems,
        memory_spaces={t.color: t.memory_space for t in bs.memory_report},
        buffers=bs,
        sources=sources,
    )
    report.figures = reconcile(live, step, view, bs, report.sequence)
    shapes.forget()  # the report's sweeps are done; its hovers look up a value's source now and then
    if report.allocated.steps >= MAX_STEPS:
        problems.append(f"live ranges reach past step {MAX_STEPS:,}; the per-step view stops there")
    return report


def _label_allocations(values: list[LiveValue], bs: BufferSet, hlo: HloModule | None, sources: Sources) -> None:
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


def peak_of_bundle(bundle) -> PeakReport | None:
    """The report of a workspace `ModuleBundle`; None when it has no buffer files."""
    if bundle is None or bundle.buffers is None:
        return None
    hlo = bundle.hlo.hlo if bundle.hlo is not None else None
    return analyse_peak(bundle.buffers, hlo)


# ------------------------------------------------------------------------------------------------ made elsewhere

PARTS_CHUNK = 1_024  # live values pickled together: each chunk is loaded in one C call of about a millisecond


@dataclass(slots=True)
class ReportParts:
    """A report as a forked child sends it back (`detached`): without the objects the parent has already (the
    buffer set, the module, the step names, the sources' memos), its live values pickled a chunk at a time (at
    each peak the same objects mostly: each is sent once, the peaks list them by number)."""

    report: PeakReport
    chunks: list[bytes]
    xla: array  # the XLA peak's values, by number in the chunks
    allocated: array  # the allocated peak's
    unresolved: bytearray  # 1 for a value whose source was not looked up yet


def detached(report: PeakReport | None) -> ReportParts | None:
    """``report`` as `ReportParts` (in the child that made it: the report is taken apart)."""
    if report is None:
        return None
    values: list[LiveValue] = []
    number: dict[int, int] = {}
    for v in (*report.xla.live, *report.allocated.live):
        if id(v) not in number:
            number[id(v)] = len(values)
            values.append(v)
    unresolved = bytearray(len(values))
    for k, v in enumerate(values):
        if v._source_of is not None:
            unresolved[k] = 1
            v._source_of = None  # (a method of the child's `Sources`: the parent binds its own)
    parts = ReportParts(
        report,
        [
            pickle.dumps(values[i : i + PARTS_CHUNK], pickle.HIGHEST_PROTOCOL)
            for i in range(0, len(values), PARTS_CHUNK)
        ],
        array("i", [number[id(v)] for v in report.xla.live]),
        array("i", [number[id(v)] for v in report.allocated.live]),
        unresolved,
    )
    report.xla.live, report.allocated.live = [], []
    report.buffers = report.sources = None
    report.sequence = []
    return parts


def attached(parts: ReportParts, bs: BufferSet, hlo: HloModule | None) -> PeakReport:
    """The report of ``parts`` made whole again on this process's buffer set and module: its values loaded a
    chunk at a time (a request goes first between two), their names the buffer set's own strings, their sources
    looked up here when asked (`Sources`)."""
    report = parts.report
    sources = Sources(Shapes(bs, hlo), hlo)
    by_key = bs.values_by_key
    values: list[LiveValue] = []
    for chunk in parts.chunks:
        got: list[LiveValue] = pickle.loads(chunk)
        for v in got:
            b = by_key.get(v.key)
            if b is not None:  # the same text as the buffer set's strings: share them
                v.key, v.instruction = b.key, b.instruction
                if v.shape is not None and v.shape == b.shape:
                    v.shape = b.shape
        values += got
        turns.give_way()
    bound = sources.bound_of
    for k in compress(range(len(values)), parts.unresolved):
        values[k]._source_of = bound
    report.xla.live = [values[k] for k in parts.xla]
    report.allocated.live = [values[k] for k in parts.allocated]
    report.sequence = _sequence(bs)
    report.buffers, report.sources = bs, sources
    return report
