"""An editor document as a list of lines, edited in place.

pygls' TextDocument rebuilds the whole string on every incremental change (about 60 ms a keystroke on a 23 MB
module); `LineDocument` splices only the lines an edit touches, and joins the text only when a full re-read asks
for it. Lines carry no terminator; ``\\r\\n`` and lone ``\\r`` count as line ends, as LSP says. Columns are code
points (the LSP layer converts UTF-16 before calling `apply`).
"""

from __future__ import annotations

import os
import re
import zlib
from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import NamedTuple

from hlo_lsp.core.process import pieces, turns

_EOL = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` without terminators (``\\n``, ``\\r\\n`` or ``\\r``)."""
    if "\r" not in text:
        return text.split("\n")
    return _EOL.split(text)


def _normalize(text: str) -> str:
    """``text`` without a leading BOM and with every line end written ``\\n``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return _EOL.sub("\n", text) if "\r" in text else text


_UNBUILT = array("I")  # TextLines' offsets not built yet (built, they hold at least one entry)


class TextLines:
    """The lines of one ``\\n``-separated text, read-only: the text is kept once with the cumulative line lengths
    in an array (4 bytes a line), and a line string is cut on demand. A list of lines costs a str object (50+
    bytes) a line; a 20 MB dump file has 400,000 of them. Supports ``len``, ``lines[i]`` (negative too), slices
    and iteration, like the list it stands for.

    For a file that is read once and afterwards only looked at a few lines at a time, the text can then be let
    go: `use_file` reads lines back from the file, a block of BLOCK_LINES lines at a time, while the file is
    unchanged (same mtime and size; lines of a changed file read as ""), and `compact` keeps the text
    zlib-compressed in such blocks (a buffer dump shrinks about eight times; about 0.1 ms a block). The last few
    blocks read stay decoded."""

    BLOCK_LINES = 256
    _CACHED = 4

    __slots__ = ("_text", "_cum", "_blocks", "_cache", "_file")

    def __init__(self, text: str):
        self._text: str | None = text
        self._cum: array = _UNBUILT  # _cum[i]: characters before line i, newlines excluded (built lazily)
        self._blocks: list[bytes] = []  # the compressed blocks once compacted (then _text is None)
        self._cache: dict[int, str] = {}
        self._file: tuple[str, tuple] | None = None  # (path, (mtime, size)) once `use_file` let the text go

    @property
    def text(self) -> str:
        """The whole text (read or decompressed again each time once let go)."""
        text = self._text
        if text is not None:
            return text
        if self._file is not None:
            n, step = len(self._cum) - 1, self.BLOCK_LINES
            return "\n".join(
                self._block(k) or "\n" * (min(step, n - k * step) - 1) for k in range((n + step - 1) // step)
            )
        return "\n".join(zlib.decompress(b).decode("utf-8") for b in self._blocks)

    # characters split in one C call (about 1 ms; 1 MB took 3-6 ms on a loaded machine, a background read's chunk
    # that a hover waited behind, GIL watcher)
    SPLIT_CHUNK = 1 << 18
    CUM_PIECE = 16_384  # lines whose offsets are summed in one C call (`split`)

    def split(self) -> list[str]:
        """All lines as a new list; fills the offsets on the way when they are not built yet. Made a chunk of
        about `SPLIT_CHUNK` characters at a time (one ``str.split`` of a 23 MB text held the interpreter for a
        tenth of a second, a hover's whole budget several times over)."""
        text = self.text
        step = self.SPLIT_CHUNK
        if len(text) <= step:
            lines = text.split("\n")
        else:
            lines = []
            start = 0
            while True:
                cut = text.find("\n", start + step)
                if cut < 0:
                    lines.extend(text[start:].split("\n"))
                    break
                lines.extend(text[start:cut].split("\n"))
                start = cut + 1
                turns.give_way()
        if not self._cum:
            cum = array("I", [0])  # texts are below 1 GiB
            step = self.CUM_PIECE
            for k in pieces.starts(0, len(lines), step):
                cum.extend(array("I", accumulate(map(len, lines[k : k + step]), initial=cum[-1]))[1:])
            self._cum = cum
        return lines

    def compact(self) -> None:
        """Keep the text compressed from now on (see the class docstring); nothing when it already is."""
        text = self._text
        if text is None:
            return
        cum = self.offsets()
        n = len(cum) - 1
        step = self.BLOCK_LINES
        blocks = []
        for first in range(0, n, step):
            last = min(first + step, n)
            blocks.append(zlib.compress(text[cum[first] + first : cum[last] + last - 1].encode("utf-8"), 1))
        self._blocks = blocks
        self._cache = {}
        self._text = None

    def use_file(self, path: str, stamp: tuple) -> None:
        """Let the text go and read lines back from ``path`` (whose text it is, as of ``stamp`` = (mtime,
        size)); a text that is not ASCII (its columns are not byte offsets) is compacted instead."""
        text = self._text
        if text is None:
            return
        if not text.isascii():
            self.compact()
            return
        self.offsets()
        self._file = (path, stamp)
        self._cache = {}
        self._text = None

    def _read(self, k: int) -> str | None:
        """Block ``k`` read from the file; None when the file changed or cannot be read."""
        if self._file is None:
            return None
        path, stamp = self._file
        cum, step = self._cum, self.BLOCK_LINES
        first = k * step
        last = min(first + step, len(cum) - 1)
        start, stop = cum[first] + first, cum[last] + last - 1
        try:
            st = os.stat(path)
            if (st.st_mtime, st.st_size) != stamp:
                return None
            with open(path, "rb") as f:
                f.seek(start)
                data = f.read(stop - start)
            got = data.decode("ascii")
        except (OSError, UnicodeDecodeError):
            return None
        return got if len(got) == stop - start else None

    def offsets(self) -> array:
        """The cumulative line lengths: characters before line i (newlines excluded) at [i]; built on first use."""
        if not self._cum:
            self.split()
        return self._cum

    def know_offsets(self, cum: array) -> None:
        """Take ``cum`` as the offsets (`offsets`) when they are not built yet: made from the same text by its
        parts' (a buffer file read in two parts at once, `buffers.halves`), without splitting it again. A
        ``cum`` of another text's length is refused (ValueError)."""
        if self._cum:
            return
        if self._text is None or len(cum) < 2 or cum[-1] + len(cum) - 2 != len(self._text):
            raise ValueError("offsets of another text")
        self._cum = cum

    def _block(self, k: int) -> str | None:
        cache = self._cache
        got = cache.get(k)
        if got is None:
            got = self._read(k) if self._file is not None else zlib.decompress(self._blocks[k]).decode("utf-8")
            if got is None:
                return None  # the file changed: not cached, its lines read as ""
            if len(cache) >= self._CACHED:
                cache.clear()
            cache[k] = got
        return got

    def _line(self, i: int) -> str:
        cum = self._cum
        text = self._text
        if text is not None:
            return text[cum[i] + i : cum[i + 1] + i]
        first = i - i % self.BLOCK_LINES
        start = cum[i] + i - (cum[first] + first)
        block = self._block(first // self.BLOCK_LINES)
        return block[start : start + cum[i + 1] - cum[i]] if block is not None else ""

    def __len__(self) -> int:
        return len(self.offsets()) - 1

    def chars(self) -> int:
        """The text's length, newlines included, from the offsets: no line is cut or read back (counted line by
        line, a buffer file whose text was let go read every line back from the file: 60 ms in the background
        while a hover waited, when the module's files were joined)."""
        if self._text is not None:
            return len(self._text)
        cum = self.offsets()
        return cum[-1] + max(len(cum) - 2, 0)

    def __getitem__(self, i):
        n = len(self.offsets()) - 1
        if isinstance(i, slice):
            return [self._line(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("line index out of range")
        return self._line(i)

    def __iter__(self) -> Iterator[str]:
        return iter(self.text.split("\n"))

    def __bool__(self) -> bool:
        return True  # like the list of a text's lines, never empty ("" has one line)


Lines = list[str] | TextLines  # a document's lines: an editor's list, or a file's `TextLines`


class DiskDocument:
    """A file's text as read from disk: never edited, so its lines are a `TextLines` over the one text (the
    editor's documents are `LineDocument`s). Same ``lines``/``text``/``generation`` reading interface."""

    __slots__ = ("lines", "_exact")
    generation = 0

    def __init__(self, text: str):
        normal = _normalize(text)
        self.lines = TextLines(normal)
        self._exact = normal is text  # no BOM, no \r: the text's columns are the file's

    def release(self, path: str, stamp: tuple | None) -> None:
        """Once read: keep no text, reading lines back from the file at ``path`` (as of ``stamp``) when the text
        is the file's ASCII bytes as they are, else keep it compressed (`TextLines.use_file`, `compact`)."""
        if self._exact and stamp is not None:
            self.lines.use_file(path, stamp)
        else:
            self.lines.compact()

    @property
    def text(self) -> str:
        return self.lines.text


class Edit(NamedTuple):
    """What an applied change did: lines [first, first + old_count) became [first, first + new_count)."""

    first: int
    old_count: int
    new_count: int
    old_lines: list[str]


KEEP_TEXT_CHARS = 2_000_000


class LineDocument:
    __slots__ = ("lines", "_text", "generation", "chars")

    def __init__(self, text: str, lines: list[str] | None = None):
        """``lines``: ``text``'s lines when they were split already (as it arrived: the 100 MB module's split is
        90 ms), holding no carriage return; else the text is split here."""
        self._load(text, lines)
        self.generation = 0  # bumped by every edit

    def _load(self, text: str, lines: list[str] | None = None) -> None:
        if text.startswith("\ufeff"):
            text = text[1:]
            if lines:
                lines[0] = lines[0][1:]
        self.lines = split_lines(text) if lines is None else lines
        # kept until the first read (which then needs no join); a large one is let go after it (23 MB more
        # for the benchmark module beside its lines), and joined again when asked
        self._text: str | None = text if lines is not None or "\r" not in text else None
        # the length of the "\n"-joined lines, kept through edits (`apply`): a count over the 100 MB module's
        # two million lines held the GIL 0.1 s each time a version's size was asked
        self.chars = len(text) if self._text is not None else text_length(self.lines)

    def kept_text(self) -> str | None:
        """The text as opened or last joined, while no edit has changed it; None otherwise."""
        return self._text

    def forget_large_text(self) -> None:
        if self._text is not None and len(self._text) >= KEEP_TEXT_CHARS:
            self._text = None

    @property
    def text(self) -> str:
        """The whole text, ``\\n``-joined (cached until the next edit when it is small)."""
        if self._text is not None:
            return self._text
        text = "\n".join(self.lines)
        if len(text) < KEEP_TEXT_CHARS:
            self._text = text
        return text

    def replace_all(self, text: str, lines: list[str] | None = None) -> Edit:
        """The whole text replaced (``lines``: its lines when split already, as `LineDocument` takes them)."""
        old = self.lines
        self._load(text, lines)
        self.generation += 1
        return Edit(0, len(old), len(self.lines), old)

    def apply(self, start_line: int, start_col: int, end_line: int, end_col: int, new_text: str) -> Edit:
        """Replace the range (code points, end exclusive) by ``new_text``. Positions past the end clamp to the
        end of the document (LSP's rule for out-of-range positions); a reversed range is treated as empty."""
        lines = self.lines
        last = len(lines) - 1
        if (end_line, end_col) < (start_line, start_col):
            end_line, end_col = start_line, start_col
        if start_line > last:
            start_line, start_col = last, len(lines[last])
        if end_line > last:
            end_line, end_col = last, len(lines[last])
        start_line = max(0, start_line)
        end_line = max(0, end_line)
        start_col = min(max(0, start_col), len(lines[start_line]))
        end_col = min(max(0, end_col), len(lines[end_line]))
        head = lines[start_line][:start_col]
        tail = lines[end_line][end_col:]
        new = split_lines(head + new_text + tail)
        old = lines[start_line : end_line + 1]
        lines[start_line : end_line + 1] = new
        self.chars += sum(map(len, new)) - sum(map(len, old)) + len(new) - len(old)
        self._text = None
        self.generation += 1
        return Edit(start_line, len(old), len(new), old)


def text_length(lines: Sequence[str] | TextLines) -> int:
    """The length of ``"\\n".join(lines)``, counted in pieces of `pieces.PIECE` lines (the GIL is free between
    them); a `TextLines` knows it."""
    if isinstance(lines, TextLines):
        return lines.chars()
    n, step = len(lines), pieces.PIECE
    return sum(sum(map(len, lines[i : i + step])) for i in range(0, n, step)) + max(n - 1, 0)


def common_prefix(a: Sequence, b: Sequence, n: int | None = None) -> int:
    """Length of the longest common prefix (at most ``n``), compared in slices (C speed) that halve near the
    first mismatch."""
    if n is None:
        n = min(len(a), len(b))
    i, step = 0, 4096
    while step:
        while i + step <= n and a[i : i + step] == b[i : i + step]:
            i += step
        step //= 2
    return i


def common_suffix(a: Sequence, b: Sequence, limit: int) -> int:
    """Length of the longest common suffix, at most ``limit`` (as `common_prefix`, from the end)."""
    la, lb = len(a), len(b)
    i, step = 0, 4096
    while step:
        while i + step <= limit and a[la - i - step : la - i] == b[lb - i - step : lb - i]:
            i += step
        step //= 2
    return i
