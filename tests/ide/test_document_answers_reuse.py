"""Property tests: what the whole-document requests answer after random edit sequences, where the analysis is
patched in place rather than read again (the reuse an edit allows), equals what a fresh read of the final text
answers; and a semantic-token delta applied to the array the editor holds gives the fresh array.

Both the full tokens of a short document and the definition tokens of a long one (`LIGHT_LINES` lowered to 0)
are checked, and the definition tokens made from the previous version's after each edit (`token_reuse`).
Expected values come from a second workspace reading the final text from scratch."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_lsp.core.document import LineDocument  # noqa: F401  (the store the workspace edits)
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import semantic_tokens, symbols, token_reuse
from hlo_lsp.lsp.doc_answers import apply_token_edits, token_edits
from tests.fixtures import DATA

SRC = DATA / "jax-cpu" / "cond_switch" / "module_0000.jit_piecewise.cpu_after_optimizations.txt"
TEXT = SRC.read_text()
LINES = TEXT.split("\n")

# an edit: (line fraction, what): append a space, insert a blank line, delete the line, rename its defined name
# (with an ASCII letter, or with one outside the BMP: two UTF-16 units for one code point)
EDITS = st.lists(
    st.tuples(st.floats(0, 0.999), st.sampled_from(["space", "blank", "delete", "rename", "astral"])),
    min_size=1,
    max_size=6,
)


def _percent_name(text: str) -> int:
    """Where the name after a line's first ``%`` starts; -1 without one."""
    k = text.find("%")
    return k + 1 if k >= 0 else -1


def _apply(
    ws: Workspace, path: str, lines: list[str], version: int, frac: float, what: str, name_at=_percent_name
) -> None:
    """Apply one edit to the workspace's line store and to ``lines`` (the harness's copy of the text): a space
    appended, the last character cut (``chop``), a blank line inserted, the line deleted, or a letter inserted
    where ``name_at`` says the line's name starts (``rename``, ``astral``: one outside the BMP)."""
    doc = ws.document(path)
    ln = int(frac * len(lines))
    text = lines[ln]
    if what == "space":
        edit = doc.apply(ln, len(text), ln, len(text), " ")
        lines[ln] = text + " "
    elif what == "chop":
        if not text:
            return
        edit = doc.apply(ln, len(text) - 1, ln, len(text), "")
        lines[ln] = text[:-1]
    elif what == "blank":
        edit = doc.apply(ln, 0, ln, 0, "\n")
        lines.insert(ln, "")
    elif what == "delete" and ln + 1 < len(lines):
        edit = doc.apply(ln, 0, ln + 1, 0, "")
        del lines[ln]
    else:
        k = name_at(text)
        if k < 0 or what == "delete":
            return
        letter = "\U0001d51e" if what == "astral" else "z"
        edit = doc.apply(ln, k, ln, k, letter)
        lines[ln] = text[:k] + letter + text[k:]
    ws.edited(path, version, [edit])


def _answers(ws: Workspace, path: str) -> tuple:
    return (
        symbols.document_symbols(ws, path),
        symbols.folding_ranges(ws, path),
        [tuple(t) for t in semantic_tokens.document_tokens(ws, path)],
    )


def _edited_and_fresh(tmp_path, edits) -> tuple[tuple, tuple, list[int], list[int], list[str]]:
    path = str(tmp_path / SRC.name)
    ws = Workspace()
    ws.open(path, TEXT, 1)
    ws.analysis(path)
    before = _wire(semantic_tokens.document_tokens(ws, path))
    lines = list(LINES)
    for v, (frac, what) in enumerate(edits, start=2):
        _apply(ws, path, lines, v, frac, what)
        _answers(ws, path)  # asked after every edit, as an editor does
    assert ws.document(path).lines == lines  # the harness's own copy of the text agrees with the store
    edited = _answers(ws, path)
    fresh_ws = Workspace()
    fresh_ws.open(path, "\n".join(lines), 1)
    fresh = _answers(fresh_ws, path)
    return edited, fresh, before, _wire(fresh[2]), lines


