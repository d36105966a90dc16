"""A module's pass history: every instruction's versions through the files of a pass-by-pass dump.

Algorithm: consecutive pass files are mostly the same text. Each file is cut at its blank lines into blocks (the
header, each metadata table, each computation: XLA prints them separated by one empty line); a block is keyed by
its content, and a distinct block is indexed once (its instruction names, each with its line in the block and the
hash of its line text). A file is then the list of its blocks with their first lines, so a file that repeats most
of the previous one costs one split and one hash per block. Between two files only the blocks that differ are
compared name by name: added, removed and changed (same name, another line) instructions. Where a name is removed,
the instructions added by the same pass with the same ``op_name`` (and stack frame) are its successors: that is how
a trace follows an instruction that a pass renamed or rebuilt. Instruction lines of a machine-written module are
indented and one line each; names are unique in a module (XLA uniquifies them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hlo_lsp.core.passes.names import PassFile

MADE, CHANGED, UNCHANGED, REMOVED = "made", "changed", "unchanged", "removed"

_NAME = re.compile(r"^[ \t]+(?:ROOT[ \t]+)?%?([^\s=%]+)[ \t]*=[ \t]", re.M)
_COMPUTATION = re.compile(r"(ENTRY[ \t]+)?%?([^\s(]+)")  # on a block's first line, which must end in '{'

_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_FRAME = re.compile(r"\bstack_frame_id=(\d+)")
_FUSION = re.compile(r"[ \t]fusion\(")


@dataclass(slots=True)
class Block:
    """One distinct block of text: a computation (or the header, a table), indexed once."""

    computation: str | None  # None for the header and the tables
    is_entry: bool
    lines: int  # how many lines it spans
    names: dict[str, tuple[int, int]]  # instruction name -> (line in the block, hash of its line text)
    fusions: int  # instructions whose opcode is fusion


def _index_block(text: str) -> Block:
    first = text.split("\n", 1)[0] if text else ""
    m = _COMPUTATION.match(first) if first.rstrip(" \t").endswith("{") else None
    names: dict[str, tuple[int, int]] = {}
    if m is not None:
        line, last = 0, 0
        for n in _NAME.finditer(text):
            start = n.start()
            line += text.count("\n", last, start)
            last = start
            end = text.find("\n", start)
            names.setdefault(n.group(1), (line, hash(text[start : end if end >= 0 else len(text)])))
    return Block(
        m.group(2) if m else None,
        bool(m and m.group(1)),
        text.count("\n") + 1,
        names,
        len(_FUSION.findall(text)) if m else 0,
    )


@dataclass(slots=True)
class Step:
    """One file of the history, with what changed since the file before it."""

    file: PassFile
    blocks: list[int]  # block ids in file order
    starts: list[int]  # the 0-based line of each block
    at: dict[int, int] = field(default_factory=dict)  # block id -> its position in `blocks`
    instructions: int = 0
    fusions: int = 0
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    successors: dict[str, list[str]] = field(default_factory=dict)  # removed name -> added names of its op_name
    error: str | None = None  # why the file could not be read (it then counts as empty)

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed)


@dataclass(frozen=True, slots=True)
class Version:
    """An instruction in one file of its history."""

    index: int  # the step's index in the history
    file: PassFile
    change: str  # MADE, CHANGED, UNCHANGED or REMOVED
    line: int | None  # 0-based; None when removed
    computation: str | None
    successors: tuple[str, ...] = ()  # where it was removed: what the pass made of it
    by: str | None = None  # the pass whose work the file shows (`PassHistory.pass_at`)

    def as_json(self) -> dict:
        return {
            "seq": self.file.seq_text,
            "file": self.file.name,
            "pipeline": self.file.pipeline,
            "pass": self.file.after,
            "by": self.by,
            "change": self.change,
            "line": None if self.line is None else self.line + 1,
            "computation": self.computation,
            "successors": list(self.successors),
        }


def _tags(line: str) -> tuple[str, str | None] | None:
    """(op_name, stack frame) of an instruction line's metadata, None without an op_name."""
    m = _OP_NAME.search(line)
    if m is None:
        return None
    f = _FRAME.search(line)
    return m.group(1), f.group(1) if f else None


def _line_of(text: str, start: int, line: int, starts_at: list[int]) -> str:
    """Line ``line`` of ``text`` (offsets of line starts cached in ``starts_at`` on first use)."""
    if not starts_at:
        pos = 0
        starts_at.append(0)
        while True:
            pos = text.find("\n", pos)
            if pos < 0:
                break
            pos += 1
            starts_at.append(pos)
    a = starts_at[line]
    b = starts_at[line + 1] - 1 if line + 1 < len(starts_at) else len(text)
    return text[a:b]


