"""What a pass did and where an instruction went: the diff of two consecutive files of a history, an instruction's
trace, and the list of a module's passes, as data, text (gcc-style ``path:line:`` links an editor opens) and JSON.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from hlo_lsp.core.passes.history import PassHistory, Version
from hlo_lsp.core.passes.names import PassFile


@dataclass(slots=True)
class ComputationDiff:
    computation: str
    added: list[tuple[str, int]] = field(default_factory=list)  # (name, 0-based line in the new file)
    removed: list[tuple[str, int]] = field(default_factory=list)  # (name, 0-based line in the old file)
    changed: list[tuple[str, int, int]] = field(default_factory=list)  # (name, old line, new line)
    status: str = "changed"  # "added" / "removed" when the whole computation is new or gone


@dataclass(slots=True)
class PassDiff:
    old: PassFile
    new: PassFile
    computations: list[ComputationDiff]
    by: str | None = None  # the pass whose work this is (`PassHistory.pass_at`)

    @property
    def counts(self) -> tuple[int, int, int]:
        return (
            sum(len(c.added) for c in self.computations),
            sum(len(c.removed) for c in self.computations),
            sum(len(c.changed) for c in self.computations),
        )

    def as_json(self) -> dict:
        return {
            "old": self.old.name,
            "new": self.new.name,
            "pass": self.by,
            "computations": [
                {
                    "computation": c.computation,
                    "status": c.status,
                    "added": [{"name": n, "line": ln + 1} for n, ln in c.added],
                    "removed": [{"name": n, "line": ln + 1} for n, ln in c.removed],
                    "changed": [{"name": n, "old_line": a + 1, "new_line": b + 1} for n, a, b in c.changed],
                }
                for c in self.computations
            ],
        }


def _computations(h: PassHistory, index: int) -> list[str]:
    return [c for b in h.steps[index].blocks if (c := h.blocks[b].computation) is not None]


def pass_diff(h: PassHistory, index: int) -> PassDiff:
    """What changed from the history's file ``index - 1`` to file ``index`` (``index`` ≥ 1)."""
    step, prev = h.steps[index], h.steps[index - 1]
    by: dict[str, ComputationDiff] = {}

    def of(c: str | None) -> ComputationDiff:
        key = c or "?"
        if key not in by:
            by[key] = ComputationDiff(key)
        return by[key]

    for n in step.added:
        at = h.locate(index, n)
        if at is not None:
            of(at[1]).added.append((n, at[0]))
    for n in step.removed:
        at = h.locate(index - 1, n)
        if at is not None:
            of(at[1]).removed.append((n, at[0]))
    for n in step.changed:
        old, new = h.locate(index - 1, n), h.locate(index, n)
        if old is not None and new is not None:
            of(new[1]).changed.append((n, old[0], new[0]))
    before, after = set(_computations(h, index - 1)), _computations(h, index)
    for c in after:
        if c not in before:
            of(c).status = "added"
    for c in before - set(after):
        of(c).status = "removed"
    order = {c: k for k, c in enumerate(after)}
    comps = sorted(by.values(), key=lambda d: (order.get(d.computation, len(order)), d.computation))
    for d in comps:
        d.added.sort(key=lambda t: t[1])
        d.removed.sort(key=lambda t: t[1])
        d.changed.sort(key=lambda t: t[2])
    return PassDiff(prev.file, step.file, comps, h.pass_at(index))


