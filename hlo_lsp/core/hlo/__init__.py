"""HLO module text, read one way: text primitives -> model -> readers -> index, checks, incremental patching.

- `text`: the primitives of HLO text every other module uses (instruction and name regexes, operand lists,
  attribute keys, bracket matching); nothing here knows a module.
- `model`: `HloModule`, its computations and its instruction table (built by the readers, never reading text itself
  beyond one line at a time).
- readers: `bulk` (one regex pass per computation over machine-written text, split across a forked child for
  large modules), `line` (one instruction line, for hover, edits and the checks), `grammar/` (the lark front end
  for hand-written text: syntax errors with a caret, then structure checks).
- `index` (definitions and uses by name), `checks` (errors while editing), `incremental` (patch a module after an
  edit), `source` (the Python line an instruction's metadata names), `opcodes`.
- `rules/`: XLA's verifier invariants and shape inference over the model (facts, summary, verifier).
"""
