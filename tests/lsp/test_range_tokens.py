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


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_viewport_tokens_carry_the_wire_columns(tmp_path, encoding):
    path = str(tmp_path / SRC.name)
    text = _with_wide_characters(SRC.read_text())
    ws = Workspace()
    ws.open(path, text, 1)
    ws.analysis(path, wait=True)
    lines_of = lambda p: ws.document(p).lines  # noqa: E731
    conv = Converter(encoding, lines_of)
    ls = SimpleNamespace(ws=ws, conv=conv, lines_of=lines_of)
    lines = lines_of(path)
    wide = 0
    for start in range(0, len(lines) + 10, 7):
        end = start + 9
        want = []
        for t in semantic_tokens.semantic_tokens(ws, path, start, end):
            s = conv.position(lines, t.line, t.start).character
            want.append((t.line, s, conv.position(lines, t.line, t.end).character - s, t.type, t.modifiers))
            wide += not lines[t.line].isascii()
        assert _tokens(ls, path_to_uri(path), start, end).data == semantic_tokens.encode(want)
    assert wide > 20
