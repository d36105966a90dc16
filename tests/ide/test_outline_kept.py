"""An HLO module's outline is kept over edits that cannot change it (`symbols.outline_kept`): after random edit
sequences, whenever it says kept, the outline of the edited text (read fresh, in another workspace) is the
outline made before the edits; an edit it rejects makes the outline again, and the next edits are judged
against that one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import symbols
from hlo_lsp.ide.symbols import document_symbols, outline_kept, outline_shape

PATH = "/m/module.hlo"
BUDGET = 12  # instructions listed in the whole outline: most computations here list none


def _module(n: int) -> str:
    out = ["HloModule m, is_scheduled=true", ""]
    for k in range(n):
        out += [
            f"%f.{k} (p.{k}: f32[4]) -> f32[4] {{",
            f"  %p.{k} = f32[4]{{0}} parameter(0)",
            f"  %a.{k} = f32[4]{{0}} add(%p.{k}, %p.{k})",
            f"  ROOT %m.{k} = f32[4]{{0}} multiply(%a.{k}, %p.{k})",
            "}",
            "",
        ]
    out += [
        "ENTRY %main (x: f32[4]) -> f32[4] {",
        "  %x = f32[4]{0} parameter(0)",
        "  ROOT %c = f32[4]{0} call(%x), to_apply=%f.0",
        "}",
        "",
    ]
    return "\n".join(out)


TEXT = _module(12)
REPLACEMENTS = [
    None,  # a space appended
    "",
    "}",
    "  %z = f32[4]{0} negate(%x)",
    "%g (q: f32[4]) -> f32[4] {",
    "  ROOT %z = f32[4]{0} negate(%p.3)",
]
EDITS = st.lists(
    st.tuples(st.integers(0, TEXT.count("\n")), st.sampled_from(range(len(REPLACEMENTS))), st.booleans()),
    min_size=1,
    max_size=6,
)


def _outline(text: str) -> list:
    ws = Workspace()
    ws.open(PATH, text, 1)
    return document_symbols(ws, PATH)


@pytest.fixture(autouse=True)
def small_budget(monkeypatch):
    monkeypatch.setattr(symbols, "OUTLINE_BUDGET", BUDGET)


@settings(max_examples=60, deadline=None)
@given(edits=EDITS)
def test_a_kept_outline_is_the_outline_of_the_edited_text(edits):
    ws = Workspace()
    ws.open(PATH, TEXT, 1)
    a = ws.analysis(PATH)
    shape, outline, since = outline_shape(a.hlo), document_symbols(ws, PATH), []
    for version, (line, how, split) in enumerate(edits, start=2):
        doc = ws.document(PATH)
        line = min(line, len(doc.lines) - 1)
        old = doc.lines[line]
        new = old + " " if REPLACEMENTS[how] is None else REPLACEMENTS[how]
        if split:
            new += "\n"  # a line more: never kept
        edit = doc.apply(line, 0, line, len(old), new)
        ws.edited(PATH, version, [edit])
        since.append((edit.first, edit.old_count, edit.new_count))
        text = "\n".join(doc.lines)
        now = ws.analysis(PATH)
        if outline_kept(now.hlo, shape, since):
            assert _outline(text) == outline
        else:
            shape, outline = outline_shape(now.hlo), _outline(text)
        since = []


def test_an_edit_inside_an_unlisted_computation_keeps_the_outline_and_one_elsewhere_does_not():
    ws = Workspace()
    ws.open(PATH, TEXT, 1)
    mod = ws.analysis(PATH).hlo
    shape = outline_shape(mod)
    lines = TEXT.split("\n")
    last = max(i for i, x in enumerate(lines) if x.startswith("  %a."))  # in %f.11, which lists nothing
    first = lines.index("  %a.0 = f32[4]{0} add(%p.0, %p.0)")  # in %f.0, listed
    entry = lines.index("  %x = f32[4]{0} parameter(0)")
    assert outline_kept(mod, shape, [(last, 1, 1)])
    assert not outline_kept(mod, shape, [(first, 1, 1)])
    assert not outline_kept(mod, shape, [(entry, 1, 1)])
    assert not outline_kept(mod, shape, [(last, 1, 2)])  # a line more
    assert not outline_kept(mod, shape, [(0, 1, 1)])  # the module's header
    assert not outline_kept(mod, shape, [])
