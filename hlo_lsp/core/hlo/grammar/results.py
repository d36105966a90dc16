"""What the grammar's checks return: a block's `BlockResult`, a module's `GrammarResult`, and the
`ComputationSummary` of each computation (the outline)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_lsp.core.diagnostics import Diagnostic, Range
from hlo_lsp.core.occurrences import Occurrence

from .blocks import Block
from .checks import BlockFacts


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
