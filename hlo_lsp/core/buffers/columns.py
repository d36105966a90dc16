"""The record lists of a `BufferDoc`, kept by column.

A large module's buffer files hold about 200,000 records (value lines, used values, live ranges, schedule steps,
peak entries). As objects they cost 250 bytes or more each (the object, its `Range`, an int object per number);
by column they cost 40 to 80: numbers in `array`s, names as interned strings shared with every other file of the
module. Each list reads like the list of records it stands for (``len``, ``[i]``, slices, iteration, ``==``):
an access makes the record object afresh (a microsecond), so the IDE, which looks at a few records at a time,
sees the same model, and the join (`BufferSet`) reads the columns directly.

An absent optional number (a color not printed, a cumulative size an old dump does not give) is NONE in its
column; a number too large for 64 bits (a hostile dump) is WIDE there and kept exactly in the list's ``wide``.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import repeat, starmap
from typing import Any

from hlo_lsp.core.buffers import records as _records  # the record classes
from hlo_lsp.core.diagnostics import Range

NONE = -(1 << 63)
WIDE = NONE + 1
_LO, _HI = WIDE + 1, (1 << 63) - 1
_new = tuple.__new__
_INDEX: dict[str | None, tuple[int, ...] | None] = {None: None}


def shape_index(text: str | None) -> tuple[int, ...] | None:
    """``{1,0}`` -> (1, 0), ``{}`` -> (), None -> None; one shared tuple per distinct text. Raises ValueError
    for a malformed index (``{,}``), as the reader's own parse does."""
    got = _INDEX.get(text)
    if got is None and text is not None:
        inner = text[1:-1]
        got = tuple(int(p) for p in inner.split(",")) if inner else ()
        if len(_INDEX) > 4096:
            _INDEX.clear()
            _INDEX[None] = None
        _INDEX[text] = got
    return got


