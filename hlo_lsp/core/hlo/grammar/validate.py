"""validate_module: grammar and structural checks of HLO module text, block by block.

1. `split_blocks` cuts the text into header / tables / computation blocks.
2. `validate_block` parses one block with its own start rule and checks it; its result (block-relative
   diagnostics, occurrences, summary and the facts the cross-block pass needs) is cached by
   (kind, text), so after an edit only the changed block is parsed again.
3. The cross-block pass resolves called computations, duplicate computation names, ENTRY count and
   stack-frame ids, then shifts everything by each block's first line.

Never raises: an unexpected internal error becomes one `internal-error` diagnostic.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from lark.exceptions import UnexpectedInput

from hlo_lsp.core.diagnostics import Diagnostic, Range, Related, error, warning
from hlo_lsp.core.memos import memo_table
from hlo_lsp.core.occurrences import Occurrence

from . import model
from .blocks import Block, split_blocks
from .checks import BlockFacts, check_computation
from .errors import syntax_diagnostic
from .parser import get_parser

MAX_NESTING = 100  # bracket depth beyond which a block is reported instead of parsed
_CACHE_SIZE = 4096


@dataclass(frozen=True, slots=True)
class ComputationSummary:
    """Outline data for one computation; lines are document lines (zero-based)."""

    name: str
    is_entry: bool
    name_range: Range
    start_line: int
    end_line: int
    parameters: tuple[tuple[str, int, str], ...]  # (name, line, shape text) from the signature or parameter(N)
    root: str | None
    instructions: tuple[tuple[str, int], ...]  # (name, defining line)


@dataclass(slots=True)
class BlockResult:
    """The checked form of one block, positions relative to the block's first line."""

    kind: str
    ok: bool  # parsed without a syntax error
    diagnostics: list[Diagnostic]
    occurrences: list[Occurrence]
    facts: BlockFacts
    summary: ComputationSummary | None = None
    table_defs: dict[str, set[str]] = field(default_factory=dict)


@dataclass(slots=True)
class GrammarResult:
    diagnostics: list[Diagnostic]
    occurrences: list[Occurrence]
    computations: list[ComputationSummary]
    blocks: list[Block]


_cache: OrderedDict[tuple[str, str], BlockResult] = memo_table(OrderedDict())


def _shift_range(r: Range, dl: int) -> Range:
    return Range(r.start_line + dl, r.start_col, r.end_line + dl, r.end_col)


def _shift_diag(d: Diagnostic, dl: int) -> Diagnostic:
    if dl == 0:
        return d
    related = tuple(Related(_shift_range(x.range, dl), x.message, x.path) for x in d.related)
    return Diagnostic(_shift_range(d.range, dl), d.severity, d.code, d.message, related, d.fixes, d.source)


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
        return BlockResult(block.kind, True, _check_header(header, block.text), [], BlockFacts())
    tables = model.tables_of(tree)
    return _check_tables(tables)


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


def _check_header(header: model.Header, text: str) -> list[Diagnostic]:
    from .attributes import check_value

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


_TABLE_KIND = {
    "FileNames": "file_name",
    "FunctionNames": "function_name",
    "FileLocations": "file_location",
    "StackFrames": "stack_frame",
}
_TABLE_KEYS = {
    "FileLocations": frozenset({"file_name_id", "function_name_id", "line", "end_line", "column", "end_column"}),
    "StackFrames": frozenset({"file_location_id", "parent_frame_id"}),
}
_REFS = {"file_name_id=": "file_name", "function_name_id=": "function_name", "file_location_id=": "file_location"}


def _check_tables(tables: model.Tables) -> BlockResult:
    occ: list[Occurrence] = []
    diags: list[Diagnostic] = []
    defs: dict[str, set[str]] = {k: set() for k in _TABLE_KIND.values()}
    uses: list[tuple[str, str, model.Tok]] = []
    for entry in tables.entries:
        kind = _TABLE_KIND[entry.table]
        t = entry.id_tok
        keys = _TABLE_KEYS.get(entry.table)
        if keys is not None:
            given = [v for v in entry.value if v.type == "ATTR_NAME"]
            for k, v in enumerate(entry.value):
                if v.type == "ATTR_NAME" and (k + 1 >= len(entry.value) or entry.value[k + 1].type != "INT"):
                    diags.append(
                        error(Range(v.line, v.col, v.line, v.end), "invalid-attribute", f"{v.text} expects an integer")
                    )
            for v in given:
                if v.text[:-1] not in keys:
                    diags.append(
                        error(
                            Range(v.line, v.col, v.line, v.end - 1),
                            "unknown-attribute",
                            f"unexpected attribute '{v.text[:-1]}' in {entry.table}; allowed: "
                            + ", ".join(sorted(keys)),
                        )
                    )
            missing = sorted(keys - {v.text[:-1] for v in given})
            if missing:
                diags.append(
                    error(
                        Range(t.line, t.col, t.line, t.end),
                        "missing-attribute",
                        f"{entry.table} entry {t.text} needs {', '.join(k + '=' for k in missing)}",
                    )
                )
        occ.append(Occurrence(t.line, t.col, t.end, kind, t.text, "def"))
        defs[kind].add(t.text)
        vals = entry.value
        for i, v in enumerate(vals[:-1]):
            if v.type != "ATTR_NAME" or vals[i + 1].type != "INT":
                continue
            n = vals[i + 1]
            if v.text in _REFS:
                occ.append(Occurrence(n.line, n.col, n.end, _REFS[v.text], n.text, "use"))
                uses.append((_REFS[v.text], n.text, n))
            elif v.text == "parent_frame_id=":
                # Printed as parent id + 1 (HloParserImpl::ParseStackFramesList); 1 means no parent.
                parent = int(n.text) - 1
                if parent > 0:
                    occ.append(Occurrence(n.line, n.col, n.end, "stack_frame", str(parent), "use"))
                    uses.append(("stack_frame", str(parent), n))
                elif parent < 0:
                    diags.append(
                        warning(
                            Range(n.line, n.col, n.line, n.end),
                            "unknown-stack-frame",
                            "parent_frame_id= is the parent frame's id plus one; 0 is not valid",
                        )
                    )
    for kind, key, n in uses:
        if key not in defs[kind]:
            code = "unknown-stack-frame" if kind == "stack_frame" else "unknown-table-id"
            # A warning, not an error: XLA's parser (jaxlib 0.10.2) accepts dangling table ids.
            diags.append(
                warning(
                    Range(n.line, n.col, n.line, n.end),
                    code,
                    f"no {kind.replace('_', ' ')} with id {key} in the tables above",
                )
            )
    occ.sort(key=lambda o: (o.line, o.start))
    facts = BlockFacts(frames={k: 1 for k in defs["stack_frame"]})
    return BlockResult("tables", True, diags, occ, facts, table_defs=defs)


