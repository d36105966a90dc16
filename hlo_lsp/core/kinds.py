"""What kind of XLA dump a document is, from its file name and its first lines (never from a client's
``languageId``: a client without our plugin sends ``plaintext``), and which files of one module belong together.

Kinds: ``hlo`` (module text), and the buffer-assignment kinds ``single`` (the old one-file dump), ``assignment``,
``values``, ``live-range``, ``memory-report`` (the current split set). `module_stem` gives the stem that pairs a
split set with its after-optimizations HLO file: ``<stem>.txt``, ``<stem>-buffer-assignment.txt``, ...
"""

from __future__ import annotations

import os
import re
from pathlib import Path

HLO = "hlo"
SINGLE = "single"
ASSIGNMENT = "assignment"
VALUES = "values"
LIVE_RANGE = "live-range"
MEMORY_REPORT = "memory-report"
BUFFER_KINDS = (SINGLE, ASSIGNMENT, VALUES, LIVE_RANGE, MEMORY_REPORT)

# longest suffix first: "-buffer-assignment-values.txt" also ends like neither of the others
SPLIT_SUFFIXES = (
    ("-buffer-assignment-values.txt", VALUES),
    ("-buffer-assignment.txt", ASSIGNMENT),
    ("-live-range.txt", LIVE_RANGE),
    ("-memory-usage-report.txt", MEMORY_REPORT),
)
_HLO_NAME = re.compile(r"(\.hlo|\.hlo\.txt|before_optimizations\.txt|after_optimizations\.txt)$")
_FIRST_LINE_KINDS = (
    ("HloModule", HLO),
    ("BufferAssignment:", SINGLE),
    ("HloLiveRange", LIVE_RANGE),
    ("Total bytes used:", VALUES),
    ("Used values:", VALUES),
    ("Memory Space:", MEMORY_REPORT),
)


def _first_line(head: str) -> str:
    for line in head.lstrip("\ufeff").splitlines()[:50]:
        s = line.strip()
        if s:
            return s
    return ""


def detect_kind(path: str | None, head: str) -> str | None:
    """The dump kind of a document from its path and its first few KB; None when it is none of ours.

    The file name decides first (split-set suffixes, HLO names); a split-set name whose content says otherwise
    still follows the name, since its siblings are paired by name. Otherwise the first non-empty line decides.
    """
    name = os.path.basename(path or "")
    for suffix, kind in SPLIT_SUFFIXES:
        if name.endswith(suffix):
            return kind
    first = _first_line(head)
    for prefix, kind in _FIRST_LINE_KINDS:
        if first.startswith(prefix):
            return kind
    if _HLO_NAME.search(name):
        return HLO
    return None


def module_stem(path: str | Path) -> tuple[str, str] | None:
    """(folder, stem) of a split-set file or an after-optimizations HLO file; None for other files.

    ``x/m.cpu_after_optimizations-live-range.txt`` and ``x/m.cpu_after_optimizations.txt`` both give
    ``("x", "m.cpu_after_optimizations")``. The before-optimizations module is never paired: its instruction
    names differ from the ones the buffer assignment talks about.
    """
    p = Path(path)
    name = p.name
    for suffix, _ in SPLIT_SUFFIXES:
        if name.endswith(suffix):
            return str(p.parent), name[: -len(suffix)]
    if name.endswith("after_optimizations.txt"):
        return str(p.parent), name[: -len(".txt")]
    return None


def sibling_paths(path: str | Path) -> dict[str, Path]:
    """The files of ``path``'s module that exist beside it: kind -> path (``hlo`` and the split kinds).

    Only the document's own folder is looked at; a sibling that is a symlink leading out of that folder is left
    out, so discovery never escapes the folder.
    """
    ms = module_stem(path)
    if ms is None:
        return {}
    folder, stem = ms
    base = Path(folder)
    try:
        real_base = base.resolve()
    except OSError:
        return {}
    out: dict[str, Path] = {}
    candidates = [(HLO, base / f"{stem}.txt")] + [(kind, base / f"{stem}{suffix}") for suffix, kind in SPLIT_SUFFIXES]
    for kind, cand in candidates:
        try:
            if cand.is_file() and cand.resolve().parent == real_base:
                out[kind] = cand
        except OSError:
            continue
    return out