class _RecordSequence(Sequence[Any]):
    """What reads like the list of records it stands for: ``bool``, ``[i]`` (negative too), slices and ``==``,
    over ``len`` records made by ``_at``."""

    __slots__ = ()
    _WHAT = "record"  # in the IndexError

    def __bool__(self) -> bool:
        return len(self) > 0

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self._WHAT} index out of range")
        return self._at(i)

    def __eq__(self, other) -> bool:
        try:
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        except TypeError:
            return NotImplemented

    # defining __eq__ leaves the class unhashable (__hash__ is None), as a list is

    def __len__(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __iter__(self) -> Iterator:
        return map(self._at, range(len(self)))

    def _at(self, i: int) -> Any:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


class Records(_RecordSequence):
    """Base of the column lists: subclasses name their columns in ``__slots__`` (with ``wide``) and define
    `_make`."""

    __slots__ = ()
    line: array  # every subclass's line column (its length is the list's)
    wide: dict[tuple[str, int], int]  # (column, index) -> a number too large for its column

    def put(self, column: array, name: str, value: int | None) -> None:
        """Append ``value`` (None -> NONE) to an int column."""
        if value is None:
            column.append(NONE)
        elif _LO <= value <= _HI:
            column.append(value)
        else:
            self.wide[(name, len(column))] = value
            column.append(WIDE)

    def num(self, column: array, name: str, i: int) -> int | None:
        """Entry ``i`` of an int column (None for NONE)."""
        v = column[i]
        if v <= WIDE:
            return None if v == NONE else self.wide[(name, i)]
        return v

    def req(self, column: array, name: str, i: int) -> int:
        """Entry ``i`` of an int column that always holds a number (never NONE)."""
        v = column[i]
        return self.wide[(name, i)] if v == WIDE else v

    def ints(self, name: str) -> Sequence[int]:
        """Int column ``name`` as numbers (the column itself unless a number of it is too large for it)."""
        column = getattr(self, name)
        if not any(k[0] == name for k in self.wide):
            return column
        return [self.req(column, name, i) for i in range(len(column))]

    def __len__(self) -> int:
        return len(self.line)

    def _at(self, i: int):
        return self._make(i)

    def __iter__(self):
        return map(self._make, range(len(self.line)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self)}>"

    def _make(self, i: int):  # pragma: no cover - every subclass defines it
        raise NotImplementedError


class SequenceSteps(Records):
    """`SequenceStep`s of ``InstructionSequence:``."""

    __slots__ = ("step", "name", "line", "start", "end", "wide")

    def __init__(self):
        self.step = array("q")
        self.name: list[str] = []
        self.line = array("I")
        self.start = array("I")
        self.end = array("I")
        self.wide: dict = {}

    def add(self, step: int, name: str, line: int, start: int, end: int) -> None:
        self.put(self.step, "step", step)
        self.name.append(name)
        self.line.append(line)
        self.start.append(start)
        self.end.append(end)

    def _make(self, i: int):
        ln = self.line[i]
        return _new(
            _records.SequenceStep,
            (self.req(self.step, "step", i), self.name[i], ln, _new(Range, (ln, self.start[i], ln, self.end[i]))),
        )


class _NameAtColumn4(Records):
    """The columns of a live-range file's named lines (``    name{index}...``, the name at column 4): instruction,
    index text, line and where the name ends."""

    __slots__ = ("instruction", "index_text", "line", "end", "wide")

    def __init__(self):
        self.instruction: list[str] = []
        self.index_text: list[str | None] = []
        self.line = array("I")
        self.end = array("I")
        self.wide: dict = {}


class LiveRanges(_NameAtColumn4):
    """`LiveRange`s of ``BufferLiveRange:`` (name at column 4)."""

    __slots__ = ("key", "first", "last")

    def __init__(self):
        super().__init__()
        self.key: list[str] = []
        self.first = array("q")
        self.last = array("q")

    def add(
        self, key: str, instruction: str, index_text: str | None, first: int, last: int, line: int, end: int
    ) -> None:
        self.key.append(key)
        self.instruction.append(instruction)
        self.index_text.append(index_text)
        if _LO <= first <= _HI and _LO <= last <= _HI:
            self.first.append(first)
            self.last.append(last)
        else:
            self.put(self.first, "first", first)
            self.put(self.last, "last", last)
        self.line.append(line)
        self.end.append(end)

    def _make(self, i: int):
        instr, itext, ln = self.instruction[i], self.index_text[i], self.line[i]
        return _records.LiveRange(
            self.key[i],
            instr if itext is None else instr + itext,
            instr,
            shape_index(itext),
            self.req(self.first, "first", i),
            self.req(self.last, "last", i),
            ln,
            _new(Range, (ln, 4, ln, self.end[i])),
        )


class PeakEntries(_NameAtColumn4):
    """`PeakEntry`s of ``Live ranges at N (peak):`` (name at column 4; no key when printed without an index)."""

    __slots__ = ("bytes", "cumulative")

    def __init__(self):
        super().__init__()
        self.bytes = array("q")
        self.cumulative = array("q")

    def add(
        self, instruction: str, index_text: str | None, nbytes: int, cumulative: int | None, line: int, end: int
    ) -> None:
        self.instruction.append(instruction)
        self.index_text.append(index_text)
        self.put(self.bytes, "bytes", nbytes)
        self.put(self.cumulative, "cumulative", cumulative)
        self.line.append(line)
        self.end.append(end)

    def key(self, i: int) -> str | None:
        itext = self.index_text[i]
        return None if itext is None else self.instruction[i] + itext

    def _make(self, i: int):
        instr, itext, ln = self.instruction[i], self.index_text[i], self.line[i]
        name = instr if itext is None else instr + itext
        return _records.PeakEntry(
            name,
            None if itext is None else name,
            instr,
            self.req(self.bytes, "bytes", i),
            self.num(self.cumulative, "cumulative", i),
            ln,
            _new(Range, (ln, 4, ln, self.end[i])),
        )


class _ValueLines(Records):
    """The columns of a value's line in both listings (``Used values:`` and the allocations' value lines): id,
    key, instruction name, index text, phi flag, color, and where the name stands."""

    __slots__ = ("value_id", "key", "instruction", "index_text", "phi", "color", "line", "start", "end", "wide")

    def __init__(self):
        self.value_id = array("q")
        self.key: list[str] = []
        self.instruction: list[str] = []
        self.index_text: list[str | None] = []
        self.phi = bytearray()
        self.color = array("q")
        self.line = array("I")
        self.start = array("I")
        self.end = array("I")
        self.wide: dict = {}

    def _add_value(
        self,
        value_id: int,
        key: str,
        instruction: str,
        index_text: str | None,
        phi: bool,
        color: int | None,
        line: int,
        start: int,
        end: int,
    ) -> None:
        self.put(self.value_id, "value_id", value_id)
        self.key.append(key)
        self.instruction.append(instruction)
        self.index_text.append(index_text)
        self.phi.append(phi)
        self.put(self.color, "color", color)
        self.line.append(line)
        self.start.append(start)
        self.end.append(end)


class UsedValues(_ValueLines):
    """`UsedValue`s of ``Used values:``; their positions, uses and instruction text stay in ``text``."""

    __slots__ = ("from_line", "text")

    def __init__(self, text=None):
        super().__init__()
        self.from_line = array("q")  # NONE until the value's `` from instruction:`` line is read
        self.text = text

    def spans(self) -> Iterator[tuple[int, int]]:
        """(first line, last line) of each value: its own line through its `` from instruction:`` line (each
        record's `UsedValue.last_line`, without making the records)."""
        for ln, fl in zip(self.line, self.from_line):
            yield ln, ln if fl == NONE else fl

    def add(self, *value: Any) -> None:
        """One value: `_ValueLines._add_value`'s columns (typed there), and no `` from instruction:`` line yet."""
        self._add_value(*value)
        self.from_line.append(NONE)

    def _make(self, i: int):
        instr, itext, ln = self.instruction[i], self.index_text[i], self.line[i]
        fl = self.from_line[i]
        return _records.UsedValue(
            self.req(self.value_id, "value_id", i),
            instr if itext is None else instr + itext,
            self.key[i],
            instr,
            shape_index(itext),
            bool(self.phi[i]),
            self.num(self.color, "color", i),
            ln,
            _new(Range, (ln, self.start[i], ln, self.end[i])),
            None if fl == NONE else fl,
            self.text,
        )


class Assignments(_ValueLines):
    """Every allocation's value lines (`Assignment`s), in document order; an `Allocation` sees its own run of
    them through `AssignmentRun`."""

    __slots__ = ("size", "offset", "shape", "allocation")

    def __init__(self):
        super().__init__()
        self.size = array("q")
        self.offset = array("q")
        self.shape: list[str] = []
        self.allocation = array("q")

    def add(self, size: int, offset: int, shape: str, allocation: int, *value: Any) -> None:
        """One value line: its size, offset, shape and allocation, then `_ValueLines._add_value`'s columns."""
        self._add_value(*value)
        if _LO <= size <= _HI and _LO <= offset <= _HI and _LO <= allocation <= _HI:
            self.size.append(size)  # the usual case, without `put`'s checks one by one
            self.offset.append(offset)
            self.allocation.append(allocation)
        else:
            put = self.put
            put(self.size, "size", size)
            put(self.offset, "offset", offset)
            put(self.allocation, "allocation", allocation)
        self.shape.append(shape)

    def run(self, first: int, count: int) -> AssignmentRun:
        """The value lines ``first .. first + count - 1``: one allocation's (`Allocation.assignments`)."""
        return AssignmentRun(self, first, count)

    def _make(self, i: int):
        instr, itext, ln = self.instruction[i], self.index_text[i], self.line[i]
        num, req = self.num, self.req
        return _records.Assignment(
            req(self.value_id, "value_id", i),
            instr if itext is None else instr + itext,
            self.key[i],
            instr,
            shape_index(itext),
            bool(self.phi[i]),
            num(self.color, "color", i),
            req(self.size, "size", i),
            req(self.offset, "offset", i),
            self.shape[i],
            req(self.allocation, "allocation", i),
            ln,
            _new(Range, (ln, self.start[i], ln, self.end[i])),
        )


class Allocations(Records):
    """The `Allocation`s of a ``BufferAssignment:`` listing, by column: a patched model (`patch`) slices the
    columns instead of copying 23,576 objects, and the outline, folding and lenses read them without making the
    objects. The objects are kept (`_made`): those the reader adds (the join asks for every one; making them again
    took 30 ms of the benchmark file's), or, for a spliced copy, all of them once every one is asked for (the
    join, the rules). A record is never changed after the reader adds it. Each allocation sees the document's
    value lines (``records``) and text."""

    __slots__ = (
        "number",
        "size",
        "line",
        "name_end",
        "address",
        "color",
        "parameter",
        "parameter_shape",
        "parameter_shape_index",
        "output_shape",
        "flags",
        "first",
        "values",
        "wide",
        "records",
        "text",
        "_made",
    )
    # the bits of ``flags``, in XLA's order
    CONSTANT, THREAD_LOCAL, MAYBE_LIVE_OUT, PREALLOCATED_TEMP = 1, 2, 4, 8
    _BITS = (CONSTANT, THREAD_LOCAL, MAYBE_LIVE_OUT, PREALLOCATED_TEMP)  # in `records.FLAG_LABELS`' order

    def __init__(self):
        self.number = array("q")  # the ``N`` of ``allocation N``
        self.size = array("q")
        self.line = array("I")
        self.name_end = array("I")
        self.address: list[str | None] = []
        self.color = array("q")
        self.parameter = array("q")
        self.parameter_shape: list[str | None] = []
        self.parameter_shape_index: list[tuple[int, ...] | None] = []
        self.output_shape: list[str | None] = []
        self.flags = bytearray()
        self.first = array("q")
        self.values = array("q")  # how many value lines it lists
        self.wide: dict = {}
        self.records: Assignments | None = None  # the document's value lines (set by the reader, or the patch)
        self.text = None  # the document's lines (likewise)
        self._made: list | None = []  # the objects, while they are those of every row (see `_kept`)

    def add(self, a: _records.Allocation) -> None:
        """Allocation ``a``, read whole (its values counted)."""
        put = self.put
        put(self.number, "number", a.index)
        put(self.size, "size", a.size)
        self.line.append(a.line)
        self.name_end.append(a.name_end)
        self.address.append(a.address)
        put(self.color, "color", a.color)
        put(self.parameter, "parameter", a.parameter)
        self.parameter_shape.append(a.parameter_shape)
        self.parameter_shape_index.append(a.parameter_shape_index)
        self.output_shape.append(a.output_shape)
        flags = (a.constant, a.thread_local, a.maybe_live_out, a.preallocated_temp)
        self.flags.append(sum(bit for bit, on in zip(self._BITS, flags) if on))
        self.first.append(a.first)
        self.values.append(a.count)
        made = self._made
        if made is not None and len(made) == len(self.line) - 1:
            made.append(a)  # the reader's own object: the join asks for every one
        else:
            self._made = None

    def _kept(self) -> list | None:
        """The objects kept for every row; None when they are not (a spliced copy fills its columns only)."""
        made = self._made
        return made if made is not None and len(made) == len(self.line) else None

    def last_lines(self) -> list[int]:
        """`Allocation.last_line` of each allocation, without making them."""
        at = self.records.line if self.records is not None else ()
        return [ln if not n else at[f + n - 1] for ln, f, n in zip(self.line, self.first, self.values)]

    def kinds(self, i: int) -> list[str]:
        """`Allocation.kinds` of allocation ``i``, without making it."""
        flags = self.flags[i]
        if not flags and not self.color[i] and self.parameter[i] == NONE and self.output_shape[i] is None:
            return []  # a temp (most of them)
        return _records.allocation_kinds(
            self.req(self.color, "color", i),
            self.num(self.parameter, "parameter", i),
            self.output_shape[i] is not None,
            self._flags(flags),
        )

    def _flags(self, flags: int) -> tuple[bool, bool, bool, bool]:
        return self._FLAG_TUPLES[flags]

    def _make(self, i: int):
        made = self._kept()
        if made is not None:
            return made[i]
        req = self.req
        constant, thread_local, live_out, temp = self._flags(self.flags[i])
        return _records.Allocation(
            req(self.number, "number", i),
            req(self.size, "size", i),
            self.line[i],
            self.name_end[i],
            self.address[i],
            req(self.color, "color", i),
            self.num(self.parameter, "parameter", i),
            self.parameter_shape[i],
            self.parameter_shape_index[i],
            self.output_shape[i],
            constant,
            thread_local,
            live_out,
            temp,
            self.records,
            self.first[i],
            self.values[i],
            self.text,
        )

    # `_flags` of every value of ``flags`` (four bits)
    _FLAG_TUPLES: tuple[tuple[bool, bool, bool, bool], ...] = tuple(
        (bool(f & 1), bool(f & 2), bool(f & 4), bool(f & 8)) for f in range(16)
    )

    def __iter__(self):
        made = self._kept()
        if made is None:
            self._made = made = self._make_all()
        return iter(made)

    def _make_all(self) -> list:
        """Every allocation, made once (`__iter__` keeps them). Column by column when no number is wide: the join
        makes the benchmark's 23,576 in 20 ms this way, 50 ms through `_make`."""
        if self.wide:
            return [self._make(i) for i in range(len(self.line))]
        n = len(self.line)
        # the constructor's arguments in its order, each a column (the flags four: constant, thread-local, ...;
        # none when there is no row, and then no argument is read)
        flags = zip(*map(self._FLAG_TUPLES.__getitem__, self.flags))
        columns = zip(
            self.number,
            self.size,
            self.line,
            self.name_end,
            self.address,
            self.color,
            [None if p == NONE else p for p in self.parameter],
            self.parameter_shape,
            self.parameter_shape_index,
            self.output_shape,
            *flags,
            repeat(self.records, n),
            self.first,
            self.values,
            repeat(self.text, n),
        )
        return list(starmap(_records.Allocation, columns))


class AssignmentRun(_RecordSequence):
    """The value lines of one allocation: records ``first .. first + count - 1`` of the document's `Assignments`
    (a list-like view; ``count`` grows while the reader reads the allocation)."""

    __slots__ = ("_all", "_first", "_count")

    def __init__(self, records: Assignments, first: int, count: int = 0):
        self._all = records
        self._first = first
        self._count = count

    _WHAT = "assignment"

    def __len__(self) -> int:
        return self._count

    def _at(self, i: int):
        return self._all._make(self._first + i)

    def __iter__(self):
        return map(self._all._make, range(self._first, self._first + self._count))

    def numbers(self) -> range:
        """The record numbers of this run in the document's `Assignments`."""
        return range(self._first, self._first + self._count)
