"""Documents, their analyses, and the grouping of one module's files.

`Workspace` holds the text of documents the editor has open (by path) and reads every other file it needs (the
siblings of an open document) from disk, re-reading a file when its mtime or size changes; the check happens on
access, because Neovim sends no ``didChangeWatchedFiles`` on Linux. Analyses are cached per (path, version or
mtime) and rebuilt only when the text changes. `Workspace.bundle` joins an after-optimizations HLO file with its
split buffer-assignment files (or stands an old single-file dump alone). Nothing here ever writes a file.
"""

from __future__ import annotations

import os
import sys
import threading

from hlo_lsp.core import kinds
from hlo_lsp.core.analysis import (
    LARGE_SIBLING_BYTES,
    MAX_FILE_BYTES,
    Analysis,
    ModuleBundle,
    NotReady,
    OomDump,
    ReadError,
    Source,
    analyse,
    file_size,
    lines_of,
    patch_in_place,
    read_text_file,
    share_lines,
    unreadable_diagnostic,
    warm_index,
)
from hlo_lsp.core.document import DiskDocument, Edit, LineDocument
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.memory.oom import dump_modules, pick_module, resolve
from hlo_lsp.core.passes.store import PassHistories
from hlo_lsp.core.process import fork, pieces, turns

LOOP_READ_LINES = 20_000  # an open document longer than this is never read by `Workspace.loop_thread` (~2 MB of a dump)
MAPS_NOW_MAX = 5_000  # instructions of a module whose users and callers maps the event loop builds itself (~7 ms)

__all__ = [  # the analysis types, named here too: callers ask the workspace for them
    "LARGE_SIBLING_BYTES",
    "MAX_FILE_BYTES",
    "Analysis",
    "ModuleBundle",
    "NotReady",
    "OomDump",
    "ReadError",
    "Source",
    "Workspace",
    "read_text_file",
    "unreadable_diagnostic",
]


