"""XLA's verifier, for what its parser accepts: `verifier.verify(module)` runs rules that each name the invariant
of XLA they rely on. `summary` reads each computation's rows and clears what plainly agrees, `candidates` joins the
summaries into the instructions each rule must still read per line, `facts` looks those up (shapes, operands,
callees, ranges), `inference/` is shape inference by opcode family, `entry_layout` the entry computation's layout
and `donation` the donation hints."""
