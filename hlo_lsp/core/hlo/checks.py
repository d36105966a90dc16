"""Structural checks over the fast reader's model, for modules too large for the grammar pass.

The same rules (and codes) as the grammar's structural checks, computed from names alone: undefined operands,
unknown called computations, duplicate instruction names within a computation, duplicate computation names, two
ROOTs, and lines that are no well-formed instruction. `StructuralChecker` keeps the result per computation, so
after an edit only the edited computation is checked again (a set lookup per instruction; only edited lines are
parsed again, the others keep their parsed form).
"""

from __future__ import annotations

import threading

from hlo_lsp.core.diagnostics import Diagnostic, Range, error
from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import Computation, HloModule
from hlo_lsp.core.hlo.rows import (
    NAME,
    OPCODE,
    OPERANDS,
    ROOT,
    computation_rows,
    is_clean,
    operand_names,
    row_calls,
    table_lines,
)
from hlo_lsp.core.hlo.rules.summary import Summary, summarize
from hlo_lsp.core.process import fork as forked


def check_computation(mod: HloModule, c: Computation) -> list[Diagnostic]:
    """Errors XLA's parser would report inside computation ``c``; [] for a consistent computation.

    A computation of machine-written lines is first checked whole by set operations over its rows
    (`rows.is_clean`); only one that fails that (or is not of that form) is read line by line, which
    finds and places each error."""
    return check_and_summarize(mod, c)[0]


def check_and_summarize(mod: HloModule, c: Computation) -> tuple[list[Diagnostic], Summary | None]:
    """`check_computation`, and the verifier's `Summary` of ``c`` from the same rows (read once for both)."""
    rows = computation_rows(mod, c)
    calls = row_calls(rows, c.instructions.start, mod.lines, table_lines(mod)) if rows is not None else None
    summary = summarize(mod, c, rows, calls)
    if rows is not None and calls is not None and is_clean(rows, mod.computation_by_name, calls):
        return [], summary
    return _check_lines(mod, c, rows, calls), summary


def _check_lines(
    mod: HloModule, c: Computation, rows: list[tuple[str, ...]] | None = None, calls: dict[int, list[str]] | None = None
) -> list[Diagnostic]:
    """The errors of ``c`` one instruction at a time. With the computation's rows (and `row_calls`), names,
    ROOT flags, operands and calls come from them and only a line with an error is parsed (an error in an
    ENTRY of 50,000 instructions: milliseconds, not a parse of every line); the result is the same."""
    out: list[Diagnostic] = []
    names: set[str] = set()
    roots = 0
    make = mod.make_instruction
    span = c.instructions
    if rows is not None:
        heads = [(r[NAME], bool(r[ROOT])) for r in rows]
    else:
        heads = [(ins.name, ins.is_root) for ins in map(make, span)]
    for i, (name, is_root) in zip(span, heads):
        if name in names:
            out.append(
                error(
                    make(i).name_range, "duplicate-instruction", f"instruction `{name}` is defined twice in `{c.name}`"
                )
            )
        names.add(name)
        if is_root:
            roots += 1
            if roots == 2:
                out.append(
                    error(make(i).name_range, "multiple-roots", f"computation `{c.name}` has two ROOT instructions")
                )
    comps = mod.computation_by_name
    for k, i in enumerate(span):
        if rows is not None:
            r = rows[k]  # a row is always a readable instruction (the rows pass)
            ops = () if r[OPCODE] == "parameter" or r[OPCODE] == "constant" else operand_names(r[OPERANDS])
            bad_ops = [op for op in ops if op not in names]
            bad_calls = [cc for cc in (calls or {}).get(k, ()) if cc not in comps]
            if not bad_ops and not bad_calls:
                continue
            ins = make(i)
        else:
            out.extend(_line_errors(mod, c, make(i), names, comps))
            continue
        out.extend(_placed(mod, c, ins, bad_ops, bad_calls))
    return out


def _line_errors(mod: HloModule, c: Computation, ins, names: set[str], comps: dict[str, int]) -> list[Diagnostic]:
    """What ``ins``'s own line gets (the second pass of `_check_lines`): unreadable, or its undefined operands
    and unknown callees."""
    if ins.opcode == "" or ins.unreadable:
        return [
            error(
                Range(ins.line, ins.name_start, ins.line, len(mod.lines[ins.line].rstrip())),
                "syntax-error",
                f"cannot read `{ins.name}`: {ins.unreadable}",
            )
        ]
    bad_ops = [op for op in ins.operands if op not in names]
    bad_calls = [cc for cc in ins.called if cc not in comps]
    return _placed(mod, c, ins, bad_ops, bad_calls) if bad_ops or bad_calls else []


