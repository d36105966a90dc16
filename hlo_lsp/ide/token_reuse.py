"""Semantic tokens of a long HLO module after an edit, made from the previous version's tokens.

A full request on a module past `semantic_tokens.LIGHT_LINES` lines gets the definitions only
(`semantic_tokens.definition_tokens`): each token is where a name is defined, and depends only on its own line's
entry in the instruction index. So after an edit the tokens of the lines before and after the changed run of
lines are the previous version's (those after it moved by the lines the edit added or removed), and only the
changed lines' tokens are taken from the index. That is a few ms after a one-line edit instead of a pass over
every instruction (0.2–0.5 s on the 23 MB module).

It is used only when the edit provably left the rest alone: the computations (line, name column, name) are the
previous ones moved by the edit, none of their header lines and not the module's header line is in the changed
run, and the number of instructions changed by exactly the instruction tokens the changed run gained or lost.
Otherwise (an edit that moves a brace, renames a computation, or makes the reader drop an instruction elsewhere)
it answers None and the caller computes every token afresh.

The wire ``data`` (LSP's relative encoding) is spliced the same way (`reuse_encoded`): the previous array before
and after the changed run is kept as it is, since a token's five integers depend only on it and the token before
it; only the changed lines' tokens are encoded, and the first token after them gets its new line delta. Encoding
every token of the 23 MB module took 50 ms after each edit; the splice is a copy of the array.
"""

from __future__ import annotations

import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

from hlo_lsp.core import kinds
from hlo_lsp.core.document import common_prefix, common_suffix
from hlo_lsp.core.hlo.instructions import name_columns
from hlo_lsp.core.occurrences import COL_BITS
from hlo_lsp.core.process import pieces
from hlo_lsp.ide import semantic_tokens

Tok = tuple[int, int, int, int, int]  # (line, start, end, type, modifiers), code-point columns
# tokens -> their wire data, the first token's line delta counted from the given line (`reuse_encoded`)
Encoder = Callable[[Sequence[Tok], int], "array[int]"]


TOKEN_ROWS = "i"  # the typecode of `TokenMemo.tokens`: lines and code-point columns fit LSP's uinteger


def token_rows(tokens: Sequence[Tok]) -> array[int]:
    """``tokens`` packed, five integers each (`TokenMemo.tokens`)."""
    return array(TOKEN_ROWS, chain.from_iterable(tokens))


def token_list(rows: array[int]) -> list[Tok]:
    """The tokens packed in ``rows`` (`token_rows`)."""
    it = iter(rows)
    return list(zip(it, it, it, it, it))


def _row(rows: array[int], i: int) -> Tok:
    return tuple(rows[5 * i : 5 * i + 5])  # type: ignore[return-value]


@dataclass
class TokenMemo:
    """What the next version's tokens are made from: the lines they were made for (a copy: the store is edited
    in place), the tokens (packed, `token_rows`: the 217,000 tokens of the 23 MB module took 25 MB as a list of
    tuples, kept for the whole session, and take 4 MB so; compressed once the server is idle, `pack`: 0.12 MB,
    read back at the next edit), the computations' (line, name column, name), the number of instructions, and the
    tokens' wire data in the position encoding ``encoding`` (`reuse_encoded`)."""

    lines: list[str]
    tokens: array[int] | bytes  # the rows, or them compressed (`packed_rows`)
    comps: list[tuple[int, int, str]]
    n_instructions: int
    data: array[int]
    encoding: str

    def rows(self) -> array[int]:
        """The tokens, packed (`token_rows`)."""
        t = self.tokens
        return t if isinstance(t, array) else unpacked_rows(t)

    def pack(self) -> int:
        """Compress the tokens (`packed_rows`), once the server is idle (`lsp.doc_answers.DocumentAnswers.pack_kept`):
        made at each edit, the compression took 12-17 ms of the token delta the editor waited for, and the next
        edit of a burst read them back (as long again). The bytes it freed."""
        t = self.tokens
        if not isinstance(t, array):
            return 0
        packed = packed_rows(t)
        self.tokens = packed
        return t.itemsize * len(t) - len(packed)


