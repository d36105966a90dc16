"""A buffer file's outline and folding ranges as the server writes them straight as text
(`handlers_document._buffer_outline_json`, `folding_json`) equal the same answers made the general way, and the
folding ranges are every multi-line entry of the unbounded outline: on real dumps of every layout (split TPU and
CPU files, the old single file with addresses), in every position encoding, with a non-ASCII character at the
end of an allocation's last line, with a bounded outline (entries that list values and entries that do not, the
``… N more allocations`` entry) and with a number too large for a column."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import symbols
from hlo_lsp.lsp.doc_answers import DocumentAnswers
from hlo_lsp.lsp.handlers_document import _dumps, _symbol_json, _Wire, document_symbols_json, folding_json
from tests.fixtures import DATA

OOM = DATA / "oom" / "long_mesh" / "module_0000.jit_train_step.cl_933746096.after_optimizations"
FILES = {
    "tpu-assignment": Path(f"{OOM}-buffer-assignment.txt"),  # colors, parameters, outputs, preallocated temps
    "cpu-assignment": DATA / "jax-cpu" / "mlp_sgd" / "module_0000.jit_train_step.cpu_after_optimizations"
    "-buffer-assignment.txt",
    "single": DATA / "seeds" / "000_45ad91e6d67cdb55.txt",
    "values": Path(f"{OOM}-buffer-assignment-values.txt"),
    "live-range": Path(f"{OOM}-live-range.txt"),
}


def _server(tmp_path, name: str, text: str, encoding: str):
    path = str(tmp_path / name)
    ws = Workspace()
    ws.open(path, text, 1)
    ws.analysis(path, wait=True)
    ls = SimpleNamespace(
        ws=ws,
        workspace=SimpleNamespace(position_encoding=encoding),
        lines_of=lambda p: ws.document(p).lines,
        answers=DocumentAnswers(lambda p: 1),  # the outline memo's lock and versions
        client_capabilities=None,
    )
    return ls, path


def _parsed(result) -> list:
    return json.loads(b"".join(result.parts))


def _with_non_ascii_ends(text: str) -> str:
    """Every allocation's last value line with an ``é`` before its shape's last character (where the line still
    reads as a value line)."""
    lines = text.split("\n")
    for k in range(len(lines) - 1):
        if lines[k].startswith(" value: <") and not lines[k + 1].startswith(" value: <"):
            lines[k] = lines[k][:-1] + "é" + lines[k][-1]
    return "\n".join(lines)


@pytest.fixture
def small_outline(monkeypatch):
    """An outline bounded so that a small dump has entries that list values, entries that do not, and more
    allocations than it lists."""
    monkeypatch.setattr(symbols, "OUTLINE_BUDGET", 7)
    monkeypatch.setattr(symbols, "OUTLINE_CHILDREN", 3)
    monkeypatch.setattr(symbols, "OUTLINE_BLOCKS", 12)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("name", list(FILES))
@pytest.mark.parametrize("non_ascii", [False, True])
def test_outline_written_straight_equals_the_symbols(tmp_path, small_outline, encoding, name, non_ascii):
    text = FILES[name].read_text()
    if non_ascii:
        text = _with_non_ascii_ends(text)
    ls, path = _server(tmp_path, FILES[name].name, text, encoding)
    fast = _parsed(document_symbols_json(ls, path))
    w = _Wire(ls, path)
    general = json.loads(b"".join(_dumps([_symbol_json(w, s) for s in symbols.document_symbols(ls.ws, path)]).parts))
    assert fast == general
    if "assignment" in name or name == "single":
        names = [s["name"] for s in fast]
        assert names[:12] == [f"allocation {i}" for i in range(12)]
        assert names[12].startswith("… ") and names[12].endswith(" more allocations")
        listed = [s for s in fast[:12] if "children" in s]
        assert listed and len(listed) < 12  # both kinds of entry were written
        if non_ascii and encoding == "utf-8":  # é is two bytes: each entry ends one past its line's characters
            lines = ls.ws.analysis(path).lines
            ends = [(s["range"]["end"]["character"], len(lines[s["range"]["end"]["line"]])) for s in fast[:12]]
            assert any(e == n + 1 for e, n in ends)


def test_an_allocation_too_large_for_its_column_is_outlined_with_its_size(tmp_path):
    huge = 1 << 70
    text = (
        "BufferAssignment:\n"
        f"allocation 0: size {huge}, maybe-live-out:\n"
        f" value: <1 x @0> (size={huge},offset=0): f32[4]{{0}}\n"
        "allocation 1: size 16:\n"
        " value: <2 y @0> (size=16,offset=0): f32[4]{0}\n"
    )
    ls, path = _server(tmp_path, "m-buffer-assignment.txt", text, "utf-16")
    doc = ls.ws.analysis(path).buffers
    assert doc.allocations[0].size == huge and list(doc.allocations.ints("size")) == [huge, 16]
    fast = _parsed(document_symbols_json(ls, path))
    assert [s["detail"] for s in fast] == [f"{huge} bytes, maybe-live-out", "16 bytes, temp"]
    w = _Wire(ls, path)
    assert fast == json.loads(
        b"".join(_dumps([_symbol_json(w, s) for s in symbols.document_symbols(ls.ws, path)]).parts)
    )


def _multi_line_entries(items) -> set[tuple[int, int]]:
    out = set()
    for s in items:
        if s.kind != "key" and s.range.end_line > s.range.start_line:
            out.add((s.range.start_line, s.range.end_line))
            out |= _multi_line_entries(s.children)
    return out


@pytest.mark.parametrize("name", list(FILES))
def test_folding_is_every_multi_line_entry_of_the_unbounded_outline(tmp_path, monkeypatch, name):
    monkeypatch.setattr(symbols, "OUTLINE_BLOCKS", 10**9)
    ls, path = _server(tmp_path, FILES[name].name, _with_non_ascii_ends(FILES[name].read_text()), "utf-16")
    unbounded = symbols.document_symbols(ls.ws, path, total=10**9, per_block=10**9)
    want = sorted(_multi_line_entries(unbounded))
    assert want  # allocations, used values, live-range sections
    got = [(f["startLine"], f["endLine"]) for f in _parsed(folding_json(ls, path))]
    assert got == want == [(f.start_line, f.end_line) for f in symbols.folding_ranges(ls.ws, path)]


@pytest.mark.parametrize(
    "path", sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))[:4], ids=lambda p: p.parent.name
)
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_a_modules_outline_text_made_a_symbol_at_a_time_is_its_json(tmp_path, path, encoding):
    """`_symbol_pieces` (children written one at a time) gives the text of the whole symbol tree encoded at once."""
    from hlo_lsp.lsp.doc_answers import JSON_ENCODE
    from hlo_lsp.lsp.handlers_document import _symbol_pieces

    def _symbol_text(w, s) -> str:
        pieces: list[str] = []
        _symbol_pieces(w, s, pieces)
        return "".join(pieces)

    ls, p = _server(tmp_path, path.name, path.read_text() + "\n// é", encoding)
    w = _Wire(ls, p)
    syms = symbols.document_symbols(ls.ws, p)
    assert syms and syms[0].children
    assert [_symbol_text(w, s) for s in syms] == [JSON_ENCODE(_symbol_json(w, s)) for s in syms]
    assert json.loads(b"".join(document_symbols_json(ls, p).parts)) == [_symbol_json(w, s) for s in syms]
