"""Occurrences of names in an HLO document, computed per line on demand.

Building every occurrence of a 23 MB module up front would cost more than reading it, so `HloIndex` answers
the `OccurrenceIndex` questions lazily: `on_line`/`at` parse the one line asked about (`line`), and `find`
walks only the lines the module's maps say can hold the key (an instruction's definition and its users, a
computation's callers, the rows and instructions naming a stack frame). Every answer is O(line length + hits).
"""

from __future__ import annotations

import re

from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.text import INSTR, NUMBERED_OPERANDS, find_close_paren
from hlo_lsp.core.occurrences import Occurrence

_SIG_PARAM = re.compile(r"[(,]\s*(?:/\*[^*]*\*/)?%?([^\s:(),%]+):")
_ROW_ID = re.compile(r"\d+")
_ROW_REF = re.compile(r"\b(file_name_id|function_name_id|file_location_id|parent_frame_id)=(\d+)")
_STACK_FRAME_ID = re.compile(r"\bstack_frame_id=(\d+)")
_TABLE_KIND = {
    "FileNames": "file_name",
    "FunctionNames": "function_name",
    "FileLocations": "file_location",
    "StackFrames": "stack_frame",
}
_REF_KIND = {
    "file_name_id": "file_name",
    "function_name_id": "function_name",
    "file_location_id": "file_location",
    "parent_frame_id": "stack_frame",
}


