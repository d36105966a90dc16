"""A buffer file's model patched for an edit (`buffers.patch`) equals a fresh read of the edited text: after random
edit sequences on real dumps, each version patched from the one before when the patch allows it."""

from __future__ import annotations

import re
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_lsp.core.buffers import read_buffers
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.patch import LISTS, _columns, patch, plus
from tests.fixtures import DATA

STEM = DATA / "jax-cpu" / "loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations"
FILES = {
    "assignment": Path(f"{STEM}-buffer-assignment.txt"),
    "values": Path(f"{STEM}-buffer-assignment-values.txt"),
    "live-range": Path(f"{STEM}-live-range.txt"),
}
_SCALARS = (
    "kind",
    "total_bytes_used",
    "total_bytes_used_line",
    "live_range_available",
    "live_range_max",
    "live_range_line",
    "peak_step",
    "peak_line",
    "peak_breakdown_total",
    "stack_trace",
    "memory_report",
    "read_count",
    "end_saw",
    "end_lr_parts",
    "has_cr",
)


def differences(a: BufferDoc, b: BufferDoc) -> list[str]:
    """What differs between two models (every field, every column, each allocation's view of its rows)."""
    out = [f for f in _SCALARS if getattr(a, f) != getattr(b, f)]
    for name in LISTS:
        x, y = getattr(a, name), getattr(b, name)
        out += [f"{name}.{c}" for c in [*_columns(x), "wide"] if getattr(x, c) != getattr(y, c)]
    if a.allocations != b.allocations:
        out.append("allocations")
    elif any(
        x.header != y.header or list(x.assignments) != list(y.assignments) for x, y in zip(a.allocations, b.allocations)
    ):
        out.append("allocations' rows or text")
    if a.used_values != b.used_values or any(
        x.positions != y.positions or x.uses != y.uses or x.from_instruction != y.from_instruction
        for x, y in zip(a.used_values, b.used_values)
    ):
        out.append("used values' parts")
    if a.occurrences != b.occurrences:
        out.append("occurrences")
    if a.diagnostics != b.diagnostics:
        out.append("diagnostics")
    # the lines each model reads its records from (a read keeps the text, a patch the editor's lines)
    texts = [d.used_values.text for d in (a, b)] + [d.allocations.text for d in (a, b)]
    if any(t is None for t in texts) or len({tuple(t) for t in texts}) != 1:
        out.append("text")
    return out