class Workspace:
    """Open documents plus files read on demand; thread-safe for one writer and many readers."""

    def __init__(self) -> None:
        self._open: dict[str, Source] = {}
        self._disk: dict[str, Source] = {}
        self._analyses: dict[str, Analysis] = {}
        # one bundle per module (keyed by its HLO file, else the document), with the sources it was made from:
        # a newer version of any member replaces it, so superseded versions' analyses are not kept alive here
        self._bundles: dict[str, tuple[tuple, ModuleBundle]] = {}
        self._busy: dict[str, tuple[int, threading.Event]] = {}  # path -> (reading thread, set when done)
        # path -> the edits applied while its text is being read (see `_hand_over`)
        self._edits_during_read: dict[str, list[Edit]] = {}
        # path -> the last analysis of an open buffer file, kept across an edit for the next read to patch
        self._patch_from: dict[str, Analysis] = {}
        self._dropped: list = []  # bundles edits dropped, a read's line snapshot: freed later (`release_dropped`)
        self._joins: list[tuple[tuple, object]] = []  # the last few joined buffer sets (`_joined_buffers`)
        self._making: list[tuple[tuple, threading.Event]] = []  # the joins being made, each set when done
        self.defer_large_siblings = False  # see `bundle`
        # the thread that never reads an open document over `LOOP_READ_LINES` lines nor joins large buffer files
        # (the server's event loop: a request there gets NotReady while a worker reads it; see `analysis`, `bundle`)
        self.loop_thread: int | None = None
        self.oom_dump_folder: str | None = None  # where out-of-memory reports' dumps are (else beside the report)
        self._oom_lock = threading.Lock()
        self.passes = PassHistories()  # the histories of pass-by-pass dumps (`core.passes`)
        self.roots: list[str] = []  # the editor's workspace folders (where a dump's source files may be offered)
        self._lock = threading.RLock()

    # -- document lifecycle ----------------------------------------------------------------------------------

    def open(self, path: str, text: str, version: int | None = None, lines: list[str] | None = None) -> None:
        """``lines``: ``text``'s lines when the transport split them already (`LineDocument`)."""
        with self._lock:
            self._open[path] = Source(path, LineDocument(text, lines), version)
            self._analyses.pop(path, None)
            self._patch_from.pop(path, None)

    def change(self, path: str, text: str, version: int | None = None) -> None:
        """Replace the whole text of an open document (full sync)."""
        self.open(path, text, version)

    def document(self, path: str) -> LineDocument | None:
        """The line store of an open document, for applying edits; None when it is not open."""
        src = self._open.get(path)
        return src.doc if src is not None and isinstance(src.doc, LineDocument) else None

    def edited(self, path: str, version: int | None, edits: list[Edit]) -> bool:
        """Record that ``edits`` were applied to ``path``'s line store, giving ``version``. The cached analysis
        is patched in place when every edit allows it (True), else dropped to be read again (False)."""
        with self._lock:
            old = self._open.get(path)
            if old is None:
                return False
            src = Source(path, old.doc, version)
            self._open[path] = src
            a = self._analyses.get(path)
            keep = None
            if a is not None and a.read_lines is not None:
                self._patch_from[path] = a  # a buffer file: its next model is patched from this one
                # its model lives on there, and the join made from it is freed by the thread making the next join
                # (or at an idle moment): freeing the benchmark values file's join (100,000 values) here held the
                # event loop 18 ms at each edit
                keep = self._dropped
            if a is None or a.hlo is None or a.hlo.lines is not old.doc.lines:
                self._drop_analysis(path, keep)
                log = self._edits_during_read.get(path)
                if log is not None:
                    log.extend(edits)
                return False
            if not patch_in_place(a, a.hlo, edits, src):
                self._drop_analysis(path)
                return False
            return True

    def _drop_analysis(self, path: str, keep: list | None = None) -> None:
        """Forget ``path``'s analysis and the bundles holding it (the text moved on: it is read again). Done at
        once rather than when the next bundle replaces them, so that the old model is freed before the new one
        is built: a module read again while its old model stays alive leaves the heap's arenas a patchwork of
        both, which the process keeps (the soak's 20 re-reads of the 23 MB module grew RSS by 40%). With
        ``keep``, the bundles go there, to be freed by `release_dropped`."""
        self._analyses.pop(path, None)
        for key, (_, b) in list(self._bundles.items()):
            if any(d.path == path for d in b.documents()):
                if keep is not None:
                    keep.append(self._bundles[key])
                del self._bundles[key]

    def release_dropped(self) -> None:
        """Free the bundles edits dropped (`edited`) and a large module's line snapshot (`analysis`):
        called in a worker thread, before the next join is made (`_joined_buffers`), and at an idle moment."""
        with self._lock:
            dropped, self._dropped = self._dropped, []
        while dropped:  # freed here, outside the lock
            item = dropped.pop()
            # a read's line snapshot nothing else holds: emptied a piece at a time (the 100 MB module's 2 million
            # lines: 5 ms at once)
            if type(item) is list and sys.getrefcount(item) == pieces.ONE_NAME_REFS:
                pieces.release(item)
            del item

    def close(self, path: str) -> list[str]:
        """Forget ``path``'s text and analysis, the bundles it is part of, and the files read from disk that no
        open document's bundle still uses (they are read again when needed). Returns the other open documents
        whose bundle went with it, or is being made with it: their large siblings are unread again until `warm`
        runs for them (a request never reads them), so the caller warms them again."""
        # an open sibling whose join is being made right now (by the worker thread) holds ``path`` too
        siblings = {str(p) for p in kinds.sibling_paths(path).values()} if os.path.isabs(path) else set()
        orphans: set[str] = set()
        with self._lock:
            orphans.update(p for p in siblings if p != path and p in self._open)
            self._open.pop(path, None)
            self._analyses.pop(path, None)
            self._patch_from.pop(path, None)
            for key, (_, b) in list(self._bundles.items()):
                if key == path or any(a.path == path for a in b.documents()):
                    del self._bundles[key]
                    # an open document's siblings stay read (`_sweep`): only ``path`` is read again for its bundle
                    orphans.update(a.path for a in b.documents() if a.path != path and a.path in self._open)
            self._sweep()
        return sorted(orphans)

    def sweep(self) -> None:
        """Forget what no open document uses: bundles without an open member, the files read from disk for
        them, the joins of those files, and the pass histories of modules with no open file. `close` does this;
        a worker thread that was reading for a document when it closed may have stored its results after that,
        so the server sweeps again once its background work is done."""
        with self._lock:
            for key, (_, b) in list(self._bundles.items()):
                if not any(a.path in self._open for a in b.documents()):
                    del self._bundles[key]
            self._sweep()

    def _sweep(self) -> None:
        used = set(self._open)
        for p in self._open:  # an open document's siblings, read for its bundle even when it is not made yet
            if os.path.isabs(p):
                used.update(str(s) for s in kinds.sibling_paths(p).values())
        for _, b in self._bundles.values():
            used.update(a.path for a in b.documents())
        for p in [p for p in self._disk if p not in used]:
            del self._disk[p]
        for p in [p for p in self._analyses if p not in used]:
            del self._analyses[p]
        self._joins = [(held, bs) for held, bs in self._joins if all(src.path in used for _, src in held)]
        self.passes.retain(list(self._open))

    def fork_locks(self) -> list:
        """The locks a forked child computing from this workspace may take (`process.fork.start` holds them
        across the fork: a lock held by another thread at that moment would stay held in the child)."""
        return [self._lock, self._oom_lock, *self.passes.fork_locks()]

    def is_open(self, path: str) -> bool:
        return path in self._open

    def open_paths(self) -> list[str]:
        return list(self._open)

    def open_source(self, path: str) -> Source | None:
        """The editor's text of ``path`` when it is open, else None (never reads the file)."""
        return self._open.get(path)

    # -- sources and analyses --------------------------------------------------------------------------------

    def source(self, path: str) -> Source:
        """The current text of ``path``: the editor's when open, else the file's (re-read when it changed on
        disk). Raises ReadError when the file cannot be read as text.

        The file is read outside the workspace's lock: the read and decoding of a 23 MB module took 20-30 ms, and
        every request's `analysis` lookup (the range tokens and inlay hints of the viewport among them) waited
        for the lock meanwhile when a background read of a buffer file's module began as the editor's requests
        came in. Two threads reading the same file at once keep one `Source` (the first stored)."""
        with self._lock:
            src = self._open.get(path)
            if src is not None:
                return src
            try:
                st = os.stat(path)
            except OSError:
                self._disk.pop(path, None)
                raise ReadError(f"{path}: no such file") from None
            stamp = (st.st_mtime, st.st_size)
            src = self._kept_source(path, stamp)
            if src is not None:
                return src
        doc = DiskDocument(read_text_file(path))
        with self._lock:
            src = self._kept_source(path, stamp)  # opened, or read by another thread, meanwhile
            if src is None:
                src = self._disk[path] = Source(path, doc, None, stamp)
            return src

    def _kept_source(self, path: str, stamp: tuple) -> Source | None:
        """The editor's text of ``path`` when it is open, else the file's as read at ``stamp``; None when neither
        is kept. Called under the lock."""
        src = self._open.get(path)
        if src is not None:
            return src
        src = self._disk.get(path)
        return src if src is not None and src.stamp == stamp else None

    def analysis(self, path: str, wait: bool = False) -> Analysis:
        """The analysis of ``path``'s current text (cached); ReadError when it cannot be read. Safe to call from
        a worker thread while the editor's edits land on the main thread: the text is snapshotted first (a
        join holds the GIL), and the result is cached only if no edit landed while it was computed."""
        me = threading.get_ident()
        src = self.source(path)  # not under the lock: it may read the file
        with self._lock:
            a = self._analyses.get(path)
            if a is not None and a.source is src:
                return a
            reader = self._busy.get(path)
            if reader is not None and reader[0] != me:
                if not wait or fork.in_child():  # in a forked child the reading thread does not exist
                    raise NotReady(f"{path}: still being read")
                done = reader[1]
            elif me == self.loop_thread and isinstance(src.doc, LineDocument) and len(src.doc.lines) > LOOP_READ_LINES:
                # a large document edited (or opened) and not read again yet: the worker thread the server
                # scheduled reads it; a request on the event loop reading it would hold every other one for a second
                raise NotReady(f"{path}: to be read in the background")
            else:
                done = None
                self._busy[path] = (me, threading.Event())
        if done is not None:
            with turns.waiting_for_background():
                done.wait()  # another thread is reading it: take its result
            return self.analysis(path, wait=True)
        with self._lock:
            generation = src.doc.generation
            # a snapshot sharing the line strings (one pointer a line); a disk file's text never changes
            lines = list(src.doc.lines) if isinstance(src.doc, LineDocument) else None
            text = src.doc.kept_text() if isinstance(src.doc, LineDocument) else None
            if lines is not None:
                self._edits_during_read[path] = []
            previous = self._patch_from.pop(path, None) if lines is not None else None
        try:
            a = analyse(path, src, lines, text, previous)
            if isinstance(src.doc, LineDocument):
                src.doc.forget_large_text()  # read: the lines alone are kept
            elif turns.in_background():
                # a sibling read for an open buffer file (`warm`): its lookups made before a request can see it
                # (a hover on the values file searched the module's names, 5-8 ms, until `warm` was done)
                warm_index(a.index)
            with self._lock:
                log = self._edits_during_read.pop(path, None)
                if src.doc.generation == generation and self._current(path) is src:
                    if a.hlo is not None and lines is not None and a.hlo.lines == src.doc.lines:
                        share_lines(a.hlo, lines_of(src))  # edits can then patch in place
                    self._analyses[path] = a
                elif log is not None and lines is not None:
                    self._hand_over(path, a, src, lines, log)
                    if a.read_lines is not None and path in self._open and path not in self._analyses:
                        self._patch_from.setdefault(path, a)  # edited meanwhile: the next read patches this one
                if lines is not None and len(lines) > LOOP_READ_LINES and a.hlo and a.hlo.lines is not lines:
                    # the snapshot of a module's lines (it reads the editor's store now) freed later, a piece at a
                    # time (`release_dropped`, at an idle moment), not with a pull waiting
                    self._dropped.append(lines)
        finally:
            with self._lock:  # cached first, then waiters are released to take it
                reader = self._busy.get(path)
                if reader is not None and reader[0] == me:
                    self._edits_during_read.pop(path, None)
                    del self._busy[path]
                    reader[1].set()
        return a

    def _hand_over(self, path: str, a: Analysis, src: Source, lines: list[str], log: list[Edit]) -> None:
        """Edits landed while ``a`` was read from the snapshot ``lines``: when each kept the line count (typing
        inside lines), ``a`` is brought up to the current text by patching it for each, as `edited` would have,
        and cached; a read that finished late hands its work over instead of being thrown away (and read again,
        which under steady typing on a large module never caught up). Otherwise nothing is cached."""
        cur = self._open.get(path)
        if (
            cur is None
            or cur.doc is not src.doc
            or a.hlo is None
            or not log
            or len(lines) != len(cur.doc.lines)
            or any(e.old_count != e.new_count for e in log)
        ):
            return
        share_lines(a.hlo, lines_of(cur))
        if patch_in_place(a, a.hlo, log, cur):
            self._analyses[path] = a

    def _current(self, path: str) -> Source | None:
        return self._open.get(path) or self._disk.get(path)

    def try_analysis(self, path: str, wait: bool = False) -> Analysis | None:
        """Like `analysis`, but None when the file cannot be read."""
        try:
            return self.analysis(path, wait)
        except ReadError:
            return None

    def module(self, path: str) -> tuple[Analysis, ModuleBundle] | None:
        """(analysis of ``path``, its module bundle); None when ``path`` cannot be read (or is still being
        read by another thread)."""
        try:
            return self.analysis(path), self.bundle(path)
        except ReadError:
            return None

    def has_analysis(self, path: str) -> bool:
        with self._lock:
            a = self._analyses.get(path)
            return a is not None and a.source is self._current(path)

    def warm(self, path: str) -> None:
        """Read ``path``'s siblings and build, ahead of the first request, the lazily made maps of its module:
        its HLO lookups, the joined values by instruction (every hover reads it) and the occurrence key maps of
        its buffer files (each O(n) once); for an out-of-memory report, its dump (`oom_dump`); for a file of a
        pass-by-pass dump, its module's pass history too; nothing when it cannot be read."""
        if self.passes.is_history_file(path):
            self.passes.get(path, build=True)
        try:
            a = self.analysis(path)
            if a.kind == kinds.OOM:
                self.oom_dump(path, find=True)
                return
            # its own lookups first: a definition or references request on a buffer file made its key map on the
            # event loop (50 ms for the values file) until its siblings had been read and joined, seconds later
            warm_index(a.index)
            b = self.bundle(path, read_large=True, warm=True)
            if b.buffers is not None:  # joined before: every hover on an instruction reads it
                b.buffers.warm()
            _warm_documents(b)  # (made by the bundle before it was kept, unless it was kept before)
        except ReadError:
            pass

    def defers_siblings(self, path: str) -> bool:
        """True when `bundle` may leave ``path``'s siblings out until the worker thread has read them (`warm`):
        ``path`` or a sibling is over LARGE_SIBLING_BYTES and the server defers large siblings."""
        if not self.defer_large_siblings or not os.path.isabs(path):
            return False
        files = [path, *map(str, kinds.sibling_paths(path).values())]
        return any(file_size(p) > LARGE_SIBLING_BYTES for p in files) or any(
            (a := self._analyses.get(p)) is not None and a.size > LARGE_SIBLING_BYTES for p in files
        )

    def oom_dump(self, path: str, find: bool = False) -> OomDump | None:
        """The dump the out-of-memory report ``path`` is about, its entries resolved against it (`resolve`):
        the `oom_dump_folder` setting, else the report's own folder (or its subfolders). ``find`` (worker
        threads: it reads the module) looks now when `warm` has not yet; without it, None until then. None for
        a document that is no report."""
        a = self.analysis(path)
        if a.oom is None or a.oom_dump is not None or not find:
            return a.oom_dump
        with turns.waiting_for_background(), self._oom_lock:  # one thread finds it (background read or request)
            if a.oom_dump is not None:
                return a.oom_dump
            folder = self.oom_dump_folder or (os.path.dirname(path) if os.path.isabs(path) else "")
            module = pick_module(a.oom, dump_modules(folder)) if folder else None
            bundle = None
            if module is not None:
                try:
                    self.analysis(module, wait=True)  # read by another thread (it is open too): wait for it
                    bundle = self.bundle(module, read_large=True)
                except ReadError:
                    bundle = None
            hlo = bundle.hlo.hlo if bundle is not None and bundle.hlo is not None else None
            resolve(a.oom, hlo, bundle.buffers if bundle is not None else None)
            a.oom_dump = OomDump(folder, module, bundle)
            return a.oom_dump

    def forget_oom_dumps(self) -> list[str]:
        """Untie every open out-of-memory report from its dump (the dump folder setting changed); their paths."""
        with self._lock:
            found = [a for a in self._analyses.values() if a.oom is not None]
        for a in found:
            a.oom_dump = None
        return [a.path for a in found]

    def bundle(self, path: str, read_large: bool | None = None, warm: bool = False) -> ModuleBundle:
        """The module ``path`` belongs to: itself plus the same-stem siblings in its folder.

        With ``read_large`` False (the default when `defer_large_siblings` is set, as the server does), a
        sibling larger than LARGE_SIBLING_BYTES, or any sibling of a document that large, that has not been
        read yet is left out instead of read here:
        a request answers at once with what is known, and the server's worker thread reads the sibling
        (`warm`), after which the bundle includes it. With ``warm`` (`warm`'s own call), a join made here has its
        values by instruction made before any other thread can see it (`BufferSet.warm`)."""
        if read_large is None:
            read_large = not self.defer_large_siblings
        a = self.analysis(path)
        siblings = kinds.sibling_paths(path) if os.path.isabs(path) else {}
        hlo_a = a if a.kind == kinds.HLO else None
        docs: dict[str, Analysis] = {}
        partial = False
        if a.kind in kinds.BUFFER_KINDS:
            docs[a.kind] = a
        if a.kind == kinds.SINGLE or (a.kind == kinds.HLO and kinds.module_stem(path) is None):
            siblings = {}
        for kind, p in siblings.items():
            sp = str(p)
            if sp == path:
                continue
            if (
                not read_large
                and not self.has_analysis(sp)
                and (file_size(sp) > LARGE_SIBLING_BYTES or a.size > LARGE_SIBLING_BYTES)
            ):
                partial = True  # unread (or being read by the worker): answer without it, and say so
                continue
            if not self.has_analysis(sp):
                turns.give_way()  # in background work (`process.turns`), the requests under way first
            sa = self.try_analysis(sp, wait=True)  # a small sibling another thread is reading: wait for it
            if sa is None:
                continue
            if kind == kinds.HLO:
                hlo_a = sa if sa.kind == kinds.HLO else hlo_a
            elif sa.buffers is not None:
                docs[kind] = sa
        owner = hlo_a.path if hlo_a is not None else path
        made_from = (hlo_a.source if hlo_a else None, partial) + tuple((k, docs[k].source) for k in sorted(docs))
        with self._lock:
            kept = self._bundles.get(owner)
            if kept is not None and kept[0] == made_from:  # a Source compares by identity (eq=False)
                return kept[1]
        own = {a.kind: a} if a.kind in docs and docs[a.kind] is a else {}
        if (
            not read_large
            and len(docs) > len(own)
            and (a.size > LARGE_SIBLING_BYTES or any(d.size > LARGE_SIBLING_BYTES for d in docs.values()))
        ):
            # joining large buffer files takes seconds: a request thread (the server's event loop) never joins
            # siblings; it answers with the document alone until the worker thread's `warm` has joined and kept
            # them all (this bundle is not kept, so it never evicts that one). The document's own records are
            # joined on their own once, by a worker (`prepare_bundle`): on the event loop that took 0.1-0.9 s, so
            # there, until then, the bundle has none (a hover says the files are being read)
            own_join = self._joined_buffers(own, make=not self.on_loop()) if own else None
            return ModuleBundle(hlo_a, own, own_join, True)
        if docs:
            turns.give_way()
        large = any(d.size > LARGE_SIBLING_BYTES for d in docs.values())
        buffers = self._joined_buffers(docs, make=not (large and self.on_loop()), warm=warm) if docs else None
        if docs and buffers is None:
            return ModuleBundle(hlo_a, docs, None, True)  # to be joined by a worker (`prepare_bundle`); not kept
        b = ModuleBundle(hlo_a, docs, buffers, partial)
        if warm:
            # before it is kept: its siblings' lookups made where each was read (`analysis`), the document's own by
            # `warm` before it read them; until it is kept, requests answer from the files read so far
            _warm_documents(b)
        with self._lock:
            # one bundle per module: the one of an older version, or made while its siblings were being read
            # (each with its own joined BufferSet, ~10 MB for the benchmark dump), is not kept beside the newest
            # ... nor one that holds a document closed or changed while it was made (it would stand for good)
            if all(self._current(d.path) is d.source for d in b.documents()):
                self._bundles[owner] = (made_from, b)
        return b

    def joined_bundle_kept(self, path: str) -> bool:
        """``path``'s module bundle for the current text of each of its files is made and kept, siblings joined
        (what `bundle` then answers at once); nothing is read or joined to tell."""
        with self._lock:
            a = self._analyses.get(path)
            if a is None or a.source is not self._current(path):
                return False
            return any(
                not b.partial
                and any(d is a for d in b.documents())
                and all(self._current(d.path) is d.source for d in b.documents())
                for _, b in self._bundles.values()
            )

    def on_loop(self) -> bool:
        """This thread is `loop_thread`, which never reads nor joins a large document, nor builds a large module's
        users and callers maps (`maps_at_once`)."""
        return self.loop_thread == threading.get_ident()

    def maps_at_once(self, mod: HloModule) -> bool:
        """``mod``'s users and callers maps can be had here without waiting: they are built, or this thread may
        build them (any but the event loop, or a module of at most `MAPS_NOW_MAX` instructions). On the event
        loop a large module's are left to the background build after its read (a hover on a computation's name
        built the 100 MB module's there for 1.2 s, every other request waiting): a request that needs them waits
        for them in a worker thread, or answers without them."""
        return mod.maps_built() or not self.on_loop() or len(mod.instructions) <= MAPS_NOW_MAX

    def prepare_bundle(self, path: str) -> None:
        """Make ``path``'s bundle as a request would (a worker thread, after reading a buffer file): its own
        records' join is then kept for the requests on the event loop, which never make it (`bundle`)."""
        try:
            if self.analysis(path).buffers is not None:
                self.bundle(path)
        except ReadError:
            pass

    def _joined_buffers(self, docs: dict[str, Analysis], make: bool = True, warm: bool = False):
        """The BufferSet joining ``docs`` (kind -> analysis), made once per set of buffer texts: an edit of the
        module's HLO text makes a new bundle but never changes its buffer files, whose join takes seconds. None
        when it is not made yet and ``make`` is False. ``warm``: see `bundle`."""
        kinds_sources = tuple(sorted(((k, v.source) for k, v in docs.items()), key=lambda t: t[0]))

        def same(held: tuple) -> bool:
            return len(held) == len(kinds_sources) and all(
                a[0] == b[0] and a[1] is b[1] for a, b in zip(held, kinds_sources)
            )

        while True:
            with self._lock:
                for held, bs in self._joins:
                    if same(held):
                        return bs
                if not make:
                    return None
                # one thread joins a set of files: another asking for the same join (a pull while the worker
                # that read the file joins its records) waits for it instead of joining beside it for the GIL
                # (in a forked child the joining thread does not exist: it joins them itself)
                making = None if fork.in_child() else next((d for held, d in self._making if same(held)), None)
                if making is None:
                    done = threading.Event()
                    self._making.append((kinds_sources, done))
                    break
            with turns.waiting_for_background():
                making.wait()  # then its join is kept, or (it failed) this thread makes it
        try:
            # the joins edits dropped are freed here, before this one is made (joined beside the old one, the new
            # join left the heap a patchwork of both: 30 MB more RSS after the editor replay's edit), and not before
            # the edited file's model is patched (that held the after-edit requests 18-27 ms, for the values file's
            # 100,000 values); background work (the join after an edit) first waits for those requests
            if self._dropped:
                turns.give_way()
                self.release_dropped()
            return self._join(docs, kinds_sources, warm)
        finally:
            with self._lock:
                self._making = [(held, d) for held, d in self._making if d is not done]
            done.set()

    def _join(self, docs: dict[str, Analysis], kinds_sources: tuple, warm: bool = False):
        from hlo_lsp.core.buffers.bufferset import BufferSet

        bs = BufferSet.from_docs([d.buffers for d in docs.values() if d.buffers is not None])
        if warm:
            # before it is kept: a hover that came between the join and `Workspace.warm`'s map made the map itself,
            # 16 ms on the event loop for the benchmark module's 60,000 values (Neovim, GIL watcher)
            bs.warm()
        with self._lock:
            self._joins = [*self._joins[-3:], (kinds_sources, bs)]
        return bs


def _warm_documents(b: ModuleBundle) -> None:
    """Build each of ``b``'s documents' lazily made lookups now (`warm_index`: an HLO module's name index, users
    and callers maps, a buffer file's key map), giving way before each."""
    for a in b.documents():
        turns.give_way()
        warm_index(a.index)