def packed_rows(rows: array[int]) -> bytes:
    """``rows`` (or any packed integers: the token data kept for a delta, `lsp.doc_answers`) compressed (zlib,
    fastest level: a long document's rows are runs of like numbers, 4.35 MB -> 0.12 MB in 5 ms for the 23 MB
    module, the GIL released meanwhile), read where they lie (``rows.tobytes()``, a copy of the 100 MB module's
    12.8 MB with the GIL held, kept a hover waiting 12 ms)."""
    return zlib.compress(memoryview(rows), 1)


UNPACK_PIECE = 1 << 20  # bytes of integers `unpacked_rows` makes at a time (one C call each, the GIL held)


def unpacked_rows(data: bytes, typecode: str = TOKEN_ROWS) -> array[int]:
    """`packed_rows`' integers, as an array of ``typecode`` (the one they were packed from), decompressed
    `UNPACK_PIECE` bytes at a time (the 100 MB module's 12.8 MB, made and copied whole, held the GIL 10 ms)."""
    out = array(typecode)
    size = out.itemsize
    d = zlib.decompressobj()
    rest = data
    carry = b""  # the bytes of an integer a piece ended inside (a piece is whole integers but for that)
    while not d.eof:
        part = d.decompress(rest, UNPACK_PIECE)
        rest = d.unconsumed_tail
        if not part and not rest:
            break  # (cut short: what there was)
        if carry:
            part = carry + part
        whole = len(part) - len(part) % size
        out.frombytes(memoryview(part)[:whole])
        carry = part[whole:]
    out.frombytes(carry + d.flush())
    return out


@dataclass
class BufferTokenMemo:
    """What a long buffer file's next tokens are made from: its model's serial number, the tokens' wire data
    (one token per occurrence of the model, in order) and its position encoding (`reuse_buffer_encoded`)."""

    serial: int
    data: array[int]
    encoding: str


def buffer_memo_of(a, data: array[int], encoding: str) -> BufferTokenMemo | None:
    """The memo of ``data``, the wire data of a long buffer file's full tokens; None when ``a`` is no such file
    or a token was left out (one past `semantic_tokens.MAX_LINE`): the tokens must be the occurrences."""
    doc = a.buffers
    if doc is None or len(a.lines) <= semantic_tokens.LIGHT_LINES or len(data) != 5 * len(doc.occurrences):
        return None
    return BufferTokenMemo(doc.serial, data, encoding)


def reuse_buffer_encoded(memo, a, encoding: str, encode: Encoder) -> BufferTokenMemo | None:
    """The next memo of a long buffer file whose model was patched from the memo's (`buffers.patch`): the
    memo's data before and after the patched occurrences kept, those encoded, the first token after them given
    its new line delta (as `reuse_encoded` does for modules); None when the model was not patched from it."""
    doc = a.buffers
    if not isinstance(memo, BufferTokenMemo) or doc is None or memo.encoding != encoding:
        return None
    if len(a.lines) <= semantic_tokens.LIGHT_LINES:
        return None
    if doc.serial == memo.serial:
        return memo
    p = doc.patched
    if p is None or p.source != memo.serial or len(memo.data) < 5 * p.old_end:
        return None
    occ = doc.occurrences
    mid = semantic_tokens.occurrence_tokens(a.index, p.start, p.start + p.count)
    if len(mid) != p.count:
        return None  # a token left out: the tokens are no longer the occurrences
    prev = occ.pos[p.start - 1] >> COL_BITS if p.start else 0
    end = p.start + p.count
    first_after = occ.pos[end] >> COL_BITS if end < len(occ) else None
    # None never from the splice: a block ends where a line begins
    data = _spliced(memo.data, p.start, p.old_end, mid, prev, first_after, encode)
    if data is None or len(data) != 5 * len(occ):
        return None
    return BufferTokenMemo(doc.serial, data, encoding)


