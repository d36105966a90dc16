"""The used values read a run of blocks at a time (`read_values.ValuesReader.used_blocks`) against the same text
read line by line (a text with ``\\r\\n`` line ends is read that way): the same used values, occurrences, state
and diagnostics, on every real values listing in tests/data and on random damage to them (indices, operands,
glued headers, blank, cut and reordered lines), where the block path must hand the line it cannot take back."""

from __future__ import annotations

import random

import pytest

from hlo_lsp.core.buffers import read_buffers, read_values
from tests.fixtures import DATA

LISTINGS = sorted(p for p in DATA.glob("**/*.txt") if "Used values:" in p.read_text(encoding="utf-8", errors="replace"))


def _both(text: str, kind: str | None):
    blocks = read_buffers(text, kind)
    by_line = read_buffers(text.replace("\n", "\r\n"), kind)
    return blocks, by_line


def _same(blocks, by_line) -> None:
    assert list(blocks.used_values) == list(by_line.used_values)
    assert blocks.occurrences == by_line.occurrences
    assert [(d.range, d.code, d.message) for d in blocks.diagnostics] == [
        (d.range, d.code, d.message) for d in by_line.diagnostics
    ]


def _kind(path) -> str | None:
    return "values" if path.name.endswith("-buffer-assignment-values.txt") else None


def test_listings_found():
    assert len(LISTINGS) >= 10


@pytest.mark.parametrize("path", LISTINGS, ids=lambda p: p.parent.name + "/" + p.name[-40:])
def test_blocks_read_what_lines_read(path, monkeypatch):
    calls = []
    real = read_values.ValuesReader.used_blocks

    def counted(self, *args):
        got = real(self, *args)
        calls.append(got)
        return got

    monkeypatch.setattr(read_values.ValuesReader, "used_blocks", counted)
    text = path.read_text(encoding="utf-8")
    blocks, by_line = _both(text, _kind(path))
    glued = any(ln.startswith(" from instruction:") and ln.endswith(">") for ln in text.split("\n"))
    assert len(blocks.used_values) > 0 and (any(calls) or glued), "the block path was not taken"
    _same(blocks, by_line)


def _damage(lines: list[str], rng: random.Random) -> None:
    i = rng.randrange(len(lines))
    line = lines[i]
    how = rng.randrange(8)
    if how == 0:
        lines[i] = line + " {,}" if line.startswith("  ") else line
    elif how == 1:
        lines[i] = line.replace("operand ", "operand x", 1)
    elif how == 2 and line.startswith(" from instruction:"):
        j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("<")), None)
        if j is not None:
            lines[i] = line + lines.pop(j)  # the next header glued to the line, as jaxlib 0.4.30 writes it
    elif how == 3:
        lines.insert(i, "")
    elif how == 4:
        del lines[i]
    elif how == 5 and i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif how == 6:
        lines[i] = line.replace("{", "{1,", 1)
    else:
        lines[i] = line[: len(line) // 2]


@pytest.mark.parametrize("seed", range(40))
def test_damaged_listings_read_the_same_either_way(seed):
    rng = random.Random(seed)
    path = LISTINGS[seed % len(LISTINGS)]
    lines = path.read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line == "Used values:")
    for _ in range(rng.randrange(1, 6)):
        _damage(lines, rng)
        if start >= len(lines) or lines[start] != "Used values:":
            break
    _same(*_both("\n".join(lines), _kind(path)))


@pytest.mark.parametrize("piece", [1, 7, 64])
@pytest.mark.parametrize("path", LISTINGS[:4], ids=lambda p: p.parent.name + "/" + p.name[-40:])
def test_a_runs_occurrences_made_in_pieces_are_read_as_lines_read(path, piece, monkeypatch):
    """A run of blocks makes its occurrence columns a piece at a time (`read_values._run_occurrences`, the GIL
    free between pieces): with tiny pieces (many of them, one ending inside a block) it still reads what the
    line-by-line path reads."""
    from hlo_lsp.core.process import pieces

    monkeypatch.setattr(pieces, "PIECE", piece)
    blocks, by_line = _both(path.read_text(encoding="utf-8"), _kind(path))
    assert len(blocks.occurrences) > 3 * piece
    _same(blocks, by_line)
