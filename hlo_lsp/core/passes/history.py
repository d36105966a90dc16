"""A module's pass history: every instruction's versions through the files of a pass-by-pass dump.

Algorithm: consecutive pass files are mostly the same text, and many are byte for byte the file before (a
pipeline's start file; those cost one read and one comparison). Each other file is cut at its blank lines into
blocks (the header, each metadata table, each computation: XLA prints them separated by one empty line; only the
text between the common beginning and end of the file before is cut again, `blocks.split_file`); a block is keyed
by its content (length and hash) and a distinct block is indexed once (`blocks.index_block`: each instruction name
with its line, each line's hash with its name; a long computation against its previous version). A file is then
the list of its blocks with their first lines, made by C-level maps over the keys. Between two files only the blocks
they do not share are compared, and in those only the lines whose hash is in one file and not in the other (set
operations in C; for one computation indexed against the other, its `Block.delta`): their names
are the instructions added, removed and changed (same name, another line). Where a name is removed, the
instructions added by the same pass with the same ``op_name`` (and stack frame) are its successors: that is how a
trace follows an instruction that a pass renamed or rebuilt (a file with few such changes is matched when a trace
first asks: `Step.successors`). Instruction lines of a machine-written module are
indented and one line each; names are unique in a module (XLA uniquifies them). Building holds the cyclic garbage
collector off: nothing made here is in a cycle.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import accumulate, filterfalse

from hlo_lsp.core.passes.blocks import Block, Layout, index_block, split_file
from hlo_lsp.core.passes.names import PassFile
from hlo_lsp.core.passes.successors import Where, lines_of, match
from hlo_lsp.core.process import collector

MADE, CHANGED, UNCHANGED, REMOVED = "made", "changed", "unchanged", "removed"
# a file that removed and added at most this many instructions has them matched (`Step.successors`) when a trace or
# hover first asks (about 2 us a line, so at most 10 ms there): a sixth of building a history of many small files
# (the transformer's 61), while the few large ones (a fusion pass over the Adam module: 200,000 lines, 0.5 s) are
# matched while building
MATCH_LATER_LINES = 5000
MATCH_LATER_CHARS = 1 << 20  # ... and the text of the computations holding them is kept till then: at most 1 MB


@dataclass(slots=True)
class Step:
    """One file of the history, with what changed since the file before it."""

    file: PassFile
    blocks: list[int]  # block ids in file order
    starts: list[int]  # the 0-based line of each block
    at: dict[str | None, int] = field(default_factory=dict)  # computation -> its block's position in `blocks`
    instructions: int = 0
    fusions: int = 0
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    changed_set: set[str] = field(default_factory=set)  # `changed`, to ask
    error: str | None = None  # why the file could not be read (it then counts as empty)

    same_text: bool = False  # its blocks are the file before's (else, when `identical`: an order or header changed)
    # where the lines of the names it removed and added are, per side (`PassHistory._where_lines`), until
    # `successors` or `made_from` is first asked (`PassHistory._compare`)
    pending: tuple[list[Where], list[Where]] | None = None
    _links: tuple[dict[str, list[str]], dict[str, list[str]]] | None = None

    @property
    def successors(self) -> dict[str, list[str]]:
        """Removed name -> the names this file added with its op_name (and stack frame), only those of its shape
        and opcode when there are such."""
        return self._linked()[0]

    @property
    def made_from(self) -> dict[str, list[str]]:
        """Added name -> the removed names of its op_name (and stack frame), only those of its shape and opcode
        when there are such."""
        return self._linked()[1]

    def _linked(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        links = self._links
        if links is None:
            pending = self.pending
            links = match(lines_of(pending[0]), lines_of(pending[1])) if pending is not None else ({}, {})
            self._links, self.pending = links, None  # (two threads asking at once both match: the same answer)
        return links

    @property
    def identical(self) -> bool:
        """No instruction added, removed or changed (the text may still differ: see `same_text`)."""
        return not (self.added or self.removed or self.changed)

    def change_text(self, first: bool = False) -> str:
        """``+3 -1 ~2``, ``same as before``, or what changed when no instruction did."""
        if self.error:
            return f"(unreadable: {self.error})"
        if first:
            return "(first file)"
        if not self.identical:
            return f"+{len(self.added)} -{len(self.removed)} ~{len(self.changed)}"
        return "same as before" if self.same_text else "no instruction changed (their order or the header did)"


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


class PassHistory:
    """The history of one module: its files in pass order and every instruction's versions."""

    def __init__(self, files: list[PassFile], read: Callable[[str], bytes] | None = None):
        self.files = files
        self.steps: list[Step] = []
        self.blocks: list[Block] = []
        self._block_ids: dict[tuple[int, int], int] = {}  # (length, hash) of a block's text -> its id
        # per block id, for the files' C-level loops: lines + 1 (its span with the blank line after it), its
        # computation, its instruction and fusion counts
        self._span: list[int] = []
        self._comp: list[str | None] = []
        self._counts: list[int] = []
        self._fusions: list[int] = []
        self._where: dict[str, list[str]] = {}  # name -> the computations it was ever in, each once
        self._known: dict[str, set[str]] = {}  # computation -> every name it ever held
        self._last: dict[str, tuple[int, str]] = {}  # computation -> its last indexed block and text (building)
        self._read = read or _read_file
        self.made_at: dict[str, int] = {}  # name -> index of the file it first appears in
        self.changed_by: dict[str, list[str]] = {}  # name -> the passes that changed its line, each once, in order
        self.removed_at: dict[str, int] = {}  # name -> index of the file it was last removed in
        with collector.paused():  # ~10^6 small objects, none in a cycle: collections would cost a third of the time
            self._build(files)

    # building ----------------------------------------------------------------------------------------------
    def _build(self, files: list[PassFile]) -> None:
        prev_data: bytes | None = None
        prev_parts: dict[int, str] = {}
        layout: Layout | None = None
        for f in files:
            try:
                data = self._read(f.path)
                if data == prev_data:  # byte for byte the file before (a pipeline's start file, most often)
                    self.steps.append(self._same_as_before(f))
                    continue
                text = data.decode("utf-8")
                if "\r" in text:
                    text = text.replace("\r\n", "\n")
                error = None
            except (OSError, UnicodeDecodeError) as e:
                data, text, error = None, "", f"{type(e).__name__}: {e}"
            parts: dict[int, str] = {}
            layout = split_file(text, layout)
            self._add(f, layout, error, prev_parts, parts)
            prev_data, prev_parts = data, parts
        self._last.clear()  # (texts, for building only)
        for block in self.blocks:
            block.fused = {}  # (ditto: 3.7 MB for the Adam dump's history; `fusions` keeps the counts)

    def _new_block(self, text: str, key: tuple[int, int]) -> int:
        bid = len(self.blocks)
        block = index_block(text, self._latest)
        self.blocks.append(block)
        self._block_ids[key] = bid
        self._span.append(block.lines + 1)
        self._comp.append(block.computation)
        self._counts.append(len(block.names))
        self._fusions.append(block.fusions)
        c = block.computation
        if c is not None and block.rows:
            self._last[c] = bid, text.lstrip("\n")
        if c is not None and block.names:  # where its names can be found: in some version of c
            known = self._known.setdefault(c, set())
            if block.delta is not None:  # indexed against the last version of c: only the lines that one lacks
                fresh = {block.by_hash[h] for h in block.delta[1]} - known
            else:
                fresh = block.names.keys() - known
            known |= fresh
            elsewhere = set(filter(self._where.__contains__, fresh))  # (names met before in other computations)
            self._where.update({name: [c] for name in (fresh - elsewhere if elsewhere else fresh)})
            for name in elsewhere:
                self._where[name].append(c)
        return bid

    def _latest(self, computation: str) -> tuple[int, Block, str] | None:
        got = self._last.get(computation)
        return None if got is None else (got[0], self.blocks[got[0]], got[1])

    def _same_as_before(self, f: PassFile) -> Step:
        prev = self.steps[-1]
        return Step(
            f, prev.blocks, prev.starts, prev.at, prev.instructions, prev.fusions, error=prev.error, same_text=True
        )

    def _add(self, f: PassFile, layout: Layout, error: str | None, prev_parts: dict[int, str], parts: dict[int, str]):
        """Append the step of file ``f`` (its text cut into blocks: ``layout``); ``parts`` gets each of its
        blocks' text by id (the next file's comparison reads the lines of the blocks that differ from it)."""
        texts, keys = layout.texts, layout.keys
        known: list[int | None] = list(map(self._block_ids.get, keys))
        for k in [k for k, b in enumerate(known) if b is None]:  # the file's new blocks (the rest: in C)
            b = self._block_ids.get(keys[k])  # (or a block that repeats in the file)
            known[k] = b if b is not None else self._new_block(texts[k], keys[k])
        blocks: list[int] = known  # type: ignore[assignment]  # no None left
        parts.update(zip(blocks, texts))
        starts = list(accumulate(map(self._span.__getitem__, blocks), initial=0))
        starts.pop()
        comps = list(map(self._comp.__getitem__, blocks))
        at = dict(zip(reversed(comps), range(len(comps) - 1, -1, -1)))  # reversed: the first of a repeated name
        step = Step(f, blocks, starts, at, error=error, same_text=bool(self.steps) and blocks == self.steps[-1].blocks)
        step.instructions = sum(map(self._counts.__getitem__, blocks))
        step.fusions = sum(map(self._fusions.__getitem__, blocks))
        if self.steps:
            self._compare(self.steps[-1], step, prev_parts, parts)
            here = len(self.steps)
            self.made_at.update(dict.fromkeys(filterfalse(self.made_at.__contains__, step.added), here))
            by = self.pass_at(here, step) or f.label()
            for n in step.changed:
                passes = self.changed_by.setdefault(n, [])
                if by not in passes:
                    passes.append(by)
            self.removed_at.update(dict.fromkeys(step.removed, here))
        else:
            for b in blocks:
                self.made_at.update(dict.fromkeys(self.blocks[b].names, 0))
        self.steps.append(step)

    def _compare(self, prev: Step, cur: Step, prev_parts: dict[int, str], parts: dict[int, str]) -> None:
        """The names ``cur`` added, removed and changed against ``prev``, in file order, from the blocks the two
        do not share: only their lines whose text (hash) is in one file and not in the other are looked at, found
        by set operations on the blocks' line-hash maps; then the successors of each removed name."""
        shared = set(prev.blocks) & set(cur.blocks)
        olds = [b for b in prev.blocks if b not in shared]
        news = [b for b in cur.blocks if b not in shared]
        old_lines, old_names = self._merged(olds)
        new_lines, new_names = self._merged(news)
        delta = self.blocks[news[0]].delta if len(olds) == len(news) == 1 else None
        if delta is not None and self.blocks[news[0]].parent == olds[0]:
            # the lines one version has and the other lacks, each side's in line order
            gone = list(map(old_lines.__getitem__, delta[0]))
            came = list(map(new_lines.__getitem__, delta[1]))
        else:
            gone = self._touched(olds, old_lines.keys() - new_lines.keys())  # the names of lines only prev has
            came = self._touched(news, new_lines.keys() - old_lines.keys())  # ... only cur has
        for b in news:
            self.blocks[b].delta = None  # its parent was the file before's: of no use later
        cur.added = [n for n in came if n not in old_names]
        cur.changed = [n for n in came if n in old_names]
        cur.changed_set = set(cur.changed)
        cur.removed = [n for n in gone if n not in new_names]
        if cur.removed and cur.added:
            pending = self._where_lines(olds, cur.removed, prev_parts), self._where_lines(news, cur.added, parts)
            size = sum(len(w[0]) for side in pending for w in side)
            if len(cur.removed) + len(cur.added) <= MATCH_LATER_LINES and size <= MATCH_LATER_CHARS:
                cur.pending = pending  # matched when first asked (`Step.successors`), in a few ms
            else:
                cur._links = match(lines_of(pending[0]), lines_of(pending[1]))

    def _merged(self, blocks: list[int]) -> tuple[dict[int, str], dict[str, int]]:
        """The line-hash and name maps of ``blocks`` together (a single block's own: most often only the entry
        computation differs)."""
        if len(blocks) == 1:
            block = self.blocks[blocks[0]]
            return block.by_hash, block.names
        lines: dict[int, str] = {}
        names: dict[str, int] = {}
        for b in blocks:
            lines.update(self.blocks[b].by_hash)
            names.update(self.blocks[b].names)
        return lines, names

    def _touched(self, blocks: list[int], hashes: set[int]) -> list[str]:
        """The names of the lines of ``blocks`` with these hashes, in file order (each once)."""
        out: dict[str, None] = {}
        for b in blocks:
            if not hashes:
                break
            block = self.blocks[b]
            if len(blocks) == 1:
                mine, hashes = hashes, set()
            else:
                mine = hashes.intersection(block.by_hash)
                hashes -= mine  # (a set of its own: the caller's difference)
            if mine:
                names = block.names
                if len(mine) == len(block.by_hash):  # all its lines (a new computation, most often)
                    out.update(dict.fromkeys(names))
                else:
                    out.update(dict.fromkeys(sorted(map(block.by_hash.__getitem__, mine), key=names.__getitem__)))
        return list(out)

    def _where_lines(self, blocks: list[int], names: list[str], texts: dict[int, str]) -> list[Where]:
        """[(text of a block of ``blocks``, its line count, {each of ``names`` in it: its line})], in file order."""
        want = set(names)
        out = []
        for b in blocks:
            if not want:
                break
            at = self.blocks[b].names
            mine = want.intersection(at)
            if mine:
                want -= mine
                out.append((texts[b], self.blocks[b].lines, at if len(mine) == len(at) else {n: at[n] for n in mine}))
        return out

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

    def locate(self, index: int, name: str) -> tuple[int, str] | None:
        """(0-based line, computation) of ``name`` in the history's file ``index``, None if absent."""
        step = self.steps[index]
        for c in self._where.get(name, ()):
            k = step.at.get(c)
            if k is not None:
                block = self.blocks[step.blocks[k]]
                rel = block.names.get(name)
                if rel is not None:
                    return step.starts[k] + rel, c
        return None

    def trace(self, name: str) -> list[Version]:
        """Each file in which ``name`` is present or was just removed, in pass order."""
        out: list[Version] = []
        before: tuple[int, str] | None = None
        for i, step in enumerate(self.steps):
            here = self.locate(i, name)
            if here is None:
                if before is not None:
                    successors = tuple(step.successors.get(name, ()))
                    out.append(Version(i, step.file, REMOVED, None, None, successors, self.pass_at(i)))
            elif before is None:
                out.append(Version(i, step.file, MADE, here[0], here[1], by=self.pass_at(i)))
            else:
                change = CHANGED if name in step.changed_set or here[1] != before[1] else UNCHANGED
                out.append(Version(i, step.file, change, here[0], here[1], by=self.pass_at(i)))
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
        old = self.predecessor(made.index, name)  # renamed or rebuilt: the removed name this one succeeds
        at = self.locate(made.index - 1, old) if old is not None else None
        if at is None:
            return None
        return Version(made.index - 1, self.steps[made.index - 1].file, UNCHANGED, at[0], at[1])

    def predecessor(self, index: int, name: str) -> str | None:
        """The one name file ``index`` removed whose op_name and stack frame the name it added has (of those,
        the one of its shape and opcode); None when it removed none, or several alike (a program that runs one
        line for each of many tensors of one shape tags them all alike: no way to tell which)."""
        olds = self.steps[index].made_from.get(name, ())
        return olds[0] if len(olds) == 1 else None

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
        computation: by name, else the instruction that pass removed with the same op_name and stack frame
        (`predecessor`); None when the computation was there from the start or is not in file ``index``."""
        first = next((i for i in range(index + 1) if self.computation_block(i, fusion_computation) is not None), None)
        block = self.computation_block(index, fusion_computation)
        if not first or block is None:
            return None
        out: dict[str, int] = {}
        for name in self.blocks[block].names:
            where = self.locate(first - 1, name)
            if where is not None:  # moved in under its own name
                out.setdefault(name, where[0])
                continue
            old = self.predecessor(first, name)  # rebuilt: the removed instruction of its op_name and frame
            at = self.locate(first - 1, old) if old is not None else None
            if old is not None and at is not None:
                out.setdefault(old, at[0])
        return first - 1, sorted(out.items(), key=lambda t: t[1])

    def computation_block(self, index: int, computation: str) -> int | None:
        """The id of the block holding ``computation`` in file ``index``."""
        step = self.steps[index]
        k = step.at.get(computation)
        return None if k is None else step.blocks[k]

    def pass_of(self, index: int) -> PassFile:
        return self.steps[index].file


def _read_file(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()
