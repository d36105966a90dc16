"""XLA's verifier, for what its parser accepts: `verifier.verify(module)` runs rules that each name the invariant
of XLA they rely on (`facts` gathers per-instruction facts, `summary` the computations' signatures, `inference/`
shape inference by opcode family, `entry_layout` the entry computation's layout)."""
