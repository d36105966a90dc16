"""What kind of XLA dump a document is, from its file name and its first lines (never from a client's
``languageId``: a client without our plugin sends ``plaintext``), and which files of one module belong together.

Kinds: ``hlo`` (module text), and the buffer-assignment kinds ``single`` (the old one-file dump), ``assignment``,
``values``, ``live-range``, ``memory-report`` (the current split set). ``oom``: XLA's out-of-memory report
(``RESOURCE_EXHAUSTED``), under any name and inside a longer log, told by its text (`Workspace` looks at the whole
text of a document no name or first line claims), or the dump's own ``*oom_top_memory_consuming_instructions``.
``companion``: one of the other files XLA writes into a dump folder (GPU thunk sequences, TPU and GPU config text
protos, flag files), recognized by name so that opening one says what it is (`describe_companion`) instead of
nothing or an error.
`module_stem` gives the stem that pairs a split set with its after-optimizations HLO file: ``<stem>.txt``,
``<stem>-buffer-assignment.txt``, ...
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

HLO = "hlo"
SINGLE = "single"
ASSIGNMENT = "assignment"
VALUES = "values"
LIVE_RANGE = "live-range"
MEMORY_REPORT = "memory-report"
BUFFER_KINDS = (SINGLE, ASSIGNMENT, VALUES, LIVE_RANGE, MEMORY_REPORT)
COMPANION = "companion"
OOM = "oom"  # XLA's out-of-memory report, saved or inside a longer log (`core.memory.oom`)

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


# The files XLA's dump writers put beside a module's HLO (matched on the name's end: `module_NNNN.<name>.` comes
# first, or a folder of their own for PJRT's), and what each holds.
_COMPANIONS = tuple(
    (re.compile(pattern + r"\Z"), what)
    for pattern, what in (
        (
            r"thunk_sequence(?:_[a-z_]+)?\.txt",
            "GPU thunk sequence: the thunks (kernel launches, copies, collectives, "
            "async start/done) the GPU executable runs, in order, with their stream and dependency edges",
        ),
        (r"thunk_metadata\.txt", "GPU thunk metadata (text proto): each thunk's id, kind and profile annotation"),
        (
            r"gpu_target_config\.pbtxt",
            "GPU target config (text proto): the device description the GPU compiler "
            "targeted (compute capability, memory, core counts)",
        ),
        (
            r"autotune_results\.pbtxt",
            "GPU autotuning results (text proto): the implementation chosen for each autotuned instruction",
        ),
        (
            r"(?:^|\.)config\.pbtxt",
            "HLO module config (text proto): entry computation layout, replica and partition counts, compiler options",
        ),
        (
            r"hlo_module_config\.txt",
            "HLO module config (text proto): entry computation layout, replica and partition counts, compiler options",
        ),
        (
            r"(?:^|\.)debug_options",
            "XLA debug options (text proto): the DebugOptions (XLA_FLAGS) the module was compiled with",
        ),
        (r"(?:^|\.)flagfile", "XLA flag file: every compiler flag in effect, one `--flag=value` a line"),
        (r"tpu_comp_env\.txt", "TPU compilation environment (text proto): the TPU compiler's own options"),
        (
            r"execution_options\.txt",
            "XLA execution options (text proto): device assignment, replicas, partitions and SPMD settings",
        ),
        (
            r"target_arguments\.txt",
            "TPU target arguments (text proto): the topology and chip the TPU compiler targeted",
        ),
        (r"transfer_stats\.txt", "TPU host transfer statistics (text proto)"),
        (
            r"basic_compiler_metadata\.txt",
            "TPU compiler metadata (text proto): program id, executable size, optimized instruction count",
        ),
        (
            r"(?:^|\.)compile_options\.(?:textproto|pb)",
            "PJRT compile options (text proto, or binary for .pb): the options the executable was compiled with",
        ),
        (
            r"(?:^|\.)topology\.(?:textproto|pb)",
            "PJRT topology (text proto, or binary for .pb): the devices the executable was compiled for",
        ),
    )
)


def describe_companion(path: str | None) -> str | None:
    """What the XLA dump file at ``path`` holds when it is one of the companion files (see `_COMPANIONS`): one
    sentence that says so and that hlo-lsp reads no further; None for any other name."""
    name = os.path.basename(path or "")
    for pattern, what in _COMPANIONS:
        if pattern.search(name):
            return (
                f"{what}. XLA writes it beside the module's HLO; it is neither HLO nor a buffer dump, so "
                "hlo-lsp offers nothing more here."
            )
    return None


def _first_line(head: str) -> str:
    for line in head.lstrip("\ufeff").splitlines()[:50]:
        s = line.strip()
        if s:
            return s
    return ""


HEAD_CHARS = 8192  # how much of a document's beginning `detect_kind` is given


def detect_kind(path: str | None, head: str) -> str | None:
    """The dump kind of a document from its path and its first few KB; None when it is none of ours.

    The file name decides first (split-set suffixes, HLO names); a split-set name whose content says otherwise
    still follows the name, since its siblings are paired by name. Otherwise the first non-empty line decides.
    """
    name = os.path.basename(path or "")
    for suffix, kind in SPLIT_SUFFIXES:
        if name.endswith(suffix):
            return kind
    if name.endswith("oom_top_memory_consuming_instructions"):
        return OOM
    if describe_companion(name) is not None:
        return COMPANION
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


SETTLED_NS = 2_000_000_000  # a folder changed this long ago has its sibling lists kept (see `sibling_paths`)
_SIBLINGS_KEPT = 4096
_siblings: dict[str, tuple[tuple[int, int, int, int], dict[str, Path]]] = {}


def sibling_paths(path: str | Path) -> dict[str, Path]:
    """The files of ``path``'s module that exist beside it: kind -> path (``hlo`` and the split kinds).

    Only the document's own folder is looked at; a sibling that is a symlink leading out of that folder is left
    out, so discovery never escapes the folder.

    Every hover and definition asks this (a document's bundle is keyed by its siblings), and finding them costs
    some 25 system calls (each candidate's ``stat``, each path component's ``lstat`` for the symlink check). Each
    call lets a busy worker thread take the GIL, and getting it back costs the request up to a switch interval:
    10-20 ms a hover while a whole-document answer was computed. So the answer is kept per folder state: the
    folder's device, inode, modification and status-change times. They change whenever an entry is added,
    removed, renamed or replaced (a symlink re-pointed included); the status-change time also whenever the
    modification time is set back (it cannot be set); the inode when a symlink on the way leads elsewhere. One
    ``stat`` of the folder then checks it. A folder changed within the last `SETTLED_NS` is never trusted this
    way (as git does with racily clean files): its timestamps' granularity could hide a second change.
    """
    ms = module_stem(path)
    if ms is None:
        return {}
    key = str(path)
    try:
        st = os.stat(ms[0])
    except OSError:
        return {}
    stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    kept = _siblings.get(key)
    if kept is not None and kept[0] == stamp:
        return dict(kept[1])
    found = _find_siblings(*ms)
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_NS:
        if len(_siblings) >= _SIBLINGS_KEPT:
            _siblings.clear()
        _siblings[key] = (stamp, found)
    return dict(found)


def _find_siblings(folder: str, stem: str) -> dict[str, Path]:
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


def buffer_modules(folder: str) -> list[str]:
    """One file of each module with buffer files under ``folder``, walked in name order (hidden folders and
    symlinked folders skipped): each ``*-buffer-assignment.txt`` (current split sets, older single files), and each
    other ``.txt`` whose first line is ``BufferAssignment:`` (old dumps with plain names)."""
    out = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(here, d)))
        for name in sorted(files):
            path = os.path.join(here, name)
            if name.endswith("-buffer-assignment.txt"):
                out.append(path)
            elif name.endswith(".txt") and module_stem(path) is None and _head_kind(path) == SINGLE:
                out.append(path)
    return out


def _head_kind(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return None
    return detect_kind(path, head)
