"""The file names of a pass-by-pass dump (``--xla_dump_hlo_pass_re=.*``) and a module's files in pass order.

XLA names them (``xla/service/dump.cc``, ``hlo_pass_pipeline.cc``; jax 0.10.2 shown in ``corpus/jax-cpu-passes``)::

    module_NNNN.<module>.before_optimizations.txt                    the HLO given to XLA
    module_NNNN.<module>.SSSS.<pipeline>.after_<A>.before_<B>.txt    between two passes of <pipeline>
    module_NNNN.<module>.SSSS.<pass>.<step>.txt                      during one pass (copy-insertion's steps)
    module_NNNN.<module>.<backend>_after_optimizations.txt           the optimized module

``SSSS`` counts the module's pass files from 0000 with no gap; ``A`` is the pass that just ran and changed the
module (or ``pipeline-start``), ``B`` the pipeline's next pass (or ``pipeline-end``). Pass, pipeline and step names
hold no ``.``; a module name may (it is taken as everything between the id and the sequence number).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

BEFORE, BETWEEN, DURING, AFTER = "before", "between", "during", "after"

_MODULE_FILE = re.compile(r"^module_(\d+)\.(.+)\.txt$")
_SEQ = re.compile(r"^\d{4,}$")
_FINAL = re.compile(r"^(?:[A-Za-z0-9]+_)?after_optimizations$")


@dataclass(frozen=True, slots=True)
class PassFile:
    """One file of a module's pass history."""

    path: str
    module_id: str  # NNNN
    module: str  # the HloModule name as the file name spells it
    kind: str  # BEFORE, BETWEEN, DURING or AFTER
    seq: int | None = None  # SSSS (None for the before/after-optimizations files)
    seq_text: str | None = None  # SSSS as written ("0008")
    pipeline: str | None = None  # the pipeline (between) or the pass (during) that wrote the file
    after: str | None = None  # the pass that just ran (between: `after_<A>`; during: the pass itself)
    before: str | None = None  # the pipeline's next pass (between only)
    step: str | None = None  # the step name of a during-pass file

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def key(self) -> tuple[str, str]:
        """Which module's history the file belongs to."""
        return self.module_id, self.module

    @property
    def ran(self) -> str | None:
        """The pass whose change the file shows: `after` of a between-pass file unless it is the pipeline's start,
        the pass itself for a during-pass file, None otherwise."""
        if self.kind == DURING:
            return self.pipeline
        if self.kind == BETWEEN and self.after != "pipeline-start":
            return self.after
        return None

    def label(self) -> str:
        """``0035 fusion (HLO_passes_after_layout_assignment)``, ``before optimizations`` ..."""
        if self.kind == BEFORE:
            return "before optimizations"
        if self.kind == AFTER:
            return "after optimizations"
        if self.kind == DURING:
            return f"{self.seq_text} {self.pipeline}: {self.step}"
        if self.after == "pipeline-start":
            return f"{self.seq_text} {self.pipeline} starts (next: {self.before})"
        return f"{self.seq_text} {self.after} ({self.pipeline})"


def parse_pass_name(path: str) -> PassFile | None:
    """The pass file ``path`` names, or None when it is no file of a module's pass history."""
    base = os.path.basename(path)
    m = _MODULE_FILE.match(base)
    if m is None:
        return None
    module_id, rest = m.group(1), m.group(2)
    parts = rest.split(".")
    last = parts[-1]
    if len(parts) >= 2 and _FINAL.match(last):
        return PassFile(path, module_id, ".".join(parts[:-1]), AFTER)
    if len(parts) >= 2 and last == "before_optimizations":
        return PassFile(path, module_id, ".".join(parts[:-1]), BEFORE)
    seq_at = next((i for i in range(1, len(parts) - 1) if _SEQ.match(parts[i])), None)
    if seq_at is None:
        return None
    module, seq_text, pipeline = ".".join(parts[:seq_at]), parts[seq_at], parts[seq_at + 1]
    tail = ".".join(parts[seq_at + 2 :])
    seq = int(seq_text)
    if tail.startswith("after_") and ".before_" in tail:
        after, _, before = tail[len("after_") :].partition(".before_")
        return PassFile(path, module_id, module, BETWEEN, seq, seq_text, pipeline, after, before)
    if not tail:
        return None
    return PassFile(path, module_id, module, DURING, seq, seq_text, pipeline, pipeline, step=tail)


def order(files: list[PassFile]) -> list[PassFile]:
    """Pass order: before-optimizations, the numbered files by sequence, after-optimizations."""
    rank = {BEFORE: 0, BETWEEN: 1, DURING: 1, AFTER: 2}
    return sorted(files, key=lambda f: (rank[f.kind], f.seq if f.seq is not None else -1, f.name))


def pass_modules(folder: str) -> dict[tuple[str, str], list[PassFile]]:
    """Each module of ``folder`` that has numbered pass files, with all its history files in pass order."""
    found: dict[tuple[str, str], list[PassFile]] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    for n in names:
        if n.endswith(".txt"):
            f = parse_pass_name(os.path.join(folder, n))
            if f is not None:
                found.setdefault(f.key, []).append(f)
    return {k: order(v) for k, v in sorted(found.items()) if any(f.seq is not None for f in v)}


def history_files(path: str) -> list[PassFile] | None:
    """The pass-order files of the module ``path`` is a history file of, when its folder holds pass files."""
    f = parse_pass_name(path)
    if f is None:
        return None
    return pass_modules(os.path.dirname(os.path.abspath(path))).get(f.key)
