"""Shape text: `parse_shape` (one left-to-right scan with an explicit stack of open tuples), `parse_layout` (the
text between a layout's braces) and `shape_text` (a shape printed back as XLA does)."""

from __future__ import annotations

import re

from hlo_lsp.core.memos import memo_table
from hlo_lsp.core.shapes.model import ELEMENT_BITS, INT64_MAX, MAX_INT_DIGITS, SPECIAL_TYPES, Layout, Shape

_WS = " \t\r\n"
_DIGITS = "0123456789"


def _skip(text: str, i: int, n: int) -> int:
    """Skip whitespace and ``/*...*/`` comments; returns the next index (n at the end)."""
    while i < n:
        c = text[i]
        if c in _WS:
            i += 1
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                return n
            i = j + 2
        else:
            break
    return i


def _separator(text: str, i: int, n: int, close: str) -> tuple[int, bool] | None:
    """After an item of a list that ``close`` ends (dimensions, tuple elements): (past a ``,``, True) when another
    item follows, (past ``close``, False) at the list's end; None for anything else."""
    i = _skip(text, i, n)
    if i < n:
        c = text[i]
        if c == ",":
            return i + 1, True
        if c == close:
            return i + 1, False
    return None


def _read_int(text: str, i: int, n: int) -> tuple[int, int] | None:
    j = i
    while j < n and text[j] in _DIGITS:
        j += 1
    if j == i or j - i > MAX_INT_DIGITS:
        return None
    v = int(text[i:j])
    if v > INT64_MAX:
        return None
    return v, j


def _parse_array(text: str, i: int, n: int) -> tuple[Shape, int] | None:
    """Parse ``type[dims]{layout}`` starting at i; returns (shape, index after it) or None."""
    j = i
    while j < n and (text[j].isalnum() or text[j] == "_"):
        j += 1
    etype = text[i:j]
    if etype not in ELEMENT_BITS and etype not in SPECIAL_TYPES:
        return None
    if j >= n or text[j] != "[":
        return None
    j += 1
    dims: list[int] = []
    dynamic: list[bool] = []
    j = _skip(text, j, n)
    if j < n and text[j] == "]":
        j += 1
    else:
        while True:
            j = _skip(text, j, n)
            if j >= n:
                return None
            if text[j] == "?":
                dims.append(-1)
                dynamic.append(True)
                j += 1
            else:
                dyn = text.startswith("<=", j)
                if dyn:
                    j += 2
                r = _read_int(text, j, n)
                if r is None:
                    return None
                dims.append(r[0])
                dynamic.append(dyn)
                j = r[1]
            sep = _separator(text, j, n, "]")
            if sep is None:
                return None
            j, more = sep
            if not more:
                break
    layout = None
    if j < n and text[j] == "{":
        k = text.find("}", j + 1)
        if k < 0:
            return None
        layout = parse_layout(text[j + 1 : k])
        if layout is None:
            return None
        j = k + 1
    return Shape(etype, tuple(dims), tuple(dynamic), layout), j


def parse_layout(body: str) -> Layout | None:
    """Parse the text between a layout's braces (``1,0:T(8,128)(2,1)S(1)``); None when malformed."""
    colon = body.find(":")
    m2m_text = body if colon < 0 else body[:colon]
    m2m: list[int] = []
    if m2m_text.strip():
        for part in m2m_text.split(","):
            part = part.strip()
            if not (part.isascii() and part.isdigit()) or len(part) > MAX_INT_DIGITS:
                return None
            m2m.append(int(part))
    if colon < 0:
        return Layout(tuple(m2m), (), 0, 0, body)
    attrs = _layout_attributes(body[colon + 1 :])
    if attrs is None:
        return None
    tiles, esize, mspace = attrs
    return Layout(tuple(m2m), tuple(tiles), esize, mspace, body)


def _layout_attributes(attrs: str) -> tuple[list[tuple[int | None, ...]], int, int] | None:
    """(tiles, element size bits, memory space) of the attributes after a layout's colon; None when malformed.
    An attribute is a short tag (letters, '#', '*') followed by a parenthesised group."""
    tiles: list[tuple[int | None, ...]] = []
    esize = mspace = 0
    n = len(attrs)
    i = 0
    last = ""
    while i < n:
        if attrs[i] in _WS:
            i += 1
            continue
        j = attrs.find("(", i)
        if j < 0:
            return None
        k = attrs.find(")", j + 1)
        if k < 0:
            return None
        tag = attrs[i:j].strip()
        inner = attrs[j + 1 : k]
        if tag == "" and last == "T":
            tag = "T"  # a further tile: T(8,128)(2,1)
        if tag == "T":
            tile = _tile(inner)
            if tile is None:
                return None
            tiles.append(tile)
        elif tag in ("E", "S"):
            if not (inner.isascii() and inner.strip().isdigit()):
                return None
            if tag == "E":
                esize = int(inner.strip()[:MAX_INT_DIGITS])
            else:
                mspace = int(inner.strip()[:MAX_INT_DIGITS])
        elif tag == "" or not all(ch.isalpha() or ch in "#*_" for ch in tag):
            return None
        last = tag
        i = k + 1
    return tiles, esize, mspace


