"""Insight features on truncated, corrupted and hostile dumps: they answer (possibly with nothing), never raise,
and stay fast. The inputs are real dumps cut or edited in a temp folder (the originals are never touched)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from hlo_lsp.core.memory.allocated import MAX_STEPS
from hlo_lsp.core.memory.peak import peak_of_bundle
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import completion, inlay, lens, rename, semantic_tokens
from tests.fixtures import DATA

SRC = DATA / "jax-cpu" / "mlp_sgd"
STEM = "module_0002.jit_predict.cpu_after_optimizations"


def copy_set(dst: Path) -> dict[str, Path]:
    out = {}
    for p in SRC.glob(STEM + "*"):
        shutil.copy(p, dst / p.name)
        out[p.name[len(STEM) :]] = dst / p.name
    return out


def drive(ws: Workspace, path: Path) -> None:
    """Every insight feature on every line of ``path``."""
    p = str(path)
    bundle = ws.bundle(p)
    peak_of_bundle(bundle)
    lines = ws.analysis(p).lines
    semantic_tokens.semantic_tokens(ws, p)
    semantic_tokens.semantic_tokens(ws, p, 1, 3)
    inlay.inlay_hints(ws, p, 0, len(lines) + 5)
    lens.code_lenses(ws, p)
    for ln in range(0, len(lines), max(1, len(lines) // 40)):
        for col in (0, len(lines[ln]) // 2, len(lines[ln])):
            completion.complete(ws, p, ln, col)
            try:
                rename.prepare_rename(ws, p, ln, col)
                rename.rename(ws, p, ln, col, "renamed.1")
            except rename.RenameRefused:
                pass


@pytest.mark.parametrize(
    "suffix", ["-live-range.txt", "-buffer-assignment.txt", "-buffer-assignment-values.txt", ".txt"]
)
def test_truncated_files(tmp_path, suffix):
    files = copy_set(tmp_path)
    text = (SRC / (STEM + suffix)).read_text()
    for frac in (0.1, 0.35, 0.5, 0.77, 0.93):
        files[suffix].write_text(text[: int(len(text) * frac)])
        ws = Workspace()
        for f in files.values():
            drive(ws, f)


def test_hostile_live_ranges(tmp_path):
    files = copy_set(tmp_path)
    lr = files["-live-range.txt"]
    text = lr.read_text()
    text = text.replace("x.1{}:0-14", "x.1{}:0-99999999999999999999999").replace(
        "ynn_fusion.2{}:7-8", "ynn_fusion.2{}:8-7"
    )
    lr.write_text(text)
    t = time.perf_counter()
    ws = Workspace()
    report = peak_of_bundle(ws.bundle(str(lr)))
    assert report is not None and report.allocated.steps <= MAX_STEPS
    for f in files.values():
        drive(ws, f)
    assert time.perf_counter() - t < 20


def test_live_range_alone_takes_shapes_from_the_module(tmp_path):
    files = copy_set(tmp_path)
    for key in ("-buffer-assignment.txt", "-buffer-assignment-values.txt", "-memory-usage-report.txt"):
        files.pop(key).unlink()
    report = peak_of_bundle(Workspace().bundle(str(files["-live-range.txt"])))
    text = files["-live-range.txt"].read_text()
    total = int(re.search(r"peak usage: ([\d ]+) bytes", text).group(1).replace(" ", ""))
    assert report.xla.step == int(re.search(r"Live ranges at (\d+)", text).group(1))
    assert report.xla.bytes == total and report.problems == []


def test_deep_and_long_lines(tmp_path):
    deep = "(" * 5000 + "f32[]" + ")" * 5000
    numbers = ", ".join(str(i) for i in range(20000))
    text = (
        "HloModule h\n\nENTRY %e () -> f32[] {\n"
        f"  %t = {deep} tuple()\n"
        f"  %c = f32[20000]{{0}} constant({{{numbers}}})\n"
        f"  %u = {'(' * 3000} tup\n"
        "  ROOT %r = f32[] constant(0)\n}\n"
    )
    p = tmp_path / "h.hlo"
    p.write_text(text)
    ws = Workspace()
    t = time.perf_counter()
    drive(ws, p)
    hints = inlay.inlay_hints(ws, str(p), 0, 10)
    assert any(h.line == 3 for h in hints)  # the deep tuple is sized (a 1-element pointer table)
    toks = semantic_tokens.semantic_tokens(ws, str(p), 4, 4)
    line4 = text.split("\n")[4][: semantic_tokens.MAX_LINE]
    literal = line4[line4.index("constant(") :]  # the shape f32[20000]{0} is one `type` token
    complete_numbers = len(re.findall(r"(?<![\w.])\d+(?=[,}]|$)", literal))  # a number cut at MAX_LINE is too
    assert sum(1 for x in toks if x.type == semantic_tokens.TOKEN_TYPES.index("number")) == complete_numbers
    assert completion.complete(ws, str(p), 5, len(text.split("\n")[5])) == []
    assert time.perf_counter() - t < 20
