"""One document's text and model: `Source` (a version of its text), `analyse` (the read, never raising) into an
`Analysis`, and what groups a module's files (`ModuleBundle`, an out-of-memory report's `OomDump`); the
helpers that patch a module in place after an edit. `workspace.Workspace` keeps these per open document and
file read from disk; nothing here holds state between calls.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hlo_lsp.core import kinds
from hlo_lsp.core.diagnostics import Diagnostic, Range, error, info
from hlo_lsp.core.document import DiskDocument, Edit, LineDocument, TextLines, text_length
from hlo_lsp.core.hlo.checks import StructuralChecker
from hlo_lsp.core.hlo.incremental import patch_module
from hlo_lsp.core.hlo.index import HloIndex
from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.model import HloModule, warm_module
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.memory.oom import OomReport, looks_like_oom, read_oom
from hlo_lsp.core.occurrences import OccurrenceIndex
from hlo_lsp.core.process import turns

if TYPE_CHECKING:
    from hlo_lsp.core.buffers.bufferset import BufferSet
    from hlo_lsp.core.buffers.model import BufferDoc

MAX_FILE_BYTES = 1 << 30
LARGE_SIBLING_BYTES = 2_000_000


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class ReadError(Exception):
    """A file that cannot be used as text; the message names the file and the problem in one line."""


class NotReady(ReadError):
    """The document is being read by another thread (a large document just opened or replaced); requests
    answer null meanwhile instead of reading it a second time."""


def read_text_file(path: str | Path) -> str:
    """The UTF-8 text of ``path``; raises ReadError (missing, unreadable, binary, not UTF-8, too large)."""
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode) or stat.S_ISSOCK(os.stat(path).st_mode):
            # opening a FIFO blocks until someone writes to it: the check (or the server) would hang
            raise ReadError(f"{path}: not a regular file (a pipe or socket)")
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_FILE_BYTES:
                data = f.read()  # sized from the file: read(MAX_FILE_BYTES + 1) allocates 1 GiB first
            else:
                data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ReadError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ReadError(f"{path}: is a directory") from None
    except OSError as e:
        raise ReadError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ReadError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB")
    if b"\x00" in data[:65536]:
        raise ReadError(f"{path}: binary file (NUL bytes), not an XLA text dump")
    # decoding is one C call holding the interpreter (15 ms for the 23 MB benchmark module, most of it the new
    # string's fresh pages); a background read of a buffer file's module began it as the editor's batch on open
    # came in, and the batch's inlay hints (3 ms of work) took 25-30 ms: the requests under way go first
    turns.give_way()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReadError(f"{path}: not UTF-8 text (invalid byte at offset {e.start})") from None


@dataclass(slots=True, eq=False)
class Source:
    """One version of a document's text (the line store is shared between versions of an open document; a file
    read from disk has a read-only `DiskDocument`)."""

    path: str
    doc: LineDocument | DiskDocument
    version: int | None = None  # the client's version for an open document
    stamp: tuple[float, int] | None = None  # (mtime, size) for a file read from disk

    @property
    def text(self) -> str:
        return self.doc.text


@dataclass(slots=True, eq=False)
class Analysis:
    """Everything the core knows about one document."""

    path: str
    kind: str | None
    source: Source
    hlo: HloModule | None = None
    buffers: BufferDoc | None = None
    index: HloIndex | OccurrenceIndex | None = None
    read_diagnostics: list[Diagnostic] = field(default_factory=list)
    checker: StructuralChecker | None = None  # incremental structural checks (HLO)
    oom: OomReport | None = None  # an out-of-memory report (kind ``oom``)
    oom_dump: OomDump | None = None  # the dump it was tied to (`Workspace.oom_dump`), once found
    verified: list[Diagnostic] | None = None  # the last whole-module verifier run, when one was made
    donations: list[Diagnostic] | None = None  # the donation hints of that run (`rules.donation`)
    edited_lines: set[int] = field(default_factory=set)  # lines edited since `verified` was computed
    # a buffer file open in the editor: the lines its model was read from (a snapshot of the line store, which
    # edits change in place), so that the next version's model can be patched from it (`buffers.patch`)
    read_lines: list[str] | None = None
    _size: int = 0
    _size_key: tuple | None = None

    @property
    def lines(self) -> list[str] | TextLines:
        """The document's lines (``len`` and ``lines[i]``; a `TextLines` for a file read from disk)."""
        if self.hlo is not None:
            return self.hlo.lines
        return self.source.doc.lines

    @property
    def size(self) -> int:
        """The document's length in characters (newlines included): an open document's line store keeps it
        through edits (`LineDocument.chars`); other lines are counted once per version of the text (217,000
        lines: a few ms a count, and every publish asks)."""
        lines = self.lines
        doc = self.source.doc
        if isinstance(doc, LineDocument) and lines is doc.lines:
            return doc.chars
        key = (id(lines), getattr(doc, "generation", 0), len(lines))
        if self._size_key != key:
            self._size = text_length(lines)
            self._size_key = key
        return self._size


