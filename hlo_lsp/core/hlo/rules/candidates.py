"""Which instructions each verifier rule must read per line: the computations' summaries (`rules.summary`) joined
once for the module. An instruction a summary cleared is no candidate; a calling one whose callee's parameters or
root do not plainly agree with it is; a computation the rows could not read is read whole ("slow")."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import compress
from operator import attrgetter
from typing import cast

from hlo_lsp.core.hlo.model import Computation, HloModule
from hlo_lsp.core.hlo.rules.summary import Summary, call_ok, root_ok, summarize

_NAME = attrgetter("name")
_SIG, _ROOT, _CAND, _CALLS = attrgetter("sig"), attrgetter("root"), attrgetter("cand"), attrgetter("calls")


class Candidates:
    """The candidates of each opcode and the slow computations, joined on first use."""

    def __init__(self, mod: HloModule, summaries: list[Summary | None] | None) -> None:
        self.mod = mod
        self.summaries = summaries  # each computation's, kept by the structural checker; else made here
        self._by_opcode: dict[str, list[int]] | None = None
        self._slow: list[Computation] = []  # computations the rows could not read: every rule reads them per line

    def indices(self, opcodes: Iterable[str], opcode_of: Callable[[int], str]) -> set[int]:
        """The instructions of ``opcodes`` a rule must read: the candidates, and every instruction of those
        opcodes (``opcode_of`` an index) in a slow computation."""
        by_opcode = self._join()
        idx = {i for op in opcodes for i in by_opcode.get(op, ())}
        idx.update(i for i in self.slow_instructions() if opcode_of(i) in opcodes)
        return idx

    def slow_instructions(self) -> Iterator[int]:
        """The instructions of the computations the rows could not read, in document order."""
        self._join()
        return (i for c in self._slow for i in c.instructions)

    def _join(self) -> dict[str, list[int]]:
        """Every computation's `Summary` joined: the candidates of each opcode, and the calling instructions
        whose callee's parameters do not plainly agree with their operands. Computations without a summary are
        left to the per-line path whole."""
        if self._by_opcode is not None:
            return self._by_opcode
        mod = self.mod
        comps = mod.computations
        summaries = self.summaries if self.summaries is not None else [summarize(mod, c) for c in comps]
        cand: dict[str, list[int]] = {}
        sigs: dict[str, tuple[str, ...] | None]
        roots: dict[str, str | None]
        calls: list = []
        visit: Iterable[int]  # the computations whose summary has candidates or calls
        if None not in summaries and len(mod.computation_by_name) == len(comps):
            # every computation summarized, no name repeated: the maps made by C iteration, and only the summaries
            # with candidates or calls visited (the 23 MB module's 17,500 computations: 16,700 fusions with none)
            every = cast(list[Summary], summaries)
            names = list(map(_NAME, comps))
            sigs = dict(zip(names, map(_SIG, every)))
            roots = dict(zip(names, map(_ROOT, every)))
            visit = compress(range(len(comps)), map(any, zip(map(_CAND, every), map(_CALLS, every))))
        else:
            sigs, roots, visit = {}, {}, []
            for k, (c, sm) in enumerate(zip(comps, summaries)):
                if sm is None or c.name in sigs:
                    self._slow.append(c)
                    sigs[c.name] = None  # unknown, or a repeated computation name: callers are read per line
                    continue
                sigs[c.name] = sm.sig
                roots[c.name] = sm.root
                visit.append(k)
        for k in visit:
            sm, start = summaries[k], comps[k].instructions.start  # (numbered from the computation's first)
            assert sm is not None
            for op, i in sm.cand:
                cand.setdefault(op, []).append(start + i)
            if sm.calls:
                calls.append((start, sm.calls))
        get_sig, get_root = sigs.get, roots.get
        for start, called in calls:
            for i, op, callees, shapes, result in called:
                if op == "fusion" and len(callees) == 1:
                    # `call_ok` and `root_ok` of a fusion, inline (the 23 MB module's entry holds 16,700 fusions:
                    # the two calls each took 2-3 ms of the join's 10): its operands are its callee's parameters,
                    # its result its callee's root
                    # (a callee the module does not hold has no root here: the call is a candidate, as `root_ok` says)
                    sig = get_sig(callees[0])
                    if (
                        sig is not None
                        and (shapes if type(shapes) is tuple else tuple(shapes)) == sig
                        and get_root(callees[0]) == result
                    ):
                        continue
                    cand.setdefault(op, []).append(start + i)
                    continue
                if len(callees) == 1:
                    ok = call_ok(op, sigs, callees[0], shapes)
                else:
                    ok = all(call_ok(op, sigs, callee, shapes) for callee in callees)
                if not ok or not root_ok(op, roots, callees, result):
                    cand.setdefault(op, []).append(start + i)
        self._by_opcode = cand
        return cand