def _placed(mod: HloModule, c: Computation, ins, bad_ops: list[str], bad_calls: list[str]) -> list[Diagnostic]:
    """The errors for ``ins``'s undefined operands and unknown callees, each on its name in the line: a name
    used twice (``multiply(%nosuch, %nosuch)``) gets one error at each use, in order."""
    out = []
    d = parse_instruction_line(mod.lines[ins.line])
    spans: dict[str, list] = {}
    for s in (d.operands + d.called) if d is not None else ():
        spans.setdefault(s.text, []).append(s)
    for op in bad_ops:
        sp = _next_span(spans, op)
        rng = Range(ins.line, sp.start, ins.line, sp.end) if sp else ins.name_range
        out.append(error(rng, "undefined-operand", f"operand `{op}` is not defined in `{c.name}`"))
    for cc in bad_calls:
        sp = _next_span(spans, cc)
        rng = Range(ins.line, sp.start, ins.line, sp.end) if sp else ins.name_range
        out.append(error(rng, "unknown-computation", f"computation `{cc}` is not defined in this module"))
    return out


def _next_span(spans: dict[str, list], name: str):
    """The first span of ``name`` not given out yet (the last one again when the uses run out); None when the
    line does not write ``name``."""
    found = spans.get(name)
    if not found:
        return None
    return found.pop(0) if len(found) > 1 else found[0]


# what `_check_lines` finds from an instruction's own line (its second pass); the first pass (repeated names,
# two ROOTs) depends on every line's name and flag
LINE_CODES = frozenset(("syntax-error", "undefined-operand", "unknown-computation"))


def recheck_lines(mod: HloModule, c: Computation, old: list[Diagnostic], edited: set[int]) -> list[Diagnostic]:
    """``c``'s errors after edits of the instruction lines ``edited`` that kept every name, name column and
    ROOT flag (so the first pass's results and every other line's hold): ``old`` without the edited lines'
    own errors, plus those lines checked again against the computation's names. Equal to `_check_lines`
    up to order (tests/core/test_incremental.py)."""
    out = [d for d in old if not (d.range.start_line in edited and d.code in LINE_CODES)]
    t = mod.instructions
    make = mod.make_instruction
    names = (
        set(t.names[c.instructions.start : c.instructions.stop])
        if isinstance(t, InstructionTable)
        else {t[i].name for i in c.instructions}
    )
    comps = mod.computation_by_name
    for ln in sorted(edited):
        i = mod.index_at_line(ln)
        if i is None or i not in c.instructions:
            continue
        out.extend(_line_errors(mod, c, make(i), names, comps))
    return out


def duplicate_computations(mod: HloModule) -> list[Diagnostic]:
    seen: set[str] = set()
    out = []
    for c in mod.computations:
        if c.name in seen:
            out.append(error(c.name_range, "duplicate-computation", f"computation `{c.name}` is defined twice"))
        seen.add(c.name)
    return out


def structural_diagnostics(mod: HloModule) -> list[Diagnostic]:
    """Errors XLA's parser would report for names that do not resolve; [] for a consistent module."""
    out = duplicate_computations(mod)
    for c in mod.computations:
        out.extend(check_computation(mod, c))
    return out


# a summary not made yet (after an edit: made again when the verifier runs); told apart by identity
_UNKNOWN = Summary((), None, (), None)


