"""The instructions of a module: `InstructionTable` keeps names, lines and columns in arrays (200,000 of them
cost a few MB), and makes an `Instruction` from its line on use (opcode, operands, calls parsed then)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.text import CALL_ATTR_PCT, CALLED_ANY, CALLED_NAME, INSTR, called_in, read_operands


class Instruction:
    """One instruction line: name and position from the index pass; opcode, operands and parameter number are
    read from the line on first use (`_parse`) and kept. Columns are code points on ``line``."""

    __slots__ = (
        "name",
        "line",
        "name_start",
        "is_root",
        "_called",
        "_lines",
        "_opcode",
        "_operands",
        "_param",
        "unreadable",
    )

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
        m = INSTR.match(line)
        if m is None:
            self._opcode = ""
            self.unreadable = "expected `name = shape opcode(operands)`"
            return
        self._opcode, self._operands, self._param, close = read_operands(line, m)
        if close < 0:
            self.unreadable = "unbalanced parentheses: the operand list is never closed"
        elif "%" in line:
            # machine-written: every called computation is written `key=%name` or `key={%a, %b}`
            if "=%" in line or "={%" in line:
                self._called = tuple(
                    n.group(1) for m in CALL_ATTR_PCT.finditer(line, close) for n in CALLED_NAME.finditer(m.group(2))
                )
        elif CALLED_ANY.search(line, close):
            self._called = called_in(line[close + 1 :])

    @property
    def opcode(self) -> str:
        """The opcode (``""`` for a line that is no well-formed instruction)."""
        if self._opcode is None:
            self._parse()
        return self._opcode or ""

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
            ins = Instruction(self.names[i], self.line_of[i], self.col_of[i], bool(self.root_flags[i]), self._lines)
            self._objs[i] = ins
        return ins

    def __iter__(self):
        for i in range(len(self.names)):
            yield self.make(i)  # a walk over every instruction leaves no object per instruction behind

    def share_lines(self, lines: list[str]) -> None:
        """Read instructions from ``lines`` from now on (the editor's line store, which an edit patches in place)."""
        self._lines = lines

    def forget(self, i: int) -> None:
        """Drop instruction ``i``'s kept object (its line was edited: the next use parses it again)."""
        self._objs.pop(i, None)

    def make(self, i: int) -> Instruction:
        """Instruction ``i`` as a new object the table does not keep (for whole-module passes that would
        otherwise leave one object per instruction behind); the kept one when it exists."""
        ins = self._objs.get(i)
        if ins is None:
            ins = Instruction(self.names[i], self.line_of[i], self.col_of[i], bool(self.root_flags[i]), self._lines)
        return ins


def instruction_names(instructions: InstructionTable | list[Instruction]) -> list[str]:
    """The name of every instruction, in instruction order: the table's own column (not a copy), or made from a
    list of `Instruction`s (a module with an unreadable line)."""
    if isinstance(instructions, InstructionTable):
        return instructions.names
    return [x.name for x in instructions]


def name_columns(
    instructions: InstructionTable | list[Instruction],
) -> tuple[Sequence[str], Sequence[int], Sequence[int]]:
    """(names, lines, name columns) of every instruction, in instruction order: the table's own columns, or
    made from a list of `Instruction`s (a module with an unreadable line)."""
    if isinstance(instructions, InstructionTable):
        return instructions.names, instructions.line_of, instructions.col_of
    return instruction_names(instructions), [x.line for x in instructions], [x.name_start for x in instructions]
