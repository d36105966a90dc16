"""Donation hints: an entry parameter whose buffer an output of the same shape could take over.

``hlo.donation-hint`` (information): an ENTRY parameter that the module header's ``input_output_alias`` does not
alias to an output, while an output (the ENTRY root, or an element of its tuple) has the same element type and
dimensions and is aliased to no parameter either. Parameters and outputs are paired one to one in order, so no
output is offered twice. In JAX, ``donate_argnums`` (``donate_argnames``) makes XLA alias them: the output is
written into the parameter's buffer instead of a new one, which saves the parameter's bytes for the program's
whole run. Never on an aliased parameter. The message names the Python argument when the parameter's metadata
gives it (JAX writes it as the ``op_name``, ``params[0]['w']``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hlo_lsp.core.diagnostics import Diagnostic, info
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.shapes import ELEMENT_BITS, Shape, element_count, human_size, parse_shape

CODE = "hlo.donation-hint"
_ALIAS = re.compile(r"\binput_output_alias=\{(.*?)\}\s*(?:,\s*[a-z_]+=|$)")
_PAIR = re.compile(r"\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,")
MAX_OUTPUTS = 100_000  # an output tuple wider than this is not walked


@dataclass(frozen=True, slots=True)
class Hint:
    parameter: int
    line: int
    name: str
    argument: str | None  # the Python argument (the parameter's op_name) when the metadata names it
    output: tuple[int, ...]  # the output's index in the root tuple (() for a non-tuple root)
    shape: str
    bytes: int | None

    def message(self) -> str:
        who = f"parameter {self.parameter}" + (f" ({self.argument})" if self.argument else "")
        out = "the output" if not self.output else f"output {{{','.join(map(str, self.output))}}}"
        size = f" ({human_size(self.bytes)})" if self.bytes else ""
        return (
            f"{who} is not donated, and {out} has its shape {self.shape}: donating it (JAX: donate_argnums) lets "
            f"XLA write that output into this buffer{size} instead of a new one"
        )


def aliases(header: str | None) -> tuple[set[int], set[tuple[int, ...]]]:
    """(aliased parameter numbers, aliased output indices) of a module header's ``input_output_alias``."""
    m = _ALIAS.search(header or "")
    if m is None:
        return set(), set()
    params, outputs = set(), set()
    for index, param in _PAIR.findall(m.group(1)):
        params.add(int(param))
        outputs.add(tuple(int(x) for x in index.replace(" ", "").split(",") if x))
    return params, outputs


def _key(s: Shape) -> tuple[str, tuple[int, ...]]:
    return s.element_type, s.dims


def _array_bytes(s: Shape) -> int | None:
    count = element_count(s)
    bits = ELEMENT_BITS.get(s.element_type)
    return (count * bits + 7) // 8 if isinstance(count, int) and bits else None


def donation_hints(mod: HloModule) -> list[Hint]:
    """Each entry parameter that could be donated, paired with its output (module docstring)."""
    entry = mod.entry
    if entry is None or entry.root is None:
        return []
    header = mod.lines[mod.header_line] if mod.header_line is not None and mod.header_line < len(mod.lines) else ""
    aliased_params, aliased_outputs = aliases(header)
    root = parse_instruction_line(mod.lines[mod.make_instruction(entry.root).line])
    if root is None or root.shape is None:
        return []
    shape = parse_shape(root.shape.text)
    if shape is None:
        return []
    outputs: list[tuple[tuple[int, ...], Shape]] = []
    if shape.is_tuple:
        if len(shape.tuple_shapes) > MAX_OUTPUTS:
            return []
        outputs = [((k,), s) for k, s in enumerate(shape.tuple_shapes) if s.is_array]
    elif shape.is_array:
        outputs = [((), shape)]
    free = [(idx, s) for idx, s in outputs if idx not in aliased_outputs]
    params = []
    for i in entry.instructions:
        ins = mod.make_instruction(i)
        n = ins.parameter_number
        if n is not None and n not in aliased_params:
            params.append((n, ins))
    hints = []
    for n, ins in sorted(params, key=lambda t: t[0]):  # in parameter order, each takes the first free output
        if not free:
            break
        d = parse_instruction_line(mod.lines[ins.line])
        ps = parse_shape(d.shape.text) if d is not None and d.shape is not None else None
        if ps is None or not ps.is_array:
            continue
        j = next((j for j, (_, s) in enumerate(free) if _key(s) == _key(ps)), None)
        if j is None:
            continue
        idx, _ = free.pop(j)
        op = d.metadata.get("op_name") if d is not None else None
        assert d is not None and d.shape is not None  # ps came from it
        hints.append(Hint(n, ins.line, ins.name, op.text if op else None, idx, d.shape.text, _array_bytes(ps)))
    return hints


def donation_diagnostics(mod: HloModule) -> list[Diagnostic]:
    """The hints as information diagnostics on each parameter's name."""
    out = []
    for h in donation_hints(mod):
        ins = mod.instruction_at_line(h.line)
        if ins is not None:
            out.append(info(ins.name_range, CODE, h.message()))
    return out
