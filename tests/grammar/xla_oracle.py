"""Run XLA's own HLO parser on one module read from stdin; print one JSON line.

Executed in a subprocess with the Python that has jaxlib (HLO_LSP_XLA_PYTHON), because XLA's parser
aborts the whole process on some inputs.  Output: {"ok": bool, "line": first error line (1-based) or
null, "message": first error message}.
"""

import json
import re
import sys

from jaxlib import _hlo

text = sys.stdin.read()
try:
    _hlo.hlo_module_from_text(text)
    print(json.dumps({"ok": True, "line": None, "message": ""}))
except Exception as exc:  # XLA reports every parse error as an exception with "was parsing L:C:"
    msg = str(exc)
    m = re.search(r"was parsing (\d+):(\d+): error: ([^\n]*)", msg)
    line = int(m.group(1)) if m else None
    print(json.dumps({"ok": False, "line": line, "message": (m.group(3) if m else msg)[:300]}))
