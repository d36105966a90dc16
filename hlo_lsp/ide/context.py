"""What the cursor is on, and where the facts about it live across a module's files.

`cursor` finds the occurrence under a position; `locate` turns a `buffers.value.Source` (document kind, line, range)
into a `Location` in the bundle's files; `value_definition`/`instruction_definition` pick the best target for
"go to definition" (the instruction in the after-optimizations HLO file when the folder has it, else the
``from instruction:`` line of the values file).
"""

from __future__ import annotations

from dataclasses import dataclass

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.document import Lines
from hlo_lsp.core.hlo.index import HloIndex
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.occurrences import Occurrence, OccurrenceIndex
from hlo_lsp.core.workspace import Analysis, ModuleBundle, ReadError, Workspace
from hlo_lsp.ide.types import Location


@dataclass(slots=True)
class Cursor:
    analysis: Analysis
    bundle: ModuleBundle
    occurrence: Occurrence | None
    line: int
    col: int
    ws: Workspace | None = None  # where it was found (None: a request made off the event loop)

    def maps_at_once(self, mod: HloModule) -> bool:
        """``mod``'s users and callers maps can be had without waiting (`Workspace.maps_at_once`)."""
        return self.ws is None or self.ws.maps_at_once(mod)

    @property
    def path(self) -> str:
        return self.analysis.path

    @property
    def index(self) -> HloIndex | OccurrenceIndex:
        """The document's index (`cursor` makes no cursor for a document without one)."""
        index = self.analysis.index
        assert index is not None
        return index


def cursor(ws: Workspace, path: str, line: int, col: int) -> Cursor | None:
    """The cursor context at (line, col) of ``path``; None when the document cannot be read or is not ours."""
    try:
        a = ws.analysis(path)
        if a.index is None:
            return None
        bundle = ws.bundle(path)
    except ReadError:
        return None
    return Cursor(a, bundle, a.index.at(line, col), line, col, ws)


def doc_path(bundle: ModuleBundle, kind: str) -> str | None:
    """Path of the bundle's document of ``kind`` (``hlo`` or a buffer kind); None when absent."""
    if kind == "hlo":
        return bundle.hlo.path if bundle.hlo is not None else None
    a = bundle.buffer_docs.get(kind)
    return a.path if a is not None else None


def locate(bundle: ModuleBundle, src) -> Location | None:
    """A `buffers.value.Source` as a Location; None when its document is not in the bundle."""
    if src is None:
        return None
    p = doc_path(bundle, src.kind)
    return Location(p, src.range) if p is not None else None


def instruction_definition(bundle: ModuleBundle, name: str, scope_line: int | None = None) -> Location | None:
    """Where instruction ``name`` is defined: its line in the module's HLO text, else the ``from instruction:``
    line of one of its values; None when neither file has it."""
    if bundle.hlo is not None and bundle.hlo.hlo is not None:
        mod = bundle.hlo.hlo
        scope = mod.computation_at_line(scope_line) if scope_line is not None else None
        ins = mod.instruction(name, scope)
        if ins is not None:
            return Location(bundle.hlo.path, ins.name_range)
    bs = bundle.buffers
    if bs is not None:
        for v in bs.values_of(name):
            loc = locate(bundle, v.from_instruction_at)
            if loc is not None:
                return loc
    return None


def value_definition(bundle: ModuleBundle, key: str) -> Location | None:
    """Definition target of a value: its defining instruction (see `instruction_definition`)."""
    bs = bundle.buffers
    v = bs.value(key) if bs is not None else None
    if v is None:
        return None
    return instruction_definition(bundle, v.instruction) or locate(bundle, v.assignment_at)


def allocation_location(bundle: ModuleBundle, index: int) -> Location | None:
    """The header line of allocation ``index``; None when no listing is in the bundle."""
    bs = bundle.buffers
    if bs is None:
        return None
    return locate(bundle, bs.allocation_at.get(index))


def whole_line(lines: Lines, line: int) -> Range:
    text = lines[line] if 0 <= line < len(lines) else ""
    return Range(line, 0, line, len(text))
