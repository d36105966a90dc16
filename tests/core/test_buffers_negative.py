"""Negative fixtures: truncated and corrupted variants of the real buffer dumps in tests/data.

Each variant is made here from a real file, so the expected line of the error is known from the edit itself:
a file cut in the middle of line L must report on line L; a line corrupted at L must report an error on L and
nowhere before it, and the rest of the file must still be read. No variant may raise.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_lsp.core.buffers import kind_from_path, read_buffers
from hlo_lsp.core.diagnostics import Severity

DATA = Path(__file__).resolve().parent.parent / "data"
SEEDS = [
    DATA / "seeds" / n
    for n in (
        "000_45ad91e6d67cdb55.txt",
        "002_b0117d631587537a.txt",
        "003_6f652c95ac4cfb4d.txt",
        "004_a3085531593bac68.txt",
    )
]
SPLIT = sorted((DATA / "jax-cpu" / "mlp_sgd").glob("module_0002.*-*.txt")) + sorted(
    (DATA / "jax-cpu" / "cond_switch").glob("module_0006.*-*.txt")
)
FILES = SEEDS + SPLIT
IDS = [p.name for p in FILES]


def _read(path: Path, text: str):
    return read_buffers(text, kind_from_path(path.name))


def _valid_ranges(doc, text: str) -> None:
    lines = text.split("\n")
    for d in doc.diagnostics:
        r = d.range
        assert 0 <= r.start_line <= r.end_line < len(lines)
        assert 0 <= r.start_col <= len(lines[r.start_line]) and 0 <= r.end_col <= len(lines[r.end_line])


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_truncated_mid_line_reports_the_cut_line(path):
    text = path.read_text(encoding="utf-8")
    rng = random.Random(path.name)
    line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    for _ in range(25):
        # cut strictly inside a non-empty line
        ln = rng.randrange(1, len(line_starts) - 1)
        start, end = line_starts[ln], line_starts[ln + 1] - 1
        if end - start < 2:
            continue
        cut = rng.randrange(start + 1, end)
        variant = text[:cut]
        doc = _read(path, variant)
        _valid_ranges(doc, variant)
        assert any(d.range.start_line == ln for d in doc.diagnostics), (ln, variant.split("\n")[ln])


@pytest.mark.parametrize("path", SEEDS, ids=[p.name for p in SEEDS])
def test_truncated_at_section_boundaries(path):
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    # cut right after an allocation header: that allocation lists no values
    hdr = next(i for i, l in enumerate(lines) if l.startswith("allocation "))
    doc = _read(path, "\n".join(lines[: hdr + 1]) + "\n")
    assert [(d.range.start_line, d.severity) for d in doc.diagnostics] == [(hdr, Severity.ERROR)]
    # cut inside a used value before its `from instruction:` line
    pos = next(i for i, l in enumerate(lines) if l == " positions:")
    doc = _read(path, "\n".join(lines[: pos + 2]) + "\n")
    assert [d.range.start_line for d in doc.diagnostics if d.severity == Severity.ERROR] == [pos - 1]
    # cut inside the instruction sequence: fewer steps than the header's max
    seq = next(i for i, l in enumerate(lines) if l == "  InstructionSequence:")
    doc = _read(path, "\n".join(lines[: seq + 4]) + "\n")
    assert [d.range.start_line for d in doc.diagnostics if d.severity == Severity.ERROR] == [seq + 3]


def test_truncated_stack_tree():
    path = DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations-live-range.txt"
    lines = path.read_text(encoding="utf-8").split("\n")
    last_node = max(i for i, l in enumerate(lines) if "%, total:" in l)
    doc = _read(path, "\n".join(lines[:last_node]) + "\n")
    assert [d.range.start_line for d in doc.diagnostics] == [last_node - 1]
    assert "not shown" in doc.diagnostics[0].message


def _corrupt(line: str) -> str:
    """Insert '=' (never part of a name, number or keyword) after the first non-blank character."""
    i = len(line) - len(line.lstrip(" "))
    return line[: i + 1] + "=" + line[i + 1 :]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corrupted_lines_report_that_line_and_reading_continues(path):
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    clean = _read(path, text)
    rng = random.Random("corrupt" + path.name)
    candidates = [
        i for i, l in enumerate(lines) if l.strip() and "%, total:" not in l and not l.strip().startswith("-----")
    ]
    for ln in rng.sample(candidates, min(30, len(candidates))):
        variant_lines = list(lines)
        variant_lines[ln] = _corrupt(lines[ln])
        variant = "\n".join(variant_lines)
        doc = _read(path, variant)
        _valid_ranges(doc, variant)
        errors = [d for d in doc.diagnostics if d.severity == Severity.ERROR]
        assert errors, (ln, variant_lines[ln])
        assert errors[0].range.start_line == ln, (ln, variant_lines[ln], errors[0])
        assert all(d.range.start_line >= ln for d in errors)
        # everything after the broken block is still read: the last occurrence survives
        if clean.occurrences and clean.occurrences[-1].line > ln + 50:
            assert doc.occurrences[-1] == clean.occurrences[-1]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corrupted_stack_or_dashes_never_raise(path):
    text = path.read_text(encoding="utf-8")
    for old, new in (("%, total:", "%; total:"), ("bytes)", "bytes"), ("----", "--x-"), ("(peak)", "(peek)")):
        variant = text.replace(old, new, 1)
        doc = _read(path, variant)
        _valid_ranges(doc, variant)
        if variant != text:
            assert any(d.severity == Severity.ERROR for d in doc.diagnostics), old


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "garbage\n",
        "\x00\x01\x02binary\xff\n",
        "allocation 0: size 4, maybe-live-out:\n value: <1 x @0>\n",
        " value: <1 x @0> (size=4,offset=0): f32[]\n",
        "Used values:\n  x.5\n",
        "HloLiveRange (max 3):\n    0:x\n",
        "allocation 99999999999999999999999: size 4:\n",
        "<" * 100000 + "\n",
        "(" * 50000 + "\n",
        "allocation 0: size 4, parameter 0, shape |f32[]\n",
        "BufferAssignment:\r\nallocation 0: size 4, thread-local:\r\n",
    ],
)
def test_odd_inputs_never_raise(text):
    doc = read_buffers(text)
    _valid_ranges(doc, text.replace("\r\n", "\n"))
    assert doc.diagnostics


def test_unknown_allocation_property_is_reported_on_its_word():
    text = (
        "BufferAssignment:\nallocation 0: size 4, maybe-live-out, sparkly:\n value: <1 x @0> (size=4,offset=0): f32[]\n"
    )
    doc = read_buffers(text)
    (d,) = doc.diagnostics
    line = text.split("\n")[1]
    assert line[d.range.start_col : d.range.end_col] == "sparkly"
    assert doc.allocations[0].maybe_live_out and len(doc.allocations[0].assignments) == 1


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_value_header_with_a_malformed_index_skips_its_parts(crlf):
    """A header the reader cannot take (index ``{,}``) is one error on its line; its parts are skipped, not read
    into the value before it (whose `` from instruction:`` line stays its own), and the next value reads."""
    path = (
        DATA
        / "jax-cpu"
        / "cond_switch"
        / "module_0000.jit_piecewise.cpu_after_optimizations-buffer-assignment-values.txt"
    )
    lines = path.read_text(encoding="utf-8").split("\n")
    headers = [i for i, line in enumerate(lines) if line.startswith("<")]
    bad = headers[1]
    lines[bad] = lines[bad].replace(" @", "{,} @", 1) if "{" not in lines[bad] else lines[bad].replace("{", "{,", 1)
    text = "\n".join(lines)
    doc = read_buffers(text.replace("\n", "\r\n") if crlf else text, "values")
    (d,) = doc.diagnostics
    assert d.severity == Severity.ERROR and d.range.start_line == bad
    first, second = doc.used_values[0], doc.used_values[1]
    assert first.line == headers[0] and second.line == headers[2]
    assert first.from_instruction_line == next(i for i in range(headers[0], bad) if lines[i].startswith(" from"))
    parts = range(bad + 1, headers[2])
    assert not [o for o in doc.occurrences if o.line in parts]


@given(data=st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_edits_never_raise(data):
    path = data.draw(st.sampled_from(FILES))
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    ln = data.draw(st.integers(0, len(lines) - 1))
    edit = data.draw(st.text(alphabet=" <>{}(),:=@%|-0123456789abcxyz│├└─\t\r", max_size=30))
    col = data.draw(st.integers(0, len(lines[ln])))
    lines[ln] = lines[ln][:col] + edit + lines[ln][col:]
    variant = "\n".join(lines)
    doc = _read(path, variant)
    _valid_ranges(doc, variant.replace("\r\n", "\n") if "\r\n" in variant else variant)


N = 1_000_000
HOSTILE = {
    "stack": "HloLiveRange (max 1):\n  InstructionSequence:\n    0:x\n"
    "  Stack trace breakdown for peak usage: 1 bytes\n    "
    + " (1%, total: 1 1 1 bytes, current: 1 bytes" * (N // 40)
    + "\n",
    "alloc-props": "BufferAssignment:\nallocation 0: size 1" + ", color 1" * (N // 9) + ":\n",
    "alloc-shape": "BufferAssignment:\nallocation 0: size 1, parameter 0, shape |" + "f32[1], " * (N // 8) + "\n",
    "value-name": "BufferAssignment:\nallocation 0: size 4:\n value: <1 " + "x" * N + "\n",
    "value-shape": "BufferAssignment:\nallocation 0: size 4:\n value: <1 x @0> (size=4,offset=0): "
    + "(f32[], " * (N // 8)
    + "\n",
    "peak": "HloLiveRange (max 1):\n  Live ranges at 1 (peak):\n    " + "a{1," * (N // 4) + "\n",
    "report": "Memory Space: default (color=0)\n"
    "  cumulative_size;       size;       offset; used_by_n_values; shapes_list\n" + " 1B(100%);" * (N // 10) + "\n",
    "positions": "Used values:\n<1 x @0>\n positions:\n  " + "x {0," * (N // 5) + "\n",
    "brackets": "<" * N + "\n" + " " * N + "x\n" + "\t" * N + "\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_megabyte_lines_read_in_linear_time(name):
    # A regex that backtracks over a 1 MB line would take hours; linear code takes well under a second.
    import time

    t0 = time.perf_counter()
    doc = read_buffers(HOSTILE[name])
    assert time.perf_counter() - t0 < 10
    assert any(d.severity == Severity.ERROR for d in doc.diagnostics)


TPU_BRANCHES = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "producers"
    / "tpu-0.10.2"
    / "cond_rng_linalg"
    / "module_0000.jit_branches.cl_933746096.after_optimizations-buffer-assignment.txt"
)


def test_empty_allocation_is_an_error_unless_a_heap_simulated_temp():
    """XLA makes a parameter, constant or live-out allocation with its value (NewAllocation), so one listing no
    value is broken; a temp block is made empty and filled from the heap simulator's chunks
    (BufferAssigner::AssignBuffersFromHeapSimulator), so the real TPU `size 0, color 1, preallocated-temp:`
    allocation with no value is fine. Emptying a real parameter allocation is caught on its header."""
    text = TPU_BRANCHES.read_text(encoding="utf-8")
    lines = text.split("\n")
    empty = next(
        i for i, l in enumerate(lines) if l.endswith("preallocated-temp:") and not lines[i + 1].startswith(" value:")
    )
    doc = read_buffers(text, "assignment")
    assert doc.diagnostics == [] and lines[empty].startswith("allocation ")
    param = next(i for i, l in enumerate(lines) if l.startswith("allocation ") and ", parameter " in l)
    assert lines[param + 1].startswith(" value:") and not lines[param + 2].startswith(" value:")
    broken = "\n".join(lines[: param + 1] + lines[param + 2 :])
    doc = read_buffers(broken, "assignment")
    assert [(d.range.start_line, d.severity, "lists no values" in d.message) for d in doc.diagnostics] == [
        (param, Severity.ERROR, True)
    ]


@pytest.mark.parametrize("blank", [" ", "   ", "\t", " \t "])
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_a_whitespace_line_inside_a_record_reads_as_an_empty_line(path, blank):
    """A line of only spaces or tabs in a used value's or an allocation's lines is read as an empty line is (a
    line of one space once made the values reader index past its end: "internal reader error")."""
    lines = path.read_text().split("\n")
    inner = [k for k, line in enumerate(lines) if line.startswith(" ") and line.strip()]
    assert inner
    for k in inner[:: max(1, len(inner) // 5)]:
        with_blank = [*lines[:k], blank, *lines[k + 1 :]]
        without = [*lines[:k], "", *lines[k + 1 :]]
        got = [(d.range.start_line, d.message) for d in _read(path, "\n".join(with_blank)).diagnostics]
        assert not any("internal" in m for _, m in got), (k, got)
        assert got == [(d.range.start_line, d.message) for d in _read(path, "\n".join(without)).diagnostics], k
