"""One value as the memory views see it: its shape (from the module's HLO text, the ``from instruction:`` text
of the used-values listing, the ``{}`` value of the allocation listing, or the value's own listed shape for a
non-tuple value; values living only in called computations are often absent from the allocation listing), its
weight in bytes, its category (``parameter``, ``output``, ``constant``, ``temporary``), its padding and the
Python line it comes from (`ValueSource`). `peak` and `allocated` build their `LiveValue`s here."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from hlo_lsp.core.buffers.bufferset import BufferSet, BufferValue
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.source import SourceFrame, instruction_source
from hlo_lsp.core.hlo.text import INSTR
from hlo_lsp.core.shapes import Shape, SizeError, byte_size, parse_shape, shape_text

CATEGORIES = ("parameter", "output", "constant", "temporary")


@dataclass(frozen=True, slots=True)
class ValueSource:
    """Where the program made a value: XLA's ``op_name`` and the Python stack, innermost frame first."""

    op_name: str | None
    frames: tuple[SourceFrame, ...] = ()
    via: str | None = None  # set when borrowed: the fused computation's instruction whose metadata it is

    def label(self) -> str:
        """``file.py:12 (fn)`` of the innermost frame, else the op_name, else ``""``; ``(via ...)`` when the
        value's own instruction names no source and its fused computation's did."""
        text = self.frames[0].label() if self.frames else (self.op_name or "")
        return f"{text} (via {self.via})" if text and self.via else text

    def as_json(self) -> dict:
        return {
            "op_name": self.op_name,
            "file": self.frames[0].file if self.frames else None,
            "line": self.frames[0].line if self.frames else None,
            "function": self.frames[0].function if self.frames else None,
            "via": self.via,
        }


@dataclass(slots=True)
class LiveValue:
    """One value live at a peak."""

    key: str  # canonical value key ``fusion.10{0}``
    instruction: str
    bytes: int  # XLA's printed measure (XLA view) or the assigned size (allocated view)
    shape: str | None  # the value's own shape
    allocation: int | None
    live_range: tuple[int, int]
    size: int | None = None  # assigned size in the allocation listing
    padding: int | None = None  # assigned size minus ByteSizeOf(own shape); None when either is unknown
    category: str | None = None  # of its allocation (`CATEGORIES`); None outside every allocation
    param: str | None = None  # in an entry parameter's allocation: that argument (its op_name, ``params['w']``)
    _source: ValueSource | None = field(default=None, repr=False, compare=False)
    _source_of: Callable[[str], ValueSource | None] | None = field(default=None, repr=False, compare=False)

    @property
    def source(self) -> ValueSource | None:
        """Where the program made the value; found on first use (a peak lists thousands of values, and finding
        each one's Python line parses its instruction's metadata, while a code lens needs only the totals)."""
        if self._source_of is not None:
            self._source = self._source_of(self.instruction)
            self._source_of = None
        return self._source


def value_json(v: LiveValue) -> dict:
    return {
        "name": v.key,
        "bytes": v.bytes,
        "shape": v.shape,
        "allocation": v.allocation,
        "live_range": list(v.live_range),
        "size": v.size,
        "padding": v.padding,
        "category": v.category,
        "param": v.param,
        "source": v.source.as_json() if v.source else None,
    }


DETAIL_MEMO = 2048  # parsed instruction lines `Shapes.detail` keeps (the most recently used)
_MISSING = object()


class Shapes:
    """Instruction and value shapes of one module, from the HLO text and the buffer listings (memoised)."""

    def __init__(self, bs: BufferSet, hlo: HloModule | None):
        self.bs, self.hlo = bs, hlo
        self._full: dict[str, Shape | None] = {}
        # the last `DETAIL_MEMO` parsed lines: a module's peak report lives as long as its bundle, and the parsed
        # lines of the benchmark module's 12,000 entry parameters (each a dozen objects) kept 15 MB there
        self._line: OrderedDict[str, object] = OrderedDict()

    def _text(self, instruction: str) -> str | None:
        """The HLO line defining ``instruction``; None when the module has none. No instruction object is kept
        (a lookup through `HloModule.instruction` keeps one per instruction looked up: 5 MB for the peak
        report's 51,000 values)."""
        hlo = self.hlo
        i = hlo.by_name.get(instruction) if hlo is not None else None
        if hlo is None or i is None:
            return None
        line = hlo.make_instruction(i).line
        return hlo.lines[line] if line < len(hlo.lines) else None

    def detail(self, instruction: str):
        """The parsed instruction line (HLO text first, else ``from instruction:``); None when neither has it."""
        memo = self._line
        d = memo.get(instruction, _MISSING)
        if d is not _MISSING:
            try:
                memo.move_to_end(instruction)
            except KeyError:  # dropped meanwhile by another thread's lookup
                pass
            return d
        text = self._text(instruction)
        d = parse_instruction_line(text) if text is not None else None
        if d is None:
            for v in self.bs.values_of(instruction):
                if v.from_instruction:
                    cand = parse_instruction_line(v.from_instruction)
                    if cand is not None and cand.name.text == instruction:
                        d = cand
                        break
        memo[instruction] = d
        while len(memo) > DETAIL_MEMO:
            try:
                memo.popitem(last=False)
            except KeyError:  # emptied meanwhile by other threads
                break
        return d

    def forget(self) -> None:
        """Let the memos go (a peak report done with its sweeps: the benchmark module's 25,700 full shapes and
        2,048 parsed lines kept 3.8 MB beside the report; what asks again later parses again)."""
        self._full = {}
        self._line = OrderedDict()

    def full(self, instruction: str) -> Shape | None:
        """The defining instruction's full shape; None when no file gives it."""
        if instruction in self._full:
            return self._full[instruction]
        s = None
        if instruction not in self._line and self.hlo is not None:
            # the shape alone, from the instruction pattern every reader shares (`text.INSTR`: the text between
            # ``=`` and the opcode), without the full parse of the line's operands and attributes (`detail`)
            text = self._text(instruction)
            m = INSTR.match(text) if text is not None else None
            if m is not None and m.group(3) == instruction and m.group(4):
                s = parse_shape(m.group(4))
        if s is None:
            d = self.detail(instruction)
            if d is not None and d.shape is not None:
                s = parse_shape(d.shape.text)
        if s is None:
            vals = self.bs.values_of(instruction)
            root = next((v for v in vals if v.index == () and v.shape), None)
            if root is not None and root.shape:
                s = parse_shape(root.shape)
            elif len(vals) == 1 and not vals[0].index and vals[0].shape:
                s = parse_shape(vals[0].shape)
                if s is not None and s.is_tuple:
                    s = None  # a tuple's {} value is not itself: its elements are unknown
        self._full[instruction] = s
        return s

    def own(self, v: BufferValue) -> Shape | None:
        """The value's own shape: its listed shape, else the full shape's subshape at its index."""
        if v.shape:
            s = parse_shape(v.shape)
            if s is not None:
                return s
        s = self.full(v.instruction)
        for i in v.index or ():
            if s is None or not s.is_tuple or not 0 <= i < len(s.tuple_shapes):
                return None
            s = s.tuple_shapes[i]
        return s


