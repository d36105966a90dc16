"""Fast reader for HLO module text as XLA prints it.

Algorithm: a machine-written module is read by `hlo_bulk.read_rows`: computation headers and closing braces
from the lines that start in column 0, then each computation's instruction lines by one regex pass that also
checks the computation and summarizes it for the verifier. Anything else takes the general path: instruction
names from one regex scan of the whole text (the pattern starts with a literal newline, so the engine jumps
between lines at memchr speed), structure from the column-0 lines, each computation owning a contiguous range
of the instruction array found by bisection on offsets, and an instruction's opcode, operands and calls parsed
from its line on first use. Everything positional a request needs later (operand columns, attribute spans,
metadata) is re-derived from the one line on demand (`hlo_line`). Lark (the grammar) validates; this reader
indexes, reports lines it cannot read, and never raises.
"""

from __future__ import annotations

import bisect
import gc
import re
import sys
from array import array
from dataclasses import dataclass, field
from typing import Any

from hlo_lsp.core.diagnostics import Diagnostic, Range, error

# General per-line form: `  ROOT %name = <shape> opcode(` — the shape is matched lazily up to the first
# ` word(` (one space, so the match stays linear: each word is tried only from the single space before it).
_INSTR = re.compile(r"\s*(ROOT\s+)?(%?)([\w.\-]+)\s*=\s*(?:(.*?) )??([a-z][a-z0-9_\-]*)\(")
# The index form, scanned over "\n" + text: an instruction line is an indented `[ROOT] [%]name =`. It starts
# with a literal newline so the regex engine jumps between lines at memchr speed. Groups: 1 ROOT, 2 name.
_INDEX_INSTR = re.compile(r"\n[ \t]*(ROOT[ \t]+)?%?([\w.\-]+)[ \t]*=")
_TOP_LINE = re.compile(r"\n([^ \t\n][^\n]*)")  # over "\n" + text: lines starting in column 0
_COMP_NAME = re.compile(r"(ENTRY\s+)?%?([^\s(%{]+)")


def _computation_header(line: str) -> tuple[bool, int, str, str] | None:
    """(is ENTRY, name start, name, signature) of a computation header line (`[ENTRY] [%]name sig {`);
    None for any other line. The signature is the text between the name and the final `{`."""
    body = line.rstrip()
    if not body.endswith("{") or " = " in body:
        return None
    m = _COMP_NAME.match(body)
    if m is None or m.end() >= len(body) + 1:
        return None
    return m.group(1) is not None, m.start(2), m.group(2), body[m.end() : -1].strip()
_TABLE_ROW = re.compile(r"(\d+) (.*)$")
_CALL_ATTR_PCT = re.compile(
    r"[\s,](calls|to_apply|body|condition|true_computation|false_computation|branch_computations|"
    r"called_computations|select|scatter|comparator)=(\{[^}]*\}|%[\w.\-]+)"
)
_CALLED_NAME = re.compile(r"%?([^\s,{}%]+)")
# a call attribute key, found before the string-aware attribute reader runs on a line
_CALLED_ANY = re.compile(
    r"(?:calls|to_apply|body|condition|true_computation|false_computation|branch_computations|"
    r"called_computations|select|scatter|comparator)="
)
# a key starts after a non-name character: search stays linear on a long run of name characters without '='
_ATTR_KEY = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_.]*)=")
CALL_ATTRS = frozenset({
    "calls", "to_apply", "body", "condition", "true_computation", "false_computation", "branch_computations",
    "called_computations", "select", "scatter", "comparator",
})
_COMMENT_INDEX = re.compile(r"/\*[^*]*\*/")
# XLA numbers the items of a long list (`%a, ..., /*index=5*/%f`); a plain operand list is `%name` items only
_INDEX_NUMBER_TEXT = r"/\*index=[0-9]+\*/"
_INDEX_NUMBER = re.compile(_INDEX_NUMBER_TEXT)
_OPERAND_TEXT = r"(?:%s)?%%[\w.\-]+" % _INDEX_NUMBER_TEXT
OPERAND_LIST_TEXT = r"%s(?:, %s)*" % (_OPERAND_TEXT, _OPERAND_TEXT)
_NUMBERED_OPERANDS = re.compile(OPERAND_LIST_TEXT)


def plain_operand_names(ops: str) -> list[str]:
    """The names of a plain operand list's text (`OPERAND_LIST_TEXT`, or ""); what `_read_operands` returns
    for it."""
    if not ops:
        return []
    if "/" in ops:
        ops = _INDEX_NUMBER.sub("", ops)
    return ops.replace("%", "").split(", ")
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


