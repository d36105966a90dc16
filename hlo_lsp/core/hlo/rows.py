"""Rows: every instruction of a computation read by one regex pass, and the users and callers maps made from them.

The per-line reader (`hlo_lsp.core.hlo.model`) parses an instruction's line on first use, one Python object per
instruction; touching all 200,000 instructions of a 23 MB module that way costs seconds and hundreds of MB.
Machine-written lines have a regular form, so a computation's lines are read by one ``findall`` of `ROW`
("rows"): the text before the name, the ROOT flag, name, result shape text, opcode, the operand list when it
is a plain ``%a, %b`` list (``/*index=N*/`` comments allowed), the parameter number, and the attribute text. A
line of any other form (old-style operands written with shapes, nested instructions, a constant holding
parentheses, a hand-written oddity) matches nothing, and the computation falls back to the per-line path.

`read_rows` is `read_hlo`'s path for a module whose every computation reads as rows: in one pass it builds the
instruction table, checks each computation (`is_clean`; a computation that is not clean is left to the
per-line checks, which place its errors), and makes each computation's verifier summary
(`rules.summary.summarize`); a computation that repeats an earlier one but for its names is read from that one
(`bulk._Template`: the benchmark's 17,570 computations are 46 such templates). The users/callers maps are made
later (`users_and_callers`), the users as a `UsesTable` of two int arrays.

Why the rows equal what the per-line reader reads, for a line that matches:

* The head (up to the opcode's parenthesis) is one atomic group: the index pass's indentation, ROOT and name
  (``[ \\t]``, the ``%`` required), then `text.INSTR`'s lazy shape (advancing by words, which reaches the
  same first ``word(``) and opcode; once matched it is never re-tried another way, so name, shape and opcode
  are the reader's.
* The operand list ``(%a, /*index=5*/%b)`` holds no ``(`` and no ``"``, so its ``)`` is the one
  `text.find_close_paren` finds, and its names are the ones `text.read_operands` returns; ``parameter(N)`` and a
  ``constant(...)`` without parentheses or quotes close at the first ``)`` as there.
* The shape holds no ``%`` (no shape does), so a row's first ``(%`` is its opcode's parenthesis when its
  operand list is not empty (`index` finds uses of a name there without reading the line again).
* Every match starts with the newline before its line and never crosses another, so there is at most one row
  per line, and n rows for n lines means every line matched, row k being line k.
* Calls (`row_calls`) are read from the attribute text with the reader's own pattern, under its own condition
  (``=%`` or ``={%`` in the line).

tests/core/test_bulk_rows.py checks all of this against the per-line reader on every real module, on injected
faults and on random edits.
"""

from __future__ import annotations

import re
import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator
from itertools import accumulate, repeat
from operator import add
from typing import TYPE_CHECKING

from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.text import CALL_ATTR_PCT, CALL_ATTRS, CALLED_NAME, OPERAND_LIST_TEXT, plain_operand_names
from hlo_lsp.core.process import pieces, turns

if TYPE_CHECKING:  # the model keeps its maps from here (`HloModule.users`); the rows only read it
    from hlo_lsp.core.hlo.model import Computation, HloModule

ROW = re.compile(
    r"(?>\n([ \t]*(ROOT[ \t]+)?%)([\w.\-]+)[ \t]*=[^\S\n]*(?:([^ \n%]*(?: [^ \n%]*)*?) )??([a-z][a-z0-9_\-]*)\()"
    r"(?:(" + OPERAND_LIST_TEXT + r")?|(?<=[\s=]parameter\()([0-9]+)|(?<=[\s=]constant\()[^()\"\n]*)\)"
    r"([^\n]*)"
)
# The reader's call-attribute pattern kept to one line, so it reads rows joined by newlines as it reads each.
_CALL_ATTR_LINE = re.compile(CALL_ATTR_PCT.pattern.replace("[^}]", r"[^}\n]"))
# a call attribute with a braced list (`branch_computations={...}`): the one case the fast path leaves alone
_CALL_BRACES = tuple(sorted(k + "={" for k in CALL_ATTRS))


def _has_call_brace(attrs: str) -> bool:
    for k in _CALL_BRACES:  # eleven substring searches are cheaper than one regex search here
        if k in attrs:
            return True
    return False


