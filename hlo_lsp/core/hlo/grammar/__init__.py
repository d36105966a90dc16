"""The HLO grammar: XLA-faithful validation of HLO module text, hand-written forms included.

``validate_module(text)`` returns a `GrammarResult` (diagnostics, occurrences in document order,
computation summaries, the block split).  ``split_blocks`` and ``validate_block`` expose the per-block
steps for incremental use.  Protocol-agnostic: no pygls or lsprotocol here.
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
