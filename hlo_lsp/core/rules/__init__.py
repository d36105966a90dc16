"""Semantic rules over parsed dumps: invariants XLA itself guarantees, so a violation is a real fault.

`buffer_rules.buffer_findings(bs)` checks a module's joined buffer files (`BufferSet`); `verifier.verify(mod)`
checks an HLO module for what XLA's parser accepts but its verifier would reject. Every rule is a small function
with a stable ``code`` and a docstring naming the XLA invariant it relies on.
"""

from hlo_lsp.core.rules.buffer_rules import BUFFER_RULES, Finding, buffer_findings  # noqa: F401
from hlo_lsp.core.rules.verifier import VERIFIER_RULES, verify  # noqa: F401
