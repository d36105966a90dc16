"""Conversions between the core's plain records and lsprotocol types.

The core counts columns in code points; the wire counts them in the negotiated encoding (UTF-16 unless the
client offers UTF-32 or UTF-8). Columns convert exactly, characters outside the BMP included, with an ASCII
fast path. URIs map to paths for ``file:`` URIs; any other URI is used as the document's key unchanged.
"""

from __future__ import annotations

import json

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from hlo_lsp.core.diagnostics import Diagnostic, Range, Severity
from hlo_lsp.core.document import Lines
from hlo_lsp.core.process import pieces
from hlo_lsp.ide.types import Location

UTF16 = lsp.PositionEncodingKind.Utf16
UTF8 = lsp.PositionEncodingKind.Utf8
UTF32 = lsp.PositionEncodingKind.Utf32

SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFORMATION: lsp.DiagnosticSeverity.Information,
    Severity.HINT: lsp.DiagnosticSeverity.Hint,
}


def uri_to_path(uri: str) -> str:
    """The filesystem path of a ``file:`` URI; other URIs are returned unchanged (used as keys)."""
    if uri.startswith("file:"):
        p = to_fs_path(uri)
        if p:
            return p
    return uri


def path_to_uri(path: str) -> str:
    if "://" in path or path.startswith("untitled:"):
        return path
    return from_fs_path(path) or path


def col_to_wire(line: str, col: int, encoding: str) -> int:
    """A code-point column on ``line`` in the wire encoding."""
    col = max(0, min(col, len(line)))
    if encoding == UTF32 or line.isascii():  # isascii is O(1) on a str: no slice for the common line
        return col
    head = line[:col]
    if head.isascii():
        return col
    if encoding == UTF8:
        return len(head.encode("utf-8"))
    return col + sum(1 for ch in head if ord(ch) > 0xFFFF)


def all_ascii(lines, a: int, b: int) -> bool:
    """Every line of ``lines[a:b]`` is ASCII, tested in pieces of `pieces.PIECE` lines: one C-level pass over the
    100 MB module's two million lines held the GIL for 0.4 s (each line's object is a cache miss), and a hover
    sent meanwhile waited for all of it."""
    step = pieces.PIECE
    for i in pieces.starts(a, b, step):
        if not all(map(str.isascii, lines[i : min(i + step, b)])):
            return False
    return True


def col_from_wire(line: str, col: int, encoding: str) -> int:
    """A wire-encoding column on ``line`` as a code-point column (clamped to the line; a column inside a
    surrogate pair or a UTF-8 sequence maps to the character it splits)."""
    if col <= 0:
        return 0
    if encoding == UTF32 or line.isascii():
        return min(col, len(line))
    units = 0
    for i, ch in enumerate(line):
        w = len(ch.encode("utf-8")) if encoding == UTF8 else (2 if ord(ch) > 0xFFFF else 1)
        if units + w > col:
            return i
        units += w
    return len(line)


_LOCATION = '{"uri":%s,"range":{"start":{"line":%d,"character":%d},"end":{"line":%d,"character":%d}}}'


class Converter:
    """Converts ranges for documents whose lines it can fetch (``lines_of(path) -> Lines | None``)."""

    def __init__(self, encoding: str, lines_of):
        self.encoding = encoding
        self._lines_of = lines_of
        self._lines: dict[str, Lines | None] = {}  # per request: a file's lines are fetched once

    def lines_of(self, path: str) -> Lines | None:
        if path not in self._lines:
            self._lines[path] = self._lines_of(path)
        return self._lines[path]

    def _line(self, lines: Lines | None, n: int) -> str:
        if lines is None or not 0 <= n < len(lines):
            return ""
        return lines[n]

    def position(self, lines: Lines | None, line: int, col: int) -> lsp.Position:
        return lsp.Position(line=max(0, line), character=col_to_wire(self._line(lines, line), col, self.encoding))

    def range(self, lines: Lines | None, r: Range) -> lsp.Range:
        return lsp.Range(
            start=self.position(lines, r.start_line, r.start_col), end=self.position(lines, r.end_line, r.end_col)
        )

    def range_in(self, path: str, r: Range) -> lsp.Range:
        return self.range(self.lines_of(path), r)

    def location(self, loc: Location) -> lsp.Location:
        if loc.external:  # a file a dump names: never read; its columns go out as the dump gives them
            r = loc.range
            return lsp.Location(
                uri=path_to_uri(loc.path),
                range=lsp.Range(
                    start=lsp.Position(line=r.start_line, character=r.start_col),
                    end=lsp.Position(line=r.end_line, character=r.end_col),
                ),
            )
        return lsp.Location(uri=path_to_uri(loc.path), range=self.range_in(loc.path, loc.range))

    def spans_json(self, groups: list[tuple[str, list[tuple[int, int, int]]]]) -> str:
        """Locations given as (path, [(line, start, end)...]) groups (`navigation.reference_spans`), as the JSON
        text the wire carries: no object per location on the way."""
        parts: list[str] = []
        append = parts.append
        enc = self.encoding
        for path, spans in groups:
            uri = json.dumps(path_to_uri(path))
            head = '{"uri":%s,"range":{"start":{"line":' % uri
            lines = self.lines_of(path)
            n_lines = len(lines) if lines is not None else 0
            for ln, sc, ec in spans:
                if lines is not None and 0 <= ln < n_lines:
                    line = lines[ln]
                    if 0 <= sc <= ec <= len(line) and line.isascii():  # columns are UTF-16 units already
                        append(f'{head}{ln},"character":{sc}}},"end":{{"line":{ln},"character":{ec}}}}}}}')
                        continue
                    wc, we = col_to_wire(line, sc, enc), col_to_wire(line, ec, enc)
                else:
                    wc, we = col_to_wire("", sc, enc), col_to_wire("", ec, enc)
                append(_LOCATION % (uri, max(0, ln), wc, max(0, ln), we))
        return "[" + ",".join(parts) + "]"

    def from_position(self, lines: Lines | None, pos: lsp.Position) -> tuple[int, int]:
        return pos.line, col_from_wire(self._line(lines, pos.line), pos.character, self.encoding)

    def diagnostic(self, path: str, lines: Lines | None, d: Diagnostic) -> lsp.Diagnostic:
        related = [
            lsp.DiagnosticRelatedInformation(
                location=lsp.Location(
                    uri=path_to_uri(r.path or path),
                    range=self.range_in(r.path or path, r.range)
                    if r.path and r.path != path
                    else self.range(lines, r.range),
                ),
                message=r.message,
            )
            for r in d.related
        ]
        return lsp.Diagnostic(
            range=self.range(lines, d.range),
            message=d.message,
            severity=SEVERITY[d.severity],
            code=d.code,
            source=d.source,
            related_information=related or None,
        )
