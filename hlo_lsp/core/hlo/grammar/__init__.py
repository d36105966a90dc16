"""The HLO grammar: XLA-faithful validation of HLO module text, hand-written forms included.

``validate_module(text)`` returns a `GrammarResult` (diagnostics, occurrences in document order,
computation summaries, the block split).  ``split_blocks`` and ``validate_block`` expose the per-block
steps for incremental use.  Protocol-agnostic: no pygls or lsprotocol here.

One way through: `blocks` (split the text) -> `parser` (lark, per block) -> `model` (typed records) -> per block
`checks` (a computation: names, roots, parameters, signature; per instruction `arity`, `attribute_checks` with
`attributes` and `semantics` for values, `rules` for opcode rules and shape inference), `header`, `tables` ->
`module_pass` (what spans blocks) -> `results`; `validate` drives it and caches each block's result, `errors`
words syntax errors.
"""

from .blocks import Block, split_blocks
from .errors import caret_view
from .validate import BlockResult, ComputationSummary, GrammarResult, validate_block, validate_module

__all__ = [
    "Block",
    "BlockResult",
    "ComputationSummary",
    "GrammarResult",
    "caret_view",
    "split_blocks",
    "validate_block",
    "validate_module",
]
