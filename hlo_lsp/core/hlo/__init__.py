"""HLO module text, read one way: text primitives -> instruction table and rows -> model -> readers -> index,
checks, incremental patching; the verifier's facts and rules beside it.

- `text` and `opcodes`: the primitives of HLO text every other module uses (instruction and name regexes,
  operand lists, attribute keys, bracket matching) and the one opcode table; nothing here knows a module.
- `instructions` (the instruction table by column), `rows` (one computation's lines as rows, the users map), then
  `model`: `HloModule`, its computations and instructions (built by the readers, never reading text itself beyond
  one line at a time).
- readers: `structure` (the column-0 lines: headers, tables, braces), `line` (one instruction line, for hover,
  edits and the checks), `grammar/` (the lark front end for hand-written text: split into blocks, parse, check
  each block, join), `bulk` (the rows pass over machine-written text, a repeated computation read from its
  first copy), `read` (`read_hlo`, which chooses).
- `index` (definitions and uses by name, per line on demand), `checks` (errors while editing), `incremental`
  (patch a module after an edit), `source` (the Python line an instruction's metadata names).
- `rules/`: XLA's verifier invariants over the model: `summary` (what a computation's rows clear), `candidates`
  (which instructions a rule must still read), `facts` (per-instruction lookups), `inference/` (shape inference
  by opcode family), `verifier`, `entry_layout`, `donation`.
"""
