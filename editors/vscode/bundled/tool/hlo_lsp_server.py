"""Start the hlo-lsp language server bundled with the VS Code extension, on stdio, with any Python 3.10+.

The server and its pure-Python dependencies sit in ../libs (made by scripts/bundle-server.sh); they go first on
sys.path, ahead of whatever the interpreter has installed, so the versions the extension was built with run.
"""

import os
import runpy
import sys

if sys.version_info < (3, 10):
    sys.stderr.write(f"hlo-lsp needs Python 3.10 or later; {sys.executable} is Python {sys.version.split()[0]}. "
                     "Select a newer interpreter in the Python extension, or put one first on PATH as python3.\n")
    sys.exit(3)
LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
if not os.path.isdir(os.path.join(LIBS, "hlo_lsp")):
    sys.stderr.write(f"hlo-lsp: the bundled server is missing from {LIBS} (npm run bundle-server makes it)\n")
    sys.exit(3)
sys.path.insert(0, LIBS)
runpy.run_module("hlo_lsp", run_name="__main__", alter_sys=True)
