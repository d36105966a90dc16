"""A buffer file open in the editor, edited: the workspace patches its model (`buffers.patch`), and the semantic
tokens' wire data is spliced from the previous version's (`token_reuse.reuse_buffer_encoded`). After random edit
sequences both equal a fresh read of the final text."""

from __future__ import annotations

import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import semantic_tokens, token_reuse
from tests.core.test_buffers_patch import FILES, differences
from tests.ide.test_document_answers_reuse import _apply as apply_edit
from tests.ide.test_document_answers_reuse import _encoder

# an edit: (file, line fraction, what)
EDITS = st.lists(
    st.tuples(st.floats(0, 0.999), st.sampled_from(["space", "blank", "delete", "rename", "astral", "chop"])),
    min_size=1,
    max_size=5,
)


def _name_at(text: str) -> int:
    """Where a value's name starts (after ``<id ``), or a live range's (column 4); -1 on other lines."""
    if text.startswith("    "):
        return 4
    k = text.find("<")
    return text.find(" ", k) + 1 if k >= 0 and " " in text[k:] else -1


def _apply(ws: Workspace, path: str, lines: list[str], version: int, frac: float, what: str) -> None:
    apply_edit(ws, path, lines, version, frac, what, _name_at)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(sorted(FILES)),
    edits=EDITS,
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_patched_models_and_spliced_tokens_equal_a_fresh_read(tmp_path, monkeypatch, kind, edits, encoding):
    monkeypatch.setattr(semantic_tokens, "LIGHT_LINES", 0)  # every document counts as long
    src = FILES[kind]
    path = str(tmp_path / src.name)
    shutil.copy(src, path)
    text = src.read_text()
    ws = Workspace()
    ws.open(path, text, 1)
    a = ws.analysis(path)
    enc = _encoder(ws.document(path).lines, encoding)
    data = enc(semantic_tokens.document_tokens(ws, path), 0)
    memo = token_reuse.buffer_memo_of(a, data, encoding)
    assert memo is not None
    lines = text.split("\n")
    for v, (frac, what) in enumerate(edits, start=2):
        _apply(ws, path, lines, v, frac, what)
        a = ws.analysis(path)
        enc = _encoder(ws.document(path).lines, encoding)
        spliced = token_reuse.reuse_buffer_encoded(memo, a, encoding, enc)
        if a.buffers.patched is not None and memo is not None and a.buffers.patched.source == memo.serial:
            assert spliced is not None  # a model patched from the memo's: its tokens are spliced
        if spliced is None:
            data = enc(semantic_tokens.document_tokens(ws, path), 0)
            memo = token_reuse.buffer_memo_of(a, data, encoding)
        else:
            memo, data = spliced, spliced.data
    assert ws.document(path).lines == lines
    fresh_ws = Workspace()
    fresh_path = str(tmp_path / "fresh" / src.name)
    (tmp_path / "fresh").mkdir(exist_ok=True)
    fresh_ws.open(fresh_path, "\n".join(lines), 1)
    fresh = fresh_ws.analysis(fresh_path)
    assert differences(a.buffers, fresh.buffers) == []
    assert a.read_diagnostics == fresh.read_diagnostics
    assert data == _encoder(lines, encoding)(semantic_tokens.document_tokens(fresh_ws, fresh_path), 0)


def test_an_edit_inside_a_record_is_patched_by_the_workspace(tmp_path):
    """Through the workspace: the edited file's next analysis is a patched model (not a fresh read)."""
    src = FILES["values"]
    path = str(tmp_path / src.name)
    shutil.copy(src, path)
    ws = Workspace()
    ws.open(path, src.read_text(), 1)
    before = ws.analysis(path).buffers
    lines = src.read_text().split("\n")
    ln = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("  "))  # a position item
    _apply(ws, path, lines, 2, ln / len(lines), "space")
    after = ws.analysis(path).buffers
    assert after.patched is not None and after.patched.source == before.serial
