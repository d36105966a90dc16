"""The text primitives of a buffer dump, at the bottom of `core.buffers`: a value's name and index, its
``<id name{index} @color>`` header, ``from instruction:`` lines, position and use lines; and the line helpers the
records use to read a value's block again on demand. One definition each; the section readers import them."""

from __future__ import annotations

import re

NAME = r"[^\s{}<>:,=()]+"
INDEX = r"\{[0-9,]*\}"
HEADER = re.compile(rf"<(\d+) ({NAME})({INDEX})?( \(phi\))?(?: @(\d+))?>\Z")
POSITION = re.compile(rf"  ({NAME})(?: ({INDEX}))?\Z")
USE = re.compile(rf"  ({NAME}), operand (\d+)(?: ({INDEX}))?\Z")
FROM = re.compile(rf" from instruction: ?(%?)({NAME})")


def parse_index(text: str | None) -> tuple[int, ...] | None:
    """``{1,0}`` -> (1, 0); ``{}`` -> (); None -> None (ValueError on a malformed number)."""
    if text is None:
        return None
    inner = text[1:-1]
    return tuple(int(p) for p in inner.split(",")) if inner else ()


def from_instruction_span(line: str) -> tuple[int, int]:
    """(start, end) columns of the instruction name on a `` from instruction: %name = ...`` line; (0, 0) when
    the line is not one."""
    m = FROM.match(line)
    return (m.start(2), m.end(2)) if m is not None else (0, 0)


def without_glued_header(line: str) -> str:
    """A `` from instruction:`` line without the next value's header glued to its end (see
    `_Reader.glued_header`); the line itself when it has none."""
    if line.endswith(">"):
        i = line.rfind("<")
        if HEADER.match(line, i):
            return line[:i]
    return line