def size_of(s: Shape | None) -> int | None:
    if s is None:
        return None
    b = byte_size(s, 8)
    return None if isinstance(b, SizeError) else b


def live_value(
    v: BufferValue, live_range: tuple[int, int], nbytes: int, own: Shape | None, sources: Sources
) -> LiveValue:
    """The value as a `LiveValue`; the one made already for another peak of the same report when it is the same
    (value, live range, bytes): XLA's peak and the allocated peak list mostly the same values (15,002 of the 15,003
    of the benchmark module), and each object is kept with the report."""
    key = (v.key, live_range, nbytes)
    made = sources.live.get(key)
    if made is not None:
        return made
    unpadded = size_of(own)
    padding = v.size - unpadded if v.size is not None and unpadded is not None else None
    made = sources.live[key] = LiveValue(
        v.key,
        v.instruction,
        nbytes,
        v.shape or (shape_text(own) if own else None),
        v.allocation,
        live_range,
        v.size,
        padding,
        _source_of=sources.bound_of,
    )
    return made


class Sources:
    """Python source of each instruction (memoised)."""

    def __init__(self, shapes: Shapes, hlo: HloModule | None):
        self.shapes, self.hlo = shapes, hlo
        self._memo: dict[str, ValueSource | None] = {}
        # `of`, bound once: every value live at a peak holds it until asked for its source (a bound method made
        # per value: 2 MB for the 30,000 of the benchmark module's report)
        self.bound_of: Callable[[str], ValueSource | None] = self.of
        self.live: dict[tuple[str, tuple[int, int], int], LiveValue] = {}  # `live_value`'s objects by what they are

    def of(self, instruction: str) -> ValueSource | None:
        """op_name and frames of the defining instruction; None when its line carries no metadata."""
        if instruction in self._memo:
            return self._memo[instruction]
        d = self.shapes.detail(instruction)
        out = None
        if d is not None and d.metadata:
            frames: list[SourceFrame] = []
            if self.hlo is not None:
                frames = instruction_source(self.hlo, d)
            elif "source_file" in d.metadata and "source_line" in d.metadata:
                ln = d.metadata["source_line"].text
                if ln.isascii() and ln.isdigit() and len(ln) < 12:
                    frames = [SourceFrame(d.metadata["source_file"].text, None, int(ln))]
            op = d.metadata.get("op_name")
            if op is not None or frames:
                out = ValueSource(op.text if op else None, tuple(frames))
        if out is None and self.hlo is not None:
            out = self._fused(instruction)
        self._memo[instruction] = out
        return out

    def _fused(self, instruction: str) -> ValueSource | None:
        """For a fusion whose line has no metadata: the fused computation's root's source, else its first
        instruction with a stack frame (else with an op_name), marked ``via`` that instruction."""
        hlo = self.hlo
        if hlo is None:
            return None
        ins = hlo.instruction(instruction)
        if ins is None or ins.opcode != "fusion" or not ins.called:
            return None
        k = hlo.computation_by_name.get(ins.called[0])
        if k is None:
            return None
        comp = hlo.computations[k]
        order = ([comp.root] if comp.root is not None else []) + [i for i in comp.instructions if i != comp.root]
        named: ValueSource | None = None
        for i in order:
            inner = hlo.make_instruction(i)
            d = parse_instruction_line(hlo.lines[inner.line]) if inner.line < len(hlo.lines) else None
            if d is None or not d.metadata:
                continue
            frames = instruction_source(hlo, d)
            op = d.metadata.get("op_name")
            where = f"{'root ' if i == comp.root else ''}{inner.name} of {comp.name}"
            if frames or i == comp.root and op is not None:
                return ValueSource(op.text if op else None, tuple(frames), via=where)
            if named is None and op is not None:
                named = ValueSource(op.text, (), via=where)
        return named


def category_of(alloc) -> str:
    """``parameter``, ``output``, ``constant`` or ``temporary`` for an Allocation."""
    if alloc.is_parameter:
        return "parameter"
    if alloc.output_shape is not None or alloc.maybe_live_out:
        return "output"
    if alloc.constant:
        return "constant"
    return "temporary"
