"""Independent readers of the few dump facts the rule tests need, and the real dumps they use.

Nothing here imports hlo_lsp: expected values come from the dump text, read with small regexes of our own.
A `Module` is one module's buffer files: the old single file (every kind maps to the same path) or a split set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.fixtures import DATA, SHARED, parse_assignment_listing, split_sets

_ALLOC = re.compile(r"^allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)(.*):$")
_SEQ = re.compile(r"^    (\d+):(\S+)$")
_LIVE = re.compile(r"^    ([^ :{]+)(\{[\d,]*\}):(-?\d+)-(-?\d+)$")
_PEAK = re.compile(r"^    ([^ :{]+)(\{[\d,]*\})?: (\d+) bytes(?: \(cumulative: (\d+) bytes\))?$")
_USED = re.compile(r"^<(\d+) ([^ >{]+)(\{[\d,]*\})?")
KINDS = ("assignment", "values", "live-range", "memory-report")


@dataclass
class Module:
    name: str
    paths: dict[str, Path]  # kind -> file (all the same file for an old single dump)
    texts: dict[Path, str] = field(default_factory=dict)

    @property
    def single(self) -> bool:
        return len(set(self.paths.values())) == 1

    def lines(self, kind: str) -> list[str]:
        return self.texts[self.paths[kind]].split("\n")

    # -- facts ------------------------------------------------------------------------------------------
    def allocations(self) -> list[dict]:
        out = []
        for n, line in enumerate(self.lines("assignment")):
            m = _ALLOC.match(line)
            if m:
                flags = m.group(3)
                color = re.search(r", color (\d+)", flags)
                out.append(
                    {
                        "index": int(m.group(1)),
                        "size": int(m.group(2)),
                        "line": n,
                        "color": int(color.group(1)) if color else 0,
                        "thread_local": "thread-local" in flags,
                    }
                )
        return out

    def values(self) -> list[dict]:
        return parse_assignment_listing(self.texts[self.paths["assignment"]])

    def live(self) -> dict[str, tuple[int, int, int]]:
        """key -> (start, end, line)."""
        out = {}
        for n, line in enumerate(self.lines("live-range")):
            m = _LIVE.match(line)
            if m:
                out[m.group(1) + m.group(2)] = (int(m.group(3)), int(m.group(4)), n)
        return out

    def live_max(self) -> int | None:
        for line in self.lines("live-range"):
            m = re.match(r"^HloLiveRange \(max (\d+)\):$", line)
            if m:
                return int(m.group(1))
        return None

    def sequence(self) -> list[tuple[int, str, int]]:
        """(step, name, line) of InstructionSequence."""
        out, inside = [], False
        for n, line in enumerate(self.lines("live-range")):
            if line == "  InstructionSequence:":
                inside = True
                continue
            if inside:
                m = _SEQ.match(line)
                if not m:
                    break
                out.append((int(m.group(1)), m.group(2), n))
        return out

    def peak(self) -> tuple[int | None, list[dict]]:
        n_peak, rows, inside = None, [], False
        for n, line in enumerate(self.lines("live-range")):
            m = re.match(r"^  Live ranges at (\d+) \(peak\):$", line)
            if m:
                n_peak, inside = int(m.group(1)), True
                continue
            if inside:
                m = _PEAK.match(line)
                if not m:
                    break
                rows.append(
                    {
                        "instruction": m.group(1),
                        "index": m.group(2),
                        "bytes": int(m.group(3)),
                        "cumulative": int(m.group(4)) if m.group(4) else None,
                        "line": n,
                    }
                )
        return n_peak, rows

    def total_line(self) -> tuple[int, int] | None:
        """(line, value) of ``Total bytes used``."""
        for n, line in enumerate(self.lines("values")):
            m = re.match(r"^Total bytes used: (\d+) ", line)
            if m:
                return n, int(m.group(1))
        return None

    def used_blocks(self) -> list[tuple[int, int, str]]:
        """(first line, end line exclusive, key) of each value of ``Used values``."""
        lines = self.lines("values")
        out, inside, start, key = [], False, None, None
        for n, line in enumerate(lines):
            if line == "Used values:":
                inside = True
                continue
            if not inside:
                continue
            m = _USED.match(line)
            if m or not line.startswith(" "):
                if start is not None:
                    out.append((start, n, key))
                    start = None
                if m:
                    start, key = n, m.group(2) + (m.group(3) or "{}")
                else:
                    break
        if start is not None:
            out.append((start, len(lines), key))
        return out


def _load(name: str, paths: dict[str, Path]) -> Module:
    m = Module(name, {k: p.resolve() for k, p in paths.items()})
    for p in set(m.paths.values()):
        m.texts[p] = p.read_text()
    return m


def modules() -> list[Module]:
    """The old single-file seeds with a live range, and every jax-cpu split set, from tests/data."""
    out = []
    for p in sorted((DATA / "seeds").glob("*.txt")):
        if p.read_text().startswith("BufferAssignment:"):
            out.append(_load(p.name, {k: p for k in KINDS}))
    for files in split_sets(DATA / "jax-cpu"):
        if all(k in files for k in KINDS):
            out.append(_load(files["assignment"].name, {k: files[k] for k in KINDS}))
    return out


def all_dump_files() -> list[Path]:
    """Every real dump file in tests/data (hand-written invalid fixtures excluded) and in ../shared."""
    roots = [DATA, SHARED]
    out = []
    for root in roots:
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*")):
            if not p.is_file() or p.suffix not in (".txt", ".hlo") or "invalid" in p.parts:
                continue
            if "bench" in p.parts or "hooks" in p.parts:
                continue
            out.append(p.resolve())
    return out
