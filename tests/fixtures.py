"""Test helpers: ``$0`` cursor markers, real-dump locations, and an independent reader of dump text.

The one place the tests find the shared corpus of real XLA dumps: ``SHARED`` is ``../shared`` beside the
checkout, or the folder named by ``$HLO_LSP_SHARED``. Sweeps over it use ``require_found``: they skip cleanly
without it and fail under ``CI=true`` (a wrong path must not pass).

The independent reader (`parse_assignment_listing`, `parse_live_ranges`, ...) uses its own small regexes so
that tests never take expected values from hlo_lsp itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
SHARED = Path(os.environ.get("HLO_LSP_SHARED") or REPO.parent / "shared")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_found(found, what: str) -> None:
    """Skip when ``found`` is empty (the shared corpus is optional), except under CI=true, where it fails."""
    if not found:
        where = f"{what} (shared corpus: {SHARED}; set HLO_LSP_SHARED to put it elsewhere)"
        if IN_CI:
            pytest.fail(f"none found under CI=true: {where}")
        pytest.skip(f"none found: {where}")


def cursor(text: str, marker: str = "$0") -> tuple[str, int, int]:
    """(text without the marker, line, column) of the single ``$0`` marker in ``text``."""
    i = text.index(marker)
    before = text[:i]
    line = before.count("\n")
    col = i - (before.rfind("\n") + 1)
    return before + text[i + len(marker) :], line, col


def find(lines: list[str], needle: str, start_line: int = 0) -> tuple[int, int]:
    """(line, column) of the first occurrence of ``needle`` at or after ``start_line``."""
    for n in range(start_line, len(lines)):
        c = lines[n].find(needle)
        if c >= 0:
            return n, c
    raise AssertionError(f"{needle!r} not found")


def split_sets(root: Path) -> list[dict[str, Path]]:
    """Every split set under ``root``: {'hlo','assignment','values','live-range','memory-report'} -> path."""
    out = []
    for ba in sorted(root.rglob("*-buffer-assignment.txt")):
        stem = ba.name[: -len("-buffer-assignment.txt")]
        files = {
            "hlo": ba.with_name(stem + ".txt"),
            "assignment": ba,
            "values": ba.with_name(stem + "-buffer-assignment-values.txt"),
            "live-range": ba.with_name(stem + "-live-range.txt"),
            "memory-report": ba.with_name(stem + "-memory-usage-report.txt"),
        }
        out.append({k: v for k, v in files.items() if v.exists()})
    return out


_ALLOC = re.compile(r"^allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)")
_VALUE = re.compile(
    r"^ value: <(\d+) ([^ >{]+)(\{[\d,]*\})?(?: \(phi\))?(?: @\d+)?> \(size=(\d+),offset=(\d+)\): (.*)$"
)
_LIVE = re.compile(r"^    ([^ :{]+)(\{[\d,]*\}):(-?\d+)-(-?\d+)$")


def parse_assignment_listing(text: str) -> list[dict]:
    """Values of an allocation listing: id, instruction, key, size, offset, shape, allocation, line, col."""
    out = []
    alloc = None
    alloc_line = None
    for n, line in enumerate(text.split("\n")):
        m = _ALLOC.match(line)
        if m:
            alloc, alloc_line = int(m.group(1)), n
            continue
        m = _VALUE.match(line)
        if m:
            instr, idx = m.group(2), m.group(3) or "{}"
            out.append(
                {
                    "id": int(m.group(1)),
                    "instruction": instr,
                    "key": instr + idx,
                    "size": int(m.group(4)),
                    "offset": int(m.group(5)),
                    "shape": m.group(6),
                    "allocation": alloc,
                    "allocation_line": alloc_line,
                    "line": n,
                    "col": line.index(instr, 10),
                }
            )
    return out


def parse_live_ranges(text: str) -> dict[str, tuple[int, int]]:
    """``name{index}`` -> (start, end) from a BufferLiveRange section."""
    out = {}
    for line in text.split("\n"):
        m = _LIVE.match(line)
        if m:
            out[m.group(1) + m.group(2)] = (int(m.group(3)), int(m.group(4)))
    return out


def instruction_lines(hlo_text: str) -> dict[str, int]:
    """Instruction name -> its defining line in HLO text (first definition)."""
    out: dict[str, int] = {}
    for n, line in enumerate(hlo_text.split("\n")):
        m = re.match(r"^\s+(?:ROOT )?%([^ =]+) = ", line)
        if m and m.group(1) not in out:
            out[m.group(1)] = n
    return out


def tuple_elements(shape: str) -> list[str] | None:
    """The top-level element shapes of a tuple shape's text (XLA's ``/*index=5*/`` notes removed), split at the
    commas outside brackets, braces and parentheses: the tests' own reading, independent of the parser; None for
    a shape that is not a tuple."""
    s = re.sub(r"/\*[^*]*\*/", "", shape).strip()
    if not s.startswith("(") or not s.endswith(")"):
        return None
    out, depth, cur = [], 0, ""
    for ch in s[1:-1]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out
