"""The tokens a line's pattern finds where no name is (`semantic_tokens._generic`) are taken as the pattern gives
them, in order and never overlapping, instead of being queued and sorted one by one (the first way, kept here as the
oracle): the same tokens either way, on every line of the real dumps in tests/data (HLO modules and buffer files)
and on lines made to put names where the pattern also matches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import semantic_tokens as st

DATA = Path(__file__).resolve().parents[1] / "data"
LINES_PER_FILE = 600  # the first lines of each file, and every line longer than LONG after them
LONG = 1000


def _one_by_one(acc: st._Line, text: str, pattern: re.Pattern) -> None:
    """The tokenizer's first way, written out here as the oracle: each match queued as `_Line.add` did, the queue
    sorted by start, then merged with the tokens already taken one candidate at a time."""
    acc.flush()
    pending = [
        (m.start(), m.end(), st._T[m.lastgroup], 0)
        for m in pattern.finditer(text)
        if m.lastgroup is not None and m.end() > m.start() and m.start() < st.MAX_LINE
    ]
    pending.sort(key=lambda c: c[0])
    old = acc.accepted
    merged: list[st.Token] = []
    i = 0
    last_end = -1
    for start, end, typ, mods in pending:
        while i < len(old) and old[i].start < start:
            merged.append(old[i])
            last_end = old[i].end
            i += 1
        if start < last_end or (i < len(old) and old[i].start < end):
            continue
        merged.append(st.Token(acc.line, start, end, typ, mods))
        last_end = end
    merged.extend(old[i:])
    acc.accepted = merged


def _dumps() -> list[Path]:
    files = sorted(p for p in DATA.rglob("*") if p.suffix in (".txt", ".hlo") and p.stat().st_size < 3_000_000)
    return [p for p in files if "HloModule" in p.read_text(errors="replace")[:4096] or "buffer" in p.name]


def _lines_to_check(lines: list[str]) -> list[int]:
    return list(range(min(len(lines), LINES_PER_FILE))) + [
        i for i in range(LINES_PER_FILE, len(lines)) if len(lines[i]) > LONG
    ]


def _both_ways(monkeypatch, ws: Workspace, path: str, lines: list[str]) -> tuple[list, list, int]:
    picked = _lines_to_check(lines)
    fast = [t for ln in picked for t in st.semantic_tokens(ws, path, ln, ln)]
    with monkeypatch.context() as m:
        m.setattr(st, "_generic", _one_by_one)
        slow = [t for ln in picked for t in st.semantic_tokens(ws, path, ln, ln)]
    return fast, slow, len(picked)


def _written(monkeypatch, path: Path, text: str):
    """``text`` written to ``path`` and read; its analysis and the tokens of its lines both ways, once equal."""
    path.write_text(text)
    ws = Workspace()
    ws.open(str(path), text, 1)
    a = ws.analysis(str(path))
    fast, slow, _ = _both_ways(monkeypatch, ws, str(path), a.lines)
    assert fast == slow
    return a, fast


def test_the_same_tokens_on_every_real_dump(monkeypatch):
    files = _dumps()
    assert len(files) >= 40, "the real dumps of tests/data are missing"
    kinds_seen = set()
    tokens = 0
    for p in files:
        ws = Workspace()
        text = p.read_text(errors="replace")
        ws.open(str(p), text, 1)
        a = ws.analysis(str(p))
        if a.hlo is None and a.buffers is None:
            continue
        kinds_seen.add("hlo" if a.hlo is not None else "buffers")
        fast, slow, _ = _both_ways(monkeypatch, ws, str(p), a.lines)
        assert fast == slow, p.relative_to(DATA)
        tokens += len(fast)
    assert kinds_seen == {"hlo", "buffers"}
    assert tokens > 100_000


def test_the_same_tokens_where_names_and_the_pattern_meet(monkeypatch, tmp_path):
    """Names that read as shapes, words, numbers or attribute keys; numbers inside strings and comments; a line
    longer than `MAX_LINE` cut inside a token."""
    shapes = ", ".join(f"/*index={i}*/f32[{i},2]{{1,0}}" for i in range(st.MAX_LINE // 20))
    text = (
        "HloModule s32, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n"
        "%f32 (s32: f32[2], ROOT: f32[2]) -> f32[2] {\n"
        "  %s32 = f32[2]{0} parameter(0)\n"
        "  %ROOT = f32[2]{0} parameter(1)\n"
        '  ROOT %size = f32[2]{0} add(f32[2]{0} %s32, f32[2]{0} %ROOT), metadata={op_name="x=1 f32[3]" source_line=7}\n'
        "}\n\n"
        "ENTRY %e (p: f32[2]) -> f32[2] {\n"
        "  %p = f32[2]{0} parameter(0)\n"
        '  %t = (f32[2]{0}) tuple(%p), frontend_attributes={k="12 /*c*/ 3"}\n'
        f'  %long = ({shapes}) custom-call(%p), custom_call_target="x"\n'
        "  ROOT %r = f32[2]{0} fusion(%p, %p), kind=kLoop, calls=%f32\n"
        "}\n"
    )
    a, fast = _written(monkeypatch, tmp_path / "names.hlo", text)
    assert a.hlo is not None
    assert len(a.lines[11]) > st.MAX_LINE
    assert all(t.start < st.MAX_LINE for t in fast)
    on_long = [t for t in fast if t.line == 11]
    assert len(on_long) > st.MAX_LINE // 20  # the shapes and index comments up to the cut


@pytest.mark.parametrize("name", ["f32", "s32", "ROOT", "size", "12"])
def test_a_buffer_line_whose_names_read_as_the_pattern_does(monkeypatch, tmp_path, name):
    """A buffer file's value and instruction names where the pattern finds a shape, a word or a number."""
    text = (
        "BufferAssignment:\n"
        f"allocation 0: size 16, output shape is |f32[4]|, maybe-live-out:\n"
        f" value: <7 {name} @0> (size=16,offset=0): f32[4]{{0}}\n"
        "\nUsed values:\n"
        f"<7 {name} @0>\n"
        f" positions:\n  {name}\n uses:\n"
        f"  {name}, operand 0\n"
    )
    a, fast = _written(monkeypatch, tmp_path / "module_0000.x.cpu_after_optimizations-buffer-assignment.txt", text)
    assert a.buffers is not None
    assert fast
