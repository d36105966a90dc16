"""Code lenses: memory facts above the lines they are about.

- Each allocation header (assignment listing or old single file): its share of all allocated bytes, its value
  count, and how much of it is in use at the allocated view's peak (``41% of total, 12 values, 3.1MiB of 4.0MiB in
  use at the peak``).
- Each computation header in HLO text: its share of XLA's peak (bytes of the values its instructions define that
  are live at the peak step); computations with nothing live there get no lens.
- The peak step: the ``Live ranges at N (peak)`` line, the ``N:name`` line of the InstructionSequence and the
  peak instruction in HLO text, each with the command that opens the memory timeline, one that opens the heap
  map, and the largest source lines at the peak (`peak_groups`: click for every grouping).

The peak report of a module is computed once per joined buffer set (`report_for`) and reused by every request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hlo_lsp.core import kinds
from hlo_lsp.core.buffers.bufferset import BufferSet
from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.memory.allocated import allocation_in_use
from hlo_lsp.core.memory.peak import PeakReport, ReportParts, attached, detached, peak_of_bundle
from hlo_lsp.core.process import fork, turns
from hlo_lsp.core.shapes import human_size
from hlo_lsp.core.workspace import ModuleBundle, Workspace
from hlo_lsp.ide import peak_groups
from hlo_lsp.ide.passes import lenses as pass_lenses

SHOW_TIMELINE = "hlo.showMemoryTimeline"
SHOW_HEAP_MAP = "hlo.showHeapMap"
_lock = threading.Lock()
log = logging.getLogger("hlo_lsp")


@dataclass(frozen=True, slots=True)
class Lens:
    range: Range
    title: str
    command: str = ""  # "" for a lens that only informs
    arguments: tuple = ()


# A buffer set of this many values has its peak report made in a forked child (`_made_in_child`): made here,
# the 23 MB benchmark module's (37,000 values, two seconds of work) left the server 10-20 MB larger than the same
# session without it (the report itself keeps 7.5 MB; the rest were the heap's pages its work left part-used)
CHILD_MIN_VALUES = 20_000
CHILD_TIMEOUT_S = 60.0  # a child not done by then is stopped, and the report made here
CHILD_NICE = 5  # background work: the parent's requests first


def report_for(
    bundle: ModuleBundle, locks: Sequence[object] = (), ready: Callable[[], object] | None = None
) -> PeakReport | None:
    """The bundle's peak report, computed once per bundle (kept in its `memo`, so it goes when the bundle
    does: a module-wide cache kept up to 32 superseded buffer sets alive); None without buffer files. A large
    one is made in a forked child (``locks``: those the child may take, `Workspace.fork_locks`; ``ready``: what
    to wait for before the fork, `process.fork.start`)."""
    bs = bundle.buffers
    if bs is None:
        return None
    with _lock:
        if "peak_report" in bundle.memo:
            return bundle.memo["peak_report"]
    report = _made_in_child(bundle, bs, locks, ready) if len(bs.values_by_key) >= CHILD_MIN_VALUES else None
    if report is None:
        report = peak_of_bundle(bundle)
    with _lock:
        bundle.memo["peak_report"] = report
    return report


_making: set[int] = set()  # the bundles (by id) whose report a thread of `report_or_start` is making


def report_or_start(bundle: ModuleBundle, locks: Sequence[object] = ()) -> tuple[bool, PeakReport | None]:
    """For a request answered on the event loop (a hover): (True, the bundle's report) when it is made, or can be
    made at once (a buffer set under `CHILD_MIN_VALUES`); else (False, None), a thread of its own making it
    meanwhile (the 23 MB benchmark module's takes 1.2 s, which a hover on the peak line of a buffer file, in an
    editor that asks for no lenses, spent on the event loop while every other request waited)."""
    bs = bundle.buffers
    if bs is None:
        return True, None
    with _lock:
        if "peak_report" in bundle.memo:
            return True, bundle.memo["peak_report"]
        large = len(bs.values_by_key) >= CHILD_MIN_VALUES
        start = large and id(bundle) not in _making
        if start:
            _making.add(id(bundle))
    if not large:
        return True, report_for(bundle, locks)
    if start:

        def make() -> None:
            try:
                with turns.background():
                    report_for(bundle, locks)
            except Exception:  # noqa: BLE001 - logged; the next hover starts it again
                log.exception("peak report failed")
            finally:
                with _lock:
                    _making.discard(id(bundle))

        threading.Thread(target=make, name="hlo-lsp-peak-report", daemon=True).start()
    return False, None


def _made_in_child(
    bundle: ModuleBundle, bs: BufferSet, locks: Sequence[object], ready: Callable[[], object] | None
) -> PeakReport | None:
    """The bundle's report made by a forked child and sent back in parts (`peak.detached`, `peak.attached`); None
    when no child could make it (not Linux, in a child already, or it failed or took too long)."""
    if fork.in_child():
        return None
    child = fork.start(
        lambda _: detached(peak_of_bundle(bundle)),
        None,
        locks=[*locks, _lock],
        timeout=CHILD_TIMEOUT_S,
        freeze=False,
        nice=CHILD_NICE,
        ready=ready,
    )
    parts = fork.result(child)
    if not isinstance(parts, ReportParts):
        return None
    return attached(parts, bs, bundle.hlo.hlo if bundle.hlo is not None else None)


def module_report(ws: Workspace, path: str, ready: Callable[[], object] | None = None) -> PeakReport | None:
    """The peak report of ``path``'s module (`report_for` its bundle); None when it cannot be read or has no
    buffer files."""
    found = ws.module(path)
    return report_for(found[1], ws.fork_locks(), ready) if found is not None else None


def fork_locks() -> list:
    """The lock of the bundles' peak reports (held across a fork: see `process.fork.start`)."""
    return [_lock]


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "0%"


def code_lenses(ws: Workspace, path: str) -> list[Lens]:
    """Every lens of ``path``: its buffer facts, and its place in a pass-by-pass dump (`ide.passes`)."""
    out: list[Lens] = [Lens(x.range, x.title, x.command, x.arguments) for x in pass_lenses(ws, path)]
    found = ws.module(path)
    if found is None:
        return _sorted(out)
    a, bundle = found
    report = report_for(bundle, ws.fork_locks())
    if report is None:
        return _sorted(out)
    if a.kind == kinds.HLO and a.hlo is not None:
        out += _hlo_lenses(a.hlo, report, path)
    elif a.buffers is not None:
        out += _allocation_lenses(a.buffers, bundle.buffers, report)
        out += _peak_lenses(a.buffers, a.lines, report, path)
    return _sorted(out)


def _sorted(out: list[Lens]) -> list[Lens]:
    out.sort(key=lambda x: (x.range.start_line, x.range.start_col))
    return out


def file_lenses(ws: Workspace, path: str) -> list[Lens]:
    """The lenses ``path``'s own text gives, before its siblings are joined (the server answers these first
    and asks for the lenses again once the join is done): an allocation's share of all allocated bytes and its
    value count, and the peak step's timeline command. An HLO module has none: its lenses need the buffer files."""
    a = ws.try_analysis(path)
    if a is None or a.buffers is None:
        return []
    doc = a.buffers
    out = [Lens(Range(ln, 0, ln, end), title) for ln, end, title in allocation_titles(doc)]
    if doc.peak_step is not None:
        title = f"XLA peak at step {doc.peak_step} (the buffer files beside it are being read) · show timeline"
        out += _timeline_lenses(doc, a.lines, doc.peak_step, title, path)
    out.sort(key=lambda x: (x.range.start_line, x.range.start_col))
    return out


def allocation_titles(doc) -> list[tuple[int, int, str]]:
    """(line, end column of the ``allocation N`` token, title) of each allocation lens of `file_lenses`, in line
    order, without a `Lens` each (23,576 of them in the benchmark's assignment file). A title holds digits,
    letters, ``%``, ``,`` and spaces only."""
    A = doc.allocations  # by column (`columns.Allocations`): no allocation made
    sizes = A.ints("size")
    whole = sum(sizes)
    return [
        (ln, end, f"{pct(size, whole)} of total, {_values(n)}")
        for ln, end, size, n in zip(A.line, A.name_end, sizes, A.values)
    ]


def _values(n: int) -> str:
    return f"{n} value{'s' if n != 1 else ''}"


def _peak_title(report: PeakReport) -> str:
    x, al = report.xla, report.allocated
    t = f"XLA peak at step {x.step}: {human_size(x.bytes)} live in {len(x.live)} values"
    if al.peak_step is not None:
        t += f" · allocated peak at step {al.peak_step}: {human_size(al.peak_bytes)}"
    return t + " · show timeline"


def _allocation_lenses(doc, bs, report: PeakReport) -> list[Lens]:
    if not doc.allocations:
        return []
    whole = sum(x.size for x in bs.allocations)
    step = report.allocated.peak_step
    in_use = allocation_in_use(bs, step) if step is not None else {}
    out = []
    for alloc in doc.allocations:
        used = in_use.get(alloc.index, 0)
        title = (
            f"{pct(alloc.size, whole)} of total, {_values(len(alloc.assignments))}, "
            f"{human_size(used)} of {human_size(alloc.size)} in use at the allocated peak (step {step})"
        )
        out.append(Lens(alloc.range, title))
    return out


def _peak_lenses(doc, lines, report: PeakReport, path: str) -> list[Lens]:
    out = []
    for rng in _peak_ranges(doc, lines, report.xla.step):
        out += _peak_step_lenses(rng, report, path)
    return out


def _peak_step_lenses(rng: Range, report: PeakReport, path: str) -> list[Lens]:
    """On one peak-step line: the timeline, the heap map and the largest source lines (all groupings)."""
    out = [Lens(rng, _peak_title(report), SHOW_TIMELINE, (path,)), Lens(rng, "heap map", SHOW_HEAP_MAP, (path,))]
    groups = peak_groups.lens_title(report)
    if groups is not None:
        out.append(Lens(rng, groups, peak_groups.PEAK_GROUPS, (path,)))
    return out


def _peak_ranges(doc, lines, step: int | None) -> list[Range]:
    """The ``Live ranges at N (peak)`` line and ``step``'s line of the InstructionSequence."""
    out = []
    if doc.peak_line is not None:
        ln = doc.peak_line
        out.append(Range(ln, 0, ln, len(lines[ln]) if ln < len(lines) else 0))
    return out + [s.range for s in doc.sequence if s.step == step]


def _timeline_lenses(doc, lines, step: int | None, title: str, path: str) -> list[Lens]:
    """``title`` with the timeline command on the ``Live ranges at N (peak)`` line and on ``step``'s line of the
    InstructionSequence."""
    return [Lens(rng, title, SHOW_TIMELINE, (path,)) for rng in _peak_ranges(doc, lines, step)]


def _hlo_lenses(mod, report: PeakReport, path: str) -> list[Lens]:
    out = []
    total = report.xla.bytes
    by_comp: dict[int, tuple[int, int]] = {}
    for v in report.xla.live:
        ins = mod.instruction(v.instruction)
        if ins is None:
            continue
        comp = mod.computation_of(ins)
        if comp is None:
            continue
        b, n = by_comp.get(comp.line, (0, 0))
        by_comp[comp.line] = (b + v.bytes, n + 1)
    for comp in mod.computations:
        if comp.line in by_comp:
            b, n = by_comp[comp.line]
            out.append(
                Lens(
                    comp.name_range,
                    f"{pct(b, total)} of the peak: {human_size(b)} in {n} "
                    f"value{'s' if n != 1 else ''} live at step {report.xla.step}",
                )
            )
    step = report.xla.step
    if step is not None and step < len(report.sequence):
        ins = mod.instruction(report.sequence[step])
        if ins is not None:
            out += _peak_step_lenses(ins.name_range, report, path)
    return out
