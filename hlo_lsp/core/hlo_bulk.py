"""Every instruction of a computation read by one regex pass: the read, checks and maps of large modules.

The per-line reader (`hlo_lsp.core.hlo`) parses an instruction's line on first use, one Python object per
instruction; touching all 200,000 instructions of a 23 MB module that way costs seconds and hundreds of MB.
Machine-written lines have a regular form, so a computation's lines are read by one ``findall`` of `_ROW`
("rows"): the text before the name, the ROOT flag, name, result shape text, opcode, the operand list when it
is a plain ``%a, %b`` list (``/*index=N*/`` comments allowed), the parameter number, and the attribute text. A
line of any other form (old-style operands written with shapes, nested instructions, a constant holding
parentheses, a hand-written oddity) matches nothing, and the computation falls back to the per-line path.

`read_rows` is `read_hlo`'s path for a module whose every computation reads as rows: in one pass it builds the
instruction table, checks each computation (`is_clean`; a computation that is not clean is left to the
per-line checks, which place its errors), and makes each computation's verifier summary
(`rules.hlo_facts.summarize`). The users/callers maps are made later (`users_and_callers`).

Why the rows equal what the per-line reader reads, for a line that matches:

* The head (up to the opcode's parenthesis) is one atomic group: the index pass's indentation, ROOT and name
  (``[ \\t]``, the ``%`` required), then `hlo._INSTR`'s lazy shape (advancing by words, which reaches the
  same first ``word(``) and opcode; once matched it is never re-tried another way, so name, shape and opcode
  are the reader's.
* The operand list ``(%a, /*index=5*/%b)`` holds no ``(`` and no ``"``, so its ``)`` is the one
  `hlo.find_close_paren` finds, and its names are the ones `hlo._read_operands` returns; ``parameter(N)`` and a
  ``constant(...)`` without parentheses or quotes close at the first ``)`` as there.
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

from hlo_lsp.core.hlo import (
    _CALL_ATTR_PCT, _CALLED_NAME, CALL_ATTRS, OPERAND_LIST_TEXT, Computation, HloModule, InstructionTable,
    bulk_computations, plain_operand_names,
)

_ROW = re.compile(
    r"(?>\n([ \t]*(ROOT[ \t]+)?%)([\w.\-]+)[ \t]*=[^\S\n]*(?:([^ \n]*(?: [^ \n]*)*?) )??([a-z][a-z0-9_\-]*)\()"
    r"(?:(" + OPERAND_LIST_TEXT + r")?|(?<=[\s=]parameter\()([0-9]+)|(?<=[\s=]constant\()[^()\"\n]*)\)"
    r"([^\n]*)"
)
# The reader's call-attribute pattern kept to one line, so it reads rows joined by newlines as it reads each.
_CALL_ATTR_LINE = re.compile(_CALL_ATTR_PCT.pattern.replace("[^}]", r"[^}\n]"))
# a call attribute with a braced list (`branch_computations={...}`): the one case the fast path leaves alone
_CALL_BRACES = tuple(sorted(k + "={" for k in CALL_ATTRS))


def _has_call_brace(attrs: str) -> bool:
    for k in _CALL_BRACES:  # eleven substring searches are cheaper than one regex search here
        if k in attrs:
            return True
    return False


_NAME_RUN = re.compile(r"[\w.\-]+")

# Row fields, as `findall` returns them (each a str, "" when absent); PREFIX is the text before the name.
PREFIX, ROOT, NAME, SHAPE, OPCODE, OPERANDS, PARAM, ATTRS = range(8)


def computation_rows(mod: HloModule, c: Computation) -> list[tuple[str, ...]] | None:
    """One row per instruction of ``c`` in order; None when some line is not of the machine-written form (the
    caller then reads the computation line by line)."""
    table = mod.instructions
    if not isinstance(table, InstructionTable):
        return None
    r = c.instructions
    if not r:
        return []
    lines = mod.lines
    line_of = table.line_of
    block = "\n" + "\n".join([lines[line_of[i]] for i in r])
    rows = _ROW.findall(block)
    return rows if len(rows) == len(r) else None


operand_names = plain_operand_names  # a row's operand list is plain by the row pattern


def columns(rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The rows as one tuple per field (`zip` in C), so set and dict building runs without a Python loop."""
    return list(zip(*rows)) if rows else [()] * 8


def all_operand_names(rows: list[tuple[str, ...]], cols: list[tuple[str, ...]] | None = None) -> set[str]:
    """Every operand name of every row, in one pass over the joined lists."""
    ops = (cols or columns(rows))[OPERANDS]
    return set(operand_names(", ".join(filter(None, ops))))


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
    return [n.group(1) for m in _CALL_ATTR_LINE.finditer(attrs) for n in _CALLED_NAME.finditer(m.group(2))]


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


def is_clean(rows: list[tuple[str, ...]], computations: dict[str, int], calls: dict[int, list[str]],
             cols: list[tuple[str, ...]] | None = None) -> bool:
    """True when `hlo_checks.check_computation` would find nothing in the computation read as ``rows``: no
    repeated name, at most one ROOT, every operand defined in it and every called computation in
    ``computations`` (a sufficient condition, checked with set operations over the whole computation).
    ``calls``: `row_calls` of the rows."""
    if cols is None:
        cols = columns(rows)
    defined = set(cols[NAME])
    if len(defined) != len(rows) or len(rows) - cols[ROOT].count("") > 1:
        return False
    if not all_operand_names(rows, cols) <= defined:
        return False
    return all(n in computations for names in calls.values() for n in names)


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


