"""After an edit, the full tokens' memo replaces the previous version's (`handlers_document.token_data`), and
that one lets go of its copy of the lines a piece at a time when nothing else holds it, never while something
does (a computation for another version reading it); the tokens spliced meanwhile equal a fresh read's."""

from __future__ import annotations

from types import SimpleNamespace

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import semantic_tokens, token_reuse
from hlo_lsp.lsp.doc_answers import DocumentAnswers
from hlo_lsp.lsp.handlers_document import token_data
from tests.fixtures import DATA

SRC = DATA / "jax-cpu" / "cond_switch" / "module_0000.jit_piecewise.cpu_after_optimizations.txt"


def _server(ws: Workspace, version_of) -> SimpleNamespace:
    return SimpleNamespace(
        ws=ws,
        workspace=SimpleNamespace(position_encoding="utf-16"),
        lines_of=lambda p: ws.document(p).lines,
        answers=DocumentAnswers(version_of),
        client_capabilities=None,
    )


def test_a_replaced_token_memo_lets_go_of_its_lines_only_when_nothing_else_holds_it(tmp_path, monkeypatch):
    monkeypatch.setattr(semantic_tokens, "LIGHT_LINES", 0)  # every document counts as long: its memo is kept
    path = str(tmp_path / SRC.name)
    text = SRC.read_text()
    lines = text.split("\n")
    ws = Workspace()
    ws.open(path, text, 1)
    version = [1]
    ls = _server(ws, lambda p: version[0])
    memos = ls.answers.token_memo
    token_data(ls, path)
    first = memos[path]
    assert isinstance(first, token_reuse.TokenMemo) and first.lines == lines

    def edit(ln: int) -> None:  # a space at the end of line ``ln``, as the next version
        version[0] += 1
        doc = ws.document(path)
        ws.edited(path, version[0], [doc.apply(ln, len(lines[ln]), ln, len(lines[ln]), " ")])
        lines[ln] += " "

    # held here (as a computation for another version holds it): replaced, its lines are left whole
    edit(len(lines) // 2)
    token_data(ls, path)
    assert memos[path] is not first and len(first.lines) == len(lines)
    # not held (its line list is, which does not hold the memo): replaced, it lets go of its lines
    second_lines = memos[path].lines
    assert second_lines == lines
    edit(len(lines) // 3)
    data = token_data(ls, path)
    assert second_lines == [] and memos[path].lines == lines
    fresh = Workspace()
    fresh.open(path, "\n".join(lines), 1)
    assert list(data) == list(token_data(_server(fresh, lambda p: 1), path))