def _shown(path: str) -> str:
    """A path as the text views print it: relative to the working folder when that is shorter."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return rel if len(rel) < len(path) else path


def diff_text(d: PassDiff, limit: int = 200, paths: bool = False) -> str:
    """The diff as text: one section per computation, each instruction with its line in the old and new file
    (``old:12``; with ``paths``, ``/path/of/old:12``, which Neovim's ``gF`` opens), at most ``limit`` each; a
    computation added or removed whole is one row (``%fused_computation.3 (added, 5 instructions) new:40``, at its
    header: the fusion pass of a large program makes thousands)."""
    old, new = (d.old.path, d.new.path) if paths else ("old", "new")
    a, r, c = d.counts
    what = d.by or d.new.label()
    out = [
        f"{what}: +{a} -{r} ~{c} instructions",
        f"  old: {_shown(d.old.path)}",
        f"  new: {_shown(d.new.path)}",
    ]
    if not d.computations:
        out.append("  (no instruction changed)")
    one_row = False
    for comp in d.computations:
        whole = comp.added if comp.status == "added" else comp.removed if comp.status == "removed" else None
        was, one_row = (
            one_row,
            whole is not None and len(whole) == len(comp.added) + len(comp.removed) + len(comp.changed),
        )
        if not (was and one_row):
            out.append("")
        if whole is not None and one_row:
            # a computation made or dropped whole: one row, at its header (the line before its first instruction)
            side = new if comp.status == "added" else old
            at = f" {side}:{min(ln for _, ln in whole)}" if whole else ""
            count = f", {len(whole)} instruction{'s' if len(whole) != 1 else ''}" if whole else ""
            out.append(f"%{comp.computation} ({comp.status}{count}){at}")
            continue
        status = "" if comp.status == "changed" else f" ({comp.status})"
        out.append(f"%{comp.computation}{status}")
        rows = (
            [("+", n, f"{new}:{ln + 1}") for n, ln in comp.added]
            + [("-", n, f"{old}:{ln + 1}") for n, ln in comp.removed]
            + [("~", n, f"{old}:{a + 1} {new}:{b + 1}") for n, a, b in comp.changed]
        )
        width = min(40, max(len(n) for _, n, _ in rows) + 1) if rows else 0
        for sign, n, where in rows[:limit]:
            out.append(f"  {sign} %{n:{width}s} {where}")
        if len(rows) > limit:
            out.append(f"  ... {len(rows) - limit} more")
    return "\n".join(out) + "\n"


def trace_json(h: PassHistory, name: str, versions: list[Version]) -> dict:
    module = h.files[0].module if h.files else None
    return {"name": name, "module": module, "history": [v.as_json() for v in versions]}


def summary(name: str, versions: list[Version]) -> str:
    """``made by `algsimp` (file 0008), changed by `layout-assignment`, `fusion`; gone after `copy-insertion```
    (the issue's wording), and where a removed name's op_name and source went."""
    if not versions:
        return f"%{name} is in no file of this history"
    first = versions[0]
    if first.by is None and first.file.seq is None:
        text = "already in the input (before optimizations)"
    elif first.by is None:
        text = f"first in {first.file.label()}"
    else:
        text = f"made by `{first.by}` (file {first.file.seq_text})"
    changed: list[str] = []
    for v in versions:
        if v.change == "changed":
            p = v.by or v.file.label()
            if p not in changed:
                changed.append(p)
    if changed:
        text += ", changed by " + ", ".join(f"`{p}`" for p in changed)
    gone = next((v for v in versions if v.change == "removed"), None)
    if gone is not None:
        text += f"; gone after `{gone.by}`" if gone.by else f"; gone in {gone.file.label()}"
        if gone.successors:
            more = f" and {len(gone.successors) - 4} more" if len(gone.successors) > 4 else ""
            text += " (its op_name and source now on " + ", ".join(f"%{s}" for s in gone.successors[:4]) + more + ")"
    return text


def trace_text(h: PassHistory, name: str, versions: list[Version]) -> str:
    """The summary, then one row per file that made, changed or removed it (``path:line``); the files that left
    it as it was in between are one row per run (``--format json`` lists every file)."""
    out = [f"%{name}: {summary(name, versions)}"]
    k = 0
    while k < len(versions):
        v = versions[k]
        if v.change == "unchanged":
            j = k
            while j + 1 < len(versions) and versions[j + 1].change == "unchanged":
                j += 1
            first, last = _short_label(v.file), _short_label(versions[j].file)
            span = first if j == k else f"{first} to {last}"
            out.append(f"  {'unchanged':9s} {span} ({j - k + 1} file{'s' if j > k else ''})")
            k = j + 1
            continue
        where = f"{_shown(v.file.path)}:{v.line + 1}" if v.line is not None else _shown(v.file.path)
        comp = f"  in %{v.computation}" if v.computation and v.change != "removed" else ""
        out.append(f"  {v.change:9s} {v.file.label()}{comp}  {where}")
        k += 1
    return "\n".join(out) + "\n"


def _short_label(f: PassFile) -> str:
    return f.seq_text or ("before optimizations" if f.kind == "before" else "after optimizations")


def passes_text(h: PassHistory, folder: str) -> str:
    """The module's files in pass order with instruction and fusion counts and each one's change."""
    if not h.steps:
        return "no files\n"
    f0 = h.steps[0].file
    out = [f"module_{f0.module_id}.{f0.module}: {len(h.steps)} files in {folder}"]
    out.append(f"{'seq':>5}  {'pass (pipeline)':58s} {'instrs':>7} {'fusions':>7}  change")
    for s in h.steps:
        f = s.file
        seq = f.seq_text or "-"
        label = f.label()
        if f.seq_text and label.startswith(f.seq_text + " "):
            label = label[len(f.seq_text) + 1 :]
        change = s.change_text(first=s is h.steps[0])
        out.append(f"{seq:>5}  {label[:58]:58s} {s.instructions:>7} {s.fusions:>7}  {change}")
    return "\n".join(out) + "\n"


def passes_json(h: PassHistory) -> dict:
    f0 = h.files[0] if h.files else None
    return {
        "module": f0.module if f0 else None,
        "module_id": f0.module_id if f0 else None,
        "files": [
            {
                "seq": s.file.seq_text,
                "file": os.path.basename(s.file.path),
                "kind": s.file.kind,
                "pipeline": s.file.pipeline,
                "pass": s.file.after,
                "next": s.file.before,
                "step": s.file.step,
                "instructions": s.instructions,
                "fusions": s.fusions,
                "added": len(s.added),
                "removed": len(s.removed),
                "changed": len(s.changed),
                "same_text": s.same_text,
                "error": s.error,
            }
            for s in h.steps
        ],
    }
