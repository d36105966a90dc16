"""Quick fixes: applying the preferred fix to a faulted real module gives back the original text, and the fixed
text has no error or warning left."""

from __future__ import annotations

import re

from hlo_lsp.core.diagnostics import Range, Severity
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.code_actions import code_actions
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.fixtures import DATA

REAL = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt"))
OLD_STYLE = next(DATA.glob("seeds/001_*.txt"))


def apply(text: str, edits) -> str:
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start_line, e.range.start_col), reverse=True):
        r = e.range
        assert r.start_line == r.end_line
        line = lines[r.start_line]
        lines[r.start_line] = line[: r.start_col] + e.new_text + line[r.end_col :]
    return "\n".join(lines)


def _typo_in_operand(text: str) -> tuple[str, int, int, str] | None:
    """(faulted text, line, column, original name): one operand `%name` whose name gets a doubled letter."""
    lines = text.split("\n")
    for n, line in enumerate(lines):
        m = re.search(r" = \S+ (add|multiply|subtract|fusion)\(%([^\s,()]+)", line)
        if m:
            name = m.group(2)
            typo = name[0] + name  # doubled first letter
            col = m.start(2)
            lines[n] = line[:col] + typo + line[col + len(name) :]
            return "\n".join(lines), n, col, name
    return None


def test_rename_undefined_operand_restores_real_modules():
    fixed = 0
    for p in REAL:
        original = p.read_text()
        fault = _typo_in_operand(original)
        if fault is None:
            continue
        text, n, col, name = fault
        ws = Workspace()
        path = str(p.resolve())
        ws.open(path, text)
        actions = code_actions(ws, path, Range(n, col + 1, n, col + 1))
        assert actions, (p.name, n)
        best = [a for a in actions if a.preferred]
        assert len(best) == 1 and best[0].diagnostic.code == "undefined-operand"
        assert best[0].title == f"Rename `{name[0] + name}` to `{name}`"
        assert apply(text, best[0].edits[path]) == original
        ws.change(path, apply(text, best[0].edits[path]))
        assert not [d for d in document_diagnostics(ws, path) if d.severity >= Severity.WARNING]
        fixed += 1
    assert fixed >= 15


def test_written_operand_shape_fix_restores_old_style_module():
    original = OLD_STYLE.read_text()
    lines = original.split("\n")
    done = 0
    for n, line in enumerate(lines):
        m = re.search(r"\((\w+)\[(\d+)([\d,]*)\](\{[^}]*\})? %", line)
        if m is None or " parameter(" in line:
            continue
        bad = line[: m.start(2)] + str(int(m.group(2)) + 1) + line[m.end(2) :]
        text = "\n".join(lines[:n] + [bad] + lines[n + 1 :])
        ws = Workspace()
        path = str(OLD_STYLE.resolve())
        ws.open(path, text)
        actions = code_actions(ws, path, Range(n, m.start(1), n, m.start(1)))
        assert [a.diagnostic.code for a in actions] == ["operand-shape-mismatch"], (n, actions)
        assert apply(text, actions[0].edits[path]) == original
        done += 1
        if done == 6:
            break
    assert done == 6


def test_only_the_diagnostics_the_client_sent():
    p = REAL[0]
    text, n, col, _name = _typo_in_operand(p.read_text())
    ws = Workspace()
    path = str(p.resolve())
    ws.open(path, text)
    diags = [d for d in document_diagnostics(ws, path) if d.code == "undefined-operand"]
    assert code_actions(ws, path, Range(n, 0, n, 999), diags)
    other = [type(diags[0])(diags[0].range, diags[0].severity, "syntax-error", "x")]
    assert code_actions(ws, path, Range(n, 0, n, 999), other) == []
    assert code_actions(ws, path, Range(n + 1, 0, n + 1, 0)) == []


def test_no_actions_on_clean_or_missing_documents():
    ws = Workspace()
    p = str(REAL[0].resolve())
    assert code_actions(ws, p, Range(0, 0, 10_000, 0)) == []
    assert code_actions(ws, "/nonexistent/x.hlo", Range(0, 0, 0, 0)) == []