class StructuralChecker:
    """`structural_diagnostics` with a result cached per computation, with the verifier's `Summary` of each
    (made from the same rows); `invalidate_line` drops the one computation an edited line belongs to.
    `checked` counts computations checked, for tests."""

    __slots__ = ("mod", "_per_comp", "_summary", "_ver", "_lock", "_all", "_epoch", "_edited", "checked")

    def __init__(self, mod: HloModule):
        self.mod = mod
        n = len(mod.computations)
        self._per_comp: list[list[Diagnostic] | None] = [None] * n
        self._summary: list[Summary | None] = [None] * n  # or _UNKNOWN
        self.checked = 0
        if mod.pre_checked is not None and len(mod.pre_checked[0]) == n:  # found by the rows pass of the read
            clean, summaries = mod.pre_checked
            for k in range(n):
                if clean[k] is not None:
                    self._per_comp[k], self._summary[k] = clean[k], summaries[k]
                    self.checked += 1
            mod.pre_checked = None
        self._ver = [0] * n  # bumped when a computation is invalidated, so a result computed before is dropped
        self._lock = threading.Lock()
        self._all: list[Diagnostic] | None = None  # every computation's result joined, until one is invalidated
        self._epoch = 0  # bumped by every invalidation
        self._edited: dict[int, set[int]] = {}  # computation -> lines edited keeping names (see `recheck_lines`)

    def invalidate_line(self, line: int) -> None:
        """``line`` was edited (and the module patched, `incremental.patch_module`). When the patch kept every
        name, name column and ROOT flag, only the line's own checks are redone; else the computation's."""
        k = self.mod.computation_index_at_line(line)
        if k is not None:
            with self._lock:
                if self.mod.patch_kept_names and self._per_comp[k] is not None:
                    self._edited.setdefault(k, set()).add(line)
                else:
                    self._per_comp[k] = None
                    self._edited.pop(k, None)
                self._summary[k] = _UNKNOWN
                self._ver[k] += 1
                self._all = None
                self._epoch += 1

    def _check(self, k: int) -> list[Diagnostic]:
        d = self._per_comp[k]
        if d is None:
            d, self._summary[k] = check_and_summarize(self.mod, self.mod.computations[k])
            self._per_comp[k] = d
            self.checked += 1
        elif k in self._edited:
            with self._lock:
                edited = self._edited.pop(k, None)
            if edited:
                d = self._per_comp[k] = recheck_lines(self.mod, self.mod.computations[k], d, edited)
                self.checked += 1
        return d

    def diagnostics(self) -> list[Diagnostic]:
        with self._lock:
            kept, epoch = self._all, self._epoch
        if kept is not None:
            return list(kept)
        out = duplicate_computations(self.mod)
        for k in range(len(self.mod.computations)):
            out.extend(self._check(k))
        with self._lock:
            if self._epoch == epoch:  # kept until a computation is invalidated (84,000 of them: 0.2 s a pass)
                self._all = out
        return list(out)

    def summaries(self) -> list[Summary | None]:
        """Every computation's verifier `Summary` (None where its rows cannot be read), checking the
        computations not checked yet."""
        comps = self.mod.computations
        out: list[Summary | None] = []
        for k in range(len(comps)):
            self._check(k)
            s = self._summary[k]
            if s is _UNKNOWN:  # never handed out: an edit may set it again on the editor's thread meanwhile
                s = self._summary[k] = summarize(self.mod, comps[k])
            out.append(s)
        return out

    def forget_summaries(self) -> None:
        """Let the verifier summaries go (the verifier has used them; ~5 MB for the 23 MB module): its next run
        makes them again, computation by computation."""
        with self._lock:
            self._summary = [_UNKNOWN] * len(self._summary)

    def unchecked(self) -> int:
        """How many computations have no result yet (the read checks a machine-written module's all)."""
        return self._per_comp.count(None)

    def check_forked(self, parts: int = 2) -> int:
        """Check the computations not checked yet in ``parts`` forked children at once (`forked.map_forked`),
        split into runs of about equal instruction counts, and keep their results; what a child could not do is
        left for `diagnostics` to do in-process. Returns the number of computations filled in."""
        comps = self.mod.computations
        todo = [k for k in range(len(comps)) if self._per_comp[k] is None]
        if len(todo) < parts:
            return 0
        total = sum(len(comps[k].instructions) + 1 for k in todo)
        chunks: list[list[int]] = [[] for _ in range(parts)]
        acc = 0
        for k in todo:
            chunks[min(parts - 1, acc * parts // max(total, 1))].append(k)
            acc += len(comps[k].instructions) + 1
        ver = list(self._ver)
        mod = self.mod
        results = forked.map_forked(lambda ks: [(k, *check_and_summarize(mod, comps[k])) for k in ks], chunks)
        filled = 0
        with self._lock:
            for res in results:
                for k, d, s in res or ():
                    if self._ver[k] == ver[k] and self._per_comp[k] is None:
                        self._per_comp[k], self._summary[k] = d, s
                        self._all = None
                        self.checked += 1
                        filled += 1
        return filled
