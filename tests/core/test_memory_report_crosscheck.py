"""Cross-check of the buffer reader against XLA's own ``-memory-usage-report.txt``.

The expected side is parsed here from the report and the assignment text with plain regexes and formatted
with a copy of ``tsl::strings::HumanReadableNumBytes`` written in this file; nothing on that side imports
hlo_lsp. The actual side is what ``read_buffers`` made of the split files. For every split set:
- each report table matches exactly one allocation the reader found: the same distinct slices (offset, size
  at the report's printed precision, number of values on the slice); XLA prints only the ~50 largest
  allocations, so the allocations without a table must be no larger than any printed one (in 21 of the 23
  sets every allocation has its table);
- the report's ``Total bytes`` == ``Total bytes used`` (values file) == the sum of the allocation sizes;
- the number of values equals the number of ``value:`` lines, and of used values in the values file.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.fixtures import DATA as _DATA
from tests.fixtures import SHARED as _SHARED
from tests.fixtures import require_found

DATA = _DATA / "jax-cpu"
SHARED = _SHARED / "corpus"

# ------------------------------------------------------------------ expected side (no hlo_lsp imports)

ROW = re.compile(r"^\s*([0-9.]+(?:[KMGTPE]iB|B))\(\s*(\d+)%\);\s*([0-9.]+(?:[KMGTPE]iB|B));\s*(\d+);\s*(\d+);\s*(.*)$")
TOTAL = re.compile(r"^Total bytes: (\d+) \(", re.M)
TOTAL_USED = re.compile(r"^Total bytes used: (\d+) \(", re.M)
VALUE_LINE = re.compile(r"^ value: ", re.M)
VALUE_HEADER = re.compile(r"^<\d+ ", re.M)
ALLOC_SIZE = re.compile(r"^allocation \d+: size (\d+)", re.M)


def xla_human(n: int) -> str:
    """HumanReadableNumBytes, transcribed from tsl/platform/numbers.cc."""
    if n < 1024:
        return f"{n}B"
    units = "KMGTPE"
    u = 0
    while n >= 1024 * 1024:
        n //= 1024
        u += 1
    return f"{n / 1024.0:.1f}KiB" if u == 0 else f"{n / 1024.0:.2f}{units[u]}iB"


def report_tables(text: str) -> list[frozenset]:
    """Each table as a set of (offset, size as printed, n_values) rows."""
    tables: list[set] = []
    for line in text.split("\n"):
        if "cumulative_size;" in line:
            tables.append(set())
            continue
        m = ROW.match(line)
        if m:
            tables[-1].add((int(m.group(4)), m.group(3), int(m.group(5))))
    return [frozenset(t) for t in tables]


def split_sets(root: Path) -> list[tuple[str, Path]]:
    out = []
    for report in sorted(root.glob("*/*-memory-usage-report.txt")):
        stem = report.name[: -len("-memory-usage-report.txt")]
        out.append((stem, report.parent))
    return out


SETS = split_sets(DATA)


def test_corpus_has_split_sets():
    assert len(SETS) == 23


def _check(stem: str, folder: Path) -> None:
    from hlo_lsp.core.buffers import read_buffers  # the actual side only

    assignment_text = (folder / f"{stem}-buffer-assignment.txt").read_text(encoding="utf-8")
    values_text = (folder / f"{stem}-buffer-assignment-values.txt").read_text(encoding="utf-8")
    report_text = (folder / f"{stem}-memory-usage-report.txt").read_text(encoding="utf-8")

    # expected, from the text alone
    tables = Counter(report_tables(report_text))
    report_total = sum(int(t) for t in TOTAL.findall(report_text))
    used_total = int(TOTAL_USED.search(values_text).group(1))
    listed_sizes = [int(s) for s in ALLOC_SIZE.findall(assignment_text)]
    n_value_lines = len(VALUE_LINE.findall(assignment_text))
    n_value_headers = len(VALUE_HEADER.findall(values_text))

    # actual, from the reader
    doc = read_buffers(assignment_text, "assignment")
    vdoc = read_buffers(values_text, "values")
    assert doc.diagnostics == [] and vdoc.diagnostics == []
    # XLA prints at most about 50 tables (the largest allocations, by size); every allocation it prints must
    # match one table, and any allocation left out is no larger than the smallest one printed.
    n_tables = sum(tables.values())
    assert n_tables <= len(doc.allocations)
    unmatched = []
    for alloc in sorted(doc.allocations, key=lambda a: -a.size):
        slices: dict[int, list[int]] = {}
        for a in alloc.assignments:
            slices.setdefault(a.offset, []).append(a.size)
        mine = frozenset((off, xla_human(max(sizes)), len(sizes)) for off, sizes in slices.items())
        if tables[mine] > 0:
            tables[mine] -= 1
        else:
            unmatched.append(alloc)
    assert sum(tables.values()) == 0, (stem, +tables)
    assert len(unmatched) == len(doc.allocations) - n_tables
    if unmatched:
        smallest_printed = min(a.size for a in doc.allocations if a not in unmatched)
        assert all(a.size <= smallest_printed for a in unmatched)
    assert report_total == used_total == sum(listed_sizes)
    assert sum(a.size for a in doc.allocations) == report_total
    assert vdoc.total_bytes_used == used_total
    assert len(doc.assignments()) == n_value_lines == n_value_headers == len(vdoc.used_values)


@pytest.mark.parametrize("stem, folder", SETS, ids=[s for s, _ in SETS])
def test_allocations_match_memory_report(stem, folder):
    _check(stem, folder)


def test_shared_corpus_crosscheck():
    sets = [s for sub in sorted(SHARED.iterdir()) if sub.is_dir() for s in split_sets(sub)] if SHARED.is_dir() else []
    require_found(sets, "split sets in the shared corpus's corpus/")
    for stem, folder in sets:
        _check(stem, folder)
