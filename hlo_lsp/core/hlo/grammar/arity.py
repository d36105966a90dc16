"""The operand counts XLA's parser requires of an instruction (`check_arity`), called from
`checks.ComputationChecker`."""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Diagnostic, error
from hlo_lsp.core.hlo.opcodes import OpcodeInfo

from .model import Instruction
from .ranges import tok_range


def check_arity(ins: Instruction, info: OpcodeInfo, params: list | None, out: list[Diagnostic]) -> None:
    """Operand-count rules of HloParserImpl (``parameter(N)``, ``constant(literal)``, each opcode's arity, the
    operand-count parities of reduce and scatter) for ``ins``, appended to ``out``; a parameter's number goes to
    ``params`` as (number, instruction, token) when given."""
    op = info.name
    count = len(ins.operands)
    where = tok_range(ins.opcode)
    if op in ("parameter", "constant") and ins.commas:
        out.append(
            error(where, "syntax-error", f"expects ')' after the {op} {'number' if op == 'parameter' else 'literal'}")
        )
        return
    if op == "parameter":
        lit = ins.literal
        if ins.operands or len(lit) != 1 or lit[0].type != "INT":
            out.append(error(where, "parameter-number", "expects parameter(N) with an integer N"))
            return
        num = int(lit[0].text)
        if num < 0:
            out.append(error(tok_range(lit[0]), "parameter-number", "parameter number must be >= 0"))
            return
        if params is not None:
            params.append((num, ins, lit[0]))
        return
    if op == "constant":
        if ins.operands or ins.arg_count != 1:
            out.append(error(where, "operand-count", "expects constant(<literal>)"))
        return
    if ins.literal:
        t = ins.literal[0]
        out.append(
            error(
                tok_range(t),
                "syntax-error",
                f"'{info.name}' takes instruction operands, not the literal '{t.text}'",
            )
        )
        return
    expected = info.arity
    if op == "ragged-dot":
        expected = 3
    elif op == "scaled-dot":
        expected = 4
    if expected is not None and count != expected:
        out.append(
            error(
                where,
                "operand-count",
                f"'{op}' expects {expected} operand{'s' if expected != 1 else ''}, but has {count}",
            )
        )
    elif op in ("reduce", "reduce-window") and count % 2:
        out.append(error(where, "operand-count", f"expects an even number of operands, but has {count}"))
    elif op == "scatter" and count % 2 == 0:
        out.append(error(where, "operand-count", f"expects an odd number of operands, but has {count}"))
    elif op in ("dynamic-slice", "conditional", "dot") and count < (1 if op == "dynamic-slice" else 2):
        out.append(error(where, "operand-count", f"'{op}' needs more operands (has {count})"))
    elif op == "dynamic-update-slice" and count < 2:
        out.append(error(where, "operand-count", "expected at least two operands"))
