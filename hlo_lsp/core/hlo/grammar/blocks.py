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
    sp = _Splitter(text)
    pos = 0
    n = len(text)
    at_line_start = True
    while pos <= n:
        if at_line_start:
            at_line_start = False
            sp.line_start()
        m = _SPECIAL.search(text, pos)
        if m is None:
            break
        c = m.group()
        i = m.start()
        if c == "\n":
            sp.newline()
            pos = i + 1
            at_line_start = True
        elif c in "\"'":
            pos = _string_end(text, i, c)
            sp.line_no += text.count("\n", i, pos)
        elif c == "/":
            pos = _comment_end(text, i)
            if text.startswith("/*", i):
                sp.line_no += text.count("\n", i, pos)
        else:
            if sp.kind is not None:
                sp.bracket(c)
            pos = i + 1
    sp.close(len(sp.lines) - 1 if sp.lines else 0)
    return _without_trailing_blanks(sp.blocks, sp.lines)


def _string_end(text: str, i: int, quote: str) -> int:
    """Just past the string opened by ``quote`` at ``i`` (backslash escapes skipped); the text's end when it is
    never closed."""
    j = i + 1
    while True:
        k1 = text.find(quote, j)
        k2 = text.find("\\", j)
        if k1 == -1:
            return len(text)
        if k2 != -1 and k2 < k1:
            j = k2 + 2
            continue
        return k1 + 1


def _comment_end(text: str, i: int) -> int:
    """Where reading goes on after the ``/`` at ``i``: the end of its ``//`` line (its newline still to read), past
    its ``*/`` (the text's end when never closed), or just past a lone ``/``."""
    nxt = text[i + 1 : i + 2]
    if nxt == "/":
        end = text.find("\n", i)
        return len(text) if end == -1 else end
    if nxt == "*":
        end = text.find("*/", i + 2)
        return len(text) if end == -1 else end + 2
    return i + 1


class _Splitter:
    """The state of `split_blocks`' pass: the block being read (its kind and first line), the bracket depths in
    it, the blocks made so far."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.blocks: list[Block] = []
        self.kind: str | None = None
        self.first = 0
        self.line_no = 0
        self.depth = 0  # all bracket kinds
        self.brace_depth = 0
        self.max_depth = 0
        self.depth_line = 0
        self.opened_body = False

    def close(self, last: int) -> None:
        """End the current block (if any) at line ``last``."""
        if self.kind is not None:
            text = "\n".join(self.lines[self.first : last + 1])
            self.blocks.append(Block(self.kind, self.first, last, text, self.max_depth, self.depth_line))
        self.kind = None
        self.depth = self.brace_depth = self.max_depth = 0
        self.opened_body = False

    def start(self, kind: str | None) -> None:
        """A block of ``kind`` starts on the current line (nothing for None: a blank or comment line)."""
        if kind is not None:
            self.kind, self.first = kind, self.line_no

    def line_start(self) -> None:
        """At the start of a line: a new block, or the recovery that closes a computation left open."""
        line_no, kind, depth = self.line_no, self.kind, self.depth
        line = self.lines[line_no] if line_no < len(self.lines) else ""
        if kind is None:
            self.start(_line_kind(line))
        elif kind == "computation" and depth >= 1 and line_no > self.first:
            if line.rstrip() == "}" and depth > 1:
                # A lone `}` in column 0 ends the computation even if an attribute brace was left open.
                self.depth = self.brace_depth = 1
            elif _looks_like_computation_header(line) and not line.startswith((" ", "\t")):
                self.close(line_no - 1)
                self.start("computation")
        elif kind == "tables" and depth == 0:
            new_kind = _line_kind(line)
            if new_kind == "header" or (new_kind == "computation" and not line.lstrip()[:1].isdigit()):
                self.close(line_no - 1)
                self.start(new_kind)
        elif kind == "header" and depth == 0 and _line_kind(line) is not None:
            self.close(line_no - 1)
            self.start(_line_kind(line))

    def newline(self) -> None:
        """Past a newline: a header, or a computation whose body has closed, ends with the line before."""
        self.line_no += 1
        kind = self.kind
        if kind in ("header", "computation") and self.depth == 0 and (kind == "header" or self.opened_body):
            self.close(self.line_no - 1)

    def bracket(self, c: str) -> None:
        if c in _OPEN:
            self.depth += 1
            if c == "{":
                self.brace_depth += 1
                if self.kind == "computation" and self.depth == 1:
                    self.opened_body = True
            if self.depth > self.max_depth:
                self.max_depth = self.depth
                self.depth_line = self.line_no
        else:
            self.depth = max(0, self.depth - 1)
            if c == "}":
                self.brace_depth = max(0, self.brace_depth - 1)


def _without_trailing_blanks(blocks: list[Block], lines: list[str]) -> list[Block]:
    """Trailing blank lines are not part of the last block."""
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
