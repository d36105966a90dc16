"""``peak --diff`` matches values by identity (issue 20), on the real pairs of tests/data/diff: two jax versions of
one program, a dtype change (f32 -> bf16), a remat policy change (TPU), a moved source line, and a wider layer.

What is checked comes from outside the matcher: the moved pair's README says every line after the insertion moved
by +4 and nothing else changed; the bf16 pair changes dtypes, not dimensions; every value of both peaks is in
exactly one pair and the bytes add up to XLA's printed peaks (read from the dump text); a value the same on both
sides (instruction, shape, op_name) is paired with itself; one whose op_name and shape are unique on both sides
is paired, never "vanished" and "appeared"."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from hlo_lsp.cli import main
from hlo_lsp.cli_insight import load_report
from hlo_lsp.core.memory.diff import diff_peaks, match_values
from tests.fixtures import DATA

D = DATA / "diff"
PAIRS = {
    "versions": (D / "jax-0.4.30" / "base", D / "jax-0.10.2" / "base"),
    "bf16": (D / "jax-0.10.2" / "base", D / "jax-0.10.2" / "bf16"),
    "remat": (D / "tpu-0.10.2" / "base", D / "tpu-0.10.2" / "remat"),
    "moved": (D / "jax-0.10.2" / "base", D / "jax-0.10.2" / "moved"),
    "wider": (D / "old", D / "new"),
}


def _module(folder: Path) -> str:
    return str(next(folder.glob("*after_optimizations.txt")))


def _printed_peak(folder: Path) -> int | None:
    """Sum of the ``Live ranges at N (peak)`` list of the dump's live-range file (None without one)."""
    lr = next(folder.glob("*-live-range.txt"), None)
    if lr is None:
        return None
    text = lr.read_text()
    block = text[text.index("(peak):") :]
    return sum(int(b) for b in re.findall(r"^    \S+: (\d+) bytes", block, re.M))


def _ident(v):
    op = v.source.op_name if v.source is not None else None
    return (v.instruction, v.shape, op)


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_every_value_in_one_pair_and_identity_first(pair):
    old_dir, new_dir = PAIRS[pair]
    old, new = load_report(_module(old_dir)), load_report(_module(new_dir))
    pairs = match_values(old.xla.live, new.xla.live)
    assert Counter(id(p.old) for p in pairs if p.old) == Counter(id(v) for v in old.xla.live)
    assert all(n == 1 for n in Counter(id(p.old) for p in pairs if p.old).values())
    assert all(n == 1 for n in Counter(id(p.new) for p in pairs if p.new).values())
    assert sum(p.old.bytes for p in pairs if p.old) == old.xla.bytes
    assert sum(p.new.bytes for p in pairs if p.new) == new.xla.bytes
    for folder, report in ((old_dir, old), (new_dir, new)):
        printed = _printed_peak(folder)
        assert printed is None or printed == report.xla.bytes
    same_both = set(map(_ident, old.xla.live)) & set(map(_ident, new.xla.live))
    for p in pairs:
        side = p.old if p.old is not None else p.new
        if _ident(side) in same_both and Counter(map(_ident, old.xla.live))[_ident(side)] == 1:
            assert p.old is not None and p.new is not None and _ident(p.old) == _ident(p.new), p

    def unique(values):
        c = Counter((v.source.op_name, v.shape) for v in values if v.source is not None and v.source.op_name)
        return {k for k, n in c.items() if n == 1}

    both = unique(old.xla.live) & unique(new.xla.live)
    for p in pairs:
        side = p.old if p.old is not None else p.new
        if side.source is not None and (side.source.op_name, side.shape) in both:
            assert p.old is not None and p.new is not None, p


def test_a_moved_line_is_moved_not_vanished_and_appeared(capsys):
    old_dir, new_dir = PAIRS["moved"]
    d = diff_peaks(load_report(_module(old_dir)), load_report(_module(new_dir)))
    statuses = Counter(p.status for p in d.pairs)
    assert set(statuses) == {"moved", "same"} and statuses["moved"] >= 5, statuses
    for row in d.rows:
        if row.status == "moved":
            (f_old, l_old), (f_new, l_new) = (x.rsplit(":", 1) for x in (row.old_label, row.label))
            assert f_old == f_new and int(l_new) == int(l_old) + 4, row  # the 4 comment lines inserted above
            assert row.delta == 0
    assert main(["peak", "--diff", _module(old_dir), _module(new_dir), "--format", "json", "--top", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {c["status"] for c in out["changes"]} == {"moved"} and out["delta"] == 0
    assert all(c["old_source"] and c["old_source"] != c["source"] for c in out["changes"])


def test_a_dtype_change_pairs_each_value_with_its_new_dtype():
    old_dir, new_dir = PAIRS["bf16"]
    d = diff_peaks(load_report(_module(old_dir)), load_report(_module(new_dir)))
    changed = [p for p in d.pairs if p.old and p.new and p.old.shape != p.new.shape]
    assert len(changed) >= 5
    dims = re.compile(r"^[a-z0-9]+(\[[^\]]*\])")
    for p in changed:
        assert p.old.shape.startswith("f32[") and p.new.shape.startswith("bf16["), (p.old.shape, p.new.shape)
        assert dims.match(p.old.shape).group(1) == dims.match(p.new.shape).group(1)
        assert p.new.bytes * 2 == p.old.bytes, (p.old.key, p.old.bytes, p.new.key, p.new.bytes)  # half the bytes