def validate_module(text: str) -> GrammarResult:
    """Diagnostics, occurrences (document order) and computation summaries for HLO module text."""
    try:
        return _validate_module(text)
    except Exception as exc:  # pragma: no cover - defensive
        return GrammarResult([error(Range(0, 0, 0, 1), "internal-error", f"internal error: {exc!r}")], [], [], [])


def _validate_module(text: str) -> GrammarResult:
    blocks = split_blocks(text)
    results = [validate_block(b) for b in blocks]
    diags: list[Diagnostic] = []
    occ: list[Occurrence] = []
    summaries: list[ComputationSummary] = []

    # Where each computation is defined: name -> (block index, document range).
    defined: dict[str, tuple[int, Range]] = {}
    entry_seen: Range | None = None
    frames: set[str] | None = None
    seen_computation = False
    for i, (b, r) in enumerate(zip(blocks, results)):
        dl = b.start_line
        if b.kind == "header" and (i > 0):
            diags.append(error(Range(dl, 0, dl, 9), "syntax-error", "'HloModule' must be the first line of the module"))
        if b.kind == "tables":
            if seen_computation:
                diags.append(
                    error(
                        Range(dl, 0, dl, 9),
                        "syntax-error",
                        "the FileNames/FunctionNames/FileLocations/StackFrames tables must come "
                        "before the first computation",
                    )
                )
            if r.ok:
                frames = set(r.facts.frames)
        if b.kind == "computation":
            seen_computation = True
        for d in r.diagnostics:
            diags.append(_shift_diag(d, dl))
        for name in r.facts.defines:
            rng = Range(name.line + dl, name.start, name.line + dl, name.end)
            if name.text in defined:
                diags.append(
                    error(
                        rng,
                        "duplicate-computation",
                        f"computation '{name.text}' is already defined",
                        related=(Related(defined[name.text][1], "first defined here"),),
                    )
                )
            else:
                defined[name.text] = (i, rng)
        if r.facts.entry is not None:
            t = r.facts.entry
            rng = Range(t.line + dl, t.col, t.line + dl, t.end)
            if entry_seen is not None:
                diags.append(
                    error(
                        rng,
                        "duplicate-entry",
                        "expects only one ENTRY computation",
                        related=(Related(entry_seen, "the first ENTRY"),),
                    )
                )
            else:
                entry_seen = rng
        if r.summary is not None:
            summaries.append(r.summary)
    for i, (b, r) in enumerate(zip(blocks, results)):
        dl = b.start_line
        for use in r.facts.calls:
            rng = Range(use.line + dl, use.start, use.line + dl, use.end)
            target = defined.get(use.name)
            if target is None:
                diags.append(error(rng, "unknown-computation", f"computation '{use.name}' does not exist"))
            elif target[0] >= i:
                what = "itself" if target[0] == i else "a computation defined below it"
                diags.append(
                    error(
                        rng,
                        "unknown-computation",
                        f"'{use.name}' is {what}; XLA's parser needs a called computation defined above its caller",
                        related=(Related(target[1], "defined here"),),
                    )
                )
        for use in r.facts.frame_uses:
            if frames is None or use.name not in frames:
                rng = Range(use.line + dl, use.start, use.line + dl, use.end)
                where = "the StackFrames table" if frames is not None else "this module (it has no StackFrames table)"
                # Warning: XLA's parser accepts a stack_frame_id that points nowhere.
                diags.append(warning(rng, "unknown-stack-frame", f"stack frame {use.name} is not in {where}"))
        if dl:
            occ.extend(Occurrence(o.line + dl, o.start, o.end, o.kind, o.key, o.role) for o in r.occurrences)
        else:
            occ.extend(r.occurrences)
    if not any(b.kind == "computation" for b in blocks) and not diags:
        last = max(0, text.count("\n"))
        diags.append(
            error(
                Range(0, 0, 0, 1) if not text.strip() else Range(last, 0, last, 1),
                "syntax-error",
                "the module has no computation",
            )
        )
    diags.sort(key=lambda d: (d.range.start_line, d.range.start_col))
    return GrammarResult(diags, occ, summaries, blocks)
