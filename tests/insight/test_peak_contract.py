"""`hlo-lsp peak --format json` is the data (issue 19's contract): on every real buffer-assignment set of tests/data,
every value live at XLA's peak (the dump's own peak list, names and bytes), ``omitted`` 0, the peak instruction,
the reserved bytes of every step by category and memory space, and ``--group-by`` groups adding up to the peak.

Expected values come from the dump text with this file's regexes and tests/insight/test_peak.py's independent
sums; nothing expected is taken from hlo_lsp."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from hlo_lsp.cli import main
from hlo_lsp.core.memory.groups import GROUP_KEYS, group_values
from tests.fixtures import DATA, REPO
from tests.insight.test_peak import expected_peak, independent_allocated, report_for
from tests.insight.util import module_sets

SEQ_HEADER = re.compile(r"^  InstructionSequence:$", re.M)
SEQ_ENTRY = re.compile(r"^    (\d+):(\S+)$")
ALLOC_PARAM = re.compile(r"^allocation (\d+): [^\n]*?\bparameter (\d+)", re.M)
ENTRY_PARAM = re.compile(
    r"^\s*%?([\w.\-]+) = [^\n]*? parameter\((\d+)\)(?:[^\n]*?op_name=\"((?:[^\"\\]|\\.)*)\")?", re.M
)
DONATION = DATA / "memory" / "donation-cpu" / "module_0000.jit_step.cpu_after_optimizations.txt"
LOCAL = module_sets(DATA) + module_sets(REPO / "examples")  # producers' TPU, GPU, TF and old jax sets included


def _sequence(text: str) -> dict[int, str]:
    m = SEQ_HEADER.search(text)
    out: dict[int, str] = {}
    if m is None:
        return out
    for line in text[m.end() + 1 :].split("\n"):
        e = SEQ_ENTRY.match(line)
        if e is None:
            break
        out[int(e.group(1))] = e.group(2)
    return out


def _siblings(path: Path) -> tuple[str, str | None]:
    """(allocation listing, HLO module text or None) of a set given by its live-range file or old single file."""
    for suffix in ("-live-range.txt", "-buffer-assignment.txt"):
        if path.name.endswith(suffix):
            stem = path.name[: -len(suffix)]
            module = path.with_name(stem + ".txt")
            return path.with_name(stem + "-buffer-assignment.txt").read_text(), (
                module.read_text() if module.exists() else None
            )
    return path.read_text(), None


@pytest.mark.parametrize("path", LOCAL, ids=[str(p.relative_to(REPO))[-70:] for p in LOCAL])
def test_peak_json_is_the_data(path):
    text = path.read_text()
    exp = expected_peak(text)
    data = report_for(path).as_json()
    assert data["omitted"] == 0
    assert data["peak_step"] == exp["step"]
    names = Counter((re.sub(r"\{[\d,]*\}$", "", v["name"]), v["bytes"]) for v in data["live_at_peak"])
    printed = Counter((re.sub(r"\{[\d,]*\}$", "", n), b) for n, b in exp["entries"])
    assert names == printed
    if all("{" in n for n, _ in exp["entries"]):
        assert {v["name"]: v["bytes"] for v in data["live_at_peak"]} == dict(exp["entries"])
    assert data["peak_bytes"] == sum(b for _, b in exp["entries"])
    seq = _sequence(text)
    assert data["peak_instruction"] == seq.get(exp["step"])
    total, per_cat = independent_allocated(path)
    steps = data["allocated"]["steps"]
    assert [s["step"] for s in steps] == list(range(len(total)))
    assert [s["bytes"] for s in steps] == total
    for s in steps:
        assert s["by_category"] == {c: per_cat[c][s["step"]] for c in per_cat}
        assert sum(s["by_memory_space"].values()) == s["bytes"]
    a = data["allocated"]
    if a["peak_step"] is not None:
        assert a["peak_bytes"] == max(total) and steps[a["peak_step"]]["bytes"] == a["peak_bytes"]


@pytest.mark.parametrize("path", LOCAL, ids=[str(p.relative_to(REPO))[-70:] for p in LOCAL])
def test_groups_add_up_and_name_the_argument_a_buffer_holds(path):
    report = report_for(path)
    live = report.xla.live
    for key in GROUP_KEYS:
        groups = group_values(live, key)
        assert sum(g.bytes for g in groups) == report.xla.bytes
        assert sum(g.count for g in groups) == len(live)
        assert len({g.key for g in groups}) == len(groups)
    listing, module = _siblings(path)
    param_of_alloc = {int(a): int(n) for a, n in ALLOC_PARAM.findall(listing)}
    labels: dict[int, str] = {}
    if module is not None:
        entry = module[module.index("\nENTRY ") :]
        entry = entry[: entry.index("\n}")]
        for _, n, op in ENTRY_PARAM.findall(entry):
            labels[int(n)] = op.replace("\\'", "'") if op else f"parameter {n}"
    want: Counter = Counter()
    for v in live:
        n = param_of_alloc.get(v.allocation) if v.allocation is not None else None
        key = "(not in a parameter's buffer)" if n is None else labels.get(n, f"parameter {n}")
        want[key] += v.bytes
    assert {g.key: g.bytes for g in group_values(live, "param")} == dict(want)


def test_donation_sample_groups_by_argument(capsys):
    code = main(["peak", str(DONATION), "--format", "json", "--top", "1", "--group-by", "param"])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)
    assert data["omitted"] == 0 and len(data["live_at_peak"]) > 1  # --top shapes the text only
    keys = {g["key"] for g in data["groups"]}
    assert {"params['w1']", "momentum['w1']"} <= keys
    assert sum(g["bytes"] for g in data["groups"]) == data["peak_bytes"]


def test_text_view_says_what_top_left_out(capsys):
    code = main(["peak", str(DONATION), "--top", "2", "--group-by", "dtype"])
    out = capsys.readouterr().out
    assert code == 0
    n = len(
        re.findall(
            r"^    \S+\{[\d,]*\}: \d+ bytes", DONATION.with_name(DONATION.stem + "-live-range.txt").read_text(), re.M
        )
    )
    assert f"... {n - 2} more values" in out
    assert re.search(r"^By dtype \(\d+ groups\):$", out, re.M)