class HloIndex:
    """`OccurrenceIndex`'s interface over an `HloModule`, computed lazily per line."""

    __slots__ = ("mod", "_table_row_lines", "_frame_users", "_cache")

    def __init__(self, mod: HloModule):
        self.mod = mod
        self._table_row_lines: dict[int, str] | None = None  # line -> table name
        self._frame_users: dict[str, list[int]] | None = None
        self._cache: dict[int, list[Occurrence]] = {}

    def _row_lines(self) -> dict[int, str]:
        if self._table_row_lines is None:
            self._table_row_lines = {
                row.line: table for table, rows in self.mod.tables.items() for row in rows.values()
            }
        return self._table_row_lines

    def on_line(self, line: int) -> list[Occurrence]:
        """All occurrences on ``line`` in column order; [] when none (or the line does not exist)."""
        hit = self._cache.get(line)
        if hit is not None:
            return hit
        occ = self._compute_line(line)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[line] = occ
        return occ

    def _compute_line(self, line: int) -> list[Occurrence]:
        mod = self.mod
        if not 0 <= line < len(mod.lines):
            return []
        text = mod.lines[line]
        out: list[Occurrence] = []
        ins = mod.instruction_at_line(line)
        if ins is not None:
            d = parse_instruction_line(text)
            if d is None:
                return []
            out.append(Occurrence(line, d.name.start, d.name.end, "instruction", d.name.text, "def"))
            out.extend(Occurrence(line, s.start, s.end, "instruction", s.text, "use") for s in d.operands)
            out.extend(Occurrence(line, s.start, s.end, "computation", s.text, "use") for s in d.called)
            sf = d.metadata.get("stack_frame_id")
            if sf is not None:
                out.append(Occurrence(line, sf.start, sf.end, "stack_frame", sf.text, "use"))
            out.sort(key=lambda o: o.start)
            return out
        comp = mod.computation_at_line(line)
        if comp is not None and comp.line == line:
            out.append(
                Occurrence(line, comp.name_start, comp.name_start + len(comp.name), "computation", comp.name, "def")
            )
            for m in _SIG_PARAM.finditer(text, comp.name_start + len(comp.name)):
                out.append(Occurrence(line, m.start(1), m.end(1), "instruction", m.group(1), "use"))
            return out
        table = self._row_lines().get(line)
        if table is not None:
            row_id = _ROW_ID.match(text)
            if row_id:
                out.append(Occurrence(line, row_id.start(), row_id.end(), _TABLE_KIND[table], row_id.group(), "def"))
            for r in _ROW_REF.finditer(text):
                out.append(Occurrence(line, r.start(2), r.end(2), _REF_KIND[r.group(1)], r.group(2), "use"))
        return out

    def at(self, line: int, col: int) -> Occurrence | None:
        """The occurrence covering (line, col), its end column included; None when the cursor is on no name."""
        for o in self.on_line(line):
            if o.start <= col <= o.end:
                return o
        return None

    def _lines_for(self, kind: str, key: str, user_lines: list[int] | None = None) -> list[int]:
        mod = self.mod
        lines: list[int] = []
        if kind == "instruction":
            ins = mod.instruction(key)
            if ins is not None:
                comp = mod.computation_of(ins)
                if comp is not None and ins.opcode == "parameter":
                    lines.append(comp.line)
                lines.append(ins.line)
            lines.extend(mod.user_lines(key) if user_lines is None else user_lines)
        elif kind == "computation":
            ci = mod.computation_by_name.get(key)
            if ci is not None:
                lines.append(mod.computations[ci].line)
            lines.extend(c.line for c in mod.callers(key))
        elif kind == "stack_frame":
            if self._frame_users is None:
                users: dict[str, list[int]] = {}
                for ln, text in enumerate(mod.lines):
                    if "stack_frame_id=" in text:
                        for m in _STACK_FRAME_ID.finditer(text):
                            users.setdefault(m.group(1), []).append(ln)
                self._frame_users = users
            lines.extend(self._frame_users.get(key, ()))
            lines.extend(row.line for row in mod.tables.get("StackFrames", {}).values())
        elif kind in ("file_location", "file_name", "function_name"):
            lines.extend(self._row_lines())
        return sorted(set(lines))

    def find(self, kind: str, key: str) -> list[Occurrence]:
        """Every occurrence of (kind, key) in document order; [] when the key never occurs."""
        if kind == "instruction":
            return [Occurrence(ln, a, b, kind, key, role) for ln, a, b, role in self._find_instruction(key)]
        return [o for ln in self._lines_for(kind, key) for o in self.on_line(ln) if o.kind == kind and o.key == key]

    def spans(self, kind: str, key: str) -> list[tuple[int, int, int, str]]:
        """`find` as (line, start, end, role) tuples: a name used thousands of times needs no object per use."""
        if kind == "instruction":
            return self._find_instruction(key)
        return [(o.line, o.start, o.end, o.role) for o in self.find(kind, key)]

    def _find_instruction(self, key: str) -> list[tuple[int, int, int, str]]:
        """(line, start, end, role) of the definition, signature and operand uses of instruction ``key``, in
        document order. A user's line is searched only in its operand list (a name used thousands of times
        costs thousands of short scans, not full line parses)."""
        mod = self.mod
        user_lines, as_rows = mod.user_lines_as_rows(key)
        users = dict(zip(user_lines, as_rows))
        name = re.compile(r"(?<![\w.\-])%?(" + re.escape(key) + r")(?![\w.\-])")
        out: list[tuple[int, int, int, str]] = []
        add = out.append
        lines, match, plain = mod.lines, INSTR.match, NUMBERED_OPERANDS.fullmatch
        needle = "%" + key
        for ln in self._lines_for("instruction", key, user_lines):
            row = users.get(ln)
            if row is None:
                out.extend(
                    (o.line, o.start, o.end, o.role)
                    for o in self.on_line(ln)
                    if o.kind == "instruction" and o.key == key
                )
                continue
            text = lines[ln]
            # a machine-written operand list `(%a, /*index=5*/%b)`: its "(" is the line's first "(%" (a shape has
            # no "%"), its ")" the first after, and a use of the name is a `%key` token ending at "," or ")"; a
            # line still as the rows pass read it is known to be of that form (`HloModule.rows_read`)
            o = text.find("(%")
            if o > 0:
                c = text.find(")", o)
                if c > 0 and text.find(needle, 0, o) < 0 and (row or plain(text, o + 1, c)):
                    j = text.find(needle, o, c)
                    while j >= 0:
                        e = j + len(needle)
                        if text[e] in ",)":
                            add((ln, j + 1, e, "use"))
                        j = text.find(needle, e, c)
                    continue
            m = match(text)
            if m is None:
                continue
            close = find_close_paren(text, m.end() - 1)
            if close < 0:
                continue
            if m.group(3) == key:
                add((ln, m.start(3), m.end(3), "def"))
            for u in name.finditer(text, m.end(), close):
                add((ln, u.start(1), u.end(1), "use"))
        return out

    def definition(self, kind: str, key: str) -> Occurrence | None:
        """The defining occurrence of (kind, key); None when the document does not define it."""
        if kind == "instruction":
            ins = self.mod.instruction(key)
            lines = [ins.line] if ins is not None else []
        elif kind == "computation":
            ci = self.mod.computation_by_name.get(key)
            lines = [self.mod.computations[ci].line] if ci is not None else []
        else:
            lines = self._lines_for(kind, key)
        for ln in lines:
            for o in self.on_line(ln):
                if o.kind == kind and o.key == key and o.role == "def":
                    return o
        return None
