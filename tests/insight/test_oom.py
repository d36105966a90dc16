"""`hlo-lsp oom` on real TPU compile-time out-of-memory reports (tests/data/oom: the long form on one device and
on a 2x2 mesh, the short form), each with the dump of its compilation: every ``XLA label`` naming an instruction
resolves to the line defining it and to its allocation's header line, the sizes printed equal the buffer
assignment's at the report's precision, and the short form's total is the memory-usage report's ``Total bytes``.
Expected values come from the log and dump text with this file's own regexes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hlo_lsp.cli import main
from tests.fixtures import DATA

OOM = DATA / "oom"
SAMPLES = {"long_1dev": "oom-long-1dev.log", "long_mesh": "oom-long-mesh.log", "short": "oom-short.log"}
ENTRY = re.compile(r"^\s*(\d+)\. Size: (\S+)$", re.M)
LABEL = re.compile(r"^\s*XLA label: ([\w.\-]+) = ", re.M)
ALLOC = re.compile(r"^allocation (\d+): ")
VALUE = re.compile(r"^ value: <\d+ ([\w.\-]+)(\{[\d,]*\})? @\d+> \(size=(\d+),offset=\d+\): (.*)$")
UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _printed(size: str) -> tuple[float, int]:
    m = re.fullmatch(r"([0-9.]+)([KMGT]?)B?", size)
    assert m, size
    return float(m.group(1)), UNITS[m.group(2) or "B"]


def _same_at_precision(size: str, nbytes: int) -> bool:
    value, unit = _printed(size)
    decimals = len(size.split(".")[1].rstrip("KMGTB")) if "." in size else 0
    return abs(nbytes / unit - value) <= 0.5 * 10**-decimals + 1e-9


def _allocations(path: Path) -> dict[str, list[tuple[int, int, int, str]]]:
    """instruction name -> [(allocation, header line (1-based), size, shape)] from the assignment listing."""
    out: dict[str, list[tuple[int, int, int, str]]] = {}
    alloc, header = None, None
    for n, line in enumerate(path.read_text().split("\n"), 1):
        a = ALLOC.match(line)
        if a:
            alloc, header = int(a.group(1)), n
            continue
        v = VALUE.match(line)
        if v and alloc is not None:
            out.setdefault(v.group(1), []).append((alloc, header, int(v.group(3)), v.group(4)))
    return out


@pytest.mark.parametrize("folder", sorted(SAMPLES))
def test_every_label_resolves_to_its_instruction_and_allocation(folder, capsys):
    log = OOM / folder / SAMPLES[folder]
    text = log.read_text()
    module = next(p for p in (OOM / folder).glob("*after_optimizations.txt"))
    code, out = _run(capsys, "oom", str(log), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["kind"] == ("short" if folder == "short" else "long")
    assert len(data["entries"]) == len(ENTRY.findall(text))
    defs = {
        m.group(1): n
        for n, line in enumerate(module.read_text().split("\n"), 1)
        if (m := re.match(r"^\s+(?:ROOT )?%?([\w.\-]+) = ", line))
    }
    listing = _allocations(module.with_name(module.stem + "-buffer-assignment.txt"))
    labelled = LABEL.findall(text)
    resolved = [e for e in data["entries"] if e["instruction"] is not None]
    assert sorted(e["name"] for e in resolved) == sorted(labelled)
    for e in resolved:
        assert e["instruction"]["path"] == str(module.resolve()) or Path(e["instruction"]["path"]).samefile(module)
        assert e["instruction"]["line"] == defs[e["name"]]
        rows = listing[e["name"]]
        assert e["allocation"] is not None
        row = next(r for r in rows if r[0] == e["allocation"]["index"] and r[2] == e["assigned_size"])
        assert e["allocation"]["line"] == row[1]
        size_text = re.search(rf"^\s*{e['rank']}\. Size: (\S+)$", text, re.M)
        assert size_text is not None
        assert _same_at_precision(size_text.group(1), row[2]), (e["name"], size_text.group(1), row[2])
    if folder != "short":
        over = re.search(r"Exceeded \w+ capacity by (\S+)\.", text)
        assert over is not None and _same_at_precision(over.group(1), data["exceeded_by"])
    else:
        required = re.search(r"HLO temporaries \((\S+)\)", text)
        report = module.with_name(module.stem + "-memory-usage-report.txt").read_text()
        total = int(re.search(r"^Total bytes: (\d+)", report, re.M).group(1))
        assert data["dump"]["total_bytes"] == total
        assert required is not None and _same_at_precision(required.group(1), total)


def test_a_file_without_a_report_is_said_so(tmp_path, capsys):
    log = tmp_path / "build.log"
    log.write_text("compiling...\nall good\n")
    code = main(["oom", str(log)])
    err = capsys.readouterr().err
    assert code == 1 and "no RESOURCE_EXHAUSTED" in err


@pytest.mark.parametrize("sample", ["long_1dev", "long_mesh"])
def test_donations_pair_each_argument_with_an_output_of_its_shape(capsys, sample):
    """The report says outputs share 0B with arguments; each listed argument whose shape a listed output has could
    be donated (one output each): the pairs per shape are as many as the fewer of the two, none for a parameter
    the module's input_output_alias already donates."""
    folder = OOM / sample
    log = folder / SAMPLES[sample]
    text = log.read_text()
    assert "shares 0B with arguments" in text
    header = next(folder.glob("*after_optimizations.txt")).read_text().split("\n", 1)[0]
    aliased = {int(p) for p in re.findall(r"\{[\d,]*\}: \((\d+),", header)} if "input_output_alias" in header else set()
    args_section = text[text.index("Largest program arguments and outputs") :]
    blocks = re.findall(
        r"Shape: (\S+)\n\s+XLA label: (Argument (\d+) index \{\}|Output index \{[\d,]*\})", args_section
    )
    by_shape: dict[str, list[int]] = {}
    for shape, _label, param in blocks:
        if param and int(param) not in aliased:
            by_shape.setdefault(shape, [0, 0])[0] += 1
        elif not param:
            by_shape.setdefault(shape, [0, 0])[1] += 1
    want = sum(min(a, o) for a, o in by_shape.values())
    code, out = _run(capsys, "oom", str(log), "--format", "json")
    assert code == 0
    got = json.loads(out)["donations"]
    assert len(got) == want > 0
    shapes = {shape for shape, _, _ in blocks}
    assert all(d["shape"] in shapes and d["output"].startswith("Output index") for d in got)
    assert len({d["parameter"] for d in got}) == len(got) and len({d["output"] for d in got}) == len(got)


def test_aliased_parameters_are_read_from_the_module_header():
    from hlo_lsp.core.memory.oom import aliased_parameters

    header = next((DATA / "memory" / "donation-cpu").glob("*after_optimizations.txt")).read_text().split("\n", 1)[0]
    want = {int(p) for p in re.findall(r"\{\d+\}: \((\d+), \{\}, may-alias\)", header)}
    assert want and aliased_parameters(header) == want
    assert aliased_parameters("HloModule m, is_scheduled=true") == set()