class Instruction:
    """One instruction line: name and position from the index pass; opcode, operands and parameter number are
    read from the line on first use (`_parse`) and kept. Columns are code points on ``line``."""

    __slots__ = ("name", "line", "name_start", "is_root", "_called", "_lines", "_opcode", "_operands", "_param",
                 "unreadable")

    def __init__(self, name: str, line: int, name_start: int, is_root: bool, lines: list[str]):
        self.name = name
        self.line = line
        self.name_start = name_start
        self.is_root = is_root
        self._called: tuple[str, ...] = ()
        self._lines = lines
        self._opcode: str | None = None
        self._operands: tuple[str, ...] = ()
        self._param: int | None = None
        self.unreadable: str | None = None  # why the line is no well-formed instruction, once parsed

    def __repr__(self) -> str:
        return f"Instruction({self.name!r}, line={self.line})"

    def _parse(self) -> None:
        line = self._lines[self.line]
        m = _INSTR.match(line)
        if m is None:
            self._opcode = ""
            self.unreadable = "expected `name = shape opcode(operands)`"
            return
        self._opcode, self._operands, self._param, close = _read_operands(line, m)
        if close < 0:
            self.unreadable = "unbalanced parentheses: the operand list is never closed"
        elif "%" in line:
            # machine-written: every called computation is written `key=%name` or `key={%a, %b}`
            if "=%" in line or "={%" in line:
                self._called = tuple(n.group(1) for m in _CALL_ATTR_PCT.finditer(line, close)
                                     for n in _CALLED_NAME.finditer(m.group(2)))
        elif _CALLED_ANY.search(line, close):
            self._called = _called_in(line[close + 1 :])

    @property
    def opcode(self) -> str:
        """The opcode (``""`` for a line that is no well-formed instruction)."""
        if self._opcode is None:
            self._parse()
        return self._opcode

    @property
    def operands(self) -> tuple[str, ...]:
        """Operand instruction names without ``%``; nested inline instructions are skipped."""
        if self._opcode is None:
            self._parse()
        return self._operands

    @property
    def called(self) -> tuple[str, ...]:
        """Called computation names (``calls=``, ``to_apply=``, ``body=``...), without ``%``."""
        if self._opcode is None:
            self._parse()
        return self._called

    @property
    def parameter_number(self) -> int | None:
        """N of ``parameter(N)``; None for other opcodes or an unreadable number."""
        if self._opcode is None:
            self._parse()
        return self._param

    @property
    def name_range(self) -> Range:
        return Range(self.line, self.name_start, self.line, self.name_start + len(self.name))


class InstructionTable:
    """The module's instructions in document order, kept as parallel arrays (name, line, name column, ROOT
    flag) and turned into `Instruction` objects on first access, so indexing a 20 MB module creates no object
    per instruction. Behaves as a read-only sequence."""

    __slots__ = ("names", "line_of", "col_of", "root_flags", "_lines", "_objs")

    def __init__(self, names: list[str], line_of, col_of, root_flags: bytearray, lines: list[str]):
        # machine integers (4 bytes an entry), not a list of int objects (36): 200,000 instructions
        self.line_of = line_of if isinstance(line_of, array) else array("i", line_of)
        self.col_of = col_of if isinstance(col_of, array) else array("i", col_of)
        self.names = names
        self.root_flags = root_flags
        self._lines = lines
        self._objs: dict[int, Instruction] = {}  # made on first access (a few, for requests)

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self.names)))]
        if i < 0:
            i += len(self.names)
        ins = self._objs.get(i)
        if ins is None:
            if not 0 <= i < len(self.names):
                raise IndexError("instruction index out of range")
            ins = Instruction(self.names[i], self.line_of[i], self.col_of[i], bool(self.root_flags[i]),
                              self._lines)
            self._objs[i] = ins
        return ins

    def __iter__(self):
        for i in range(len(self.names)):
            yield self.make(i)  # a walk over every instruction leaves no object per instruction behind

    def make(self, i: int) -> Instruction:
        """Instruction ``i`` as a new object the table does not keep (for whole-module passes that would
        otherwise leave one object per instruction behind); the kept one when it exists."""
        ins = self._objs.get(i)
        if ins is None:
            ins = Instruction(self.names[i], self.line_of[i], self.col_of[i], bool(self.root_flags[i]), self._lines)
        return ins