class PassHistory:
    """The history of one module: its files in pass order and every instruction's versions."""

    def __init__(self, files: list[PassFile], read: Callable[[str], str] | None = None):
        self.files = files
        self.steps: list[Step] = []
        self.blocks: list[Block] = []
        self._block_ids: dict[tuple[int, int, str], int] = {}
        self._where: dict[str, list[int]] = {}  # name -> ids of the blocks holding it
        self._read = read or _read_file
        self.made_at: dict[str, int] = {}  # name -> index of the file it first appears in
        self.changed_by: dict[str, list[str]] = {}  # name -> the passes that changed its line, each once, in order
        self.removed_at: dict[str, int] = {}  # name -> index of the file it was last removed in
        prev_text: str | None = None
        prev_lines: list[int] = []
        for f in files:
            try:
                text = self._read(f.path)
                if "\r" in text:
                    text = text.replace("\r\n", "\n")
                error = None
            except (OSError, UnicodeDecodeError) as e:
                text, error = "", f"{type(e).__name__}: {e}"
            lines_at: list[int] = []
            self._add(f, text, error, prev_text, prev_lines, lines_at)
            prev_text, prev_lines = text, lines_at

    # building ----------------------------------------------------------------------------------------------
    def _block_id(self, text: str) -> int:
        key = (len(text), hash(text), text[:200])
        bid = self._block_ids.get(key)
        if bid is None:
            bid = len(self.blocks)
            block = _index_block(text)
            self.blocks.append(block)
            self._block_ids[key] = bid
            for name in block.names:
                self._where.setdefault(name, []).append(bid)
        return bid

    def _add(self, f: PassFile, text: str, error: str | None, prev_text, prev_lines, lines_at) -> None:
        blocks, starts, line = [], [], 0
        for part in text.split("\n\n") if text else ():
            lead = len(part) - len(part.lstrip("\n"))  # a third blank line (XLA writes two before a computation)
            if lead:
                part = part[lead:]
                line += lead
            if part:
                blocks.append(self._block_id(part))
                starts.append(line)
            line += part.count("\n") + 2
        step = Step(f, blocks, starts, {b: k for k, b in reversed(list(enumerate(blocks)))}, error=error)
        step.instructions = sum(len(self.blocks[b].names) for b in blocks)
        step.fusions = sum(self.blocks[b].fusions for b in blocks)
        if self.steps:
            self._compare(self.steps[-1], step, prev_text or "", text, prev_lines, lines_at)
            here = len(self.steps)
            for n in step.added:
                self.made_at.setdefault(n, here)
            by = self.pass_at(here, step) or f.label()
            for n in step.changed:
                passes = self.changed_by.setdefault(n, [])
                if by not in passes:
                    passes.append(by)
            for n in step.removed:
                self.removed_at[n] = here
        else:
            for b in blocks:
                self.made_at.update(dict.fromkeys(self.blocks[b].names, 0))
        self.steps.append(step)

    def _names_outside(self, step: Step, shared: set[int]) -> dict[str, tuple[int, int, int]]:
        """name -> (line in the file, line hash, block id) of the step's blocks not in ``shared``."""
        out: dict[str, tuple[int, int, int]] = {}
        for b, start in zip(step.blocks, step.starts):
            if b not in shared:
                for name, (rel, h) in self.blocks[b].names.items():
                    out.setdefault(name, (start + rel, h, b))
        return out

    def _compare(self, prev: Step, cur: Step, prev_text: str, text: str, prev_lines, lines_at) -> None:
        shared = set(prev.blocks) & set(cur.blocks)
        old, new = self._names_outside(prev, shared), self._names_outside(cur, shared)
        cur.added = [n for n in new if n not in old]
        cur.removed = [n for n in old if n not in new]
        cur.changed = [n for n, v in new.items() if n in old and old[n][1] != v[1]]
        if cur.removed and cur.added:
            made: dict[tuple[str, str | None], list[str]] = {}
            for n in cur.added:
                tags = _tags(_line_of(text, 0, new[n][0], lines_at))
                if tags is not None:
                    made.setdefault(tags, []).append(n)
            for n in cur.removed:
                tags = _tags(_line_of(prev_text, 0, old[n][0], prev_lines))
                if tags is not None and tags in made:
                    cur.successors[n] = made[tags]

    # questions ---------------------------------------------------------------------------------------------
    def pass_at(self, index: int, step: Step | None = None) -> str | None:
        """The pass whose work file ``index`` shows: the pass that just ran (`PassFile.ran`); for a pipeline's
        start file that differs from the file before, the pass of the enclosing pipeline that was running (the
        `before` of the last file of another pipeline: a pass such as spmd-partitioning runs a nested pipeline,
        whose start file is the first to show its work); None for the first file and unchanged start files."""
        step = step if step is not None else self.steps[index]
        f = step.file
        if f.ran is not None or index == 0 or step.identical:
            return f.ran
        for k in range(index - 1, -1, -1):
            g = self.steps[k].file
            if g.pipeline != f.pipeline and g.before and g.before != "pipeline-end":
                return g.before
        return None

    def index_of(self, path: str) -> int | None:
        p = os.path.abspath(path)
        return next((i for i, s in enumerate(self.steps) if os.path.abspath(s.file.path) == p), None)

    def locate(self, index: int, name: str) -> tuple[int, int, str | None] | None:
        """(0-based line, line hash, computation) of ``name`` in the history's file ``index``, None if absent."""
        step = self.steps[index]
        for b in self._where.get(name, ()):
            k = step.at.get(b)
            if k is not None:
                rel, h = self.blocks[b].names[name]
                return step.starts[k] + rel, h, self.blocks[b].computation
        return None

    def trace(self, name: str) -> list[Version]:
        """Each file in which ``name`` is present or was just removed, in pass order."""
        out: list[Version] = []
        before: tuple[int, int, str | None] | None = None
        for i, step in enumerate(self.steps):
            here = self.locate(i, name)
            if here is None:
                if before is not None:
                    successors = tuple(step.successors.get(name, ()))
                    out.append(Version(i, step.file, REMOVED, None, None, successors, self.pass_at(i)))
            elif before is None:
                out.append(Version(i, step.file, MADE, here[0], here[2], by=self.pass_at(i)))
            else:
                change = CHANGED if here[1] != before[1] or here[2] != before[2] else UNCHANGED
                out.append(Version(i, step.file, change, here[0], here[2], by=self.pass_at(i)))
            before = here
        return out

    def made_by(self, name: str) -> Version | None:
        """The version where ``name`` first appears."""
        return next((v for v in self.trace(name) if v.change == MADE), None)

    def previous_version(self, index: int, name: str) -> Version | None:
        """The instruction as it was before the change that gave it its text in file ``index``: the version in
        the file just before that change; for a name a pass made, the instruction it was made from."""
        versions = self.trace(name)
        here = next((k for k, v in enumerate(versions) if v.index == index), None)
        if here is None:
            return None
        k = here
        while k > 0 and versions[k].change == UNCHANGED:
            k -= 1
        if versions[k].change == CHANGED and k > 0:
            return versions[k - 1]
        made = versions[k]
        for old in self.steps[made.index].removed:  # renamed: the removed name this one succeeds
            if name in self.steps[made.index].successors.get(old, ()):
                at = self.locate(made.index - 1, old)
                if at is not None:
                    return Version(made.index - 1, self.steps[made.index - 1].file, UNCHANGED, at[0], at[2])
        return None

    def next_version(self, index: int, name: str) -> Version | None:
        """The next file that changes or removes the instruction (for a removal, the file with no line)."""
        return next(
            (v for v in self.trace(name) if v.index > index and v.change in (CHANGED, REMOVED)),
            None,
        )

    def names(self) -> Iterable[str]:
        return self._where.keys()

    def absorbed(self, index: int, fusion_computation: str) -> tuple[int, list[tuple[str, int]]] | None:
        """(k, instructions): the instructions of the fused computation ``fusion_computation`` (as in file
        ``index``) as they stood, with these lines, in file k, the last file before the one that first held that
        computation: by name, else the instructions that pass removed with the same op_name and stack frame (their
        `successors`); None when the computation was there from the start or is not in file ``index``."""
        first = next((i for i in range(index + 1) if self.computation_block(i, fusion_computation) is not None), None)
        block = self.computation_block(index, fusion_computation)
        if not first or block is None:
            return None
        out: dict[str, int] = {}
        made = self.steps[first]
        for name in self.blocks[block].names:
            where = self.locate(first - 1, name)
            if where is not None:  # moved in under its own name
                out.setdefault(name, where[0])
                continue
            for old in made.removed:  # rebuilt: the removed instructions of its op_name and stack frame
                if name in made.successors.get(old, ()):
                    at = self.locate(first - 1, old)
                    if at is not None:
                        out.setdefault(old, at[0])
        return first - 1, sorted(out.items(), key=lambda t: t[1])

    def computation_block(self, index: int, computation: str) -> int | None:
        """The id of the block holding ``computation`` in file ``index``."""
        return next((b for b in self.steps[index].blocks if self.blocks[b].computation == computation), None)

    def pass_of(self, index: int) -> PassFile:
        return self.steps[index].file


def _read_file(path: str) -> str:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()
