"""Buffer-assignment dumps, read one way: text primitives -> records -> columns -> model -> section readers -> join.

- `text`: line primitives of the dump (value names, ``from instruction:`` spans, used-value blocks).
- `records`: one record class per kind of line (allocation, value, live range, peak entry, report row).
- `columns`: the record lists kept by column (compact for 10 MB files), read back as records.
- `model`: `BufferDoc`, one file's model.
- `reader` alternates between the current section's fast loop and a per-line dispatch to the section readers:
  `read_allocations`, `read_values`, `read_live_range` (live ranges, the peak list and its stack-trace
  breakdown), `read_report` (memory-usage report), over the state they share (`read_common`).
- `read`: `read_buffers`, the reader over a whole file, or for a large values or assignment file two reads at
  once, the later part's in a forked child (`halves`), joined as `patch` splices a block into a model.
- the join of a module's files: `value` (`BufferValue`, each fact read from the record it was joined from),
  `join` (the documents merged per value key), `bufferset` (`BufferSet`, the lookups); `siblings` (a split set's
  files by name).
- `rules/`: the buffer invariants XLA guarantees (`context`, `allocations`, `live_ranges`, `overlap`).

This package is the public face of the model and the reader:

``read_buffers(text, kind_hint=None) -> BufferDoc`` reads the old single-file dump or any file of the split set;
see `hlo_lsp.core.buffers.reader` for the algorithm and `hlo_lsp.core.buffers.bufferset` for joining a module's files.
"""

from hlo_lsp.core.buffers.model import BufferDoc  # noqa: F401
from hlo_lsp.core.buffers.read import read_buffers  # noqa: F401
from hlo_lsp.core.buffers.reader import SUFFIX_KINDS, kind_from_path  # noqa: F401
from hlo_lsp.core.buffers.records import (  # noqa: F401
    KINDS,
    Allocation,
    Assignment,
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

__all__ = [
    "KINDS",
    "Allocation",
    "Assignment",
    "BufferDoc",
    "LiveRange",
    "MemoryRow",
    "MemoryTable",
    "PeakEntry",
    "Position",
    "SequenceStep",
    "StackNode",
    "Use",
    "UsedValue",
    "SUFFIX_KINDS",
    "kind_from_path",
    "read_buffers",
]