@dataclass(slots=True, eq=False)
class Computation:
    name: str
    line: int
    name_start: int
    is_entry: bool
    signature: str  # the header text between the name and `{`
    end_line: int = -1  # the line of the closing brace (the last line read when it is missing)
    instructions: range = range(0)  # indices into HloModule.instructions
    root: int | None = None  # explicit ROOT, else the last instruction (XLA's rule)

    @property
    def name_range(self) -> Range:
        return Range(self.line, self.name_start, self.line, self.name_start + len(self.name))


@dataclass(slots=True, eq=False)
class TableRow:
    id: int
    line: int
    text: str  # the row after the id: a quoted name or `{key=value ...}`
    text_start: int

    def fields(self) -> dict[str, str]:
        """``{file_name_id=1 line=55}`` rows as a dict; {} for quoted-name rows."""
        t = self.text.strip()
        if not t.startswith("{"):
            return {}
        out = {}
        for part in t.strip("{}").split():
            k, _, v = part.partition("=")
            out[k] = v
        return out

    def string(self) -> str:
        """The quoted name of a FileNames/FunctionNames row, unescaped; the raw text otherwise."""
        t = self.text.strip()
        if len(t) >= 2 and t[0] == '"' and t[-1] == '"':
            return t[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        return t


@dataclass(slots=True, eq=False)
class HloModule:
    """The index of one HLO text document."""

    lines: list[str]
    name: str | None = None
    header_line: int | None = None
    computations: list[Computation] = field(default_factory=list)
    instructions: InstructionTable | list[Instruction] = field(default_factory=list)
    tables: dict[str, dict[int, TableRow]] = field(default_factory=dict)
    table_lines: dict[str, int] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    by_name: dict[str, int] = field(default_factory=dict)  # first instruction of each name
    computation_by_name: dict[str, int] = field(default_factory=dict)
    _users: Any = None  # operand name -> user instruction(s) (`hlo_bulk.UsesTable`), see `_maps`
    _callers: dict[str, list[int] | int] | None = None
    _patched: set[int] = field(default_factory=set)
    # what the rows pass found while reading: each computation's structural diagnostics ([] or None: not
    # checked) and verifier summary, taken over by the `StructuralChecker`
    pre_checked: tuple[list, list] | None = None
    # every computation is clean (each operand names an instruction of its own computation) and no name
    # repeats: `users` can answer from one computation before the maps are built
    local_names: bool = False
    # set by `incremental.patch_module`: its last patch kept every name, name column and ROOT flag
    patch_kept_names: bool = False
    # read by the rows pass (`hlo_bulk.read_rows`): each instruction line not patched since is a row (its first
    # `(%` opens its operand list, a plain `%a, %b` list up to the first `)`)
    rows_read: bool = False
    _comp_lines: list[int] | None = None

    # -- lookups (each O(1) or O(log n) after a one-time O(n) build) -------------------------------------------

    @property
    def entry(self) -> Computation | None:
        """The ENTRY computation, else the last one (XLA's rule for modules without ENTRY); None when empty."""
        for c in self.computations:
            if c.is_entry:
                return c
        return self.computations[-1] if self.computations else None

    def computation_of(self, ins: Instruction) -> Computation | None:
        """The computation holding ``ins``; None for an instruction outside every computation."""
        return self.computation_at_line(ins.line)

    def instruction(self, name: str, scope: Computation | None = None) -> Instruction | None:
        """The instruction called ``name``, preferring one in ``scope`` when names repeat; None if undefined."""
        i = self.by_name.get(name)
        if i is None:
            return None
        ins = self.instructions[i]
        if scope is not None and i not in scope.instructions:
            for j in scope.instructions:
                if self.instructions[j].name == name:
                    return self.instructions[j]
        return ins

    def instruction_at_line(self, line: int) -> Instruction | None:
        """The instruction defined on ``line``; None for any other line."""
        i = self.index_at_line(line)
        return None if i is None else self.instructions[i]

    def index_at_line(self, line: int) -> int | None:
        """Index of the instruction defined on ``line`` (bisection over the index's sorted line array: no map
        of 200,000 entries is kept); None for any other line."""
        ins = self.instructions
        lines = ins.line_of if isinstance(ins, InstructionTable) else [x.line for x in ins]
        i = bisect.bisect_left(lines, line)
        return i if i < len(lines) and lines[i] == line else None

    def computation_index_at_line(self, line: int) -> int | None:
        """Index (in `computations`) of the computation whose header..closing-brace span holds ``line``; None
        outside every computation."""
        if self._comp_lines is None:
            self._comp_lines = [c.line for c in self.computations]
        i = bisect.bisect_right(self._comp_lines, line) - 1
        if i < 0 or line > self.computations[i].end_line:
            return None
        return i

    def computation_at_line(self, line: int) -> Computation | None:
        """The computation whose header..closing-brace span holds ``line``; None outside every computation."""
        i = self.computation_index_at_line(line)
        return None if i is None else self.computations[i]

    def make_instruction(self, i: int) -> Instruction:
        """Instruction ``i`` as an object for the caller's use, which the instruction table does not keep (the
        kept one when there is one): a pass over many instructions leaves nothing behind."""
        t = self.instructions
        return t.make(i) if isinstance(t, InstructionTable) else t[i]

    def _maps(self) -> tuple[dict, dict]:
        if self._users is None or self._callers is None:
            from hlo_lsp.core.hlo.bulk import users_and_callers  # the rows pass imports this module

            # instructions patched meanwhile stay in `_patched` (judged again on each use): a build racing an
            # edit on the editor's thread may have read the line before or after it
            self._users, self._callers = users_and_callers(self)
        return self._users, self._callers

    def _indices(self, m: dict, key: str, of) -> list[int]:
        """The instructions ``m`` (name -> index or indices, as built) lists under ``key``, with every
        instruction patched since (`incremental`) judged again by ``of`` (its operands or callees)."""
        base = m.get(key, ())
        idx = [base] if isinstance(base, int) else list(base)
        if self._patched:
            patched = self._patched
            idx = [i for i in idx if i not in patched]
            idx.extend(i for i in patched if key in of(self.make_instruction(i)))
            idx.sort()
        return idx

    def _user_indices(self, name: str) -> list[int]:
        if self._users is None and self.local_names:
            return self._local_users(name)
        return self._indices(self._maps()[0], name, lambda x: x.operands)

    def _local_users(self, name: str) -> list[int]:
        """`users` before the maps are built, for a module whose operands all name instructions of their own
        computation and whose names are unique (`local_names`): the users are in the computation defining
        ``name``, found by a substring test per line of it and the reader's operands on the lines that pass."""
        i = self.by_name.get(name)
        t = self.instructions
        if i is None or not isinstance(t, InstructionTable):
            return []
        k = self.computation_index_at_line(t.line_of[i])
        if k is None:
            return []
        lines, line_of, needle = self.lines, t.line_of, "%" + name
        return [j for j in self.computations[k].instructions
                if needle in lines[line_of[j]] and name in self.make_instruction(j).operands]

    def users(self, name: str) -> list[Instruction]:
        """Instructions that take ``name`` as an operand, in document order; [] when unused."""
        return [self.make_instruction(i) for i in self._user_indices(name)]

    def build_maps(self) -> None:
        """Build the users and callers maps now (the server does it in the background after a read)."""
        self._maps()

    def user_lines(self, name: str) -> list[int]:
        """Lines of the instructions that take ``name`` as an operand (`users` without making them)."""
        return self._lines_of(self._user_indices(name))

    def user_lines_as_rows(self, name: str) -> tuple[list[int], bytes]:
        """`user_lines`, and for each a flag: 1 when the line is still a row as the rows pass read it
        (`rows_read`, and not patched since)."""
        idx = self._user_indices(name)
        if not self.rows_read:
            return self._lines_of(idx), bytes(len(idx))
        patched = self._patched
        return self._lines_of(idx), (bytes([i not in patched for i in idx]) if patched else b"\x01" * len(idx))

    def _lines_of(self, idx: list[int]) -> list[int]:
        t = self.instructions
        if isinstance(t, InstructionTable):
            line_of = t.line_of
            return [line_of[i] for i in idx]
        return [t[i].line for i in idx]

    def callers(self, computation: str) -> list[Instruction]:
        """Instructions that call ``computation`` (calls=, to_apply=, body=, ...); [] when none."""
        return [self.make_instruction(i) for i in self._indices(self._maps()[1], computation, lambda x: x.called)]

    def mark_patched(self, i: int) -> None:
        """Instruction ``i``'s line was edited in place: the users and callers maps re-judge it on each use
        (before they are built, an edit may break `local_names`, so they will be built on the next use)."""
        self._patched.add(i)
        self.local_names = False

    def table_row(self, table: str, row_id: int) -> TableRow | None:
        """Row ``row_id`` of FileNames/FunctionNames/FileLocations/StackFrames; None when absent."""
        return self.tables.get(table, {}).get(row_id)


def warm_module(mod: HloModule) -> None:
    """Build the lazily made whole-module maps (users, callers, line and computation lookups) now, so the first
    references or definition request on a large module does not pay for them."""
    mod.build_maps()
    mod.computation_at_line(0)


def split_operands(seg: str) -> list[tuple[int, int]]:
    """Spans (start, end) of the comma-separated items of an operand list, depth-aware over (), {} and []."""
    spans = []
    depth = 0
    start = 0
    if "(" not in seg and "{" not in seg:
        pos = 0
        for part in seg.split(","):
            spans.append((pos, pos + len(part)))
            pos += len(part) + 1
        return spans if seg.strip() else []
    for i, ch in enumerate(seg):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == "," and depth == 0:
            spans.append((start, i))
            start = i + 1
    spans.append((start, len(seg)))
    return spans if seg.strip() else []


def operand_name(item: str) -> tuple[str, int] | None:
    """The operand name in one operand item (``f32[4]{0} %x`` or ``%x`` or ``x``) and its offset in ``item``;
    None for an inline nested instruction or an empty item."""
    s = item.rstrip()
    if not s or s.endswith(")"):
        return None
    k = max(s.rfind(" "), s.rfind("/"))
    tok_start = k + 1
    tok = s[tok_start:]
    if tok.startswith("%"):
        tok = tok[1:]
        tok_start += 1
    if not tok or "[" in tok or "{" in tok:
        return None
    return tok, tok_start


def find_close_paren(line: str, open_pos: int) -> int:
    """Index of the ``)`` matching the ``(`` at ``open_pos`` (skipping strings); -1 when unbalanced."""
    j = line.find(")", open_pos)
    if j < 0:
        return -1
    seg = line[open_pos + 1 : j]
    if "(" not in seg and '"' not in seg:
        return j
    depth = 0
    in_str = False
    i = open_pos
    n = len(line)
    while i < n:
        ch = line[i]
        if in_str:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


_PLAIN_RUN = re.compile(r'[^"(){}\[\],]*')


def scan_value_end(line: str, i: int) -> int:
    """End of an attribute value starting at ``i``: the next top-level ``,`` or unmatched closer (depth-aware
    over (), {}, [] and strings with escapes). Linear; never recursive; runs of ordinary characters are skipped
    by one regex step each."""
    depth = 0
    n = len(line)
    plain = _PLAIN_RUN.match
    while i < n:
        i = plain(line, i).end()
        if i >= n:
            break
        ch = line[i]
        if ch == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
        elif ch in "({[":
            depth += 1
        elif ch in ")}]":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0:  # a comma
            return i
        i += 1
    return n


def _called_in(attrs: str) -> tuple[str, ...]:
    """Called computation names in the attribute text after an operand list; string- and nesting-aware, so
    a ``calls=`` inside metadata never counts and attributes after metadata still do."""
    out: list[str] = []
    i = 0
    n = len(attrs)
    while i < n:
        m = _ATTR_KEY.search(attrs, i)
        if m is None:
            break
        end = scan_value_end(attrs, m.end())
        if m.group(1) in CALL_ATTRS:
            out.extend(x.group(1) for x in _CALLED_NAME.finditer(attrs, m.end(), end))
        i = end + 1
    return tuple(out)


def _read_operands(line: str, m: re.Match) -> tuple[str, tuple[str, ...], int | None, int]:
    """(opcode, operand names, parameter number, index of the closing parenthesis or -1) of a line `_INSTR`
    matched; a simple ``%a, %b`` list is split directly, anything else depth-aware."""
    opcode = m.group(5)
    open_pos = m.end() - 1
    if opcode == "parameter":
        close = line.find(")", open_pos)
        num = line[open_pos + 1 : close].strip() if close > 0 else ""
        return opcode, (), (int(num) if num.isdigit() and len(num) < 10 else None), close
    close = find_close_paren(line, open_pos)
    seg = line[open_pos + 1 : close] if close >= 0 else line[open_pos + 1 :]
    if not seg or opcode == "constant":
        return opcode, (), None, close
    if "(" not in seg and "[" not in seg and "/" not in seg and seg.count(" ") == seg.count(", "):
        return opcode, tuple(seg.replace("%", "").split(", ")), None, close
    if _NUMBERED_OPERANDS.fullmatch(seg):  # `%a, ..., /*index=5*/%f, ...`: a long tuple as XLA prints it
        return opcode, tuple(plain_operand_names(seg)), None, close
    ops = []
    for a, b in split_operands(seg):
        r = operand_name(_COMMENT_INDEX.sub(lambda mm: " " * len(mm.group()), seg[a:b]))
        if r is not None:
            ops.append(r[0])
    return opcode, tuple(ops), None, close


def _scan_instructions(scan: str) -> tuple[list[int], list[str], list[int], list[int], list[int]]:
    """For every instruction line in document order: its offset in ``scan`` ("\\n" + text: the offset of the
    newline before the line), name, line and name column; plus the indices of ROOT instructions."""
    offsets: list[int] = []
    names: list[str] = []
    line_of: list[int] = []
    col_of: list[int] = []
    roots: list[int] = []
    add_off, add_name, add_line, add_col = offsets.append, names.append, line_of.append, col_of.append
    count = scan.count
    ln = -1
    prev = 0
    for m in _INDEX_INSTR.finditer(scan):
        start = m.start()
        ln += count("\n", prev, start + 1)
        prev = start + 1
        if m.start(1) >= 0:
            roots.append(len(names))
        add_off(start)
        add_name(m.group(2))
        add_line(ln)
        add_col(m.start(2) - start - 1)
    return offsets, names, line_of, col_of, roots


def read_hlo(text: str, lines: list[str] | None = None, check: bool = True) -> HloModule:
    """Index HLO module text; never raises. Lines it cannot read become ``syntax-error`` diagnostics.

    ``lines``, when given, must be ``text.split("\\n")`` (an editor's line store): the module then shares that
    list, so an in-place edit of a line is seen by the module (see `incremental.patch_module`). With ``check``
    (the default) a machine-written module is read by the rows pass, which also checks every computation and
    summarizes it for the verifier (`HloModule.pre_checked`); without, only the index is built (the reader
    alone, as `benchmarks/bench_reader.py` times it)."""
    if text.startswith("\ufeff"):
        text = text[1:]
        lines = None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = None
    if lines is None:
        lines = text.split("\n")
    mod = HloModule(lines=lines)
    scan = "\n" + text
    enabled = gc.isenabled()
    gc.disable()  # ~10^5 small objects: generational collections would cost a third of the time
    try:
        from hlo_lsp.core.hlo.bulk import read_rows  # the rows pass imports this module

        if check and read_rows(mod, scan):
            return mod  # machine-written: read and checked in one pass
        mod = HloModule(lines=lines)
        offsets, names, line_of, col_of, roots = _scan_instructions(scan)
        flags = bytearray(len(names))
        for r in roots:
            flags[r] = 1
        instrs = InstructionTable(names, line_of, col_of, flags, lines)
        _read_structure(mod, scan, offsets, instrs, roots)
    finally:
        if enabled:
            gc.enable()
    return mod


# over "\n" + text: a computation header line; groups: 1 ENTRY, 2 name, 3 signature (text before the final `{`)
# (the lookaheads keep the name and the blanks after it whole, so a long line is scanned once, not once per
# shorter name: finditer was quadratic on a long column-0 line; the signature is taken greedily to the line's
# last `{`, the only one blanks alone can follow, which is the one the lazy form found char by char)
_HEADER_LINE = re.compile(r"\n(ENTRY[ \t]+)?%?([^\s(%{=}/][^\s(%{=]*)(?![^\s(%{=])[ \t]*(?![ \t])([^\n]*)\{[ \t]*(?=\n|\Z)")
_CLOSE_LINE = re.compile(r"\n\}")


def _read_structure(mod: HloModule, scan: str, offsets: list[int], instrs: InstructionTable,
                    roots: list[int]) -> None:
    """Computations, tables and header from the column-0 lines. Machine-written text takes the bulk path
    (`_read_structure_bulk`: headers and closing braces found by regex and paired by bisection); anything it
    cannot vouch for takes the per-line path, which also places the errors."""
    if not _read_structure_bulk(mod, scan, offsets, instrs, roots):
        mod.computations.clear()
        mod.computation_by_name.clear()
        mod.tables.clear()
        mod.table_lines.clear()
        _read_structure_lines(mod, scan, offsets, instrs, roots)


def bulk_headers(mod: HloModule, scan: str, start: int = 0, end: int | None = None) -> list[tuple[re.Match, int]] | None:
    """(header match, offset of the closing line's newline) of every computation when the column-0 lines are
    the module header and tables (read into ``mod`` here), then computation headers and lone closing braces
    alternating with only blank lines between; None otherwise (``mod`` may then hold part of the prefix).

    ``scan[start:end]`` alone is read when given: a part starting after the first computation (``start`` the
    newline ending a closing line) holds only blank lines before its first header (no module header), and one
    ending early ends with the newline after a closing brace, so the parts of a module all pass exactly when the
    whole does."""
    if end is None:
        end = len(scan)
    heads = list(_HEADER_LINE.finditer(scan, start, end))
    closes = [m.start() for m in _CLOSE_LINE.finditer(scan, start, end)]
    if not heads or len(heads) != len(closes):
        return None
    for h, c, nxt in zip(heads, closes, [m.start() for m in heads[1:]] + [end]):
        if not h.start() < c < nxt:
            return None
        eol = scan.find("\n", c + 1, end)
        if eol < 0:
            eol = end
        # the closing line is a lone brace, and only blank lines follow it up to the next header
        if scan[c + 1 : eol].rstrip() != "}" or (eol < nxt and not scan[eol:nxt].isspace()):
            return None
    first = heads[0].start()
    if start:  # a later part: nothing but blank lines before its first computation
        return list(zip(heads, closes)) if first == start or scan[start:first].isspace() else None
    # the prefix before the first computation: module header and tables, read line by line (it is small)
    _read_structure_lines(mod, scan[: first + 1], [], [], [])
    if mod.computations or mod.diagnostics:
        return None
    return list(zip(heads, closes))


def bulk_computations(mod: HloModule, scan: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]] | None:
    """`bulk_headers` (of ``scan[start:end]``), with each computation made and added to ``mod`` (name, lines,
    signature; the name and signature interned: callers name the computations again, and fusion signatures
    repeat): per computation the offsets in ``scan`` of its header line's and its closing line's newlines.
    None as `bulk_headers`."""
    pairs = bulk_headers(mod, scan, start, end)
    if pairs is None:
        return None
    comps = mod.computations
    by_comp = mod.computation_by_name
    count = scan.count
    first = pairs[0][0].start()
    ln = count("\n", 0, first + 1) - 1
    prev = first + 1
    offsets = []
    for hm, c in pairs:
        h = hm.start()
        ln += count("\n", prev, h + 1)
        comp = Computation(sys.intern(hm.group(2)), ln, hm.start(2) - h - 1, hm.start(1) >= 0,
                           sys.intern(hm.group(3).strip()))
        comp.end_line = ln + count("\n", h + 1, c + 1)
        prev = c + 1
        ln = comp.end_line
        by_comp.setdefault(comp.name, len(comps))
        comps.append(comp)
        offsets.append((h, c))
    return offsets


