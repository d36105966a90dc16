"""Bulk work over millions of items done a piece at a time, so that no single C call holds the GIL for long.

One C call over a 100 MB module's two million lines (copying the list, packing token integers into an array,
freeing a list of half a million tuples) holds the GIL for 30-130 ms, and a hover's message, which needs the GIL
at each step through the reader thread, the event loop and the writer, waits for all of it (a GIL watcher inside
the server found each of these: `benchmarks/README.md`). Between two pieces of about a millisecond the
interpreter lets another thread run.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import chain

from hlo_lsp.core.process import turns

PIECE = 16_384  # items per C call (about 1 ms for the costliest of these: a copy of line references, cold)


def starts(start: int, stop: int, step: int | None = None) -> Iterator[int]:
    """``range(start, stop, step)`` (``step``: `PIECE` as it is at the call), giving way before each
    (`turns.give_way`): the loop over the pieces of a task done a piece at a time, which, run in the background
    or for a whole-document answer, lets the requests under way go first at every piece."""
    for i in range(start, stop, PIECE if step is None else step):
        turns.give_way()
        yield i


def copy_list(items: Sequence) -> list:
    """``list(items)``, a piece at a time."""
    out: list = []
    for i in range(0, len(items), PIECE):
        out += items[i : i + PIECE]
    return out


def packed(typecode: str, rows: Sequence[Sequence[int]]) -> array:
    """``array(typecode, chain.from_iterable(rows))``, a piece of rows at a time."""
    out = array(typecode)
    for i in range(0, len(rows), PIECE):
        out.extend(chain.from_iterable(rows[i : i + PIECE]))
    return out


def int_array(typecode: str, ints: Sequence[int]) -> array:
    """``array(typecode, ints)`` of a list of integers, a piece at a time."""
    out = array(typecode)
    for i in range(0, len(ints), PIECE * 4):
        out.extend(ints[i : i + PIECE * 4])
    return out


def release(*lists: list) -> None:
    """Empty each list a piece at a time from its end (what it held is freed there), so that dropping a list of
    half a million tuples is no single long deallocation."""
    for items in lists:
        while items:
            del items[-PIECE:]
            turns.give_way()  # (in the background: a request under way goes first)
