"""Every instruction of a computation read by one regex pass, for the whole-module checks of large modules.

The fast reader (`hlo_lsp.core.hlo`) parses an instruction's line on first use, one Python object per
instruction; a check that touches all 200,000 instructions of a 23 MB module that way spends seconds and keeps
hundreds of MB. Machine-written lines have a regular form, so `computation_rows` reads all lines of one
computation with a single ``findall`` over their joined text: name, result shape text, opcode, the operand list
when it is a plain ``%a, %b`` list (``/*index=N*/`` comments allowed), the parameter number, and the
attribute text. A line of any other form (old-style operands written with shapes, nested instructions, a
constant holding parentheses, a hand-written oddity) matches nothing, and the computation as a whole falls back
to the per-line path (the caller's job), so the rows never disagree with it.

Why the rows equal what the per-line reader reads, for a line that matches:

* The head (up to the opcode's parenthesis) is one atomic group made of `hlo._INSTR`'s pattern with ``\\s``
  restricted to a line (``[^\\S\\n]``) and the ``%`` required; it matches the way `_INSTR.match` does on that
  line, and once matched it is never re-tried another way, so the shape and opcode are `_INSTR`'s groups.
* The operand list ``(%a, /*index=5*/%b)`` holds no ``(`` and no ``"``, so its ``)`` is the one
  `hlo.find_close_paren` finds, and its names are the ones `hlo._read_operands` returns; ``parameter(N)`` and a
  ``constant(...)`` without parentheses or quotes close at the first ``)`` as there.
* Every match starts with the newline before its line and never crosses another, so there is at most one row
  per line, and n rows for n lines means every line matched, row k being line k.

Called computations: the attribute text after the operand list is returned whole; `called_names` reads the
``calls=%x``/``to_apply={%a, %b}`` attributes from it with the reader's own pattern, a superset of what the
reader keeps (it keeps them only when ``=%`` or ``={%`` occurs in the line), which makes every check built on
it conservative.
"""

from __future__ import annotations

import re

from hlo_lsp.core.hlo import _CALL_ATTR_PCT, _CALLED_NAME, Computation, HloModule, InstructionTable

_OPERAND = r"(?:/\*index=[0-9]+\*/)?%[\w.\-]+"
_ROW = re.compile(
    r"(?>\n[^\S\n]*(ROOT[^\S\n]+)?%([\w.\-]+)[^\S\n]*=[^\S\n]*(?:([^\n]*?) )??([a-z][a-z0-9_\-]*)\()"
    r"(?:(" + _OPERAND + r"(?:, " + _OPERAND + r")*)?|(?<=[\s=]parameter\()([0-9]+)|(?<=[\s=]constant\()[^()\"\n]*)\)"
    r"([^\n]*)"
)
# The reader's call-attribute pattern kept to one line, so it reads rows joined by newlines as it reads each.
_CALL_ATTR_LINE = re.compile(_CALL_ATTR_PCT.pattern.replace("[^}]", r"[^}\n]"))
_INDEX_COMMENT = re.compile(r"/\*index=[0-9]+\*/")

# Row fields, as `findall` returns them (each a str, "" when absent).
ROOT, NAME, SHAPE, OPCODE, OPERANDS, PARAM, ATTRS = range(7)


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


def operand_names(ops: str) -> list[str]:
    """The names of a row's operand list (`hlo._read_operands`' result for the same text)."""
    if not ops:
        return []
    if "/" in ops:
        ops = _INDEX_COMMENT.sub("", ops)
    return ops.replace("%", "").split(", ")


def all_operand_names(rows: list[tuple[str, ...]]) -> set[str]:
    """Every operand name of every row, in one pass over the joined lists."""
    joined = ", ".join([row[OPERANDS] for row in rows if row[OPERANDS]])
    return set(operand_names(joined))


def called_names(attrs: str) -> list[str]:
    """Computations the attribute text of one row, or of several joined by newlines, calls (``calls=``,
    ``to_apply=``, ``body=``...)."""
    if "=%" not in attrs and "={" not in attrs:
        return []
    return [n.group(1) for m in _CALL_ATTR_LINE.finditer(attrs) for n in _CALLED_NAME.finditer(m.group(2))]


def is_clean(mod: HloModule, c: Computation, rows: list[tuple[str, ...]]) -> bool:
    """True when `hlo_checks.check_computation` would find nothing in ``c``: no repeated name, at most one ROOT,
    every operand defined in ``c`` and every called computation in the module (a sufficient condition, checked
    with set operations over the whole computation)."""
    table = mod.instructions
    r = c.instructions
    names = table.names[r.start:r.stop]
    defined = set(names)
    if len(defined) != len(names) or table.root_flags[r.start:r.stop].count(1) > 1:
        return False
    if not all_operand_names(rows) <= defined:
        return False
    comps = mod.computation_by_name
    calling = "\n".join([row[ATTRS] for row in rows if "=%" in row[ATTRS] or "={" in row[ATTRS]])
    return all(n in comps for n in called_names(calling))


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
    for c in mod.computations:
        rows = computation_rows(mod, c)
        seen += len(c.instructions)
        if rows is None:
            rest.extend(c.instructions)
            continue
        a = c.instructions.start
        lines, line_of = mod.lines, table.line_of
        for k, row in enumerate(rows):
            ops = row[OPERANDS]
            if ops and row[OPCODE] != "parameter" and row[OPCODE] != "constant":
                for op in operand_names(ops):
                    _add(users, op, a + k)
            attrs = row[ATTRS]
            if "=%" in attrs or "={" in attrs:
                line = lines[line_of[a + k]]
                if "=%" in line or "={%" in line:  # the reader's own condition for reading calls
                    for cc in called_names(attrs):
                        _add(callers, cc, a + k)
    if seen != len(table):  # instructions outside every computation's range
        covered = set()
        for c in mod.computations:
            covered.update(c.instructions)
        rest.extend(i for i in range(len(table)) if i not in covered)
    for i in sorted(rest):
        ins = mod._ins(i)
        for op in ins.operands:
            _add(users, op, i)
        for cc in ins.called:
            _add(callers, cc, i)
    if rest:  # per-line additions came after the rows': put each list back in document order
        for m in (users, callers):
            for key, v in m.items():
                if isinstance(v, list):
                    v.sort()
    names, by = getattr(table, "names", None), mod.by_name
    if names is not None:
        users = {(names[by[k]] if k in by else k): v for k, v in users.items()}
    return users, callers
