"""Every producer's real dumps (tests/data/producers: jax 0.4.13-0.10.2 on CPU, TensorFlow 2.15 and 2.21, TPU and
GPU deviceless) read without an error or a warning, `peak` agrees with each dump's own peak step, list and bytes,
and the files XLA writes beside the HLO (thunk sequences, config text protos) say what they are.

Expected values come from the dump text, read with this file's regexes and tests.insight.test_peak's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_lsp.cli import main as cli_main
from hlo_lsp.core import kinds
from hlo_lsp.core.buffers import read_buffers
from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.fixtures import DATA
from tests.insight.test_peak import PEAK, check_xla_peak

ROOT = DATA / "producers"
PRODUCERS = (
    "jax-0.4.13",
    "jax-0.4.20",
    "jax-0.4.30",
    "jax-0.4.35",
    "jax-0.5.3",
    "jax-0.7.2",
    "jax-0.9.2",
    "jax-0.10.0",
    "jax-0.10.2",
    "tf-2.15",
    "tf-2.21",
    "tpu-0.10.2",
    "gpu-0.10.2",
)
FILES = sorted(p for p in ROOT.rglob("*") if p.is_file() and p.parent != ROOT)
BUFFER_SUFFIXES = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
)
# the buffer file holding each set's peak list: the live-range file, else the old single file
PEAK_FILES = sorted(
    p
    for p in FILES
    if p.name.endswith(("-live-range.txt", "-buffer-assignment.txt"))
    and PEAK.search(p.read_text(encoding="utf-8"))
    and not (
        p.name.endswith("-buffer-assignment.txt")
        and p.with_name(p.name.replace("-buffer-assignment.txt", "-live-range.txt")).exists()
    )
)
COMPANION_NAMES = re.compile(
    r"(thunk_sequence\w*\.txt|thunk_metadata\.txt|\.pbtxt|\.debug_options|"
    r"(execution_options|hlo_module_config|target_arguments|transfer_stats|"
    r"basic_compiler_metadata)\.txt)$"
)
# a used value's header glued to the end of the `from instruction:` line before it (jaxlib 0.4.30 and 0.4.35)
GLUED = re.compile(r"^ from instruction: %(\S+) = .*<(\d+) ([^\s<>{}]+)(\{[\d,]*\})?(?: \(phi\))? @\d+>$")
HEADER = re.compile(r"<(\d+) ([^\s<>{}]+)(\{[\d,]*\})?(?: \(phi\))? @\d+>$")


def _producer(p: Path) -> str:
    return p.relative_to(ROOT).parts[0]


def test_every_producer_has_a_complete_module():
    """Each producer's folder holds at least one module's after-optimizations HLO and its buffer files."""
    found = {_producer(p) for p in FILES}
    assert found == set(PRODUCERS), found ^ set(PRODUCERS)
    for prod in PRODUCERS:
        hlo = [p for p in FILES if _producer(p) == prod and p.name.endswith("after_optimizations.txt")]
        assert hlo, prod
        for h in hlo:
            stem = h.name[: -len(".txt")]
            assert h.with_name(stem + "-buffer-assignment.txt").exists(), h


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT))[:90] for p in FILES])
def test_no_error_or_warning(path):
    ws = Workspace()
    bad = [
        f"{d.range.start_line + 1}: {d.code}: {d.message}"
        for d in document_diagnostics(ws, str(path))
        if d.severity >= Severity.WARNING
    ]
    assert not bad, "\n".join(bad[:20])


def test_peak_files_cover_every_producer():
    assert {_producer(p) for p in PEAK_FILES} == set(PRODUCERS)
    assert len(PEAK_FILES) >= 19  # 13 producers, two more modules of TPU and GPU, one more of 0.4.30 and 0.4.35


@pytest.mark.parametrize("path", PEAK_FILES, ids=[str(p.relative_to(ROOT))[:90] for p in PEAK_FILES])
def test_peak_agrees_with_the_dump(path):
    check_xla_peak(path)


# ------------------------------------------------------------------------- the values of jaxlib 0.4.30 / 0.4.35

GLUED_FILES = [
    p
    for p in FILES
    if p.name.endswith("-buffer-assignment.txt")
    and any(GLUED.match(line) for line in p.read_text(encoding="utf-8").split("\n"))
]


def test_glued_headers_occur_where_expected():
    assert {_producer(p) for p in GLUED_FILES} == {"jax-0.4.30", "jax-0.4.35"}


@pytest.mark.parametrize("path", GLUED_FILES, ids=[str(p.relative_to(ROOT)) for p in GLUED_FILES])
def test_every_glued_value_is_read(path):
    """Every `<id name @color>` header of `Used values:` (at a line start or glued to a line's end) is a used
    value, on its line and columns; its `from instruction:` text stops before the next one's header."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    used_at = lines.index("Used values:")
    expected = []
    for ln in range(used_at + 1, len(lines)):
        line = lines[ln]
        if line and not line.startswith((" ", "<")):
            break  # the section after `Used values:`
        m = HEADER.search(line)
        if m and (line.startswith("<") or line.startswith(" from instruction:")):
            name = m.group(2) + (m.group(3) or "{}")
            expected.append((ln, m.start(2), int(m.group(1)), name))
    doc = read_buffers(text, kinds.ASSIGNMENT)
    got = [(v.line, v.range.start_col, v.value_id, v.key) for v in doc.used_values]
    assert got == expected
    assert len(expected) > 5
    for v in doc.used_values:
        glued = GLUED.match(lines[v.from_instruction_line])
        if glued:
            assert not v.from_instruction.endswith(">"), v.from_instruction
            assert f"<{glued.group(2)} {glued.group(3)}" not in v.from_instruction
        assert v.positions, v.name  # read from the lines below its header, not the next value's


# ------------------------------------------------------------------------- companion files

COMPANIONS = [p for p in FILES if COMPANION_NAMES.search(p.name)]


def test_companions_of_tpu_and_gpu_are_present():
    assert {_producer(p) for p in COMPANIONS} >= {"tpu-0.10.2", "gpu-0.10.2"}
    names = " ".join(p.name for p in COMPANIONS)
    for part in (
        "thunk_sequence.txt",
        "thunk_metadata.txt",
        "gpu_target_config.pbtxt",
        "target_arguments.txt",
        "hlo_module_config.txt",
        "execution_options.txt",
        "debug_options",
    ):
        assert part in names, part


@pytest.mark.parametrize("path", COMPANIONS, ids=[str(p.relative_to(ROOT))[:90] for p in COMPANIONS])
def test_companion_says_what_it_is(path):
    """Opened, a companion file gets one information on its first line saying what it holds; nothing else."""
    ds = document_diagnostics(Workspace(), str(path))
    assert [(d.severity, d.code, d.range.start_line) for d in ds] == [(Severity.INFORMATION, "dump.companion", 0)]
    assert "XLA" in ds[0].message and len(ds[0].message) > 40


@pytest.mark.parametrize(
    "name,word",
    [
        ("module_0001.jit_f.thunk_sequence_after_thunk_passes.txt", "thunk sequence"),
        ("module_0000.jit_f.cl_1.flagfile", "flag file"),
        ("module_0000.jit_f.cl_1.tpu_comp_env.txt", "TPU compilation environment"),
        ("compile_options.pb", "compile options"),
        ("topology.textproto", "topology"),
    ],
)
def test_companion_names_left_out_of_the_samples(name, word):
    """Companions too large (or binary) to keep in tests/data are known by name all the same."""
    assert kinds.detect_kind(name, "") == kinds.COMPANION
    assert word in kinds.describe_companion(name)


def test_dump_names_are_no_companions():
    for p in FILES:
        if p.name.endswith(("after_optimizations.txt", "before_optimizations.txt") + BUFFER_SUFFIXES):
            assert kinds.detect_kind(str(p), p.read_text(encoding="utf-8")[:8192]) != kinds.COMPANION, p


def test_check_cli_on_a_producer_folder_and_a_companion(capsys):
    """A folder check skips the companions (no dumps to check) and finds nothing; a companion named on the
    command line gets its information line and exit 0."""
    assert cli_main(["check", str(ROOT)]) == 0
    assert capsys.readouterr().out == ""
    thunks = next(p for p in COMPANIONS if p.name.endswith("thunk_sequence.txt"))
    assert cli_main(["check", "--fail-on", "warning", str(thunks)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{thunks}:1:1: information: GPU thunk sequence") and out.rstrip().endswith(
        "[dump.companion]"
    )
