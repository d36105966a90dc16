"""Device memory over program order, from a module's joined buffer files (`core.buffers`) and its HLO (`core.hlo`).

- `values`: one value as the memory views see it (shape, bytes, category, padding, source line).
- `allocated`: the allocated view (bytes reserved per step, per category and memory colour, values sharing a
  buffer counted once, entry parameters' allocations whole).
- `peak`: XLA's own peak reproduced exactly (its liveness rule), beside the allocated view, in one report.
- `figures`: XLA's peak, the allocated peak and Total bytes reconciled, with why they differ.
- `groups`: a peak's values grouped by source line, op_name, dtype, category or parameter.
- `heapmap`: each value at its offset in its allocation over its live range, and the allocations and memory
  spaces at the allocated peak (held, fragmentation, padding).
- `diff`: what changed at the peak between two compilations.
- `oom`: XLA's RESOURCE_EXHAUSTED report read and tied to the dump of the failed compilation.
"""
