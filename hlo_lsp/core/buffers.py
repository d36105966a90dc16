"""Buffer-assignment documents: the public face of the model (`buffers_model`) and reader (`buffers_reader`).

``read_buffers(text, kind_hint=None) -> BufferDoc`` reads the old single-file dump or any file of the split set;
see `hlo_lsp.core.buffers_reader` for the algorithm and `hlo_lsp.core.bufferset` for joining a module's files.
"""

from hlo_lsp.core.buffers_model import (  # noqa: F401
    KINDS,
    Allocation,
    Assignment,
    BufferDoc,
    LiveRange,
    MemoryRow,
    MemoryTable,
    PeakEntry,
    Position,
    SequenceStep,
    StackNode,
    Use,
    UsedValue,
)
from hlo_lsp.core.buffers_reader import SUFFIX_KINDS, kind_from_path, read_buffers  # noqa: F401

__all__ = [
    "KINDS", "Allocation", "Assignment", "BufferDoc", "LiveRange", "MemoryRow", "MemoryTable", "PeakEntry",
    "Position", "SequenceStep", "StackNode", "Use", "UsedValue", "SUFFIX_KINDS", "kind_from_path", "read_buffers",
]