def _map_rows(users: dict, callers: dict, rows: list[tuple[str, ...]], a: int, calls: dict[int, list[str]],
              ints: list) -> None:
    """Add the operand uses and calls (``calls``: `row_calls`) of ``rows`` (instructions ``a``, ``a + 1``...) to
    the two maps (`_add` inlined for the uses: this runs once per operand of the module). ``ints``: the int
    objects to store, by instruction (shared with the name index, 28 bytes each saved)."""
    get = users.get
    for k, row in enumerate(rows):
        ops = row[OPERANDS]
        if ops and row[OPCODE] != "parameter" and row[OPCODE] != "constant":
            i = ints[a + k]
            if i is None:  # a repeated name: not in the name index
                i = a + k
            for op in (ops.replace("%", "").split(", ") if "/" not in ops else operand_names(ops)):
                cur = get(op)
                if cur is None:
                    users[op] = i
                elif cur.__class__ is int:
                    if cur != i:
                        users[op] = [cur, i]
                elif cur[-1] != i:
                    cur.append(i)
    for k, names in calls.items():
        for cc in names:
            _add(callers, cc, a + k)


def _named_by_table(users: dict, names: list[str], by: dict[str, int]) -> dict:
    """``users`` keyed by the instruction table's own name strings (one copy of each name in memory)."""
    return {(names[by[k]] if k in by else k): v for k, v in users.items()}


def users_and_callers(mod: HloModule) -> tuple[dict, dict]:
    """Operand name -> the instructions using it, and computation name -> the instructions calling it (each an
    int for one, else a list in document order), from the rows where a computation has them and from the
    per-line reader elsewhere (objects made for the pass only). The keys reuse the instruction table's name
    strings."""
    table = mod.instructions
    users: dict = {}
    callers: dict = {}
    seen = 0
    rest: list[int] = []
    ints: list = [None] * len(table)
    for v in mod.by_name.values():
        ints[v] = v
    for c in mod.computations:
        rows = computation_rows(mod, c)
        seen += len(c.instructions)
        if rows is None:
            rest.extend(c.instructions)
            continue
        a = c.instructions.start
        _map_rows(users, callers, rows, a, row_calls(rows, a, mod.lines, table.line_of), ints)
    if seen != len(table):  # instructions outside every computation's range
        covered = set()
        for c in mod.computations:
            covered.update(c.instructions)
        rest.extend(i for i in range(len(table)) if i not in covered)
    for i in sorted(rest):
        ins = mod.make_instruction(i)
        for op in ins.operands:
            _add(users, op, i)
        for cc in ins.called:
            _add(callers, cc, i)
    if rest:  # per-line additions came after the rows': put each list back in document order
        for m in (users, callers):
            for v in m.values():
                if isinstance(v, list):
                    v.sort()
    names = getattr(table, "names", None)
    return (_named_by_table(users, names, mod.by_name) if names is not None else users), callers


def read_rows(mod: HloModule, scan: str) -> bool:
    """Read a machine-written module (``scan`` is "\\n" + its text) in one pass: the computations from the
    column-0 lines (`hlo.bulk_computations`), then each computation's rows, from which come the instruction
    table, the structural checks of every computation (`is_clean`; one that is not clean is left for the
    per-line checks) and the verifier summaries. False (``mod`` then half-filled: start again) unless every
    line of every computation is a row."""
    from hlo_lsp.core.rules.hlo_facts import summarize  # the rules import this module

    offsets = bulk_computations(mod, scan)
    if offsets is None:
        return False
    comps = mod.computations
    by_comp = mod.computation_by_name
    spans = [(scan.find("\n", h + 1), c) for h, c in offsets]  # each computation's instruction lines
    names: list[str] = []
    line_of = array("i")
    col_of = array("i")
    flags = bytearray()
    lines = mod.lines
    clean: list[list | None] = []
    summaries = []
    findall = _ROW.findall
    for comp, (a, b) in zip(comps, spans):
        rows = findall(scan, a, b)
        n = comp.end_line - comp.line - 1
        if len(rows) != n:
            return False
        lo = len(names)
        cols = columns(rows)
        if rows:
            names.extend(cols[NAME])
            col_of.extend(map(len, cols[PREFIX]))
            flags.extend(map(bool, cols[ROOT]))
        line_of.extend(range(comp.line + 1, comp.end_line))
        comp.instructions = range(lo, lo + n)
        r = flags.rfind(1, lo, lo + n)
        comp.root = r if r >= 0 else (lo + n - 1 if n else None)
        calls = _calls(rows, lo, lines, line_of, scan, a, b)
        clean.append(() if is_clean(rows, by_comp, calls, cols) else None)  # () shared by every clean one
        summaries.append(summarize(mod, comp, rows, calls, cols))
    mod.instructions = InstructionTable(names, line_of, col_of, flags, lines)
    mod.by_name = by = dict(zip(reversed(names), range(len(names) - 1, -1, -1)))
    mod.pre_checked = (clean, summaries)
    # the users and callers maps are built later (`HloModule.build_maps`, in the background): until then a
    # module whose operands are all local answers `users` from one computation
    mod.local_names = len(by) == len(names) and all(c is not None for c in clean)
    return True


def _calls(rows, lo: int, lines: list[str], line_of, scan: str, a: int, b: int) -> dict[int, list[str]]:
    """`row_calls` of one computation's rows; {} at once when no line of it (``scan[a:b]``) holds ``=%`` or
    ``={%`` (the reader's condition for reading calls)."""
    if scan.find("=%", a, b) < 0 and scan.find("={%", a, b) < 0:
        return {}
    return row_calls(rows, lo, lines, line_of)
