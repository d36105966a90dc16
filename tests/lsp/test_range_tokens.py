"""The viewport's tokens (`handlers_insight._tokens`, ``semanticTokens/range``) carry the wire columns of each
token in every position encoding, as `convert.Converter.position` gives them, on lines with characters of one,
two, three and four UTF-8 bytes before, inside and after the names, and for ranges past the text's end."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import semantic_tokens
from hlo_lsp.lsp.convert import Converter, path_to_uri
from hlo_lsp.lsp.handlers_insight import _tokens
from tests.fixtures import DATA

SRC = DATA / "jax-cpu" / "cond_switch" / "module_0000.jit_piecewise.cpu_after_optimizations.txt"


def _with_wide_characters(text: str) -> str:
    """A comment with é, 中 and 𝔞 at the start of every third line, one inside every fifth instruction's name."""
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if k % 3 == 0 and line.strip():
            lines[k] = "/*é中𝔞*/" + line
        elif k % 5 == 0 and "%" in line:
            at = line.index("%") + 2
            lines[k] = line[:at] + "é𝔞" + line[at:]
    return "\n".join(lines)


def _session(path: str, text: str, encoding: str) -> tuple[SimpleNamespace, list[str]]:
    """A server's stand-in for `_tokens` (its workspace, converter, line store and negotiated encoding) with
    ``text`` open and read."""
    ws = Workspace()
    ws.open(path, text, 1)
    ws.analysis(path, wait=True)
    lines_of = lambda p: ws.document(p).lines  # noqa: E731
    ls = SimpleNamespace(
        ws=ws,
        conv=Converter(encoding, lines_of),
        lines_of=lines_of,
        workspace=SimpleNamespace(position_encoding=encoding),
    )
    return ls, lines_of(path)


def _want(ls: SimpleNamespace, path: str, lines: list[str], start: int, end: int) -> list[tuple[int, ...]]:
    """The tokens of lines ``start..end`` with their wire columns from `Converter.position`, one column at a time."""
    conv, want = ls.conv, []
    for t in semantic_tokens.semantic_tokens(ls.ws, path, start, end):
        s = conv.position(lines, t.line, t.start).character
        want.append((t.line, s, conv.position(lines, t.line, t.end).character - s, t.type, t.modifiers))
    return want


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_viewport_tokens_carry_the_wire_columns(tmp_path, encoding):
    path = str(tmp_path / SRC.name)
    ls, lines = _session(path, _with_wide_characters(SRC.read_text()), encoding)
    wide = 0
    for start in range(0, len(lines) + 10, 7):
        end = start + 9
        want = _want(ls, path, lines, start, end)
        wide += sum(not lines[t[0]].isascii() for t in want)
        assert _tokens(ls, path_to_uri(path), start, end).data == semantic_tokens.encode(want)
    assert wide > 20


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_ascii_viewport_tokens_packed_at_once_carry_the_same_columns(tmp_path, encoding):
    """Lines all ASCII (as XLA writes them): the tokens are packed by `semantic_tokens.encode_spans` without a
    column converted one at a time, to the same data; a viewport with one wide line among them takes the per-column
    way. A first line longer than `semantic_tokens.MAX_LINE` (a module header as XLA writes one for a large
    entry) is among them."""
    path = str(tmp_path / SRC.name)
    text = SRC.read_text()
    header, rest = text.split("\n", 1)
    params = ", ".join(f"f32[{i % 7 + 1},3]{{1,0}}" for i in range(semantic_tokens.MAX_LINE // 10))
    text = header + f", frontend_attributes={{layout=({params})}}\n" + rest
    lines_wide = text.split("\n")
    wide_at = len(lines_wide) // 2
    ls, lines = _session(path, text, encoding)
    assert len(lines[0]) > semantic_tokens.MAX_LINE and all(x.isascii() for x in lines)
    seen = 0
    for start in range(0, len(lines) + 10, 7):
        end = start + 9
        want = _want(ls, path, lines, start, end)
        got = _tokens(ls, path_to_uri(path), start, end).data
        assert got == semantic_tokens.encode(want)
        assert isinstance(got, list) and all(type(x) is int for x in got)
        seen += len(want)
    assert seen > 1000
    # one wide line in the middle: the viewports over it take the per-column way, to the columns it has
    lines_wide[wide_at] = "/*é中𝔞*/" + lines_wide[wide_at]
    ls2, lines2 = _session(path, "\n".join(lines_wide), encoding)
    want = _want(ls2, path, lines2, wide_at - 3, wide_at + 3)
    assert _tokens(ls2, path_to_uri(path), wide_at - 3, wide_at + 3).data == semantic_tokens.encode(want)
