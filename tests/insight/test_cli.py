"""``hlo-lsp peak``, ``peak --diff`` and ``timeline`` on real dumps; expected values from the dump text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hlo_lsp.cli import main
from tests.fixtures import DATA
from tests.insight.util import human

PREDICT = DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations.txt"
SEED = DATA / "seeds" / "000_45ad91e6d67cdb55.txt"
OLD = DATA / "diff" / "old" / "module_0030.jit_predict.cpu_after_optimizations-live-range.txt"
NEW = DATA / "diff" / "new" / "module_0030.jit_predict.cpu_after_optimizations-live-range.txt"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def printed_peak(live_range_text: str) -> tuple[int, dict[str, int], int | None]:
    step = int(re.search(r"Live ranges at (\d+) \(peak\)", live_range_text).group(1))
    entries = {
        m.group(1): int(m.group(2))
        for m in re.finditer(r"^    (\S+\{[\d,]*\}): (\d+) bytes \(cumulative", live_range_text, re.M)
    }
    total = re.search(r"Stack trace breakdown for peak usage: ([\d ]+) bytes", live_range_text)
    return step, entries, int(total.group(1).replace(" ", "")) if total else None


def test_peak_json_on_a_split_set_given_by_its_module_file(capsys):
    code, out, err = run(capsys, "peak", PREDICT, "--format", "json", "--top", "0")
    assert code == 0 and err == ""
    data = json.loads(out)
    step, entries, total = printed_peak(PREDICT.with_name(PREDICT.stem + "-live-range.txt").read_text())
    assert data["peak_step"] == step and data["peak_bytes"] == total
    assert {v["name"]: v["bytes"] for v in data["live_at_peak"]} == entries
    assert set(data["allocated"]) >= {"peak_step", "peak_bytes"}
    shapes = dict(
        re.findall(
            r"^ value: <\d+ (\S+) @\d+> \(size=\d+,offset=\d+\): (\S+)$",
            PREDICT.with_name(PREDICT.stem + "-buffer-assignment.txt").read_text(),
            re.M,
        )
    )
    for v in data["live_at_peak"]:
        assert v["shape"] == shapes[v["name"].removesuffix("{}")]


def test_peak_text_and_top(capsys):
    code, out, _ = run(capsys, "peak", SEED, "--top", "3")
    assert code == 0
    text = SEED.read_text()
    step = int(re.search(r"Live ranges at (\d+) \(peak\)", text).group(1))
    listed = [int(b) for b in re.findall(r"^    [^\s{}:]+: (\d+) bytes$", text, re.M)]
    assert out.startswith(f"XLA peak: step {step} ")
    assert f"{human(sum(listed))} ({sum(listed)} bytes) in {len(listed)} live values" in out.split("\n")[0]
    first = out.split("\n")[1:4]
    assert [ln.split()[0] for ln in first] == [human(b) for b in sorted(listed, reverse=True)[:3]]
    assert f"... {len(listed) - 3} more values" in out


def test_peak_errors_exit_2_with_one_line(capsys, tmp_path):
    code, out, err = run(capsys, "peak", tmp_path / "missing.txt")
    assert code == 2 and out == "" and err.count("\n") == 1 and "missing.txt" in err
    hlo_only = tmp_path / "m.hlo"
    hlo_only.write_text("HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(0)\n}\n")
    code, _, err = run(capsys, "peak", hlo_only)
    assert code == 2 and "no buffer-assignment files" in err


@pytest.mark.parametrize("ext, magic", [("svg", b"<svg"), ("png", b"\x89PNG"), ("html", b"<html")])
def test_timeline_writes_only_where_asked(capsys, tmp_path, ext, magic):
    before = sorted(p.name for p in PREDICT.parent.iterdir())
    out = tmp_path / f"t.{ext}"
    code, stdout, _ = run(capsys, "timeline", PREDICT, "-o", out)
    assert code == 0 and stdout.strip() == str(out)
    assert magic in out.read_bytes()[:4096]
    assert sorted(p.name for p in PREDICT.parent.iterdir()) == before
    if ext == "html":  # the panel beside the chart names XLA's peak and its instruction as the dump prints them
        live_range = PREDICT.with_name(PREDICT.stem + "-live-range.txt").read_text()
        step, _, total = printed_peak(live_range)
        name = re.search(rf"^    {step}:(\S+)$", live_range, re.M).group(1)
        assert f"XLA peak: step {step} ({name}), {human(total)} live" in out.read_text()
    code, _, err = run(capsys, "timeline", PREDICT, "-o", tmp_path / "t.jpg")
    assert code == 2 and "unknown chart format" in err


def _source_labels(hlo: str) -> dict[str, str]:
    """Instruction -> ``file:line`` of its innermost frame, else its op_name (read from the HLO text)."""
    files = dict(re.findall(r'^(\d+) "([^"]*)"$', hlo[hlo.index("FileNames") : hlo.index("FunctionNames")], re.M))
    locs = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"^(\d+) \{file_name_id=(\d+) function_name_id=\d+ line=(\d+)", hlo, re.M)
    }
    frames = dict(re.findall(r"^(\d+) \{file_location_id=(\d+) parent_frame_id=\d+\}$", hlo, re.M))
    out = {}
    for m in re.finditer(r"^\s+(?:ROOT )?%(\S+) = .*$", hlo, re.M):
        line = m.group(0)
        sf = re.search(r"stack_frame_id=(\d+)", line)
        op = re.search(r'op_name="((?:[^"\\]|\\.)*)"', line)
        if sf and sf.group(1) in frames:
            f, ln = locs[frames[sf.group(1)]]
            out[m.group(1)] = f"{files[f]}:{ln}"
        elif op:
            out[m.group(1)] = op.group(1).replace("\\'", "'")
        else:
            out[m.group(1)] = m.group(1)
    return out


def _grouped(live_range: Path) -> dict[str, int]:
    stem = live_range.name[: -len("-live-range.txt")]
    labels = _source_labels(live_range.with_name(stem + ".txt").read_text())
    _, entries, _ = printed_peak(live_range.read_text())
    out: dict[str, int] = {}
    for key, b in entries.items():
        label = labels[key[: key.index("{")]]
        out[label] = out.get(label, 0) + b
    return out


def test_diff_on_two_real_dumps_of_one_program(capsys):
    code, out, _ = run(capsys, "peak", "--diff", OLD, NEW, "--format", "json", "--top", "0")
    assert code == 0
    d = json.loads(out)
    _, _, old_total = printed_peak(OLD.read_text())
    _, _, new_total = printed_peak(NEW.read_text())
    assert (d["old"]["peak_bytes"], d["new"]["peak_bytes"], d["delta"]) == (old_total, new_total, new_total - old_total)
    old, new = _grouped(OLD), _grouped(NEW)
    expected = {k: new.get(k, 0) - old.get(k, 0) for k in old.keys() | new.keys() if new.get(k, 0) != old.get(k, 0)}
    assert {c["source"]: c["delta"] for c in d["changes"]} == expected
    assert d["unchanged"] == sum(1 for k in old.keys() | new.keys() if new.get(k, 0) == old.get(k, 0))
    status = {c["source"]: c["status"] for c in d["changes"]}
    assert status["params[1][0]"] == "grew"  # w1 went from f32[512,256] to f32[512,1024]
    assert [abs(c["delta"]) for c in d["changes"]] == sorted((abs(c["delta"]) for c in d["changes"]), reverse=True)

    code, text, _ = run(capsys, "peak", "--diff", OLD, NEW)
    assert code == 0
    assert text.startswith(f"peak: {human(old_total)} at step ")
    assert f"(+{human(new_total - old_total)})" in text.split("\n")[0]


def test_closed_pipe_gives_no_traceback():
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "hlo_lsp", "peak", str(SEED), "--format", "json", "--top", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # go away before the report is written, like `| head` that has seen enough
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and proc.returncode == 0