def _wire(tokens) -> list[int]:
    return semantic_tokens.encode([(t[0], t[1], t[2] - t[1], t[3], t[4]) for t in tokens])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_answers_after_edits_equal_a_fresh_read(tmp_path, edits):
    edited, fresh, before, after, _ = _edited_and_fresh(tmp_path, edits)
    assert edited == fresh
    edit = token_edits(before, after)  # the delta from the tokens held before the edits to the fresh ones
    assert (
        apply_token_edits(before, [] if edit is None else [{"start": edit[0], "deleteCount": edit[1], "data": edit[2]}])
        == after
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_definition_tokens_after_edits_equal_a_fresh_read(tmp_path, monkeypatch, edits):
    monkeypatch.setattr(semantic_tokens, "LIGHT_LINES", 0)  # every document counts as long
    edited, fresh, _, _, lines = _edited_and_fresh(tmp_path, edits)
    assert edited == fresh
    names = {lines[t[0]][t[1] : t[2]] for t in fresh[2]}  # each token covers exactly a name
    assert names and all(n and " " not in n and "%" not in n for n in names)


@given(
    old=st.lists(st.integers(0, 3), max_size=60).map(lambda x: x[: len(x) // 5 * 5]),
    new=st.lists(st.integers(0, 3), max_size=60).map(lambda x: x[: len(x) // 5 * 5]),
)
def test_token_edit_turns_old_into_new(old, new):
    edit = token_edits(old, new)
    if old == new:
        assert edit is None
        return
    start, delete, data = edit
    assert start % 5 == 0 and delete % 5 == 0 and len(data) % 5 == 0
    assert apply_token_edits(old, [{"start": start, "deleteCount": delete, "data": data}]) == new


def test_outline_is_bounded_with_counts(tmp_path):
    """A budget smaller than the module: every computation listed, the children cut at the budget, the rest
    counted (a `… N more` entry, or the count in the detail of a block none of whose children were listed)."""
    path = str(tmp_path / SRC.name)
    ws = Workspace()
    ws.open(path, TEXT, 1)
    (mod,) = symbols.document_symbols(ws, path, total=3, per_block=2)
    comps = [ln for ln in LINES if ln and not ln.startswith((" ", "}", "HloModule")) and ln.rstrip().endswith("{")]
    assert [c.name for c in mod.children] == [
        ln.split()[1 if ln.startswith("ENTRY") else 0].lstrip("%") for ln in comps
    ]
    listed = [k for c in mod.children for k in c.children if k.kind != "key"]
    assert len(listed) == 3
    more = [k for c in mod.children for k in c.children if k.kind == "key"]
    assert more and all(k.name.startswith("… ") and "more instructions" in k.name for k in more)
    assert any("instructions" in c.detail and not c.children for c in mod.children)


def test_long_buffer_files_colour_every_recorded_name(tmp_path, monkeypatch):
    """Definitions-only tokens of a buffer file: the values file defines nothing, so its names (each
    `<id name ...>` value and instruction) are coloured, in document order, each token exactly a name."""
    monkeypatch.setattr(semantic_tokens, "LIGHT_LINES", 0)
    src = SRC.with_name(SRC.name.replace(".txt", "-buffer-assignment-values.txt"))
    lines = src.read_text().split("\n")
    ws = Workspace()
    toks = semantic_tokens.document_tokens(ws, str(src))
    assert toks == sorted(toks) and len(toks) >= sum(1 for x in lines if "<" in x)
    for ln, s, e, _, _ in toks:
        text = lines[ln][s:e]
        assert text and " " not in text and not text.startswith("<"), (ln, lines[ln], text)


def test_outline_lists_at_most_outline_blocks_computations(tmp_path, monkeypatch):
    """Past OUTLINE_BLOCKS computations: the first ones, the entry, one `… N more computations` entry; the
    folding ranges still cover every computation."""
    monkeypatch.setattr(symbols, "OUTLINE_BLOCKS", 2)
    path = str(tmp_path / SRC.name)
    ws = Workspace()
    ws.open(path, TEXT, 1)
    (mod,) = symbols.document_symbols(ws, path)
    comps = [ln for ln in LINES if ln and not ln.startswith((" ", "}", "HloModule")) and ln.rstrip().endswith("{")]
    assert len(comps) > 3
    names = [c.name for c in mod.children]
    assert names[:2] == [ln.split()[0].lstrip("%") for ln in comps[:2]]
    assert names[-1].startswith("… ") or any(
        ln.startswith("ENTRY") and ln.split()[1].lstrip("%") == names[-1] for ln in comps
    )
    more = [c for c in mod.children if c.kind == "key"]
    assert len(more) == 1 and more[0].name == f"… {len(comps) - 3} more computations"
    folds = {f.start_line for f in symbols.folding_ranges(ws, path)}
    assert all(LINES.index(ln) in folds for ln in comps)


def _encoder(lines: list[str], encoding: str):
    """The server's wire encoder (`handlers_document._encoder`) over ``lines`` in ``encoding``."""
    from hlo_lsp.lsp.handlers_document import _encoder, _Wire

    w = _Wire.__new__(_Wire)
    w.encoding, w.lines = encoding, lines
    return _encoder(w)


def _reused_after(tmp_path, edits, encoding: str = "utf-16") -> tuple[list, list, int, list[int], list[int]]:
    """Definition tokens made by `token_reuse` from the previous version's after each edit (afresh where it
    declines), the fresh tokens of the final text, how many edits were answered by reuse, and the wire data in
    ``encoding`` spliced by `token_reuse.reuse_encoded` against the fresh tokens' wire data."""
    path = str(tmp_path / SRC.name)
    ws = Workspace()
    ws.open(path, TEXT, 1)
    a = ws.analysis(path)
    tokens = semantic_tokens.definition_tokens(a)
    enc = _encoder(ws.document(path).lines, encoding)
    memo = token_reuse.memo_of(a, tokens, enc(tokens, 0), encoding)
    lines = list(LINES)
    reused = 0
    for v, (frac, what) in enumerate(edits, start=2):
        _apply(ws, path, lines, v, frac, what)
        a = ws.analysis(path)
        enc = _encoder(ws.document(path).lines, encoding)
        spliced = token_reuse.reuse_encoded(memo, a, encoding, enc)
        got = token_reuse.reuse(memo, a)
        assert (spliced is None) == (got is None)  # the data is spliced wherever the tokens are reused
        if got is None:
            got = list(semantic_tokens.document_tokens(ws, path))
            data = enc(got, 0)
            memo = token_reuse.memo_of(a, got, data, encoding)
        else:
            reused += 1
            assert spliced is not None and token_reuse.token_list(spliced.rows()) == got
            assert spliced == token_reuse.memo_of(a, got, spliced.data, encoding)  # the next version's memo
            data = spliced.data
            memo = spliced
    fresh_ws = Workspace()
    fresh_ws.open(path, "\n".join(lines), 1)
    fresh = [tuple(t) for t in semantic_tokens.document_tokens(fresh_ws, path)]
    return [tuple(t) for t in got], fresh, reused, data, _encoder(lines, encoding)(fresh, 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS, encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_reused_tokens_after_edits_equal_a_fresh_read(tmp_path, monkeypatch, edits, encoding):
    """Tokens made from the previous version's, edit after edit, equal the fresh tokens of the final text; so
    does their wire data spliced from the previous version's, in every encoding; and the delta from the tokens
    held before equals the fresh array."""
    monkeypatch.setattr(semantic_tokens, "LIGHT_LINES", 0)  # every document counts as long
    got, fresh, _, data, fresh_data = _reused_after(tmp_path, edits, encoding)
    assert got == fresh
    assert data == fresh_data
    before = _wire(semantic_tokens.definition_tokens(_fresh_analysis(tmp_path)))
    edit = token_edits(before, _wire(got))
    assert apply_token_edits(
        before, [] if edit is None else [{"start": edit[0], "deleteCount": edit[1], "data": edit[2]}]
    ) == _wire(fresh)


def test_spliced_data_of_a_renamed_line_counts_utf16_units(tmp_path, monkeypatch):
    """An instruction renamed with a letter outside the BMP: the spliced data gives its token two UTF-16 units
    more than in code points, as a fresh encoding does, and the edit was answered by reuse."""
    monkeypatch.setattr(semantic_tokens, "LIGHT_LINES", 0)
    rows = [i for i, x in enumerate(LINES) if x.startswith("  ") and " = " in x]
    got, fresh, reused, data, fresh_data = _reused_after(tmp_path, [(rows[len(rows) // 2] / len(LINES), "astral")])
    assert reused == 1 and got == fresh and data == fresh_data
    k = next(i for i, t in enumerate(got) if t[0] == rows[len(rows) // 2])
    assert data[5 * k + 2] == got[k][2] - got[k][1] + 1


def _fresh_analysis(tmp_path):
    ws = Workspace()
    path = str(tmp_path / ("orig_" + SRC.name))
    ws.open(path, TEXT, 1)
    return ws.analysis(path)


def test_tokens_are_reused_after_edits_inside_instruction_lines(tmp_path, monkeypatch):
    """A space appended to instruction lines and a blank line inserted in a computation are answered by reuse
    (not by a fresh pass), and still equal a fresh read."""
    monkeypatch.setattr(semantic_tokens, "LIGHT_LINES", 0)
    rows = [i for i, x in enumerate(LINES) if x.startswith("  ") and " = " in x]
    edits = [
        (rows[len(rows) // 2] / len(LINES), "space"),
        (rows[1] / len(LINES), "space"),
        (rows[-2] / len(LINES), "blank"),
    ]
    got, fresh, reused, data, fresh_data = _reused_after(tmp_path, edits)
    assert got == fresh and data == fresh_data
    assert reused == len(edits)
