"""Bulk work over millions of items done a piece at a time, so that no single C call holds the GIL for long.

One C call over a 100 MB module's two million lines (copying the list, packing token integers into an array,
freeing a list of half a million tuples) holds the GIL for 30-130 ms, and a hover's message, which needs the GIL
at each step through the reader thread, the event loop and the writer, waits for all of it (a GIL watcher inside
the server found each of these: `benchmarks/README.md`). Between two pieces of about a millisecond the
interpreter lets another thread run.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
from itertools import chain

from hlo_lsp.core.process import turns

PIECE = 16_384  # items per C call (about 1 ms for the costliest of these: a copy of line references, cold)


def _one_name_refs() -> int:
    item = object()
    return sys.getrefcount(item)


# what ``sys.getrefcount(x)`` gives for an object that one local name holds and nothing else: 2 (the name and
# the call's argument), or less where the interpreter borrows the argument's reference; a large list that only
# the caller holds is emptied a piece at a time (`release`) rather than freed in one C call
ONE_NAME_REFS = _one_name_refs()


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


ARRAY_PIECE = 1 << 18  # integers `joined` copies at a time (1 MB of four-byte ones: about 1 ms, fresh pages too)


def joined(typecode: str, parts: Sequence[Sequence[int]]) -> array:
    """The integers of ``parts`` (arrays or memoryviews of them) one after the other, as one array of
    ``typecode``, copied `ARRAY_PIECE` integers at a time: ``a + b + c`` of the 100 MB module's 12.8 MB of
    tokens is one C call per ``+`` into fresh memory (every page of it a fault), and held the GIL 14-18 ms while a
    hover waited."""
    out = array(typecode)
    step = ARRAY_PIECE * out.itemsize
    for part in parts:
        with memoryview(part) as items, items.cast("B") as view:  # type: ignore[arg-type]
            for i in range(0, len(view), step):
                out.frombytes(view[i : i + step])
    return out


def shifted(rows: array, start: int, step: int, by: int) -> None:
    """Add ``by`` to ``rows[start::step]`` in place, `PIECE` of them at a time (one ``array(map(...))`` over the
    100 MB module's 640,000 token lines is one C call, a Python addition each, holding the GIL)."""
    span = PIECE * step
    add = by.__add__
    for i in range(start, len(rows), span):
        rows[i : i + span : step] = array(rows.typecode, map(add, rows[i : i + span : step]))


def largest(items: Sequence[int], default: int = -1) -> int:
    """``max(items, default=default)``, a piece at a time: one ``max`` over the name columns of the 100 MB
    module's 642,061 instructions held the GIL 9.5-10.5 ms as its semantic tokens began (13-14 ms in all so)."""
    tops = [max(items[i : i + PIECE]) for i in starts(0, len(items))]
    return max(tops) if tops else default
