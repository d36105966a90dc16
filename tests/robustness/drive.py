"""Drive every core/IDE entry point over one document, the way the server would, and collect failures.

`drive_core` opens ``text`` at ``path`` in a fresh (or given) `Workspace` and calls every feature of
`hlo_lsp.ide` at a spread of positions (line starts, ends, middles, past the end). It returns the list of
exceptions raised (as ``"feature: repr"`` strings); the tests assert that list is empty. Nothing here compares
results with expected values: the hostile-input tests only prove that every call answers.
"""

from __future__ import annotations

import contextlib
import logging
import traceback

from hlo_lsp.core.workspace import ReadError, Workspace
from hlo_lsp.ide import calls, completion, hover, inlay, lens, navigation, rename, semantic_tokens, symbols
from hlo_lsp.ide.diagnostics import document_diagnostics


def positions(lines: list[str], limit: int = 40) -> list[tuple[int, int]]:
    """A spread of (line, col) cursor positions: starts, middles, ends, and one past the end of the text."""
    n = len(lines)
    step = max(1, n // limit)
    out = []
    for ln in range(0, n, step):
        text = lines[ln]
        for col in {0, len(text) // 3, len(text) // 2, max(0, len(text) - 1), len(text)}:
            out.append((ln, col))
        # a few columns on word boundaries: names, '%', '{', '(' are where most features look
        for ch in ("%", "{", "(", "=", "<", "@"):
            i = text.find(ch)
            if i >= 0:
                out.append((ln, min(len(text), i + 1)))
    out += [(n, 0), (n + 5, 3), (0, 10**6)]
    return out[: limit * 12]


def _call(errors: list[str], name: str, fn, *args):
    try:
        return fn(*args)
    except (ReadError, rename.RenameRefused):
        return None
    except RecursionError as e:  # reported apart: the issue names it
        errors.append(f"{name}: RecursionError {e}")
    except Exception as e:  # noqa: BLE001 - the test lists every failure
        errors.append(f"{name}: {type(e).__name__}: {e}\n{traceback.format_exc(limit=-4)}")
    return None


class _Logged(logging.Handler):
    """The exceptions the code under test logged (a rule that failed and was skipped, say): a traceback in the
    server's log is a failure too, even though the request answered."""

    def __init__(self, errors: list[str]):
        super().__init__(logging.ERROR)
        self.errors = errors

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            where = "".join(traceback.format_exception(*record.exc_info)[-4:])
            self.errors.append(f"logged: {record.getMessage()}\n{where}")


@contextlib.contextmanager
def logged_exceptions(errors: list[str]):
    """Add what the ``hlo_lsp`` loggers log with a traceback to ``errors`` while the block runs."""
    handler = _Logged(errors)
    root = logging.getLogger("hlo_lsp")
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def drive_core(path: str, text: str | None, ws: Workspace | None = None, limit: int = 40) -> list[str]:
    """Every feature over ``path`` (opened with ``text`` unless None: then read from disk); the failures, the
    exceptions logged with a traceback among them."""
    errors: list[str] = []
    with logged_exceptions(errors):
        _drive(errors, path, text, ws or Workspace(), limit)
    return errors


def _drive(errors: list[str], path: str, text: str | None, ws: Workspace, limit: int) -> None:
    if text is not None:
        ws.open(path, text, 1)
    a = _call(errors, "analysis", ws.analysis, path)
    lines = a.lines if a is not None else (text or "").split("\n")
    _call(errors, "diagnostics", document_diagnostics, ws, path)
    _call(errors, "document_symbols", symbols.document_symbols, ws, path)
    _call(errors, "folding_ranges", symbols.folding_ranges, ws, path)
    _call(errors, "document_links", symbols.document_links, ws, path)
    _call(errors, "workspace_symbols", symbols.workspace_symbols, ws, "", [path])
    _call(errors, "workspace_symbols", symbols.workspace_symbols, ws, "a", [path])
    _call(errors, "semantic_tokens", semantic_tokens.semantic_tokens, ws, path)
    _call(errors, "semantic_tokens_range", semantic_tokens.semantic_tokens, ws, path, 1, 3)
    _call(errors, "inlay_hints", inlay.inlay_hints, ws, path, 0, len(lines) + 2)
    _call(errors, "code_lenses", lens.code_lenses, ws, path)
    for ln, col in positions(lines, limit):
        _call(errors, "hover", hover.hover, ws, path, ln, col)
        _call(errors, "definition", navigation.definition, ws, path, ln, col)
        _call(errors, "type_definition", navigation.type_definition, ws, path, ln, col)
        _call(errors, "references", navigation.references, ws, path, ln, col, True)
        _call(errors, "highlights", navigation.highlights, ws, path, ln, col)
        _call(errors, "completion", completion.complete, ws, path, ln, col)
        _call(errors, "prepare_rename", rename.prepare_rename, ws, path, ln, col)
        _call(errors, "rename", rename.rename, ws, path, ln, col, "renamed.1")
        items = _call(errors, "call_prepare", calls.prepare, ws, path, ln, col) or []
        for it in items[:2]:
            _call(errors, "incoming", calls.incoming, ws, it)
            _call(errors, "outgoing", calls.outgoing, ws, it)