NON_BLANK = re.compile(r"\S")
# characters of lines read in one C call by `computation_rows` (about 1 ms; the 100 MB entry's 91,000 lines in one
# took 0.1 s, and 2,048 of the 23 MB entry's lines with its 0.46 MB root line, read for the users map in the
# background, held the GIL 5-10 ms with a hover waiting); a longer line is read alone
ROWS_PIECE_CHARS = 1 << 17
_NAME_RUN = re.compile(r"[\w.\-]+")

# Row fields, as `findall` returns them (each a str, "" when absent); PREFIX is the text before the name.
PREFIX, ROOT, NAME, SHAPE, OPCODE, OPERANDS, PARAM, ATTRS = range(8)


def table_lines(mod: HloModule) -> array:
    """The line of each instruction of a module read into an `InstructionTable`, the only kind
    `computation_rows` gives rows for (so a caller holding rows may ask)."""
    table = mod.instructions
    assert isinstance(table, InstructionTable), "rows exist only for an instruction table"
    return table.line_of


def computation_rows(mod: HloModule, c: Computation) -> list[tuple[str, ...]] | None:
    """One row per instruction of ``c`` in order; None when some line is not of the machine-written form (the
    caller then reads the computation line by line)."""
    table = mod.instructions
    if not isinstance(table, InstructionTable):
        return None
    r = c.instructions
    if not r:
        return []
    line_of = table.line_of
    where = line_of[r.start : r.stop] if isinstance(r, range) and r.step == 1 else [line_of[i] for i in r]
    line = mod.lines.__getitem__
    findall = ROW.findall
    step = pieces.PIECE
    taken = None  # the lines of a computation of one run, taken already
    if len(where) <= step:
        taken = list(map(line, where))
        if sum(map(len, taken)) <= ROWS_PIECE_CHARS:
            rows = findall("\n" + "\n".join(taken))  # most computations: one piece
            return rows if len(rows) == len(r) else None
    rows = []
    # a long computation's lines taken `pieces.PIECE` at a time (each line's object is a cache miss: the 100 MB
    # module's entry, 91,000 lines, was a C call of 14 ms while the users map was built in the background), each
    # such run read `ROWS_PIECE_CHARS` of lines at a time; the GIL is free between pieces, and a background read
    # (the users map's) waits at each while requests are answered
    for i in pieces.starts(0, len(where), step):
        texts = taken if taken is not None else list(map(line, where[i : i + step]))
        for a, b in line_pieces(texts, ROWS_PIECE_CHARS):
            if a:
                turns.give_way()
            rows += findall("\n" + "\n".join(texts[a:b]))
    return rows if len(rows) == len(r) else None


def line_pieces(texts: list[str], limit: int) -> Iterator[tuple[int, int]]:
    """``(a, b)`` slices of ``texts`` in order, covering it, each of at most ``limit`` characters (its lines'
    lengths) or else of one line."""
    ends = list(accumulate(map(len, texts)))
    a, n = 0, len(texts)
    while a < n:
        b = max(bisect_right(ends, (ends[a - 1] if a else 0) + limit, a), a + 1)
        yield a, b
        a = b


operand_names = plain_operand_names  # a row's operand list is plain by the row pattern


