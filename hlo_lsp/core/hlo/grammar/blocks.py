"""Split HLO module text into top-level blocks without parsing it.

Blocks: ``header`` (the ``HloModule`` line with its attributes), ``tables`` (FileNames, FunctionNames,
FileLocations and StackFrames, which XLA only accepts together and in that order) and ``computation``
(from its header line to the line holding its closing ``}``).  Each block is a run of whole lines, so a
block's columns equal the document's and only lines shift.

Algorithm: one left-to-right pass over the brackets, skipping strings and comments (both found with
`str.find`, so an unterminated quote or comment costs one scan, never a rescan).  A computation ends
when its braces balance.  Recovery, so one broken computation does not swallow the next: at the start
of a line inside a computation, a line that looks like a computation header (``ENTRY ...`` or
``name (`` ... ending in ``{``) or a lone ``}`` in column 0 closes the current block.
The pass also records each block's deepest bracket nesting, so absurd nesting can be reported
instead of parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPECIAL = re.compile(r"[{}()\[\]\"'/\n]")
_HEADER_LINE = re.compile(r"[ \t]*(?:ENTRY\b|%?[A-Za-z_][A-Za-z0-9_.\-]*[ \t]*[({])")
_TABLE_KEYWORDS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_OPEN = "{(["
_CLOSE = "})]"


@dataclass(frozen=True, slots=True)
class Block:
    kind: str  # "header" | "tables" | "computation"
    start_line: int  # zero-based, first line of the block
    end_line: int  # zero-based, last line (inclusive)
    text: str  # the block's lines joined with their newlines
    max_depth: int  # deepest bracket nesting inside the block
    depth_line: int  # zero-based document line where that depth was first reached


def _line_kind(line: str) -> str | None:
    """The block a depth-0 line starts; None for blank and comment-only lines."""
    stripped = line.strip()
    if not stripped or stripped.startswith("//"):
        return None
    if stripped.startswith("/*") and stripped.endswith("*/") and stripped.count("*/") == 1:
        return None
    word = re.match(r"[A-Za-z_]+", stripped)
    if word:
        if word.group() == "HloModule":
            return "header"
        if word.group() in _TABLE_KEYWORDS:
            return "tables"
    return "computation"


def _looks_like_computation_header(line: str) -> bool:
    if not _HEADER_LINE.match(line):
        return False
    code = line.split("//", 1)[0].rstrip()
    if "=" in code.split("(", 1)[0]:
        return False  # an instruction: `name = ...`
    return code.lstrip().startswith("ENTRY") or code.endswith("{")


def split_blocks(text: str) -> list[Block]:
    """The top-level blocks of ``text`` in document order; [] for a document with no code."""
    lines = text.split("\n")
    # Offsets of line starts, to map a character offset to its line.
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    blocks: list[Block] = []
    kind: str | None = None
    first = 0
    depth = 0  # all bracket kinds
    brace_depth = 0
    max_depth = 0
    depth_line = 0
    opened_body = False

    def close(last: int) -> None:
        nonlocal kind, depth, brace_depth, max_depth, opened_body
        if kind is not None:
            blocks.append(Block(kind, first, last, "\n".join(lines[first : last + 1]), max_depth, depth_line))
        kind = None
        depth = brace_depth = max_depth = 0
        opened_body = False

    line_no = 0
    pos = 0
    n = len(text)
    at_line_start = True
    while pos <= n:
        if at_line_start:
            at_line_start = False
            line = lines[line_no] if line_no < len(lines) else ""
            if kind is None:
                new_kind = _line_kind(line)
                if new_kind is not None:
                    kind, first = new_kind, line_no
            elif kind == "computation" and depth >= 1 and line_no > first:
                if line.rstrip() == "}" and depth > 1:
                    # A lone `}` in column 0 ends the computation even if an attribute brace was left open.
                    depth = brace_depth = 1
                elif _looks_like_computation_header(line) and not line.startswith((" ", "\t")):
                    close(line_no - 1)
                    kind, first = "computation", line_no
            elif kind == "tables" and depth == 0:
                new_kind = _line_kind(line)
                stripped = line.lstrip()
                if new_kind == "header" or (new_kind == "computation" and not stripped[:1].isdigit()):
                    close(line_no - 1)
                    kind, first = new_kind, line_no
            elif kind == "header" and depth == 0 and _line_kind(line) is not None:
                close(line_no - 1)
                kind, first = _line_kind(line), line_no
        m = _SPECIAL.search(text, pos)
        if m is None:
            break
        c = m.group()
        i = m.start()
        if c == "\n":
            line_no += 1
            pos = i + 1
            at_line_start = True
            if kind in ("header", "computation") and depth == 0 and (kind == "header" or opened_body):
                close(line_no - 1)
            continue
        if c in "\"'":
            j = i + 1
            while True:
                k1 = text.find(c, j)
                k2 = text.find("\\", j)
                if k1 == -1:
                    j = n
                    break
                if k2 != -1 and k2 < k1:
                    j = k2 + 2
                    continue
                j = k1 + 1
                break
            line_no += text.count("\n", i, j)
            pos = j
            continue
        if c == "/":
            nxt = text[i + 1 : i + 2]
            if nxt == "/":
                end = text.find("\n", i)
                pos = n if end == -1 else end
                continue
            if nxt == "*":
                end = text.find("*/", i + 2)
                j = n if end == -1 else end + 2
                line_no += text.count("\n", i, j)
                pos = j
                continue
            pos = i + 1
            continue
        if kind is None:
            pos = i + 1
            continue
        if c in _OPEN:
            depth += 1
            if c == "{":
                brace_depth += 1
                if kind == "computation" and depth == 1:
                    opened_body = True
            if depth > max_depth:
                max_depth = depth
                depth_line = line_no
        else:
            depth = max(0, depth - 1)
            if c == "}":
                brace_depth = max(0, brace_depth - 1)
        pos = i + 1
    close(len(lines) - 1 if lines else 0)
    # Trailing blank lines are not part of the last block.
    if blocks:
        b = blocks[-1]
        last = b.end_line
        while last > b.start_line and not lines[last].strip():
            last -= 1
        if last != b.end_line:
            blocks[-1] = Block(
                b.kind, b.start_line, last, "\n".join(lines[b.start_line : last + 1]), b.max_depth, b.depth_line
            )
    return blocks
