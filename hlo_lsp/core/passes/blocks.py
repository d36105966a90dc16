"""One block of a pass file indexed (`index_block`), and what the history reads of an instruction line (`tags`,
`kind`, `line_defining`).

A block is the text between two blank lines: the module header, a metadata table, or a computation. A computation
XLA wrote has its header on its first line, one instruction per line, and ``}`` on its last ("rows"): its names
and line hashes come from one regex pass (`_ROW`), in line order. Most files of a history repeat the previous
version of a long computation with a few lines changed, so such a block is indexed against that version: the
lines of their common beginning and end are taken from it (two string comparisons, then list slices), and only the
lines between are split, hashed and matched; the block keeps the hashes of the lines one version has and the other
lacks (`Block.delta`), so that comparing the two files needs no set operations over the whole computation. Its
line count, fusions (`Block.fused`) and fresh names come from those lines too. (`re`'s split at blank lines is used:
``str.split("\\n\\n")`` takes twice as long on these texts.)
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, filterfalse
from operator import add

_NAME = re.compile(r"^[ \t]+(?:ROOT[ \t]+)?%?([^\s=%]+)[ \t]*=[ \t]", re.M)
_ROW = re.compile(r"^([ \t]+(?:ROOT[ \t]+)?%?([^\s=%]+)[ \t]*=[ \t][^\n]*)", re.M)  # (line, name)
_COMPUTATION = re.compile(r"(ENTRY[ \t]+)?%?([^\s(]+)")  # on a block's first line, which must end in '{'
_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_DIGITS = re.compile(r"\d*")
_BLANK_LINE = re.compile("\n\n")  # (its split is twice as fast as str.split's on these texts)

INCREMENTAL_CHARS = 8192  # a computation this long is indexed against its earlier version


@dataclass(slots=True)
class Block:
    """One distinct block of text: a computation (or the header, a table), indexed once."""

    computation: str | None  # None for the header and the tables
    is_entry: bool
    lines: int  # how many lines it spans
    names: dict[str, int]  # instruction name -> its line in the block (in line order)
    by_hash: dict[int, str]  # the hash of an instruction line's text -> its name (in line order)
    fusions: int  # instructions whose opcode is fusion
    rows: bool = False  # machine-written: lines 1 to lines - 2 are its instructions, in `names`' order
    # rows: fusion instruction -> its line's hash, from which the next version's are counted (while building: the
    # history lets them go once it is built, as it does the texts)
    fused: dict[str, int] = field(default_factory=dict)
    parent: int | None = None  # the block it was indexed against (set by the history), with ...
    # ... the hashes of the lines only the parent has, and of those only this block has (the comparison of the two)
    delta: tuple[list[int], list[int]] | None = None


# like(computation) -> (block id, block, text) of the last version of that computation indexed, or None
Earlier = Callable[[str], "tuple[int, Block, str] | None"]


def index_block(part: str, like: Earlier) -> Block:
    """The index of a block (``part``, from its blank lines on: XLA writes two before the first computation)."""
    text = part.lstrip("\n")
    lead = len(part) - len(text)
    block = _index_text(text, like)
    if lead:
        block.lines += lead
        block.names = {n: line + lead for n, line in block.names.items()}
    return block


def _is_fusion(line: str) -> bool:
    return " fusion(" in line or "\tfusion(" in line


def _index_text(text: str, like: Earlier) -> Block:
    end = text.find("\n")
    first = text[:end] if end >= 0 else text
    m = _COMPUTATION.match(first) if first.rstrip(" \t").endswith("{") else None
    if m is None:
        return Block(None, False, text.count("\n") + 1, {}, {}, 0)
    closed = text.endswith("}")
    earlier = like(m.group(2)) if closed and len(text) > INCREMENTAL_CHARS else None
    if earlier is not None and earlier[1].rows:
        got = _rows_like(text, earlier[1], earlier[2])
        if got is not None:
            names, hashes, lines, gone, came, fused = got
            block = Block(m.group(2), bool(m.group(1)), lines, {}, {}, 0)
            if _take(block, names, hashes):
                block.parent, block.delta = earlier[0], (list(filterfalse(block.by_hash.__contains__, gone)), came)
                fused.update((n, h) for n, h in earlier[1].fused.items() if h in block.by_hash)
                block.fused, block.fusions = fused, len(fused)
                return block
    block = Block(m.group(2), bool(m.group(1)), text.count("\n") + 1, {}, {}, 0)
    if closed and block.lines >= 3:
        found = _ROW.findall(text)
        if len(found) == block.lines - 2:
            row_texts, row_names = zip(*found) if found else ((), ())
            row_hashes = list(map(hash, row_texts))
            if _take(block, row_names, row_hashes):
                if "fusion(" in text:
                    block.fused = {n: h for x, n, h in zip(row_texts, row_names, row_hashes) if _is_fusion(x)}
                block.fusions = len(block.fused)
                return block
    block.fusions = text.count(" fusion(") + (text.count("\tfusion(") if "\t" in text else 0)
    for n in _NAME.finditer(text):  # by hand (blank or wrapped lines), or a repeated name: line by line
        if n.group(1) not in block.names:
            start = n.start()
            end = text.find("\n", start)
            block.names[n.group(1)] = text.count("\n", 0, start)
            block.by_hash[hash(text[start : end if end >= 0 else len(text)])] = n.group(1)
    return block


def _take(block: Block, names: Sequence[str], hashes: Sequence[int]) -> bool:
    """Lines 1.. of ``block`` are these instructions; False (nothing kept) when a name or line repeats."""
    block.names = dict(zip(names, range(1, len(names) + 1)))
    block.by_hash = dict(zip(hashes, names))
    if len(block.names) == len(names) == len(block.by_hash):
        block.rows = True
        return True
    block.names, block.by_hash = {}, {}
    return False


def _rows_like(
    text: str, earlier: Block, old: str
) -> tuple[list[str], list[int], int, list[int], list[int], dict[str, int]] | None:
    """(names, line hashes, line count, gone, came, fused) of the instruction lines of ``text``, given ``earlier``
    (a rows block, whose text is ``old``): the whole lines of their common beginning (the header first) and end
    (``}`` last) are the same instructions (their names and hashes taken from ``earlier`` by list slices); the
    lines between are split, hashed and matched (by hash in ``earlier``, else by the regex). ``gone``: the hashes
    of the lines of ``earlier`` between (a superset of those ``text`` lacks); ``came``: the hashes of the lines of
    ``text`` that ``earlier`` lacks; ``fused``: the fusion instructions among those. None when the header differs,
    or a line between is no instruction."""
    p = common_prefix(old, text)
    start = text.rfind("\n", 0, p) + 1  # the first line not wholly in common (the last newline in common, + 1)
    s = common_suffix(old, text, min(len(old), len(text)) - start)
    q = len(text) - s
    if q > start and text[q - 1] == old[len(old) - s - 1] == "\n":
        end = q  # the common end starts a line in both
    else:
        end = text.find("\n", q) + 1  # the first line after a newline in the common end
    if start == 0 or end == 0:
        return None
    head = text.count("\n", 0, start)  # lines in common at the start
    tail = text.count("\n", end) + 1  # lines in common at the end
    first, last = head - 1, earlier.lines - 1 - tail  # the instructions of earlier between: [first, last)
    if last < first:
        return None
    middle = text[start : end - 1].split("\n") if end > start else []
    mid_hashes = list(map(hash, middle))
    mid_names: list[str | None] = list(map(earlier.by_hash.get, mid_hashes))
    came: list[int] = []
    fused: dict[str, int] = {}
    if None in mid_names:
        k = -1
        try:
            while True:  # the lines earlier lacks: their names by the regex
                k = mid_names.index(None, k + 1)
                m = _ROW.match(middle[k])
                if m is None:
                    return None
                mid_names[k] = m.group(2)
                came.append(mid_hashes[k])
                if _is_fusion(middle[k]):
                    fused[m.group(2)] = mid_hashes[k]
        except ValueError:
            pass
    names, hashes = list(earlier.names), list(earlier.by_hash)
    return (  # type: ignore[return-value]  # no None left in mid_names
        names[:first] + mid_names + names[last:],
        hashes[:first] + mid_hashes + hashes[last:],
        head + len(middle) + tail,
        hashes[first:last],
        came,
        fused,
    )


def common_prefix(a: str, b: str, step: int = 4096) -> int:
    """The length of the longest common beginning of ``a`` and ``b`` (compared a page at a time)."""
    n = min(len(a), len(b))
    i = 0
    while i < n and b.startswith(a[i : i + step], i):
        i += step
    if i >= n:
        return n
    lo, hi = i, min(n, i + step)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.startswith(a[i:mid], i):
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: str, b: str, limit: int, step: int = 4096) -> int:
    """The length of the longest common end of ``a`` and ``b``, at most ``limit``."""
    n = min(len(a), len(b), max(limit, 0))
    la, lb = len(a), len(b)
    i = 0
    while i < n and b.endswith(a[la - min(i + step, n) : la - i], 0, lb - i):
        i = min(i + step, n)
        if i == n:
            return n
    lo, hi = i, min(n, i + step)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.endswith(a[la - mid : la - i], 0, lb - i):
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(slots=True)
class Layout:
    """A file's text cut at its blank lines (``text.split("\\n\\n")``), each part's key (length, hash)."""

    text: str
    texts: list[str]
    keys: list[tuple[int, int]]


def split_file(text: str, prev: Layout | None) -> Layout:
    """``text`` cut at its blank lines; given the file before, only the text between their common beginning and
    end is cut and hashed: the parts wholly in either (with the blank line between them and the rest) are the
    file before's."""
    if prev is None or not prev.texts or not text:
        texts = _BLANK_LINE.split(text) if text else []
        return Layout(text, texts, list(zip(map(len, texts), map(hash, texts))))
    # where each part's next starts in the file before: the lengths so far, and a blank line after each
    ends = list(map(add, accumulate(map(len, prev.texts)), range(2, 2 * len(prev.texts) + 2, 2)))
    head = bisect_right(ends, common_prefix(prev.text, text, 16384))  # parts wholly in the common beginning
    m0 = ends[head - 1] if head else 0
    same_end = common_suffix(prev.text, text, min(len(prev.text), len(text)) - m0, 16384)
    shift = len(text) - len(prev.text)
    tail = max(head, bisect_left(ends, len(prev.text) - same_end + 2) + 1)  # first part of the common end
    while tail < len(ends):  # ... whose blank line before it is cut there in this text too
        b = ends[tail - 1] + shift - 2
        if b >= m0 and (b == m0 or text[b - 1] != "\n"):
            break
        tail += 1
    stop = ends[tail - 1] + shift - 2 if tail < len(ends) else len(text)
    middle = _BLANK_LINE.split(text[m0:stop])
    return Layout(
        text,
        prev.texts[:head] + middle + prev.texts[tail:],
        prev.keys[:head] + list(zip(map(len, middle), map(hash, middle))) + prev.keys[tail:],
    )


