"""The pass histories of the modules whose pass files are open: built once in a worker thread (`get` with
``build``), then answered from memory; rebuilt when the folder's listing changes (its mtime), at most
`KEEP` kept (a history holds the index of every distinct computation of its files)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from hlo_lsp.core.passes.history import PassHistory
from hlo_lsp.core.passes.names import PassFile, parse_pass_name, pass_modules

KEEP = 2


def _mtime(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


class PassHistories:
    def __init__(self) -> None:
        self._made: OrderedDict[tuple[str, str, str], tuple[int | None, PassHistory]] = OrderedDict()
        self._listings: dict[str, tuple[int | None, dict[tuple[str, str], list[PassFile]]]] = {}
        self._lock = threading.Lock()  # the maps
        self._build = threading.Lock()  # one history built at a time

    def files(self, path: str) -> list[PassFile] | None:
        """The pass-order files of ``path``'s module when ``path`` is one of them and its folder holds pass files."""
        f = parse_pass_name(path)
        if f is None or not os.path.isabs(path):
            return None
        folder = os.path.dirname(path)
        stamp = _mtime(folder)
        with self._lock:
            got = self._listings.get(folder)
        if got is None or got[0] != stamp:
            got = (stamp, pass_modules(folder))
            with self._lock:
                self._listings[folder] = got
                while len(self._listings) > 8:
                    self._listings.pop(next(iter(self._listings)))
        return got[1].get(f.key)

    def get(self, path: str, build: bool = False) -> PassHistory | None:
        """``path``'s module history; without ``build``, None until a worker thread has built it."""
        files = self.files(path)
        if not files:
            return None
        folder = os.path.dirname(path)
        key = (folder, *files[0].key)
        stamp = _mtime(folder)
        with self._lock:
            got = self._made.get(key)
            if got is not None and got[0] == stamp:
                self._made.move_to_end(key)
                return got[1]
        if not build:
            return None
        with self._build:
            with self._lock:
                got = self._made.get(key)
            if got is not None and got[0] == stamp:
                return got[1]
            h = PassHistory(files)
            with self._lock:
                self._made[key] = (stamp, h)
                while len(self._made) > KEEP:
                    self._made.popitem(last=False)
            return h

    def fork_locks(self) -> list:
        """The lock of the maps (see `Workspace.fork_locks`); never the build lock, which a build holds for
        seconds: a forked child asks for a history without building one."""
        return [self._lock]

    def is_history_file(self, path: str) -> bool:
        return bool(self.files(path))

    def retain(self, open_paths: list[str]) -> None:
        """Forget the histories and folder listings that no open document belongs to (memory follows what is
        open: a closed pass file's history holds the index of every distinct computation of its module)."""
        wanted = {(os.path.dirname(p), *f.key) for p in open_paths if (f := parse_pass_name(p)) is not None}
        with self._lock:
            for key in [k for k in self._made if k not in wanted]:
                del self._made[key]
            folders = {k[0] for k in wanted}
            for folder in [d for d in self._listings if d not in folders]:
                del self._listings[folder]