def edited(lines: list[str], kind: str, where: float, extra: str) -> list[str]:
    """``lines`` with one edit of ``kind`` at the line ``where`` (a fraction of the file) of them."""
    out = list(lines)
    ln = min(int(where * len(out)), len(out) - 1)
    line = out[ln]
    if kind == "space":
        out[ln] = line + " "
    elif kind == "chop":
        out[ln] = line[:-1]
    elif kind == "mid":
        out[ln] = line[: len(line) // 2] + extra + line[len(line) // 2 :]
    elif kind == "digit":
        k = next((i for i in range(len(line) - 1, -1, -1) if line[i].isdigit()), None)
        if k is not None:
            out[ln] = line[:k] + str((int(line[k]) + 1) % 10) + line[k + 1 :]
    elif kind == "delete":
        del out[ln]
    elif kind == "duplicate":
        out.insert(ln, line)
    elif kind == "insert":
        out.insert(ln, extra)
    elif kind == "split":
        out[ln : ln + 1] = [line[: len(line) // 2], line[len(line) // 2 :]]
    elif kind == "join" and ln + 1 < len(out):
        out[ln : ln + 2] = [line + out[ln + 1]]
    return out


EXTRA = st.sampled_from(
    [
        "",
        " ",
        "x",
        "garbage",
        "  garbage",
        "    garbage",
        "allocation 9999: size 8, maybe-live-out:",
        " value: <9999 zz @0> (size=8,offset=0): f32[2]{0}",
        "<9999 zz @0>",
        " positions:",
        "  zz",
        " from instruction: %zz = f32[] parameter(0)",
        "    zz{}:1-2",
        "    1:zz",
        "Used values:",
        "  BufferLiveRange:",
        "HloLiveRange (max 3):",
        "BufferAssignment:",
    ]
)
EDITS = st.lists(
    st.tuples(
        st.sampled_from(["space", "chop", "mid", "digit", "delete", "duplicate", "insert", "split", "join"]),
        st.floats(0, 1),
        EXTRA,
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.parametrize("kind", sorted(FILES))
@settings(max_examples=60, deadline=None)
@given(edits=EDITS)
def test_a_patched_model_equals_a_fresh_read(kind, edits):
    lines = FILES[kind].read_text().split("\n")
    doc = read_buffers("\n".join(lines), kind)
    for what, where, extra in edits:
        new = edited(lines, what, where, extra)
        got = patch(doc, lines, new)
        fresh = read_buffers("\n".join(new), kind)
        if got is not None:
            assert differences(got, fresh) == [], (what, where, extra)
        doc, lines = (got if got is not None else fresh), new


@pytest.mark.parametrize("kind", sorted(FILES))
def test_typing_inside_a_record_is_patched_and_moves_the_rest(kind):
    """The edits of typing (a character on a line, a line added or removed) are patched, not read again: the
    property test above would pass if `patch` always declined."""
    lines = FILES[kind].read_text().split("\n")
    doc = read_buffers("\n".join(lines), kind)
    patched = 0
    tried = 0
    for where in (0.3, 0.5, 0.7):
        for what in ("space", "mid", "digit", "duplicate", "delete", "insert"):
            new = edited(lines, what, where, "x" if what == "mid" else "")
            if new == lines:
                continue  # a digit edit of a line without one
            tried += 1
            got = patch(doc, lines, new)
            if got is not None:
                patched += 1
                assert differences(got, read_buffers("\n".join(new), kind)) == []
                assert got.patched is not None and got.patched.source == doc.serial
    assert patched >= tried * 2 // 3, f"{patched} of {tried} edits patched"


def test_the_old_model_is_left_as_it_was():
    lines = FILES["assignment"].read_text().split("\n")
    doc = read_buffers("\n".join(lines), "assignment")
    before = read_buffers("\n".join(lines), "assignment")
    new = edited(lines, "delete", 0.5, "")
    assert patch(doc, lines, new) is not None
    assert differences(doc, before) == []


def test_files_with_records_outside_blocks_are_read_again():
    """The old single file and the memory-usage report are never patched: their sections span the file."""
    seed = next(p for p in sorted((DATA / "seeds").iterdir()) if "BufferAssignment:" in p.read_text())
    lines = seed.read_text().split("\n")
    doc = read_buffers("\n".join(lines), "single")
    assert doc.kind == "single"
    assert patch(doc, lines, edited(lines, "space", 0.5, "")) is None


@pytest.mark.parametrize("kind", sorted(FILES))
def test_a_file_with_crlf_line_ends_is_patched_as_it_is_read(kind):
    """The reader drops each line's ``\\r`` when the text has one; the patched model's checks see the lines so too."""
    lines = [line + "\r" for line in FILES[kind].read_text().split("\n")[:-1]] + [""]
    doc = read_buffers("\n".join(lines), kind)
    patched = 0
    for where in (0.3, 0.5, 0.95):
        for what in ("space", "delete", "insert", "mid"):
            new = edited(lines, what, where, "x")
            got = patch(doc, lines, new)
            if got is not None:
                patched += 1
                assert differences(got, read_buffers("\n".join(new), kind)) == [], (what, where)
    assert patched >= 8


@pytest.mark.parametrize("kind", sorted(FILES))
def test_a_carriage_return_typed_into_a_block_or_taken_from_it_is_seen_by_the_patched_model(kind):
    """Whether the text holds a ``\r`` (the reader then drops each line's) is known from the old model outside
    the edited block: typing the first one in, or taking the only one out, must change it as a read would."""
    lines = FILES[kind].read_text().split("\n")
    doc = read_buffers("\n".join(lines), kind)
    assert not doc.has_cr
    patched = 0
    for where in (0.3, 0.5, 0.95):
        ln = min(int(where * len(lines)), len(lines) - 1)
        if not lines[ln]:
            continue
        with_cr = [*lines[:ln], lines[ln] + "\r", *lines[ln + 1 :]]
        got = patch(doc, lines, with_cr)
        fresh = read_buffers("\n".join(with_cr), kind)
        assert fresh.has_cr
        if got is not None:
            patched += 1
            assert differences(got, fresh) == [], where
            back = patch(got, with_cr, lines)
            if back is not None:
                assert not back.has_cr and differences(back, doc) == [], where
            # an edit elsewhere keeps it
            far = with_cr[:]
            k = (ln + len(lines) // 2) % len(lines)
            far[k] = " " + far[k]
            elsewhere = patch(got, with_cr, far)
            if elsewhere is not None:
                assert elsewhere.has_cr and differences(elsewhere, read_buffers("\n".join(far), kind)) == [], where
    assert patched >= 1


# a line inside a record, up to a name on it, per kind (typing in the name keeps the record's form)
_NAME_AT = {
    "assignment": re.compile(r"^ value: <\d+ "),
    "values": re.compile(r"^<\d+ "),  # a value's header (typing among its items reads those lines alone: below)
    "live-range": re.compile(r"^    (?=[A-Za-z][^:]*\{[0-9,]*\}:\d+-\d+$)"),
}


def _name_lines(kind: str, lines: list[str], start: int) -> list[tuple[int, int]]:
    """(line, a column inside its name) of each such line from ``start`` on."""
    pattern = _NAME_AT[kind]
    return [(i, m.end() + 1) for i in range(start, len(lines)) if (m := pattern.match(lines[i]))]


@pytest.mark.parametrize("kind", sorted(FILES))
def test_typing_on_in_a_record_reads_only_the_new_block(kind, monkeypatch):
    """A patch keeps its new block's read (`patch._kept_block`): the next edit in the same block takes it as its
    old block and reads only its own new block. Each version still equals a fresh read; an edit in another
    record, and one back in the first after it, read both blocks again."""
    import hlo_lsp.core.buffers.patch as patching

    reads: list[int] = []
    read_block = patching._read_block

    def counted(section, kind, lines):
        reads.append(len(lines))
        return read_block(section, kind, lines)

    monkeypatch.setattr(patching, "_read_block", counted)
    lines = FILES[kind].read_text().split("\n")
    doc = read_buffers("\n".join(lines), kind)
    found = _name_lines(kind, lines, len(lines) // 2)
    where, col = found[0]
    elsewhere, col2 = next((i, c) for i, c in found if i > where + 20)  # in another record
    per_edit = []
    for ln, c, text in [(where, col, "x"), (where, col + 1, "y"), (where, col + 2, "z"), (elsewhere, col2, "w"),
                        (where, col + 3, "v")]:  # fmt: skip
        new = [*lines[:ln], lines[ln][:c] + text + lines[ln][c:], *lines[ln + 1 :]]
        reads.clear()
        got = patch(doc, lines, new)
        assert got is not None, (ln, text)
        assert differences(got, read_buffers("\n".join(new), kind)) == []
        per_edit.append(len(reads))
        doc, lines = got, new
    assert per_edit == [2, 1, 1, 2, 2]


def _value_bodies(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) of the lines between each used value's header and its `` from instruction:`` line."""
    doc = read_buffers("\n".join(lines), "values")
    return [(v.line + 1, v.last_line) for v in doc.used_values if v.last_line > v.line + 1]


ITEM_EDITS = st.lists(
    st.tuples(
        st.sampled_from(["space", "chop", "mid", "digit", "delete", "duplicate", "insert", "split", "join"]),
        st.floats(0, 1),  # which value
        st.floats(0, 1),  # where in its body
        EXTRA | st.sampled_from(["  zz, operand 1", "  zz, operand x", "  zz {0,1}", "  zz {,}", " uses:", "  (none)"]),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(edits=ITEM_EDITS)
def test_edits_among_a_values_items_patch_to_a_fresh_read(edits):
    """Edits inside used values' bodies (their items, headings, `` from instruction:`` lines, and lines that
    are no item), each patched from the model before: equal to a fresh read of the text, whichever way
    `patch` took (the changed lines alone, the value's block, or declined)."""
    lines = FILES["values"].read_text().split("\n")
    doc = read_buffers("\n".join(lines), "values")
    for what, which, where, extra in edits:
        bodies = _value_bodies(lines)
        first, end = bodies[min(int(which * len(bodies)), len(bodies) - 1)]
        new = edited(lines, what, (first + where * (end - first)) / len(lines), extra)
        got = patch(doc, lines, new)
        fresh = read_buffers("\n".join(new), "values")
        if got is not None:
            assert differences(got, fresh) == [], (what, which, where, extra)
        doc, lines = (got if got is not None else fresh), new


def test_typing_among_a_values_items_reads_only_the_changed_lines(monkeypatch):
    """An edit among one value's items reads the changed lines alone (`patch._patch_items`), never the value's
    block: the benchmark's values file has values of 6,000 uses. Typing in an item's name, an item added, one
    removed, a line that is no item (reported) and the value's own lines moved by them: each equals a fresh
    read; an edit of the value's header line reads its block."""
    import hlo_lsp.core.buffers.patch as patching

    blocks: list[int] = []
    items: list[int] = []
    read_block, read_items = patching._read_block, patching._read_items
    monkeypatch.setattr(
        patching, "_read_block", lambda s, k, lines: blocks.append(len(lines)) or read_block(s, k, lines)
    )
    monkeypatch.setattr(patching, "_read_items", lambda p, lines: items.append(len(lines)) or read_items(p, lines))
    lines = FILES["values"].read_text().split("\n")
    doc = read_buffers("\n".join(lines), "values")
    first, end = max(_value_bodies(lines), key=lambda b: b[1] - b[0])  # the value with the most items
    item = next(i for i in range((first + end) // 2, end) if lines[i].startswith("  ") and "," in lines[i])  # a use
    header = first - 1
    steps = [
        ("type in a name", lambda ls: [*ls[:item], ls[item][:4] + "x" + ls[item][4:], *ls[item + 1 :]]),
        ("add an item", lambda ls: [*ls[: item + 1], ls[item], *ls[item + 1 :]]),
        ("remove it again", lambda ls: [*ls[: item + 1], *ls[item + 2 :]]),
        ("a line that is no item", lambda ls: [*ls[:item], "  garbage", *ls[item:]]),
        ("two lines replaced by one", lambda ls: [*ls[:item], ls[item] + "y", *ls[item + 2 :]]),
    ]
    for what, edit in steps:
        new = edit(lines)
        blocks.clear()
        items.clear()
        got = patch(doc, lines, new)
        assert got is not None, what
        fresh = read_buffers("\n".join(new), "values")
        assert differences(got, fresh) == [], what
        assert blocks == [], what
        pre, old_end, new_end = patching.changed_run(lines, new)
        assert items == [old_end - pre, new_end - pre], what
        doc, lines = got, new
    assert any(d.range.start_line == item for d in doc.diagnostics)  # the garbage line, reported where it is
    name_at = lines[header].index(" ") + 1
    new = [*lines[:header], lines[header][:name_at] + "x" + lines[header][name_at:], *lines[header + 1 :]]
    items.clear()
    got = patch(doc, lines, new)
    assert got is not None and blocks and not items
    assert differences(got, read_buffers("\n".join(new), "values")) == []


@settings(max_examples=200, deadline=None)
@given(
    typecode=st.sampled_from(["I", "q"]),
    values=st.lists(st.integers(0, 2**31 - 1), max_size=40),
    by=st.integers(-(2**31), 2**31),
)
def test_plus_adds_to_every_entry_at_once(typecode, values, by):
    """`patch.plus` (every entry's sum in one integer addition) equals adding one by one, for entries and sums
    in its range: up to the top bit of a digit, downwards to 0, and across digits that all carry or borrow."""
    values = [v + (2**31 if typecode == "I" else 2**62) * (i % 2) for i, v in enumerate(values)]  # high digits too
    top = 2 ** (32 if typecode == "I" else 63)
    if any(not 0 <= v + by < top for v in values):
        by = -min(values, default=0)  # the largest move down they allow (all sums >= 0; one is 0)
    col = array(typecode, values)
    got = plus(col, by)
    assert got.typecode == typecode and list(got) == [v + by for v in values]
    assert list(col) == values  # the column itself is left as it was
