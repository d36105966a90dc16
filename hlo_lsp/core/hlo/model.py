"""The model of an HLO module: `HloModule`, its `Computation`s and its instructions, kept as an
`InstructionTable` (names, lines and columns in arrays; an `Instruction` is made from its line on use).
Readers (`read`, `structure`, `bulk`) build it; the users and callers maps come from `rows`.

How a module is read (`read.read_hlo`).

Algorithm: a machine-written module is read by `bulk.read_rows`: computation headers and closing braces
from the lines that start in column 0, then each computation's instruction lines by one regex pass that also
checks the computation and summarizes it for the verifier. Anything else takes the general path: instruction
names from one regex scan of the whole text (the pattern starts with a literal newline, so the engine jumps
between lines at memchr speed), structure from the column-0 lines, each computation owning a contiguous range
of the instruction array found by bisection on offsets, and an instruction's opcode, operands and calls parsed
from its line on first use. Everything positional a request needs later (operand columns, attribute spans,
metadata) is re-derived from the one line on demand (`line`). Lark (the grammar) validates; this reader
indexes, reports lines it cannot read, and never raises.
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate, compress, repeat
from operator import add, contains
from typing import Any

from hlo_lsp.core.diagnostics import Diagnostic, Range
from hlo_lsp.core.hlo.instructions import Instruction, InstructionTable, instruction_names
from hlo_lsp.core.hlo.names import NameIndex
from hlo_lsp.core.hlo.rows import row_uses_name, users_and_callers
from hlo_lsp.core.process import fork, pieces, turns


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


JOINED_MIN = 4096  # instructions of a computation whose users `_local_users` finds in its joined text


# held while a name index made off the editor's thread is stored, and while a rename moves a stored one: between
# the test that no rename came during the making and the store, a rename would find no index to move and be lost
_INDEX_LOCK = threading.Lock()


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
    # first instruction of each name (`by_name`); None: not made yet (a large module's read leaves it to its first use)
    _by_name: NameIndex | None = field(default_factory=NameIndex)
    computation_by_name: dict[str, int] = field(default_factory=dict)
    _users: Any = None  # operand name -> user instruction(s) (`rows.UsesTable`), see `_maps`
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
    # read by the rows pass (`bulk.read_rows`): each instruction line not patched since is a row (its first
    # `(%` opens its operand list, a plain `%a, %b` list up to the first `)`)
    rows_read: bool = False
    # by the rows pass too: per computation, the computation it was read from as a repeat of it but for its names
    # (`bulk._Template`), -1 for one read row by row; the users map takes a repeat's from that one
    repeats: array | None = None
    # for each computation others repeat: its uses as (defining, using) instructions counted from its first one,
    # and its rows that call a computation (made by the read from its own text: `bulk._Template.relative_uses`)
    repeat_uses: dict[int, tuple[array, array, tuple[int, ...]]] = field(default_factory=dict)
    # by the rows pass too, when its forked child read the ENTRY computation: (the module header's line, the
    # entry's line, its donation hints, whether `entry_layout.quiet`), taken by the verifier's first run
    # (`bulk._entry_hints`)
    read_hints: tuple[int, int, list, bool] | None = None
    _comp_lines: list[int] | None = None
    # instructions renamed in place (`incremental`): a uniqueness found meanwhile is found again
    renames: int = 0
    # the renames (instruction, old name, new name) made while a name index is being made (`_make_index`), which
    # then applies those made after it began; how many makings are under way
    _rename_log: list[tuple[int, str, str]] = field(default_factory=list)
    _making_index: int = 0
    # (`renames` then, whether no name repeated then), as the read found it (`names_unique`)
    _unique: tuple[int, bool] | None = None
    # (computation index, a text holding its lines joined, each line's offset from where they begin in it, where
    # they begin and end): `_local_users` in a long computation
    _comp_text: tuple[int, str, array, int, int] | None = None
    # set while a thread builds the users and callers maps (`_maps`): another one asking for them waits for it
    _maps_making: threading.Event | None = None

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

    @property
    def by_name(self) -> NameIndex:
        """Name -> the index of its first instruction. A large module's read leaves it to be made on its first
        use (`NameIndex.first_of`), which is the background work after the read as a rule (`build_maps`): made
        with the read, it was 40 ms of the 23 MB module's 0.45 s before its pulled diagnostics, which need only
        to know whether a name repeats (`names_unique`)."""
        by = self._by_name
        if by is None:
            by = self._make_index()
        return by

    @by_name.setter
    def by_name(self, by: NameIndex) -> None:
        self._by_name = by

    def _make_index(self) -> NameIndex:
        """The name index made (a background thread's a piece at a time, the editor renaming instructions
        meanwhile): the renames made during the making are applied to it as `renamed` applies one to a made
        index, under the lock that `renamed` takes (a rename between the making and the store is not lost). It
        was made again after any rename: an editor renaming while the user types kept a large module's index
        from ever being made."""
        with _INDEX_LOCK:
            if self._by_name is not None:
                return self._by_name
            log = self._rename_log
            began = len(log)
            self._making_index += 1
        try:
            by = NameIndex.first_of(instruction_names(self.instructions))
            with _INDEX_LOCK:
                if self._by_name is None:
                    # (the names the making read may be from before or after each of these: either way, each
                    # moved as on a made index leaves the index of the names as they are now)
                    for i, old, new in log[began:]:
                        self._move_name(by, i, old, new)
                    self._by_name = by
                return self._by_name
        finally:
            with _INDEX_LOCK:
                self._making_index -= 1
                if not self._making_index:
                    self._rename_log = []

    def renamed(self, i: int, old: str, new: str) -> None:
        """Instruction ``i`` was renamed in place from ``old`` to ``new`` (its table says ``new`` already): a name
        index made moves with it; one being made takes the rename when it is stored (`_make_index`)."""
        with _INDEX_LOCK:
            self.renames += 1
            by = self._by_name
            if by is not None:
                self._move_name(by, i, old, new)
            elif self._making_index:
                self._rename_log.append((i, old, new))

    def _move_name(self, by: NameIndex, i: int, old: str, new: str) -> None:
        """``by`` after instruction ``i``'s rename from ``old`` to ``new``: ``old`` to its first other
        instruction, if any, and ``new`` to ``i`` unless an earlier instruction has it."""
        if by.get(old) == i:
            try:
                by[old] = instruction_names(self.instructions).index(old)
            except ValueError:
                del by[old]
        if by.get(new, i + 1) > i:
            by[new] = i

    def hints_of_read(self) -> tuple[int, int, list, bool] | None:
        """`read_hints` while they hold for the module: made on its header line and entry line as they are, and
        no instruction edited in place since (`patched`); None otherwise."""
        made, entry = self.read_hints, self.entry
        if made is None or self._patched or entry is None or (made[0], made[1]) != (self.header_line, entry.line):
            return None
        return made

    def index_on_use(self, unique: bool) -> None:
        """Leave the name index to its first use (`by_name`), the read having found whether a name repeats."""
        self._by_name = None
        self._unique = (self.renames, unique)

    def index_made(self) -> bool:
        """Whether the name index is made (`by_name`)."""
        return self._by_name is not None

    def names_unique(self) -> bool:
        """No instruction name repeats in the module (XLA's printer never repeats one): from the name index when
        it is made, else as the read found it, else from a set of the names."""
        if self._by_name is not None:
            return len(self._by_name) == len(self.instructions)
        u = self._unique
        if u is not None and u[0] == self.renames:
            return u[1]
        unique = distinct(instruction_names(self.instructions))
        self._unique = (self.renames, unique)
        return unique

    def instruction(self, name: str, scope: Computation | None = None) -> Instruction | None:
        """The instruction called ``name``, preferring one in ``scope`` when names repeat; None if undefined.
        Before the name index is made (`by_name`), ``scope``'s names and then the module's are searched."""
        i = self.by_name.get(name) if self._by_name is not None else self._search(name, scope)
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

    def _search(self, name: str, scope: Computation | None) -> int | None:
        """The first instruction called ``name`` (in ``scope`` when it has one, else in the module) by a search of
        the names, while the name index is not made (a C search: 1-2 ms over the 23 MB module's 200,000 names)."""
        names = instruction_names(self.instructions)
        r = scope.instructions if scope is not None else ()
        if isinstance(r, range) and r.step == 1:
            try:
                return names.index(name, r.start, r.stop)
            except ValueError:
                pass
        else:
            for j in r:
                if names[j] == name:
                    return j
        try:
            return names.index(name)
        except ValueError:
            return None

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
            making = self._maps_making
            if making is not None and not fork.in_child():  # (a forked child has no thread making them)
                # the background build under way (0.3 s for the 23 MB module, 1.2 s for the 100 MB one): taken
                # when it is done rather than made beside it
                with turns.waiting_for_background():
                    making.wait()
                if self._users is not None and self._callers is not None:
                    return self._users, self._callers
            done = self._maps_making = threading.Event()
            try:
                # instructions patched meanwhile stay in `_patched` (judged again on each use): a build racing an
                # edit on the editor's thread may have read the line before or after it
                self._users, self._callers = users_and_callers(self)
                self._comp_text = None  # `_local_users` is done with it
            finally:
                done.set()
                if self._maps_making is done:
                    self._maps_making = None
        return self._users, self._callers

    def maps_built(self) -> bool:
        """The users and callers maps are built (`build_maps`): `users`, `callers` and their kin answer at once."""
        return self._users is not None and self._callers is not None

    def users_at_once(self) -> bool:
        """`users`, `user_count` and `user_lines` answer without building the maps: they are built, or the users
        are found in the defining computation (`local_names`)."""
        return self.maps_built() or self.local_names

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

    def _user_indices(self, name: str, at: int | None = None) -> list[int]:
        if self._users is None and self.local_names:
            return self._local_users(name, at)
        return self._indices(self._maps()[0], name, lambda x: x.operands)

    def _local_users(self, name: str, at: int | None = None) -> list[int]:
        """`users` before the maps are built, for a module whose operands all name instructions of their own
        computation and whose names are unique (`local_names`): the users are in the computation defining
        ``name`` (instruction ``at`` when the caller knows it is), found by a substring test per line of it and
        the reader's operands on the lines that pass."""
        t = self.instructions
        if at is not None and isinstance(t, InstructionTable) and 0 <= at < len(t) and t.names[at] == name:
            i: int | None = at  # (names are unique here: the name's only instruction)
        else:
            i = self.by_name.get(name) if self._by_name is not None else self._search(name, None)
        if i is None or not isinstance(t, InstructionTable):
            return []
        k = self.computation_index_at_line(t.line_of[i])
        if k is None:
            return []
        r = self.computations[k].instructions
        needle = "%" + name
        found = self._in_joined_text(k, r, needle) if len(r) >= JOINED_MIN else None
        maybe: Iterable[int]
        if found is not None:
            maybe = found
        else:
            # the lines holding "%name", picked by C-level iterators (a Python loop over the 100 MB module's
            # entry computation of 91,000 instructions took 70-190 ms a hover)
            texts = map(
                self.lines.__getitem__,
                t.line_of[r.start : r.stop] if isinstance(r, range) else map(t.line_of.__getitem__, r),
            )
            maybe = compress(r, map(contains, texts, repeat(needle)))
        lines, line_of, patched, rows = self.lines, t.line_of, self._patched, self.rows_read
        out = []
        for j in maybe:
            # a line still as the rows pass read it: its operand list found by position, no line parsed
            use = row_uses_name(lines[line_of[j]], needle) if rows and j not in patched else None
            if use if use is not None else name in self.make_instruction(j).operands:
                out.append(j)
        return out

    def _in_joined_text(self, k: int, r: range, needle: str) -> list[int] | None:
        """The instructions of computation ``k`` (``r``, on consecutive lines) whose line holds ``needle``, found
        with ``str.find`` in the computation's lines joined once (kept until the users map is built: even in C
        iterators each of the 100 MB module's 91,000 entry lines was a cache miss, 16-70 ms a hover, where a
        search of the joined 10 MB takes 1-2 ms); None when its lines are not consecutive."""
        got = self._comp_text
        if got is None or got[0] != k:
            got = self.join_computation(k)
            if got is None:
                return None
        _, text, starts, lo, hi = got
        out: list[int] = []
        j = text.find(needle, lo, hi)
        while j >= 0:
            i = r.start + bisect.bisect_right(starts, j - lo) - 1
            if not out or out[-1] != i:
                out.append(i)
            j = text.find(needle, j + 1, hi)
        return out

    def join_computation(self, k: int, text: str | None = None, lo: int = 0) -> tuple | None:
        """Keep computation ``k``'s lines joined, with each line's offset in that text, for `_in_joined_text`
        (``text``: a text holding them already from offset ``lo``, as the read has it: not copied, 25 MB of the
        100 MB module's text, a C call of 15-20 ms); None when its lines are not consecutive."""
        t = self.instructions
        assert isinstance(t, InstructionTable)
        r = self.computations[k].instructions
        if not r or not isinstance(r, range) or r.step != 1:
            return None
        first, last = t.line_of[r.start], t.line_of[r.stop - 1]
        if last - first != len(r) - 1:
            return None
        seg = self.lines[first : last + 1]
        starts = array("q", accumulate(map(add, map(len, seg), repeat(1)), initial=0))  # (C iterators)
        if text is None:
            text, lo = "\n".join(seg), 0
        got = self._comp_text = (k, text, starts, lo, lo + starts[-1] - 1)
        return got

    def user_count(self, name: str, at: int | None = None) -> int:
        """How many instructions take ``name`` as an operand (`users` without making them: a name used 3,000
        times made 3,000 instruction objects for a hover's count). ``at``: the instruction defining ``name``, when
        the caller has it (before the name index is made, a search of the 100 MB module's names for the last
        computation's took 10-20 ms of a hover)."""
        return len(self._user_indices(name, at))

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

    @property
    def patched(self) -> set[int]:
        """Instructions whose lines were edited in place since the read (`mark_patched`); the maps judge them
        again on each use, and a reader of the maps compares its size before and after to see an edit race."""
        return self._patched

    def mark_patched(self, i: int) -> None:
        """Instruction ``i``'s line was edited in place: the users and callers maps re-judge it on each use
        (before they are built, an edit may break `local_names`, so they will be built on the next use)."""
        self._patched.add(i)
        self.local_names = False

    def table_row(self, table: str, row_id: int) -> TableRow | None:
        """Row ``row_id`` of FileNames/FunctionNames/FileLocations/StackFrames; None when absent."""
        return self.tables.get(table, {}).get(row_id)


def distinct(names: list[str]) -> bool:
    """No name occurs twice in ``names``: a set of them made `pieces.PIECE` names at a time (a background read
    gives way between; one C call over the 23 MB module's 200,000 names held the GIL 9-13 ms)."""
    seen: set[str] = set()
    step = pieces.PIECE
    for a in range(0, len(names), step):
        seen.update(names[a : a + step])
        turns.give_way()
    return len(seen) == len(names)


def warm_module(mod: HloModule) -> None:
    """Build the lazily made whole-module maps (users, callers, line and computation lookups) now, so the first
    references or definition request on a large module does not pay for them."""
    mod.build_maps()
    mod.computation_at_line(0)