def columns(rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The rows as one tuple per field (`zip` in C), so set and dict building runs without a Python loop."""
    return list(zip(*rows)) if rows else [()] * 8


def all_operand_names(rows: list[tuple[str, ...]], cols: list[tuple[str, ...]] | None = None) -> set[str]:
    """Every operand name of every row, in one pass over the joined lists."""
    ops = (cols or columns(rows))[OPERANDS]
    return set(operand_names(", ".join(filter(None, ops))))


def row_uses_name(line: str, needle: str) -> bool | None:
    """Whether the operand list of ``line``, a line the rows pass read as a row, holds ``needle`` (``%name``): its
    list is plain (`%a, /*index=5*/%b`), opened by the line's first ``(%`` (a shape has no ``%``) and closed by
    the first ``)`` after it, and an operand is a ``%name`` token ending at ``,`` or ``)``. None when the line
    has no ``(%``: it takes no operand by name (a parameter, a constant)."""
    o = line.find("(%")
    if o < 0:
        return None
    c = line.find(")", o)
    j = line.find(needle, o, c)
    while j >= 0:
        e = j + len(needle)
        if line[e] in ",)":
            return True
        j = line.find(needle, e, c)
    return False


def called_names(attrs: str) -> list[str]:
    """Computations the attribute text of one row, or of several joined by newlines, calls (``calls=``,
    ``to_apply=``, ``body=``...)."""
    i = attrs.find("=%")
    if i < 0 and "={" not in attrs:
        return []
    if i > 0 and attrs.find("=%", i + 2) < 0 and ("={" not in attrs or not _has_call_brace(attrs)):
        # the common `, calls=%name`: the one possible match, found without scanning the metadata
        start = max(attrs.rfind(" ", 0, i), attrs.rfind(",", 0, i)) + 1
        if start > 0 and attrs[start:i] in CALL_ATTRS:
            m = _NAME_RUN.match(attrs, i + 2)
            return [m.group()] if m else []
    return [n.group(1) for m in _CALL_ATTR_LINE.finditer(attrs) for n in CALLED_NAME.finditer(m.group(2))]


def row_calls(rows: list[tuple[str, ...]], a: int, lines: list[str], line_of) -> dict[int, list[str]]:
    """Row number -> the computations it calls, for the rows (instructions ``a``, ``a + 1``...) that call any,
    read under the reader's own condition (``=%`` or ``={%`` in the line: `hlo.Instruction.called`); read
    once, for the checks, the verifier summary and the callers map."""
    out = {}
    for k, row in enumerate(rows):
        attrs = row[ATTRS]
        if "=%" in attrs or "={%" in attrs:
            pass  # the attributes are part of the line: the condition holds
        elif "={" in attrs and "%" in row[SHAPE]:
            # only a `%` right after the name's `=` (in the shape's place) could make the line hold `=%`/`={%`
            line = lines[line_of[a + k]]
            if "=%" not in line and "={%" not in line:
                continue
        else:
            continue
        names = called_names(attrs)
        if names:
            out[k] = [sys.intern(n) for n in names]  # one copy of each computation name, kept by callers
    return out


def is_clean(
    rows: list[tuple[str, ...]],
    computations: dict[str, int],
    calls: dict[int, list[str]],
    cols: list[tuple[str, ...]] | None = None,
) -> bool:
    """True when `checks.check_computation` would find nothing in the computation read as ``rows``: no
    repeated name, at most one ROOT, every operand defined in it and every called computation in
    ``computations`` (a sufficient condition, checked with set operations over the whole computation).
    ``calls``: `row_calls` of the rows."""
    if not structurally_clean(rows, cols or columns(rows)):
        return False
    return all(n in computations for names in calls.values() for n in names)


def structurally_clean(rows: list[tuple[str, ...]], cols: list[tuple[str, ...]]) -> bool:
    """`is_clean` but for the callees: no repeated name, at most one ROOT, every operand defined in it."""
    defined = set(cols[NAME])
    if len(defined) != len(rows) or len(rows) - cols[ROOT].count("") > 1:
        return False
    return all_operand_names(rows, cols) <= defined


def _add(m: dict, key: str, i: int) -> None:
    """Append instruction ``i`` under ``key`` once (an int while there is one, then a list)."""
    cur = m.get(key)
    if cur is None:
        m[key] = i
    elif isinstance(cur, int):
        if cur != i:
            m[key] = [cur, i]
    elif cur[-1] != i:
        cur.append(i)


class UsesTable:
    """Operand name -> the instructions using it (the users map of `HloModule._maps`), as two int arrays: the
    users of the instruction defining a name (its first definition) are ``flat[start[d]:start[d + 1]]``, in
    document order; names no instruction defines are in a small dict. For the 23 MB module that is 3 MB where
    a dict of 180,000 names took 10 MB and, built among the rows' temporaries, kept 20 MB more of the
    allocator's arenas from going back to the system.

    Keyed by the definitions when it was built (``names``: the table's names then): while no instruction has
    been patched since, the module's name index finds a name's definition; after, a search of ``names`` does
    (a rename moves the index, not what the table says). It holds the module's name index and patched set (both
    edited in place), never the module: a table pointing back at its module made a reference cycle, so a module
    read again stayed alive until a full collection, beside the new one (the heap then keeps both's arenas)."""

    __slots__ = ("_by_name", "_patched", "_patches", "_names", "_start", "_flat", "_other", "_renamed")

    def __init__(self, mod: HloModule, patches: int, names: list[str], start: array, flat: array, other: dict):
        self._by_name, self._patched, self._patches, self._names = mod.by_name, mod.patched, patches, names
        self._start, self._flat, self._other = start, flat, other
        self._renamed: tuple[int, set[str]] = (patches, set())  # (patches seen, their instructions' names then)

    def _definition(self, name: str) -> int | None:
        """The instruction that defined ``name`` when the table was built (its first), or None. A patch edits
        instructions in place (same numbers) and the name index with them, so for a name no patched instruction
        had then, the index still says where it was defined; only the names patched instructions had then are
        searched in ``names`` (a search of the 100 MB module's two million names per hover after an edit was
        10-20 ms on the event loop)."""
        patched = self._patched
        if len(patched) == self._patches:
            return self._by_name.get(name)
        d = self._by_name.get(name)
        names = self._names
        if d is not None and d < len(names) and names[d] == name and d not in patched and name not in self._old():
            return d  # the same instruction, unpatched, and the name never moved
        if d is None and name not in self._old():
            return None  # undefined then too: patches only take away the names they had
        try:
            return names.index(name)
        except ValueError:
            return None

    def _old(self) -> set[str]:
        """The names the instructions patched since the build had when it was made."""
        seen, old = self._renamed
        patched = self._patched
        if seen != len(patched):
            names = self._names
            old = {names[i] for i in patched if i < len(names)}
            self._renamed = (len(patched), old)
        return old

    def get(self, name: str, default=()):
        """The users of ``name`` (an int for one, else a list), or ``default`` when there are none."""
        d = self._definition(name)
        if d is None:
            return self._other.get(name, default)
        a, b = self._start[d], self._start[d + 1]
        if a == b:
            return default
        return self._flat[a] if b == a + 1 else self._flat[a:b].tolist()


def _file_uses(names, i: int, get, dst: array, src: array, other: dict) -> None:
    """Instruction ``i``'s operand ``names`` (each once) as pairs (defining instruction, ``i``) in ``dst``/``src``,
    or under the name in ``other`` for a name the name index (``get``) does not know."""
    for op in names:
        d = get(op)
        if d is None:
            _add(other, op, i)
        else:
            dst.append(d)
            src.append(i)


def row_uses(
    rows: list[tuple[str, ...]], a: int, get: Callable[[str], int | None], dst: array, src: array, other: dict
) -> None:
    """`_file_uses` of every row in ``rows`` (instructions ``a``, ``a + 1``...), ``get`` finding a name's
    definition; a name used twice by one instruction counts once."""
    for k, row in enumerate(rows):
        if not k & 1023:
            turns.give_way()  # the 23 MB module's entry is 25,000 rows: built in the background, requests go first
        ops = row[OPERANDS]
        if ops and row[OPCODE] != "parameter" and row[OPCODE] != "constant":
            names = ops.replace("%", "").split(", ") if "/" not in ops else operand_names(ops)
            if len(names) > 1 and len(set(names)) < len(names):
                names = list(dict.fromkeys(names))
            _file_uses(names, a + k, get, dst, src, other)


def _grouped(n: int, dst: array, src: array, ordered: bool) -> tuple[array, array]:
    """The pairs grouped by defining instruction (a counting sort): (start, flat) of `UsesTable`; each group in
    the order the pairs came (``ordered``: document order already), else sorted."""
    # Python loops over every pair, a piece at a time: built in the background, the 100 MB module's 700,000 pairs
    # took turns of the GIL with the hovers sent meanwhile (a 10 ms hover took 21-27 ms), where at each piece the
    # requests under way now go first (`pieces.starts`)
    start = array("i", bytes(4 * (n + 1)))
    step = pieces.PIECE
    for lo in pieces.starts(0, len(dst), step):
        for d in dst[lo : lo + step]:
            start[d + 1] += 1
    total = 0
    for lo in pieces.starts(0, n + 1, step):
        for d in range(lo, min(lo + step, n + 1)):  # counts to offsets: start[d] = the pairs of the groups before d
            total += start[d]
            start[d] = total
    pos = array("i", start)
    flat = array("i", bytes(4 * len(dst)))
    for lo in pieces.starts(0, len(dst), step):
        for d, i in zip(dst[lo : lo + step], src[lo : lo + step]):
            flat[pos[d]] = i
            pos[d] += 1
    if not ordered:  # (no pair repeats: each instruction's names were made unique)
        for lo in pieces.starts(0, n, step):
            for d in range(lo, min(lo + step, n)):
                a, b = start[d], start[d + 1]
                if b - a > 1:
                    flat[a:b] = array("i", sorted(flat[a:b]))
    return start, flat


def users_and_callers(mod: HloModule) -> tuple[UsesTable, dict]:
    """Operand name -> the instructions using it (`UsesTable`), and computation name -> the instructions
    calling it (an int for one, else a list in document order), from the rows where a computation has them and
    from the per-line reader elsewhere (objects made for the pass only)."""
    for _ in range(LIVE_INDEX_TRIES):  # made again when the editor renamed an instruction meanwhile
        renames = mod.renames
        made = _users_and_callers(mod, copy=False)
        if mod.renames == renames:
            return made
    return _users_and_callers(mod, copy=True)  # (renamed during each try: from a copy of the index, as of a moment)


LIVE_INDEX_TRIES = 2  # builds reading the name index itself before one reads a copy of it (`users_and_callers`)


def _users_and_callers(mod: HloModule, copy: bool) -> tuple[UsesTable, dict]:
    """`users_and_callers` from the name index itself (a copy of the 100 MB module's 640,000 names was one C call
    of 12 ms, a hover waiting: only a rename changes the index, after which the maps are made again), or from a
    copy of it (``copy``)."""
    table = mod.instructions
    while True:  # the index and names as of one moment (an edit on the editor's thread may patch them)
        patches = len(mod.patched)
        by = mod.by_name.copy() if copy else mod.by_name
        # (a piece at a time: one list() of the 100 MB module's names held the GIL 10 ms in the background)
        names = pieces.copy_list(table.names) if isinstance(table, InstructionTable) else [x.name for x in table]
        if len(mod.patched) == patches:
            break
    get = by.getter()
    dst, src = array("i"), array("i")
    other: dict = {}
    callers: dict = {}
    seen = 0
    rest: list[int] = []
    line_of = table.line_of if isinstance(table, InstructionTable) else None
    # a computation the read took from another (`HloModule.repeats`) has that one's uses as the read found them
    # (`HloModule.repeat_uses`), renumbered, while every operand names an instruction of its own computation, no
    # name repeats and no line was edited since the read (an edit after this snapshot is judged again on use)
    repeats = mod.repeats if mod.rows_read and mod.local_names and not patches else None
    shared = mod.repeat_uses
    for k, c in enumerate(mod.computations):
        if not k & 63:
            turns.give_way()  # built in the background: the requests under way first
        seen += len(c.instructions)
        a = c.instructions.start
        r = repeats[k] if repeats is not None and k < len(repeats) else -1
        if r >= 0 and line_of is not None and (got := shared.get(r)) is not None:
            rel_dst, rel_src, call_rows = got
            dst.extend(map(add, rel_dst, repeat(a)))
            src.extend(map(add, rel_src, repeat(a)))
            for j in call_rows:  # the callees are the computation's own: read from its lines
                i = a + j
                row = ROW.findall("\n" + mod.lines[line_of[i]])
                for called in row_calls(row, i, mod.lines, line_of).values():
                    for cc in called:
                        _add(callers, cc, i)
            continue
        rows = computation_rows(mod, c)
        if rows is None:
            rest.extend(c.instructions)
            continue
        row_uses(rows, a, get, dst, src, other)
        for k, called in row_calls(rows, a, mod.lines, line_of).items():
            for cc in called:
                _add(callers, cc, a + k)
        pieces.release(rows)  # (the 100 MB module's entry: 91,351 rows of eight strings, 17 ms freed at once)
    if seen != len(table):  # instructions outside every computation's range
        covered: set[int] = set()
        for c in mod.computations:
            covered.update(c.instructions)
        rest.extend(i for i in range(len(table)) if i not in covered)
    for i in sorted(rest):
        ins = mod.make_instruction(i)
        _file_uses(dict.fromkeys(ins.operands), i, get, dst, src, other)
        for cc in ins.called:
            _add(callers, cc, i)
    if rest:  # per-line additions came after the rows': put each list back in document order
        for m in (other, callers):
            for v in m.values():
                if isinstance(v, list):
                    v.sort()
    del by, get
    start, flat = _grouped(len(names), dst, src, ordered=not rest)
    return UsesTable(mod, patches, names, start, flat, other), callers