def analyse(
    path: str,
    source: Source,
    lines: list[str] | None = None,
    text: str | None = None,
    previous: Analysis | None = None,
) -> Analysis:
    """Read one document into its model; never raises. ``lines`` is a snapshot of the source's lines (taken
    while no edit can interleave); the module keeps it, and `Workspace.analysis` swaps it for the editor's
    line store itself when no edit landed meanwhile. A file read from disk is never edited: its text is read
    as it is, without a snapshot. ``previous``, the analysis of an earlier version of an open buffer file,
    is patched for the edit when the edit allows it (`buffers.patch`), instead of the whole file read."""
    if previous is not None and lines is not None and isinstance(source.doc, LineDocument):
        patched = _patched(path, source, lines, previous)
        if patched is not None:
            return patched
    disk = source.doc if isinstance(source.doc, DiskDocument) else None
    if disk is not None:
        text = disk.text
    else:
        lines = list(source.doc.lines) if lines is None else lines
        if text is None:  # ``text``, when given, is the snapshot's own text (the document's, as opened)
            text = "\n".join(lines)
    kind = kinds.detect_kind(path, text[: kinds.HEAD_CHARS])
    a = Analysis(path, kind, source)
    if kind == kinds.HLO or kind is None and text.lstrip().startswith(("HloModule", "ENTRY", "%")):
        a.kind = kinds.HLO
        if disk is not None:
            lines = disk.lines.split()
        a.hlo = read_hlo(text, lines)
        if disk is not None:
            disk.release(path, source.stamp)  # the module keeps its own lines: no second copy of the text
        a.index = HloIndex(a.hlo)
        a.checker = StructuralChecker(a.hlo)
        a.read_diagnostics = list(a.hlo.diagnostics)
    elif kind in kinds.BUFFER_KINDS:
        from hlo_lsp.core.buffers import read_buffers

        doc = read_buffers(disk.lines if disk is not None else text, kind)
        if disk is not None:
            disk.release(path, source.stamp)  # read once; afterwards a few lines at a time are looked at
        a.buffers = doc
        a.index = OccurrenceIndex(doc.occurrences)
        a.read_diagnostics = list(doc.diagnostics)
        if disk is None:
            a.read_lines = lines
    elif kind == kinds.OOM or kind is None and looks_like_oom(text):
        a.kind = kinds.OOM
        a.oom = read_oom(text)
    elif kind == kinds.COMPANION:
        first = source.doc.lines[0] if len(source.doc.lines) else ""
        what = kinds.describe_companion(path) or "an XLA dump companion file"  # COMPANION: always described
        a.read_diagnostics = [info(Range(0, 0, 0, len(first)), "dump.companion", what)]
    return a


