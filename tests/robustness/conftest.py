"""The real server over stdio for the robustness tests: one module-scoped client (like tests/lsp), with the
server's chart cache pointed at a temporary folder so nothing lands in the user's home during tests."""

from __future__ import annotations

import os
import tempfile

from tests.server_client import SERVER, vscode_client

CACHE = tempfile.mkdtemp(prefix="hlo-lsp-robustness-cache-")
SERVER_ENV = {**os.environ, "XDG_CACHE_HOME": CACHE}

client = vscode_client(server_env=SERVER_ENV)

__all__ = ["CACHE", "SERVER", "SERVER_ENV", "client"]