def _spliced(
    old: array[int], i0: int, i1: int, mid: Sequence[Tok], prev: int, first_after: int | None, encode: Encoder
) -> array[int] | None:
    """Wire data ``old`` with its tokens ``i0 .. i1 - 1`` replaced by ``mid`` encoded (its first line delta
    counted from ``prev``, the line of the token before), the first token after them given its new line delta
    (it is on line ``first_after``; None when there is none); None when that token would be on the line of the
    token before it (its start would then be relative to that token)."""
    tail = 5 * i1 < len(old)
    last = mid[-1][0] if mid else prev
    if tail and (first_after is None or first_after == last):
        return None
    encoded = encode(mid, prev)
    with memoryview(old) as view:  # (a piece at a time: `pieces.joined`)
        out = pieces.joined(old.typecode, [view[: 5 * i0], encoded, view[5 * i1 :]])
    if tail:
        out[5 * i0 + len(encoded)] = first_after - last  # type: ignore[operator]
    return out


def _long_module(a) -> bool:
    return a.kind == kinds.HLO and a.hlo is not None and len(a.lines) > semantic_tokens.LIGHT_LINES


_SIG = attrgetter("line", "name_start", "name")


def _signature(mod) -> tuple[list[tuple[int, int, str]], int]:
    comps = mod.computations
    return [_SIG(c) for c in comps], sum([len(c.instructions) for c in comps])  # (a loop: no long C call)


def memo_of_rows(a, rows: array[int], data: array[int], encoding: str) -> TokenMemo | None:
    """`memo_of` with the tokens packed already (`semantic_tokens.definition_rows`)."""
    if not _long_module(a):
        return None
    comps, n = _signature(a.hlo)
    return TokenMemo(pieces.copy_list(a.lines), rows, comps, n, data, encoding)


def memo_of(a, tokens: Sequence[Tok], data: array[int], encoding: str) -> TokenMemo | None:
    """The memo of ``tokens``, the full definition tokens of analysis ``a`` (and ``data``, their wire data in
    ``encoding``); None when ``a`` is not a long module (its tokens are not definitions only, and are not
    reused)."""
    if not _long_module(a):
        return None
    comps, n = _signature(a.hlo)
    # a piece at a time: one copy of the 100 MB module's two million line references held the GIL 0.1 s
    rows = pieces.packed(TOKEN_ROWS, tokens)
    return TokenMemo(pieces.copy_list(a.lines), rows, comps, n, data, encoding)


def _tokens_in(a, start: int, end: int) -> list[Tok]:
    """The instruction definition tokens of lines ``start..end-1`` (exclusive end)."""
    mod = a.hlo
    names, line_of, col_of = name_columns(mod.instructions)
    var, decl, max_line = semantic_tokens._T["variable"], semantic_tokens.DECL, semantic_tokens.MAX_LINE
    out: list[Tok] = []
    comps = mod.computations
    k = bisect_right([c.line for c in comps], end - 1) - 1
    while k >= 0:
        c = comps[k]
        if max(c.end_line, c.line) < start:
            break
        for i in c.instructions:
            ln = line_of[i]
            if start <= ln < end and col_of[i] < max_line:
                s = col_of[i]
                out.append((ln, s, s + len(names[i]), var, decl))
        k -= 1
    out.sort()
    return out


def reuse(memo: object, a) -> list[Tok] | None:
    """The full definition tokens of ``a`` made from ``memo`` (the previous version's), or None when they cannot
    be (see the module docstring)."""
    got = _splice(memo, a)
    return None if got is None else token_list(got[0])