def _head(lines: list[str], n: int = kinds.HEAD_CHARS) -> str:
    """The first ``n`` characters of the text of ``lines`` (what `kinds.detect_kind` looks at)."""
    out, size = [], 0
    for line in lines:
        out.append(line)
        size += len(line) + 1
        if size >= n:
            break
    return "\n".join(out)[:n]


def _patched(path: str, source: Source, lines: list[str], previous: Analysis) -> Analysis | None:
    """``previous`` (a buffer file's analysis) brought to the text ``lines`` by patching its model; None when
    that is not possible (another kind of document, or an edit `buffers.patch` does not patch)."""
    from hlo_lsp.core.buffers.patch import patch

    old = previous.buffers
    if old is None or previous.read_lines is None:
        return None
    kind = kinds.detect_kind(path, _head(lines))
    if kind != previous.kind:
        return None
    doc = patch(old, previous.read_lines, lines)
    if doc is None:
        return None
    a = Analysis(path, kind, source)
    a.buffers = doc
    a.index = previous.index if doc is old else OccurrenceIndex(doc.occurrences)
    a.read_diagnostics = list(doc.diagnostics)
    a.read_lines = lines
    return a


@dataclass(slots=True, eq=False)
class ModuleBundle:
    """One module's files: its HLO analysis (when present) and its buffer-assignment documents, by kind."""

    hlo: Analysis | None
    buffer_docs: dict[str, Analysis]
    buffers: BufferSet | None  # None without buffer files
    partial: bool = False  # a large sibling is still to be read (see `Workspace.bundle`)
    # results derived from exactly these files (e.g. the peak report), kept with the bundle and released with
    # it: a newer version of any member makes a new bundle, and closing its documents drops it
    memo: dict = field(default_factory=dict)

    def documents(self) -> list[Analysis]:
        """All analyses of the bundle, HLO first."""
        out = [self.hlo] if self.hlo is not None else []
        return out + [a for a in self.buffer_docs.values() if a is not self.hlo]


@dataclass(slots=True, eq=False)
class OomDump:
    """The compilation an out-of-memory report is about: the after-optimizations module of its dump folder that
    defines the report's instruction names, and that module's files (`Workspace.oom_dump`)."""

    folder: str
    module: str | None  # None when the folder holds no after-optimizations module with buffer files
    bundle: ModuleBundle | None


def lines_of(src: Source) -> list[str]:
    """The line store of an open document's source (a `LineDocument`'s list, which edits splice)."""
    doc = src.doc
    assert isinstance(doc, LineDocument), "only an open document's lines are shared with its module"
    return doc.lines


def share_lines(mod: HloModule, lines: list[str]) -> None:
    """Make the module ``mod`` read the editor's line store ``lines`` (equal text), so edits patch it in place."""
    mod.lines = lines
    if isinstance(mod.instructions, InstructionTable):
        mod.instructions.share_lines(lines)


def patch_in_place(a: Analysis, mod: HloModule, edits: list[Edit], src: Source) -> bool:
    """Patch ``a``'s module ``mod`` for each of ``edits`` (already applied to ``src``'s line store), mark the
    edited lines for re-checking, and make ``a`` the analysis of ``src``. False when an edit does not allow
    patching: ``a`` is then partly patched and must not be kept."""
    for e in edits:
        if not patch_module(mod, e):
            return False
        for ln in range(e.first, e.first + e.new_count):
            a.edited_lines.add(ln)
            if a.checker is not None:
                a.checker.invalidate_line(ln)
    a.source = src
    a.index = HloIndex(mod)
    return True


def warm_index(index) -> None:
    if isinstance(index, OccurrenceIndex):
        index.find("value", "")  # builds the key map
    elif isinstance(index, HloIndex):
        warm_module(index.mod)


def unreadable_diagnostic(message: str) -> Diagnostic:
    """The one diagnostic the server publishes for a document it cannot read."""
    return error(Range(0, 0, 0, 0), "unreadable-file", message)
