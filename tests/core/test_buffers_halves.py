"""A buffer file read in two parts at once (`buffers.halves`: the later part in a forked child) gives the model of
one read of the whole text: on every values and assignment file of the real dumps, after random edits, and when
the child cannot help (forking off, the child failing, a later part that is no block) the whole text is read."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings

from hlo_lsp.core.buffers import halves, read_buffers
from hlo_lsp.core.buffers.reader import _Reader
from hlo_lsp.core.document import TextLines
from hlo_lsp.core.process import fork
from tests.core.test_buffers_patch import EDITS, FILES, differences, edited
from tests.fixtures import DATA

SPLIT = sorted(
    (p, "values" if p.name.endswith("-values.txt") else "assignment")
    for p in (DATA / "jax-cpu").glob("*/*-buffer-assignment*.txt")
)
pytestmark = pytest.mark.skipif(not fork.ENABLED, reason="forking is Linux's (elsewhere a file is read whole)")


def test_the_real_dumps_have_files_to_split():
    assert len([k for _, k in SPLIT if k == "values"]) >= 8 and len([k for _, k in SPLIT if k == "assignment"]) >= 8


@pytest.mark.parametrize("path,kind", SPLIT, ids=lambda v: v.name if hasattr(v, "name") else v)
def test_a_file_read_in_two_parts_equals_one_read(path, kind):
    text = path.read_text()
    lines = TextLines(text)
    got = halves.read_in_two(lines, kind, min_chars=0)
    whole = _Reader(text, kind).run()
    if got is None:  # only a file without a record's first line in its later part is read whole
        section, start, share = halves._RECORDS[kind]
        assert text.find(start, int(len(text) * (1 - share))) < 0
        return
    assert differences(got, whole) == []
    assert got.patched is None and got.used_values.text is lines and got.allocations.text is lines
    assert lines.offsets() == TextLines(text).offsets()  # joined from the parts' offsets, as a split makes them
    # the child's names are this process's interned strings (the module's other files share them)
    interned = [k is sys.intern(k) for k in got.occurrences.keys]
    assert interned == [k is sys.intern(k) or i for k, i in zip(whole.occurrences.keys, interned)]
    assert all(k is sys.intern(k) for records in (got.used_values, got.assignment_records) for k in records.key)


@pytest.mark.parametrize("kind", ["values", "assignment"])
@settings(max_examples=25, deadline=None)
@given(edits=EDITS)
def test_an_edited_file_read_in_two_parts_equals_one_read(kind, edits):
    """Garbage, headers of other sections and broken records anywhere: either part may hold them. The read in
    two parts either equals one read or declines."""
    lines = FILES[kind].read_text().split("\n")
    for what, where, extra in edits:
        lines = edited(lines, what, where, extra)
    text = "\n".join(lines)
    got = halves.read_in_two(TextLines(text), kind, min_chars=0)
    if got is not None:
        assert differences(got, _Reader(text, kind).run()) == []


def test_a_later_part_that_is_no_block_is_read_whole():
    """The child's lines open another section: its read is no block (`patch.read_block_text` declines), and the
    file is read as a whole."""
    text = FILES["values"].read_text()
    text = text + "BufferAssignment:\nallocation 0: size 4, parameter 0, shape |f32[]| at ShapeIndex {}:\n"
    assert halves.read_in_two(TextLines(text), "values", min_chars=0) is None
    assert differences(read_buffers(text, "values"), _Reader(text, "values").run()) == []


def test_without_the_child_the_file_is_read_whole(monkeypatch):
    """No fork (another platform, a child already) or a child that fails: `read_buffers` reads the whole text,
    and its model is the same."""
    text = FILES["values"].read_text()
    whole = _Reader(text, "values").run()
    monkeypatch.setattr(halves, "SPLIT_MIN_CHARS", 0)
    made: list = []
    read_in_two = halves.read_in_two

    def spied(t, k):
        made.append(read_in_two(t, k, min_chars=0))
        return made[-1]

    monkeypatch.setattr(halves, "read_in_two", spied)
    assert differences(read_buffers(text, "values"), whole) == []
    assert len(made) == 1 and made[0] is not None  # read in two parts
    monkeypatch.setattr(halves, "_read_later", lambda *a: 1 / 0)  # the child raises: no result
    assert differences(read_buffers(text, "values"), whole) == []
    assert len(made) == 2 and made[1] is None  # read whole
    monkeypatch.setattr(fork, "ENABLED", False)
    assert differences(read_buffers(text, "values"), whole) == []
    assert len(made) == 3 and made[2] is None


def test_a_failing_join_is_logged_and_the_file_read_whole(monkeypatch, caplog):
    text = FILES["values"].read_text()
    monkeypatch.setattr(halves, "SPLIT_MIN_CHARS", 0)
    read_in_two = halves.read_in_two
    monkeypatch.setattr(halves, "read_in_two", lambda t, k: read_in_two(t, k, min_chars=0))
    monkeypatch.setattr(halves, "_splice", lambda *a: [][0])  # a bug in the join
    assert differences(read_buffers(text, "values"), _Reader(text, "values").run()) == []
    assert "read whole" in caplog.text and "IndexError" in caplog.text


def test_a_small_file_other_kinds_and_a_carriage_return_are_read_whole():
    text = FILES["values"].read_text()
    assert halves.read_in_two(TextLines(text), "values") is None  # below SPLIT_MIN_CHARS
    assert halves.read_in_two(TextLines(FILES["live-range"].read_text()), "live-range", min_chars=0) is None
    assert halves.read_in_two(TextLines(text.replace("\n", "\r\n")), "values", min_chars=0) is None


def test_offsets_of_another_text_are_refused():
    lines = TextLines("a\nbc\n")
    with pytest.raises(ValueError):
        lines.know_offsets(TextLines("a\nb\n").offsets())
    lines.know_offsets(TextLines("a\nbc\n").offsets())
    assert list(lines) == ["a", "bc", ""]


def test_a_parameter_allocation_after_a_temp_in_the_later_part_is_read_in_two(caplog):
    """The child's allocations begin with a temp (no parameter shape index) and hold a parameter's (an index tuple)
    further on: that column mixes None and tuples, and only its strings are interned."""
    text = FILES["assignment"].read_text()
    blocks = re.findall(r"^allocation \d+: .*\n(?: value:.*\n)+", text, re.M)
    temp = max(blocks, key=len)  # the preallocated temp, most of the file
    parameter = next(b for b in blocks if " parameter " in b.split("\n")[0])
    text += temp + parameter  # the later part: that temp again, then a parameter's allocation
    section, start, share = halves._RECORDS["assignment"]
    at = text.find(start, int(len(text) * (1 - share))) + 1
    assert text[at:] == temp + parameter
    got = halves.read_in_two(TextLines(text), "assignment", min_chars=0)
    assert got is not None and "failed" not in caplog.text
    assert differences(got, _Reader(text, "assignment").run()) == []
    assert got.allocations.parameter_shape_index[-2:] == [None, ()]
