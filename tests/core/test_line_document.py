"""The editor's line store keeps its text's length through edits (`LineDocument.chars`), which is what an open
document's `Analysis.size` answers: the same as counting the joined lines, after any sequence of edits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_lsp.core.document import LineDocument, text_length
from hlo_lsp.core.workspace import Workspace
from tests.fixtures import DATA

PIECES = ["", "a", "é", "\n", "\r\n", "\r", "x\ny", "\n\n", "%add.1 = f32[] add(%p, %q)", "\U0001f600"]
MODULE = DATA / "jax-cpu" / "mlp_sgd" / "module_0000.jit_train_step.cpu_after_optimizations.txt"


@st.composite
def edits(draw):
    start = draw(st.sampled_from(["", "\ufeff", "one\ntwo\r\nthree\rfour", "x" * 50]))
    steps = draw(
        st.lists(
            st.tuples(
                st.integers(-2, 12),
                st.integers(-2, 60),
                st.integers(-2, 12),
                st.integers(-2, 60),
                st.lists(st.sampled_from(PIECES), max_size=4).map("".join),
            ),
            max_size=25,
        )
    )
    return start, steps


@settings(max_examples=300, deadline=None)
@given(edits())
def test_the_length_follows_every_edit(case):
    start, steps = case
    doc = LineDocument(start)
    assert doc.chars == len("\n".join(doc.lines))
    for sl, sc, el, ec, text in steps:
        doc.apply(sl, sc, el, ec, text)
        assert doc.chars == len("\n".join(doc.lines)) == text_length(doc.lines)
    doc.replace_all(start + "\r\nend")
    assert doc.chars == len("\n".join(doc.lines))


def test_an_open_modules_size_is_its_text_length_after_edits():
    ws = Workspace()
    path = str(MODULE)
    ws.open(path, MODULE.read_text(), 1)
    a = ws.analysis(path)
    assert a.hlo is not None and a.size == len("\n".join(a.lines))
    doc = ws.document(path)
    for k, (line, text) in enumerate([(5, "  "), (12, "\n\n"), (3, "é")], start=2):
        e = doc.apply(line, 0, line, 0, text)
        ws.edited(path, k, [e])
        a = ws.analysis(path)
        assert a.size == len("\n".join(a.lines)) == len("\n".join(doc.lines))
