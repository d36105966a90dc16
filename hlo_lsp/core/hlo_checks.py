"""Structural checks over the fast reader's model, for modules too large for the grammar pass.

The same rules (and codes) as the grammar's structural checks, computed from names alone: undefined operands,
unknown called computations, duplicate instruction names within a computation, duplicate computation names and
two ROOTs. Each is one pass over the instruction array with dict lookups.
"""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Diagnostic, Range, error
from hlo_lsp.core.hlo import HloModule
from hlo_lsp.core.hlo_line import parse_instruction_line


def structural_diagnostics(mod: HloModule) -> list[Diagnostic]:
    """Errors XLA's parser would report for names that do not resolve; [] for a consistent module."""
    out: list[Diagnostic] = []
    seen_comps: set[str] = set()
    for c in mod.computations:
        if c.name in seen_comps:
            out.append(error(c.name_range, "duplicate-computation", f"computation `{c.name}` is defined twice"))
        seen_comps.add(c.name)
        names: set[str] = set()
        roots = 0
        for i in c.instructions:
            ins = mod.instructions[i]
            if ins.name in names:
                out.append(error(ins.name_range, "duplicate-instruction",
                                 f"instruction `{ins.name}` is defined twice in `{c.name}`"))
            names.add(ins.name)
            if ins.is_root:
                roots += 1
                if roots == 2:
                    out.append(error(ins.name_range, "multiple-roots", f"computation `{c.name}` has two ROOT instructions"))
        for i in c.instructions:
            ins = mod.instructions[i]
            if ins.opcode == "" or ins.unreadable:
                out.append(error(Range(ins.line, ins.name_start, ins.line, len(mod.lines[ins.line].rstrip())),
                                 "syntax-error", f"cannot read `{ins.name}`: {ins.unreadable}"))
                continue
            bad_ops = [op for op in ins.operands if op not in names]
            bad_calls = [cc for cc in ins.called if cc not in mod.computation_by_name]
            if not bad_ops and not bad_calls:
                continue
            d = parse_instruction_line(mod.lines[ins.line])
            spans = {s.text: s for s in (d.operands + d.called)} if d is not None else {}
            for op in bad_ops:
                sp = spans.get(op)
                rng = Range(ins.line, sp.start, ins.line, sp.end) if sp else ins.name_range
                out.append(error(rng, "undefined-operand", f"operand `{op}` is not defined in `{c.name}`"))
            for cc in bad_calls:
                sp = spans.get(cc)
                rng = Range(ins.line, sp.start, ins.line, sp.end) if sp else ins.name_range
                out.append(error(rng, "unknown-computation", f"computation `{cc}` is not defined in this module"))
    return out
