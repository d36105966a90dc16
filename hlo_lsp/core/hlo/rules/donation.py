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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import contains, itemgetter
from typing import TYPE_CHECKING

from hlo_lsp.core.diagnostics import Diagnostic, info
from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.rows import OPCODE, PARAM, ROW, SHAPE
from hlo_lsp.core.shapes import ELEMENT_BITS, Shape, element_count, human_size, parse_shape

if TYPE_CHECKING:
    from hlo_lsp.core.hlo.rules.summary import Summary

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
    pairs = _PAIR.findall(m.group(1))
    params = set(map(int, map(itemgetter(1), pairs)))
    # (an index of one number, the usual one, read at once: 4 ms -> 1.5 ms for the 9,000 of the benchmark module)
    outputs = {(int(index),) if index.isdigit() else _index(index) for index, _ in pairs}
    return params, outputs


def _index(text: str) -> tuple[int, ...]:
    """An output index written ``0,1`` (blanks allowed), as numbers."""
    return tuple(map(int, filter(None, text.replace(" ", "").split(","))))


def _key(s: Shape) -> tuple[str, tuple[int, ...]]:
    return s.element_type, s.dims


def _array_bytes(s: Shape) -> int | None:
    count = element_count(s)
    bits = ELEMENT_BITS.get(s.element_type)
    return (count * bits + 7) // 8 if isinstance(count, int) and bits else None


def donation_hints(mod: HloModule, entry_summary: Summary | None = None) -> list[Hint]:
    """Each entry parameter that could be donated, paired with its output (module docstring).

    ``entry_summary``: the entry computation's verifier summary for the current text, when the caller has it
    (`rules.summary.summarize`; the verifier's run does): its root's shape text and its parameters' shape texts
    by number are what this reads of the entry's lines otherwise, from the same rows. For the 23 MB benchmark
    module (12,001 parameters, 3,001 of them not aliased; a root line of 0.46 MB) 50 ms read from the lines,
    25 ms from the summary; a parameter's line is read only for a hint."""
    entry = mod.entry
    if entry is None or entry.root is None:
        return []
    header = mod.lines[mod.header_line] if mod.header_line is not None and mod.header_line < len(mod.lines) else ""
    aliased_params, aliased_outputs = aliases(header)
    root_text = entry_summary.root if entry_summary is not None else None
    if root_text is None:
        root = parse_instruction_line(mod.lines[mod.make_instruction(entry.root).line])
        if root is None or root.shape is None:
            return []
        root_text = root.shape.text
    shape = parse_shape(root_text)
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
    if not free:
        return []  # every output is donated already (a module compiled with donation): nothing to offer
    sig = entry_summary.sig if entry_summary is not None else None
    params: list[tuple[int, int | None, str | None]]
    if sig is not None:  # numbered 0..n-1, each once, each with its row's shape text (`summary._signature`)
        params = [(n, None, text) for n, text in enumerate(sig) if n not in aliased_params]
    else:
        params = sorted(p for p in _entry_parameters(mod, entry) if p[0] not in aliased_params)
    index_of: dict[int, int] | None = None  # parameter number -> instruction, read only for a hint
    hints = []
    shapes: dict[str, Shape | None] = {}  # each distinct shape text parsed once
    free_keys = Counter(_key(s) for _, s in free)
    for n, i, text in params:  # in parameter order, each takes the first free output
        if not free:
            break
        if text is not None:  # the row's shape text (the line's own): no free output of its kind, no hint
            ps = shapes[text] if text in shapes else shapes.setdefault(text, parse_shape(text))
            if ps is None or not ps.is_array or not free_keys[_key(ps)]:
                continue
        if i is None:
            if index_of is None:
                index_of = {p: j for p, j, _ in _entry_parameters(mod, entry)}
            i = index_of.get(n)
            if i is None:
                continue  # (the summary's rows are the lines' rows: never so)
        ins = mod.make_instruction(i)
        d = parse_instruction_line(mod.lines[ins.line])
        ps = parse_shape(d.shape.text) if d is not None and d.shape is not None else None
        if ps is None or not ps.is_array:
            continue
        j = next((j for j, (_, s) in enumerate(free) if _key(s) == _key(ps)), None)
        if j is None:
            continue
        idx, taken = free.pop(j)
        free_keys[_key(taken)] -= 1
        op = d.metadata.get("op_name") if d is not None else None
        assert d is not None and d.shape is not None  # ps came from it
        hints.append(Hint(n, ins.line, ins.name, op.text if op else None, idx, d.shape.text, _array_bytes(ps)))
    return hints