def tags(line: str) -> tuple[str, str | None] | None:
    """(op_name, stack frame) of an instruction line's metadata, None without an op_name (the metadata's
    ``op_name="..."``, backslash escapes kept; ``stack_frame_id=N``)."""
    i = line.find('op_name="')
    if i < 0:
        return None
    j = line.find('"', i + 9)
    if (i and (line[i - 1].isalnum() or line[i - 1] == "_")) or j < 0 or line[j - 1] == "\\":
        m = _OP_NAME.search(line)  # another attribute ending in op_name first, an escaped quote: the regex
        if m is None:
            return None
        i, j = m.start(1) - 9, m.end(1)
    k = line.find("stack_frame_id=", j)
    frame = line[k + 15 : _DIGITS.match(line, k + 15).end()] if k >= 0 else ""  # type: ignore[union-attr]
    return line[i + 9 : j], frame or None


def kind(line: str) -> str:
    """An instruction line's shape and opcode (``f32[128,10]{1,0} subtract``): what a rebuilt instruction keeps."""
    i = line.find(" = ")
    return line[i + 3 : line.find("(", i + 4)]


def line_defining(text: str, name: str, line: int) -> str:
    """Line ``line`` of ``text``, which defines ``name``: found by its ``%name = `` at a line's start, else by
    splitting the text."""
    at = text.find(f"%{name} = ")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        if text[start:at].strip() in ("", "ROOT"):  # its definition (a use is never at a line's start)
            end = text.find("\n", at)
            return text[start : end if end >= 0 else len(text)]
        at = text.find(f"%{name} = ", at + 1)
    return text.split("\n")[line]
