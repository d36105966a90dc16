"""A file's `TextLines` know the text's length without cutting a line (`TextLines.chars`, `text_length`): kept,
compressed, or let go and read back from the file. Counted line by line, a buffer file whose text was let go
read every line back from disk (60 ms in the background while a hover waited)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_lsp.core.document import DiskDocument, TextLines, text_length

TEXTS = st.lists(st.text(alphabet="ab \t%", max_size=12), max_size=700).map("\n".join)


@settings(max_examples=60, deadline=None)
@given(TEXTS)
def test_chars_is_the_texts_length_kept_and_compressed(text):
    lines = TextLines(text)
    assert lines.chars() == len(text) == text_length(list(lines))
    lines.compact()
    assert lines.chars() == len(text) == text_length(lines)


@pytest.mark.parametrize("text", ["", "a", "a\n", "\n\n", "x\ny\n\nz" * 300])
def test_chars_of_a_file_let_go_reads_nothing_back(text, tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    path.write_bytes(text.encode())
    st_ = os.stat(path)
    doc = DiskDocument(path.read_text())
    doc.release(str(path), (st_.st_mtime, st_.st_size))
    monkeypatch.setattr(TextLines, "_read", lambda self, k: pytest.fail("a line was read back from the file"))
    assert doc.lines.chars() == len(text) == text_length(doc.lines)
