"""Plain result records of the IDE features; the LSP layer converts them to protocol types."""

from __future__ import annotations

from dataclasses import dataclass, field

from hlo_lsp.core.diagnostics import Range


@dataclass(frozen=True, slots=True)
class Location:
    path: str
    range: Range
    # a file a dump names (a Python source): its range is given as is (code points of the dump's columns) and
    # the file is never read to convert it
    external: bool = False


@dataclass(slots=True)
class HoverResult:
    markdown: str
    plain: str
    range: Range


@dataclass(slots=True)
class Symbol:
    name: str
    kind: str  # module | namespace | function | variable | object | field | event | constant | key
    range: Range
    selection_range: Range
    detail: str = ""
    children: list[Symbol] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WorkspaceSymbol:
    name: str
    kind: str
    location: Location
    container: str = ""


@dataclass(frozen=True, slots=True)
class FoldingRange:
    start_line: int
    end_line: int
    kind: str = "region"


@dataclass(frozen=True, slots=True)
class Highlight:
    range: Range
    kind: str  # "write" for a definition, "read" for a use


@dataclass(frozen=True, slots=True)
class DocumentLink:
    range: Range
    target: Location | None  # None: to be resolved on demand (`symbols.resolve_link`, by ``index``)
    tooltip: str = ""
    index: int | None = None  # the peak-list entry a link without its target stands for


@dataclass(frozen=True, slots=True)
class CallItem:
    name: str
    detail: str
    location: Location  # the computation's header line
    selection: Range


@dataclass(frozen=True, slots=True)
class Call:
    item: CallItem
    ranges: tuple[Range, ...]  # where the calls are written (in the caller)