def _entry_parameters(mod: HloModule, entry) -> list[tuple[int, int, str | None]]:
    """(parameter number, instruction index, shape text or None) of every ``parameter(N)`` instruction of
    ``entry``, in document order. Only lines holding ``parameter(`` can be one (the opcode's parenthesis follows
    it directly); of those, a machine-written line gives its number and shape text by the rows pattern
    (`rows.ROW`, which reads the reader's opcode, number and shape on every line it matches: the shape text
    `line.parse_instruction_line` finds too), any other line its number by the instruction's own parse (and no
    shape: the caller parses the line). An entry of 90,000 instructions was an object and a parse per
    instruction before, and every parameter's whole line parsed: 0.25-0.4 s on the benchmark modules."""
    lines = mod.lines
    r = entry.instructions
    table = mod.instructions
    where: Sequence[int]
    if isinstance(table, InstructionTable) and isinstance(r, range) and r.step == 1:
        where = table.line_of[r.start : r.stop]
    else:
        where = [mod.make_instruction(i).line for i in r]
    texts = map(lines.__getitem__, where)
    found = list(compress(zip(r, map(lines.__getitem__, where)), map(contains, texts, repeat("parameter("))))
    # their rows in one pass when each of the lines is one (as the rows pass reads them: one row a line)
    rows = ROW.findall("\n" + "\n".join([line for _, line in found])) if found else []
    if len(rows) == len(found):
        return [
            (int(row[PARAM]), i, row[SHAPE])
            for (i, _), row in zip(found, rows)
            if row[OPCODE] == "parameter" and row[PARAM] and len(row[PARAM]) < 10
        ]
    out = []
    match = ROW.match
    for i, line in found:
        m = match("\n" + line)
        if m is not None:
            if m.group(5) == "parameter" and m.group(7) and len(m.group(7)) < 10:
                out.append((int(m.group(7)), i, m.group(4)))
            continue
        n = mod.make_instruction(i).parameter_number
        if n is not None:
            out.append((n, i, None))
    return out


def entry_summary(mod: HloModule, summaries: Sequence[Summary | None] | None) -> Summary | None:
    """The entry computation's summary of ``summaries`` (the verifier's: one per computation, in order)."""
    entry = mod.entry
    if summaries is None or entry is None or len(summaries) != len(mod.computations):
        return None
    return next((summaries[k] for k, c in enumerate(mod.computations) if c is entry), None)


def donation_diagnostics(mod: HloModule, entry_summary: Summary | None = None) -> list[Diagnostic]:
    """The hints as information diagnostics on each parameter's name (``entry_summary`` as `donation_hints`)."""
    return hint_diagnostics(mod, donation_hints(mod, entry_summary))


def read_donation_diagnostics(mod: HloModule, edited: bool) -> list[Diagnostic] | None:
    """`donation_diagnostics` from the hints the read made where it read the entry (`HloModule.hints_of_read`,
    taken: a later run makes its own), when nothing was ``edited`` since; None otherwise. (After the verifier's
    rules: `entry_layout` reads them too.)"""
    made = mod.hints_of_read()
    mod.read_hints = None
    return None if made is None or edited else hint_diagnostics(mod, made[2])


def hint_diagnostics(mod: HloModule, hints: list[Hint]) -> list[Diagnostic]:
    """``hints`` as information diagnostics on each parameter's name."""
    out = []
    for h in hints:
        ins = mod.instruction_at_line(h.line)
        if ins is not None:
            out.append(info(ins.name_range, CODE, h.message()))
    return out
