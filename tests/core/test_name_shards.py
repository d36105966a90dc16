"""The name index in several dicts (`NameIndex`): the same answers as one dict's, whatever the number of dicts,
and the module's lookups (definitions, users) the same as with one dict."""

from __future__ import annotations

import random

import pytest

from hlo_lsp.core.hlo import names as names_mod
from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.names import NameIndex
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.process import pieces
from tests.core.test_bulk_rows import HLO


def _first(names: list[str]) -> dict[str, int]:
    want: dict[str, int] = {}
    for i, x in enumerate(names):
        want.setdefault(x, i)
    return want


@pytest.mark.parametrize("shard_names", [1, 2, 3, 5, 64])
def test_an_index_in_several_dicts_answers_as_one_dict(monkeypatch, shard_names):
    monkeypatch.setattr(names_mod, "SHARD_NAMES", shard_names)
    rng = random.Random(shard_names)
    for n in (0, 1, 2, 7, 40, 300):
        names = [f"n{rng.randrange(max(1, n // 2 + 1))}" for _ in range(n)]
        for piece in (1, 7, 1000):
            monkeypatch.setattr(pieces, "PIECE", piece)
            idx = NameIndex.first_of(names)
            want = _first(names)
            assert dict(idx) == want and len(idx) == len(want) and sorted(idx) == sorted(want)
            get = idx.getter()
            for x in [*want, "absent", "n-1"]:
                assert idx.get(x) == want.get(x) == get(x)
                assert (x in idx) == (x in want)
            assert idx.get("absent", -5) == -5 and 3 not in idx and [] not in idx
            with pytest.raises(KeyError):
                idx["absent"]
            # edited as the incremental patch edits it: the copy made before keeps what it had
            snapshot = idx.copy()
            if want:
                gone = rng.choice(list(want))
                del idx[gone], want[gone]
                idx["added"] = want["added"] = 10_000
                assert dict(idx) == want and idx.get(gone) is None and get("added") == 10_000
                assert gone in snapshot and "added" not in snapshot


def test_a_large_index_keeps_no_dict_much_over_the_limit():
    names = [f"fusion.{i}" for i in range(3 * names_mod.SHARD_NAMES + 17)]
    idx = NameIndex.first_of(names)
    sizes = [len(d) for d in idx._shards]
    assert len(sizes) == 4 and sum(sizes) == len(names)
    assert max(sizes) < 1.25 * len(names) / 4  # the hashes share the names out evenly
    assert idx.get("fusion.0") == 0 and idx.get(names[-1]) == len(names) - 1


def test_modules_read_with_their_index_in_many_dicts_answer_as_with_one(monkeypatch):
    """Each module of tests/data: the index, the instruction each name finds and its users (the users map made
    through the index's getter) are the same with the index in one dict and in many."""

    def answers(mod) -> tuple[dict, dict]:
        t = mod.instructions
        names = list(t.names) if isinstance(t, InstructionTable) else [x.name for x in t]
        asked = sorted(set(names))[:150]
        found = {n: (mod.instruction(n).line, [u.line for u in mod.users(n)]) for n in asked}
        return dict(mod.by_name), found

    compared = 0
    for path in HLO[:30]:
        text = path.read_text(errors="replace")
        monkeypatch.setattr(names_mod, "SHARD_NAMES", 1 << 20)
        one = answers(read_hlo(text))
        monkeypatch.setattr(names_mod, "SHARD_NAMES", 3)
        mod = read_hlo(text)
        many = answers(mod)
        assert many == one, path
        compared += len(one[0]) > 12 and len(mod.by_name._shards) > 4
    assert compared >= 10
