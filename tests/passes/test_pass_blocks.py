"""The history's shortcuts give what the plain reading gives: a long computation indexed against its earlier
version (its common beginning and end taken over) has the names, lines and line hashes of indexing it alone, and
its delta is exactly the lines one version has and the other lacks; a file cut only between its common ends with
the file before gives ``text.split("\\n\\n")``. On every version of every computation in the real pass dumps, and
on random edits."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hlo_lsp.core.passes.blocks import common_prefix, common_suffix, index_block, split_file, tags
from hlo_lsp.core.passes.names import pass_modules
from tests.fixtures import DATA, SHARED

FOLDERS = [DATA / "passes" / "mlp_sgd", DATA / "passes" / "sharded", SHARED / "corpus" / "jax-cpu-passes" / "scan_rnn"]


def _files(folder: Path) -> list[Path]:
    found = pass_modules(str(folder))
    if not found:
        pytest.skip(f"no pass files in {folder}")
    (files,) = found.values()
    return [Path(f.path) for f in files]


def _alone(text: str):
    return index_block(text, lambda c: None)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_every_computation_indexed_against_its_earlier_version_reads_as_alone(folder):
    earlier: dict[str, tuple[object, str]] = {}
    checked = 0
    for path in _files(folder):
        for part in path.read_text().split("\n\n"):
            text = part.lstrip("\n")
            alone = _alone(part)
            if alone.computation is None:
                continue
            got = earlier.get(alone.computation)
            if got is not None:
                block, old = got
                like = index_block(part, lambda c, b=block, o=old: (1, b, o))
                assert (like.names, like.by_hash, like.lines, like.fusions, like.fused) == (
                    alone.names,
                    alone.by_hash,
                    alone.lines,
                    alone.fusions,
                    alone.fused,
                )
                assert list(like.names) == list(alone.names)
                if like.delta is not None:
                    assert like.delta == _delta(block, alone)
                    checked += 1
            if alone.rows:
                earlier[alone.computation] = (alone, text)
    assert checked or folder.name != "mlp_sgd"


def _delta(old, new) -> tuple[list[int], list[int]]:
    """The hashes of the lines only ``old`` has, then of those only ``new`` has, each in its line order."""
    return [h for h in old.by_hash if h not in new.by_hash], [h for h in new.by_hash if h not in old.by_hash]


def _block(lines: list[str]) -> str:
    return "ENTRY %main.1 (p: f32[]) -> f32[] {\n" + "\n".join(lines) + "\n}"


def test_random_edits_of_a_long_computation():
    rng = random.Random(21)
    base = [f'  %x.{i} = f32[] add(%x.{i - 1}, %x.{i - 1}), metadata={{op_name="a{i % 7}"}}' for i in range(300)]
    base[5::40] = [f"  %f.{i} = f32[] fusion(%x.{i}), kind=kLoop, calls=%fused.{i}" for i in range(len(base[5::40]))]
    old = _block(base)
    first = _alone(old)
    delta_seen = 0
    for trial in range(1500):
        lines = list(base)
        for _ in range(rng.randint(0, 6)):
            k = rng.randrange(len(lines) + 1)
            op = rng.random()
            if op < 0.3 and lines:
                lines.pop(min(k, len(lines) - 1))
            elif op < 0.5:
                lines.insert(k, f"  %y.{trial}.{k}.{rng.random():.6f} = f32[] negate(%x.1)")
            elif op < 0.6:
                lines.insert(k, f"  %g.{trial}.{k}.{rng.random():.6f} = f32[] fusion(%x.1), calls=%fused.0")
            elif op < 0.8 and lines:
                lines[min(k, len(lines) - 1)] += ", x=1"
            else:
                lines.insert(k, lines[rng.randrange(len(lines))] if lines else "  %z = f32[] negate(%x.1)")
        new = _block(lines)
        alone = _alone(new)
        like = index_block(new, lambda c: (0, first, old))
        assert (like.names, like.by_hash, like.rows, like.lines) == (
            alone.names,
            alone.by_hash,
            alone.rows,
            alone.lines,
        )
        assert (like.fused, like.fusions) == (alone.fused, alone.fusions), trial
        if like.delta is not None:
            assert like.delta == _delta(first, alone), trial
            delta_seen += 1
    assert delta_seen > 500  # (the rest repeat a line: read line by line)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_files_cut_between_their_common_ends(folder):
    layout = None
    for path in _files(folder):
        text = path.read_text()
        layout = split_file(text, layout)
        assert layout.texts == text.split("\n\n")
        assert layout.keys == [(len(x), hash(x)) for x in layout.texts]


def test_random_texts_cut_between_their_common_ends():
    rng = random.Random(7)
    pieces = ["a", "b", "\n", "\n\n", "x\n\ny", "}", "\n\n\n"]
    for _ in range(20000):
        base = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        new = list(base)
        for _ in range(rng.randint(0, 4)):
            k = rng.randint(0, len(new))
            if rng.random() < 0.4 and new:
                new.pop(min(k, len(new) - 1))
            else:
                new.insert(k, rng.choice(pieces))
        text = "".join(new)
        got = split_file(text, split_file(base, None))
        assert got.texts == (text.split("\n\n") if text else []), (base, text)


def test_common_ends():
    rng = random.Random(3)
    for _ in range(3000):
        a = "".join(rng.choice("ab\n") for _ in range(rng.randint(0, 40)))
        b = "".join(rng.choice("ab\n") for _ in range(rng.randint(0, 40)))
        p = common_prefix(a, b, step=4)
        assert a[:p] == b[:p] and (p == min(len(a), len(b)) or a[p] != b[p])
        limit = rng.randint(0, 40)
        s = common_suffix(a, b, limit, step=4)
        n = min(len(a), len(b), limit)
        assert s <= n and a[len(a) - s :] == b[len(b) - s :]
        assert s == n or a[len(a) - s - 1] != b[len(b) - s - 1]


def test_tags_of_a_line():
    assert tags('  %a = f32[] add(%b, %c), metadata={op_name="jit(f)/add" stack_frame_id=12}') == ("jit(f)/add", "12")
    assert tags('  %a = f32[] add(%b, %c), metadata={op_name="x\\"y" source_line=3}') == ('x\\"y', None)
    assert tags('  %a = f32[] add(%b, %c), metadata={deduplicated_op_name="no" op_name="yes"}') == ("yes", None)
    assert tags("  %a = f32[] parameter(0)") is None
