"""validate_module: grammar and structural checks of HLO module text, block by block.

1. `split_blocks` cuts the text into header / tables / computation blocks.
2. `validate_block` parses one block with its own start rule and checks it; its result (block-relative
   diagnostics, occurrences, summary and the facts the cross-block pass needs) is cached by
   (kind, text), so after an edit only the changed block is parsed again.
3. The cross-block pass (`module_pass`) resolves called computations, duplicate computation names, ENTRY count
   and stack-frame ids, then shifts everything by each block's first line.

Never raises: an unexpected internal error becomes one `internal-error` diagnostic.
"""

from __future__ import annotations

from collections import OrderedDict

from lark.exceptions import UnexpectedInput

from hlo_lsp.core.diagnostics import Range, error
from hlo_lsp.core.memos import memo_table
from hlo_lsp.core.occurrences import Occurrence

from . import model
from .blocks import Block, split_blocks
from .checks import BlockFacts, check_computation
from .errors import syntax_diagnostic
from .header import check_header
from .module_pass import join_blocks
from .parser import get_parser
from .results import BlockResult, ComputationSummary, GrammarResult
from .tables import check_tables

MAX_NESTING = 100  # bracket depth beyond which a block is reported instead of parsed
_CACHE_SIZE = 4096


_cache: OrderedDict[tuple[str, str], BlockResult] = memo_table(OrderedDict())


def _first_name_range(block: Block) -> Range:
    """Range of the block's first word (the computation name), for errors about the whole block."""
    line = block.text.split("\n", 1)[0]
    stripped = line.lstrip()
    start = len(line) - len(stripped)
    if stripped.startswith("ENTRY"):
        rest = stripped[5:].lstrip()
        start = len(line) - len(rest)
        stripped = rest
    end = start
    while end < len(line) and (line[end].isalnum() or line[end] in "%_.-"):
        end += 1
    return Range(0, start, 0, max(end, start + 1))


def validate_block(block: Block) -> BlockResult:
    """Parse and check one block (cached by its kind and text); never raises."""
    key = (block.kind, block.text)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    try:
        result = _validate_block(block)
    except Exception as exc:  # pragma: no cover - defensive: a checker bug must not take the server down
        result = BlockResult(
            block.kind,
            False,
            [error(Range(0, 0, 0, 1), "internal-error", f"internal error while checking this block: {exc!r}")],
            [],
            BlockFacts(),
        )
    _cache[key] = result
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return result


def _validate_block(block: Block) -> BlockResult:
    if block.max_depth > MAX_NESTING:
        line = block.depth_line - block.start_line
        return BlockResult(
            block.kind,
            False,
            [
                error(
                    Range(line, 0, line, 1),
                    "nesting-too-deep",
                    f"brackets nest {block.max_depth} deep here; more than {MAX_NESTING} levels are not checked",
                )
            ],
            [],
            BlockFacts(),
        )
    start = {"header": "header", "tables": "stack_frame_index", "computation": "computation"}[block.kind]
    try:
        tree = get_parser().parse(block.text, start=start)
    except UnexpectedInput as exc:
        unclosed = (_first_name_range(block), block.kind) if block.kind == "computation" else None
        diag = syntax_diagnostic(exc, block.text, unclosed)
        return BlockResult(block.kind, False, [diag], _fallback_occurrences(block), BlockFacts())
    if block.kind == "computation":
        comp = model.computation_of(tree)
        del tree
        diags, occ, facts = check_computation(comp)
        return BlockResult(block.kind, True, diags, occ, facts, _summary(comp, block))
    if block.kind == "header":
        header = model.header_of(tree)
        return BlockResult(block.kind, True, check_header(header, block.text), [], BlockFacts())
    tables = model.tables_of(tree)
    return check_tables(tables)


def _fallback_occurrences(block: Block) -> list[Occurrence]:
    """Navigation inside a block that does not parse: each line parsed alone as an instruction."""
    occ: list[Occurrence] = []
    parser = get_parser()
    for i, line in enumerate(block.text.split("\n")):
        if "=" not in line or len(line) > 20000:
            continue
        try:
            tree = parser.parse(line, start="instruction")
        except UnexpectedInput:
            continue
        ins = model.instruction_of(tree)
        if ins.name is not None:
            occ.append(Occurrence(i, ins.name.start, ins.name.end, "instruction", ins.name.text, "def"))
        stack = list(ins.operands)
        while stack:
            op = stack.pop()
            if op.nested is not None:
                stack.extend(op.nested.operands)
            elif op.name is not None:
                occ.append(Occurrence(i, op.name.start, op.name.end, "instruction", op.name.text, "use"))
    occ.sort(key=lambda o: (o.line, o.start))
    return occ


def _summary(comp: model.Computation, block: Block) -> ComputationSummary:
    dl = block.start_line
    root = None
    for ins in comp.instructions:
        if ins.root is not None and ins.name is not None:
            root = ins.name.text
            break
    if root is None and comp.instructions and comp.instructions[-1].name is not None:
        root = comp.instructions[-1].name.text
    if comp.params:
        params = tuple((n.text, n.line + dl, s.text) for n, s in comp.params)
    else:
        found: list[tuple[int, tuple[str, int, str]]] = []
        for ins in comp.instructions:
            if ins.opcode.text == "parameter" and ins.name is not None:
                num = int(ins.literal[0].text) if ins.literal and ins.literal[0].type == "INT" else len(found)
                found.append((num, (ins.name.text, ins.name.line + dl, ins.shape.text if ins.shape else "")))
        params = tuple(p for _, p in sorted(found, key=lambda x: x[0]))
    n = comp.name
    return ComputationSummary(
        n.text,
        comp.entry is not None,
        Range(n.line + dl, n.start, n.line + dl, n.end),
        block.start_line,
        block.end_line,
        params,
        root,
        tuple((i.name.text, i.name.line + dl) for i in comp.instructions if i.name is not None),
    )


def validate_module(text: str) -> GrammarResult:
    """Diagnostics, occurrences (document order) and computation summaries for HLO module text."""
    try:
        blocks = split_blocks(text)
        return join_blocks(text, blocks, [validate_block(b) for b in blocks])
    except Exception as exc:  # pragma: no cover - defensive
        return GrammarResult([error(Range(0, 0, 0, 1), "internal-error", f"internal error: {exc!r}")], [], [], [])


__all__ = ["BlockResult", "ComputationSummary", "GrammarResult", "validate_block", "validate_module"]
