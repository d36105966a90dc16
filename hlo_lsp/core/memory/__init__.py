"""Device memory over program order, from a module's joined buffer files (`core.buffers`) and its HLO (`core.hlo`).

- `peak`: XLA's own peak reproduced exactly (its liveness rule), and the allocated view (bytes reserved per step,
  per category and memory colour, with padding).
- `diff`: what changed at the peak between two compilations.
"""
