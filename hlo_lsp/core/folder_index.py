"""A symbol index of whole dump folders, built in a background thread.

Dump folders made with ``--xla_dump_hlo_pass_re=.*`` hold thousands of files. Opening one document never reads
its neighbours; the first workspace-symbol query starts `FolderIndex.start`, which walks the folder (never
following a symlink out of it) and keeps, per HLO file, the module name and every computation with its line.
Queries scan a flat list of lower-cased names (a few hundred thousand entries answer in tens of ms) and see
whatever the walk has indexed so far.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass

from hlo_lsp.core import kinds

MAX_FILE_BYTES = 256 << 20
_HEADER = re.compile(rb"^(?:ENTRY[ \t]+)?%?([^\s(%{=}/][^\s(%{=]*)[^\n]*\{[ \t]*\r?$", re.M)
_MODULE = re.compile(rb"^HloModule[ \t]+([^\s,]+)", re.M)


@dataclass(frozen=True, slots=True)
class FolderSymbol:
    name: str
    kind: str  # "module" | "function"
    path: str
    line: int
    col: int
    container: str


class FolderIndex:
    """Symbols of every HLO file under ``root``; thread-safe, filled by one background walk."""

    def __init__(self, root: str):
        self.root = os.path.realpath(root)
        self._symbols: list[FolderSymbol] = []
        self._lower: list[str] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.files_indexed = 0
        self.done = threading.Event()

    def start(self) -> None:
        """Start the background walk (once)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._walk, name=f"hlo-index:{self.root}", daemon=True)
            self._thread.start()

    def _walk(self) -> None:
        try:
            for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
                dirnames.sort()
                for name in sorted(filenames):
                    if name.endswith((".txt", ".hlo")):
                        self._index_file(os.path.join(dirpath, name))
        finally:
            self.done.set()

    def _index_file(self, path: str) -> None:
        try:
            if not os.path.realpath(path).startswith(self.root + os.sep):
                return  # a symlink leading out of the folder
            if os.path.getsize(path) > MAX_FILE_BYTES:
                return
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return
        if b"\x00" in data[:4096]:
            return
        head = data[:4096].decode("utf-8", errors="replace")
        if kinds.detect_kind(path, head) != kinds.HLO:
            return
        found: list[FolderSymbol] = []
        module = ""
        m = _MODULE.search(data, 0, 4096)
        if m:
            module = m.group(1).decode("utf-8", errors="replace")
            ln = data.count(b"\n", 0, m.start())
            found.append(FolderSymbol(module, "module", path, ln, m.start(1) - m.start(), ""))
        ln = 0
        prev = 0
        for h in _HEADER.finditer(data):
            ln += data.count(b"\n", prev, h.start())
            prev = h.start()
            name = h.group(1).decode("utf-8", errors="replace")
            found.append(FolderSymbol(name, "function", path, ln, h.start(1) - h.start(), module))
        with self._lock:
            self._symbols.extend(found)
            self._lower.extend(s.name.lower() for s in found)
            self.files_indexed += 1

    def query(self, query: str, limit: int = 500) -> list[FolderSymbol]:
        """Symbols whose name contains ``query`` (case-insensitive), prefix matches first; at most ``limit``."""
        q = query.lower()
        with self._lock:
            lower = self._lower
            n = len(lower)
            symbols = self._symbols
            hits = [i for i in range(n) if q in lower[i]] if q else list(range(min(n, limit)))
        hits.sort(key=lambda i: (not lower[i].startswith(q), len(lower[i])))
        return [symbols[i] for i in hits[:limit]]
