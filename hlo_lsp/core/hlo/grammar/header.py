"""The ``HloModule`` line's attributes, as HloParserImpl::ParseHloModule accepts them (`check_header`)."""

from __future__ import annotations

from lark.exceptions import UnexpectedInput

from hlo_lsp.core.diagnostics import Diagnostic, Range, error

from . import model
from .attributes import check_value
from .errors import syntax_diagnostic
from .parser import get_parser

# Module attributes HloParserImpl::ParseHloModule accepts, with their kinds (hlo_lsp.core.hlo.opcodes).
_HEADER_ATTRIBUTES = {
    "is_scheduled": "bool",
    "replica_count": "int",
    "num_partitions": "int",
    "input_output_alias": "any",
    "buffer_donor": "any",
    "alias_passthrough_params": "bool",
    "entry_computation_layout": "any",
    "frontend_attributes": "frontend",
    "allow_spmd_sharding_propagation_to_parameters": "any",
    "allow_spmd_sharding_propagation_to_output": "any",
    "origin_recovery_table": "any",
}


def _subparse(text: str, toks: list, start: str) -> Diagnostic | None:
    """Parse the source text spanned by ``toks`` with start rule ``start``; a syntax error or None."""
    lines = text.split("\n")
    first, last = toks[0], toks[-1]
    if first.line == last.line:
        piece = lines[first.line][first.col : last.end]
    else:
        piece = "\n".join(
            [lines[first.line][first.col :]] + lines[first.line + 1 : last.line] + [lines[last.line][: last.end]]
        )
    try:
        get_parser().parse(piece, start=start)
    except UnexpectedInput as exc:
        d = syntax_diagnostic(exc, piece, None)
        r = d.range
        shift = lambda line, col: (line + first.line, col + (first.col if line == 0 else 0))  # noqa: E731
        sl, sc = shift(r.start_line, r.start_col)
        el, ec = shift(r.end_line, r.end_col)
        return error(Range(sl, sc, el, ec), "invalid-attribute", d.message)
    return None


def check_header(header: model.Header, text: str) -> list[Diagnostic]:
    diags = []
    seen = set()
    for attr in header.attributes:
        rng = Range(attr.line, attr.start, attr.line, attr.end)
        kind = _HEADER_ATTRIBUTES.get(attr.name)
        if attr.name in seen:
            diags.append(error(rng, "duplicate-attribute", f"attribute '{attr.name}' already exists"))
        elif kind is None:
            diags.append(error(rng, "unknown-attribute", f"HloModule does not take the attribute '{attr.name}'"))
        elif (bad := check_value(kind, attr.value)) is not None:
            diags.append(error(rng, "invalid-attribute", f"{attr.name}=: {bad[1]}"))
        elif attr.name == "entry_computation_layout" and attr.value:
            problem = _subparse(text, attr.value, "computation_layout")
            if problem is not None:
                diags.append(problem)
        seen.add(attr.name)
    return diags