def _read_structure_bulk(mod: HloModule, scan: str, offsets: list[int], instrs: InstructionTable,
                         roots: list[int]) -> bool:
    """The bulk path; returns False (having changed nothing that the per-line path does not reset) unless every
    column-0 line is the module header, a table line, a computation header or a closing brace, and headers and
    braces alternate."""
    spans = bulk_computations(mod, scan)
    if spans is None:
        return False
    r = 0
    n_roots = len(roots)
    for comp, (h, c) in zip(mod.computations, spans):
        lo = bisect.bisect_right(offsets, h)
        hi = bisect.bisect_left(offsets, c)
        comp.instructions = range(lo, hi)
        while r < n_roots and roots[r] < lo:
            r += 1
        while r < n_roots and roots[r] < hi:
            comp.root = roots[r]
            r += 1
        if comp.root is None and hi > lo:
            comp.root = hi - 1
        if comp.end_line - comp.line - 1 != hi - lo:
            return False  # blank, comment or unreadable lines inside: let the per-line path place them
    if sum(len(c.instructions) for c in mod.computations) != len(instrs):
        return False
    mod.instructions = instrs
    mod.by_name = dict(zip(reversed(instrs.names), range(len(instrs) - 1, -1, -1)))
    return True


def _read_structure_lines(mod: HloModule, scan: str, offsets: list[int], instrs: InstructionTable | list,
                          roots: list[int]) -> None:
    """The per-line path: read the column-0 lines (header, tables, computation headers, braces) and give each
    computation its contiguous slice of the instruction array, reporting whatever does not fit."""
    lines = mod.lines
    diags = mod.diagnostics
    comps = mod.computations
    spans: list[tuple[int, int]] = []  # per computation: (offset of header line, offset of its closing line)
    cur: Computation | None = None
    cur_off = 0
    table: dict[int, TableRow] | None = None
    table_next = -1  # the line a row must be on to continue the current table
    ln = -1
    prev = 0
    for m in _TOP_LINE.finditer(scan):
        off = m.start()
        ln += scan.count("\n", prev, off + 1)
        prev = off + 1
        line = m.group(1)
        if line.startswith("//"):
            continue
        if cur is not None:
            if line[0] == "}":
                cur.end_line = ln
                spans.append((cur_off, off))
                cur = None
                continue
            if _computation_header(line) is None:
                continue  # an unindented instruction (scanned already) or an unreadable line (found below)
            diags.append(error(cur.name_range, "unclosed-computation", f"computation `{cur.name}` has no closing `}}`"))
            cur.end_line = ln - 1
            spans.append((cur_off, off))
            cur = None
        if table is not None and ln == table_next:
            t = _TABLE_ROW.match(line)
            if t:
                rid = int(t.group(1)) if len(t.group(1)) < 19 else -1
                table[rid] = TableRow(rid, ln, t.group(2), t.start(2))
                table_next = ln + 1
                continue
        table = None
        if line.startswith("HloModule"):
            nm = re.match(r"\s+([^\s,]+)", line[9:])
            mod.name = nm.group(1) if nm else None
            mod.header_line = ln
            continue
        stripped = line.strip()
        if stripped in _TABLES:
            table = mod.tables.setdefault(stripped, {})
            mod.table_lines[stripped] = ln
            table_next = ln + 1
            continue
        h = _computation_header(line)
        if h is not None:
            cur = Computation(h[2], ln, h[1], h[0], h[3])
            cur_off = off
            mod.computation_by_name.setdefault(cur.name, len(comps))
            comps.append(cur)
            continue
        if " = " not in line or not _INSTR.match(line):
            diags.append(error(Range(ln, 0, ln, len(line.rstrip())), "syntax-error",
                               "unexpected text outside any computation: expected `HloModule`, a table, "
                               "or a computation header"))
    if cur is not None:
        diags.append(error(cur.name_range, "unclosed-computation", f"computation `{cur.name}` has no closing `}}`"))
        cur.end_line = len(lines) - 1
        spans.append((cur_off, len(scan)))
    # each computation owns the scanned instructions between its header and its closing line
    kept: list[Instruction] = []
    covered = 0
    contiguous = True  # computations cover the instruction array without gaps (the normal case)
    for c, (a, b) in zip(comps, spans):
        lo = bisect.bisect_right(offsets, a)
        hi = bisect.bisect_left(offsets, b)
        if lo != covered:
            contiguous = False
        base = len(kept)
        kept.extend(instrs[i] for i in range(lo, hi))
        covered += hi - lo
        c.instructions = range(base, len(kept))
        r = bisect.bisect_left(roots, lo)
        while r < len(roots) and roots[r] < hi:
            c.root = base + roots[r] - lo  # the last ROOT wins; two are an error for the checks
            r += 1
        if c.root is None and c.instructions:
            c.root = c.instructions[-1]
        if c.end_line - c.line - 1 != len(c.instructions):
            _report_unread_lines(mod, c, kept)
    covered = covered if contiguous else -1
    if covered != len(instrs):
        inside = {id(x) for x in kept}
        for ins in instrs:
            if id(ins) not in inside:
                diags.append(error(ins.name_range, "syntax-error", f"instruction `{ins.name}` is outside any computation"))
    mod.instructions = kept
    n = len(kept)
    # reversed, so that the first definition of a repeated name wins
    mod.by_name = dict(zip([x.name for x in reversed(kept)], range(n - 1, -1, -1)))


def _report_unread_lines(mod: HloModule, comp: Computation, instrs: list[Instruction]) -> None:
    """Report the lines of a computation that are neither instructions, blank lines nor comments."""
    have = {instrs[i].line for i in comp.instructions}
    for ln in range(comp.line + 1, min(comp.end_line + 1, len(mod.lines))):
        text = mod.lines[ln]
        s = text.strip()
        if ln in have or not s or s.startswith("//") or s == "}" or text[:1] == "}":
            continue
        col = len(text) - len(text.lstrip())
        mod.diagnostics.append(error(Range(ln, col, ln, len(text.rstrip())), "syntax-error",
                                     "cannot read this line as an instruction: expected `name = shape opcode(operands)`"))
