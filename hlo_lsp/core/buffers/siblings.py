"""The files of one module's split set, found by exact stem in a file's own folder: ``<stem>-buffer-assignment.txt``,
``-buffer-assignment-values.txt``, ``-live-range.txt`` and ``-memory-usage-report.txt`` belong to ``<stem>.txt``
(the after-optimizations module text)."""

from __future__ import annotations

import os
from pathlib import Path

from hlo_lsp.core import kinds

#: File-name suffix of each split-set kind (the module text itself is kind ``"module"``), from `kinds`.
SPLIT_SUFFIXES: dict[str, str] = {kind: suffix for suffix, kind in kinds.SPLIT_SUFFIXES}


def split_stem(name: str) -> tuple[str, str] | None:
    """(stem, kind) of a dump file name: ``m-live-range.txt`` -> (``m``, ``live-range``), ``m.txt`` -> (``m``,
    ``module``); None when the name ends in neither."""
    for kind, suffix in SPLIT_SUFFIXES.items():
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], kind
    if name.endswith(".txt") and len(name) > 4:
        return name[:-4], "module"
    return None


def _inside(path: Path, folder_real: str) -> bool:
    """True when ``path`` is a regular file whose real location is directly in ``folder_real``."""
    try:
        if not path.is_file():
            return False
        return os.path.dirname(os.path.realpath(path)) == folder_real
    except OSError:
        return False


def split_siblings(path: str | os.PathLike) -> dict[str, Path]:
    """The existing files of ``path``'s split set, by kind (``module``, ``assignment``, ``values``,
    ``live-range``, ``memory-report``), looked up by exact stem in ``path``'s own folder only; a symlink whose
    target lies outside that folder is left out. {} when the name is not a dump file name."""
    p = Path(path)
    parsed = split_stem(p.name)
    if parsed is None:
        return {}
    stem = parsed[0]
    folder = p.parent
    try:
        folder_real = os.path.realpath(folder)
    except OSError:
        return {}
    out: dict[str, Path] = {}
    candidates = {"module": stem + ".txt", **{k: stem + s for k, s in SPLIT_SUFFIXES.items()}}
    for kind, name in candidates.items():
        c = folder / name
        if _inside(c, folder_real):
            out[kind] = c
    return out


def split_sets(folder: str | os.PathLike) -> dict[str, dict[str, Path]]:
    """Every split set in one folder (not its subfolders): stem -> kind -> path, for stems with at least one
    buffer file; {} when none or the folder cannot be listed."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    stems: set[str] = set()
    for name in names:
        parsed = split_stem(name)
        if parsed is not None and parsed[1] != "module":
            stems.add(parsed[0])
    out: dict[str, dict[str, Path]] = {}
    for stem in sorted(stems):
        sib = split_siblings(Path(folder) / (stem + SPLIT_SUFFIXES["assignment"]))
        if any(k != "module" for k in sib):
            out[stem] = sib
    return out
