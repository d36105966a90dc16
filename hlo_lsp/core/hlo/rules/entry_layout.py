"""The ENTRY computation against ``entry_computation_layout`` (`entry_layout`), with a fast path for the
common case of plain array parameters written exactly as the ENTRY parameters are."""

from __future__ import annotations

import re
from collections.abc import Iterator

from hlo_lsp.core.diagnostics import Diagnostic, Range, Related, warning
from hlo_lsp.core.hlo.model import Computation
from hlo_lsp.core.hlo.rules.facts import ModuleFacts, same_shape, text_of
from hlo_lsp.core.hlo.text import INDEX_NUMBER, INDEX_NUMBER_TEXT, INSTR
from hlo_lsp.core.shapes import parse_shape

_LAYOUT_ATTR = re.compile(r"entry_computation_layout=\{")


def entry_layout(m: ModuleFacts) -> Iterator[Diagnostic]:
    """``verifier.entry-layout``: ``entry_computation_layout`` whose parameter count or shapes (ignoring
    layout) differ from the ENTRY computation's parameters, or whose result differs from its root. XLA:
    ``HloVerifier`` ``VerifyEntryComputationLayout`` ("Number of parameters in entry computation layout (%d)
    must be same as number of parameters of entry computation (%d)", ``ShapeUtil::Compatible`` checks)."""
    mod = m.mod
    entry = mod.entry
    if mod.header_line is None or entry is None:
        return
    made = mod.hints_of_read()
    if made is not None and made[3]:
        return  # found quiet by the read where it read the entry (`quiet`), and nothing edited since
    line = mod.lines[mod.header_line]
    mm = _LAYOUT_ATTR.search(line)
    if mm is None or _layout_plainly_agrees(m, entry, line, mm.start()):
        return
    start = mm.end()
    end = _matching_brace(line, start - 1)
    if end < 0:
        return
    body = line[start:end]
    arrow = _top_level_arrow(body)
    if arrow < 0:
        return
    params_shape = parse_shape(body[:arrow])
    result_shape = parse_shape(body[arrow + 2 :])
    if params_shape is None or not params_shape.is_tuple:
        return
    rng = Range(mod.header_line, start, mod.header_line, end)
    params = m.parameters(entry.name)
    if params is None:
        return
    layout_params = params_shape.tuple_shapes
    if len(layout_params) != len(params):
        yield warning(
            rng,
            "verifier.entry-layout",
            f"entry_computation_layout has {len(layout_params)} parameters, but ENTRY `{entry.name}` has {len(params)}",
            related=(Related(entry.name_range, "the ENTRY computation"),),
        )
        return
    for k, (p, ls) in enumerate(zip(params, layout_params)):
        ps = m.shape(p)
        if ps is not None and not same_shape(ps, ls):
            yield warning(
                rng,
                "verifier.entry-layout",
                f"entry_computation_layout gives parameter {k} as {text_of(ls)}, but `{p.name}` is {text_of(ps)}",
                related=(Related(p.name_range, f"parameter {k}"),),
            )
    root = m.ins(entry.root) if entry.root is not None else None
    rs = m.shape(root) if root is not None else None
    if root is not None and rs is not None and result_shape is not None and not same_shape(rs, result_shape):
        yield warning(
            rng,
            "verifier.entry-layout",
            f"entry_computation_layout gives the result as {text_of(result_shape)}, but the ENTRY root "
            f"`{root.name}` is {text_of(rs)}",
            related=(Related(root.name_range, "the ENTRY root"),),
        )


def quiet(m: ModuleFacts) -> bool:
    """`entry_layout` has nothing to report on ``m`` for its fast path alone: no header line, no entry, no layout,
    or a layout that plainly agrees (`_layout_plainly_agrees`); made by the read where it reads the entry (the
    child reading the later part of a long module: 5-7 ms of the 23 MB module's verifier run, whose 816 kB header
    line is matched), for the verifier's run to take (`HloModule.read_hints`)."""
    mod = m.mod
    entry = mod.entry
    if mod.header_line is None or entry is None:
        return True
    line = mod.lines[mod.header_line]
    mm = _LAYOUT_ATTR.search(line)
    return mm is None or _layout_plainly_agrees(m, entry, line, mm.start())


_ARRAY_TEXT = r"(?:%s)?[a-z][a-z0-9]*\[[0-9,]*\](?:\{[0-9,]*\})?" % INDEX_NUMBER_TEXT  # long tuples numbered
# a layout of plain arrays: `entry_computation_layout={(f32[4]{0}, s32[])->(f32[4]{0})}`; groups: parameters, result
# `entry_computation_layout={(f32[4]{0}, s32[])->(f32[4]{0})}` with plain array parameters; groups: the
# parameters, the result text (any shape: braces only as layouts, read possessively so a failure is linear)
_PLAIN_LAYOUT = re.compile(
    r"entry_computation_layout=\{\((%s(?:, %s)*)?\)->((?:[^{}\n]++|\{[^{}\n]*+\})*+)\}" % (_ARRAY_TEXT, _ARRAY_TEXT)
)


def _layout_plainly_agrees(m: ModuleFacts, entry: Computation, line: str, at: int) -> bool:
    """True when the layout is of plain arrays written exactly as the ENTRY parameters (from its rows summary)
    and its root are: equal texts parse to equal shapes, so `entry_layout` has nothing to report (its checks
    then need no parse of a 9,000-element tuple)."""
    k = m.mod.computation_by_name.get(entry.name)
    summaries = m.summaries
    sm = summaries[k] if summaries is not None and k is not None and k < len(summaries) else None
    if sm is None or sm.sig is None or entry.root is None:
        return False
    lm = _PLAIN_LAYOUT.match(line, at)
    if lm is None:
        return False
    params = INDEX_NUMBER.sub("", lm.group(1)).split(", ") if lm.group(1) else []
    if tuple(params) != sm.sig:
        return False
    head = INSTR.match(m.mod.lines[m.ins(entry.root).line])
    return (
        head is not None
        and head.group(4) is not None
        and (head.group(4) == lm.group(2) or INDEX_NUMBER.sub("", head.group(4)) == INDEX_NUMBER.sub("", lm.group(2)))
    )


def _matching_brace(line: str, open_pos: int) -> int:
    depth = 0
    for i in range(open_pos, len(line)):
        ch = line[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _top_level_arrow(body: str) -> int:
    depth = 0
    for i, ch in enumerate(body):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == "-" and depth == 0 and body.startswith("->", i):
            return i
    return -1