def _tile(inner: str) -> tuple[int | None, ...] | None:
    """The sizes of one ``T(...)`` tile (None for ``*``); None when one is neither."""
    tile: list[int | None] = []
    for part in inner.split(","):
        part = part.strip()
        if part == "*":
            tile.append(None)
        elif part.isascii() and part.isdigit() and len(part) <= MAX_INT_DIGITS:
            tile.append(int(part))
        else:
            return None
    return tuple(tile)


# An array shape with a plain layout (no tiles, not followed by another brace): the key of `_ARRAY_MEMO`, so the
# thousands of equal elements of a large tuple (an ENTRY layout of 9,000 parameters) are parsed once. A text is
# stored only when `_parse_array` ended exactly where this match ends, so a hit is what parsing would give.
_ARRAY_TEXT = re.compile(r"[A-Za-z0-9_]+\[[0-9,]*\](?:\{[0-9,]*\})?(?![{\[])")
_ARRAY_MEMO: dict[str, Shape] = memo_table({})
_ARRAY_MEMO_MAX = 4096
# Long shape texts parsed lately, by their text: the ENTRY root's tuple (9,000 elements, 184 kB in the Adam module)
# is parsed for every hover on it or on one of its values (6 ms, and 12 ms beside a background read). A hit costs
# the text's hash and one comparison.
_LONG_MEMO: dict[str, Shape | None] = memo_table({})
LONG_SHAPE = 1024
_LONG_MEMO_MAX = 16
_UNSEEN = object()


def parse_shape(text: str) -> Shape | None:
    """Parse an XLA shape string (array, scalar, token, tuple of any depth); None when it is not one shape."""
    if not isinstance(text, str):
        return None
    if len(text) < LONG_SHAPE:
        return _parse_shape(text)
    done = _LONG_MEMO.get(text, _UNSEEN)
    if done is _UNSEEN:
        if len(_LONG_MEMO) >= _LONG_MEMO_MAX:
            _LONG_MEMO.clear()  # (threads share it: one C call each, no check-then-act)
        done = _LONG_MEMO[text] = _parse_shape(text)
    return done  # type: ignore[return-value]


def _parse_shape(text: str) -> Shape | None:
    n = len(text)
    i = _skip(text, 0, n)
    # Each open tuple is a list of its element shapes so far.
    stack: list[list[Shape]] = []
    result: Shape | None = None
    while True:
        i = _skip(text, i, n)
        if i >= n:
            return None
        c = text[i]
        if c == "(":
            stack.append([])
            i += 1
            i = _skip(text, i, n)
            if i < n and text[i] == ")":
                i += 1
                done = Shape("tuple", tuple_shapes=tuple(stack.pop()))
            else:
                continue
        else:
            m = _ARRAY_TEXT.match(text, i)
            memo = _ARRAY_MEMO.get(m.group()) if m is not None else None
            if m is not None and memo is not None:
                done = memo
                i = m.end()
            else:
                r = _parse_array(text, i, n)
                if r is None:
                    return None
                done, i = r
                if m is not None and i == m.end():
                    if len(_ARRAY_MEMO) >= _ARRAY_MEMO_MAX:
                        _ARRAY_MEMO.clear()
                    _ARRAY_MEMO[m.group()] = done
        # Close as many tuples as the text closes after this element.
        while True:
            if not stack:
                result = done
                break
            stack[-1].append(done)
            sep = _separator(text, i, n, ")")
            if sep is None:
                return None
            i, more = sep
            if more:
                break
            done = Shape("tuple", tuple_shapes=tuple(stack.pop()))
        if result is not None:
            break
    i = _skip(text, i, n)
    return result if i == n else None


def shape_text(shape: Shape, with_layout: bool = True) -> str:
    """Print a shape back as XLA does (iteratively); layouts as their original text."""
    out: list[str] = []
    # Work items: a Shape to print, or a literal string.
    work: list[object] = [shape]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        s: Shape = item  # type: ignore[assignment]
        if s.element_type == "tuple":
            work.append(")")
            for k in range(len(s.tuple_shapes) - 1, -1, -1):
                work.append(s.tuple_shapes[k])
                if k:
                    work.append(", ")
            out.append("(")
            continue
        dims = ",".join(("?" if d < 0 else ("<=" if dy else "") + str(d)) for d, dy in zip(s.dims, s.dynamic))
        out.append(f"{s.element_type}[{dims}]")
        if with_layout and s.layout is not None:
            out.append("{" + s.layout.text + "}")
    return "".join(out)