def reuse_encoded(memo: object, a, encoding: str, encode: Encoder) -> TokenMemo | None:
    """The next version's memo: `reuse`'s tokens and their wire data (the memo's ``data`` kept outside the
    changed lines, ``encode`` used for the tokens between: see the module docstring), with the computations'
    signature the splice read; None when the tokens cannot be reused or the memo's data is in another
    encoding."""
    if not isinstance(memo, TokenMemo) or memo.encoding != encoding:
        return None
    old_tokens = memo.rows()
    got = _splice(memo, a, old_tokens)
    if got is None:
        return None
    out, i0, i1, mid, comps, n_instructions = got
    old = memo.data
    if len(old) != len(old_tokens):
        return None
    prev = old_tokens[5 * (i0 - 1)] if i0 else 0
    if mid and i0 and mid[0][0] == prev:
        return None  # never: the changed run starts on a line after the kept tokens' (the relative start would)
    # the first kept token after the run, moved (on another line than the token before it: never, as above)
    first_after = out[len(out) - (len(old_tokens) - 5 * i1)] if 5 * i1 < len(old_tokens) else None
    data = _spliced(old, i0, i1, mid, prev, first_after, encode)
    if data is None:
        return None
    # the lines copied a piece at a time (one copy of the 100 MB module's two million references held the GIL 0.1 s)
    return TokenMemo(pieces.copy_list(a.lines), out, comps, n_instructions, data, encoding)


def _splice(
    memo: object, a, tokens: array[int] | None = None
) -> tuple[array[int], int, int, list[Tok], list[tuple[int, int, str]], int] | None:
    """The tokens of ``a`` made from ``memo`` (packed, `token_rows`), with where the changed run was in the memo's
    tokens (``i0``, ``i1``: token numbers), its new tokens (``mid``) and ``a``'s computations' signature; None
    when they cannot be made so."""
    if not isinstance(memo, TokenMemo) or not _long_module(a):
        return None
    old, new = memo.lines, a.lines
    pre = common_prefix(old, new, min(len(old), len(new)))
    suf = common_suffix(old, new, min(len(old), len(new)) - pre)
    old_end, new_end = len(old) - suf, len(new) - suf
    shift = new_end - old_end
    mod = a.hlo
    if mod.header_line is not None and pre <= mod.header_line < max(new_end, pre + 1):
        return None
    comps, n_instructions = _signature(mod)
    held = memo.comps
    k = bisect_left(held, (pre,))  # computations in document order: their header lines ascend
    if k < len(held) and held[k][0] < max(old_end, pre + 1):
        return None  # a computation's header line changed
    moved = held if shift == 0 else held[:k] + [(line + shift, col, name) for line, col, name in held[k:]]
    if moved != comps:
        return None
    if tokens is None:
        tokens = memo.rows()
    token_lines = tokens[0::5]
    i0, i1 = bisect_left(token_lines, pre), bisect_left(token_lines, old_end)
    mid = _tokens_in(a, pre, new_end)
    var = semantic_tokens._T["variable"]
    gained = sum(1 for t in mid if t[3] == var) - tokens[5 * i0 + 3 : 5 * i1 : 5].count(var)
    if n_instructions - memo.n_instructions != gained:
        return None
    first_after = None
    if 5 * i1 < len(tokens):
        line, *rest = _row(tokens, i1)
        first_after = (line + shift, *rest)
    before = _row(tokens, i0 - 1) if i0 else None
    if (
        (before and mid and before > mid[0])
        or (mid and first_after and mid[-1] > first_after)
        or (not mid and before and first_after and before > first_after)
    ):
        return None
    # copied a piece at a time, and the lines after the run moved in place (`pieces.joined`)
    with memoryview(tokens) as view:
        out = pieces.joined(TOKEN_ROWS, [view[: 5 * i0], token_rows(mid), view[5 * i1 :]])
    if shift:
        pieces.shifted(out, 5 * (i0 + len(mid)), 5, shift)
    return out, i0, i1, mid, comps, n_instructions
