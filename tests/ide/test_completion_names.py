"""Operand and computation completion offers the `MAX_NAMES` nearest names holding the word typed so far (any
case) and says when there were more (the editor then asks again as more is typed): the 23 MB module's ENTRY
offered its 25,714 instructions, 0.43 s on the event loop a keystroke. Below the cap the answer is every name, as
before."""

from __future__ import annotations

import random
import re

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import completion
from tests.fixtures import DATA

MODULE = DATA / "jax-cpu" / "loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"


def _operand_site(lines: list[str]) -> tuple[int, int, str]:
    """The line of the longest computation's last instruction that takes operands, and the column after its
    ``(%``; and the computation's name."""
    best: tuple[int, int, str] | None = None
    size, name, start = 0, "", 0
    for i, x in enumerate(lines):
        m = re.match(r"(?:ENTRY )?%([\w.\-]+) ", x)
        if m:
            name, start = m.group(1), i
        elif x == "}" and i - start > size:
            size = i - start
            last = max(j for j in range(start + 1, i) if "(%" in lines[j])
            best = (last, lines[last].index("(%") + 2, name)
    assert best is not None
    return best


def _earlier_names(lines: list[str], site: int) -> list[str]:
    """The names defined between the site's computation header and the site, in document order."""
    start = max(i for i in range(site) if re.match(r"(?:ENTRY )?%[\w.\-]+ ", lines[i]))
    return [m.group(1) for x in lines[start + 1 : site] for m in [re.match(r"\s+(?:ROOT )?%([\w.\-]+) = ", x)] if m]


@pytest.mark.parametrize("cap", [1, 4, 1000])
@pytest.mark.parametrize("typed", ["", "a", "Ad", "zzz"])
def test_operands_offered_are_the_nearest_holding_what_is_typed(cap, typed, monkeypatch):
    monkeypatch.setattr(completion, "MAX_NAMES", cap)
    text = MODULE.read_text()
    lines = text.split("\n")
    line, col, _ = _operand_site(lines)
    lines[line] = lines[line][:col] + typed + lines[line][col:]
    path = str(MODULE)
    ws = Workspace()
    ws.open(path, "\n".join(lines), 1)
    items, more = completion.completions(ws, path, line, col + len(typed))
    holding = [n for n in _earlier_names(lines, line) if typed.lower() in n.lower()]
    assert [i.label for i in items] == holding[-cap:] if holding else items == []
    assert more == (len(holding) > cap)
    assert all(i.kind == "variable" and i.detail for i in items)


@pytest.mark.parametrize("cap", [2, 1000])
def test_computations_offered_are_the_nearest_holding_what_is_typed(cap, monkeypatch):
    monkeypatch.setattr(completion, "MAX_NAMES", cap)
    text = MODULE.read_text()
    lines = text.split("\n")
    line, _, here = _operand_site(lines)
    site = lines[line].rstrip() + ", to_apply=%re"
    lines[line] = site
    path = str(MODULE)
    ws = Workspace()
    ws.open(path, "\n".join(lines), 1)
    items, more = completion.completions(ws, path, line, len(site))
    headers = [(i, m.group(1)) for i, x in enumerate(lines) for m in [re.match(r"(?:ENTRY )?%([\w.\-]+) ", x)] if m]
    holding = [(i, n) for i, n in headers if "re" in n.lower() and n != here]
    near = sorted(holding, key=lambda t: (t[0] > line, -t[0] if t[0] < line else t[0]))[:cap]
    assert [i.label for i in items] == [n for _, n in sorted(near)]
    assert more == (len(holding) > cap) and holding


def _skip_shape_by_characters(text: str, i: int) -> int:
    """The rule `completion._skip_shape` keeps, one character at a time."""
    n = len(text)
    if i < n and text[i] == "(":
        depth = 0
        while i < n:
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return -1
    while i < n and text[i] != " ":
        i += 1
    return i if i < n else -1


def test_a_shapes_end_is_where_a_walk_over_its_characters_finds_it():
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice("() f32[2]{0},x") for _ in range(rng.randrange(0, 30)))
        for i in range(len(text) + 1):
            assert completion._skip_shape(text, i) == _skip_shape_by_characters(text, i), (text, i)
