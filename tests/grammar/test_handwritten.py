"""The hand-written corpus: valid modules give no error or warning; each invalid module gives its
expected diagnostic (code and line read from its first-line `// expect-...` comment)."""

from __future__ import annotations

import pytest

from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.hlo.grammar import validate_module

from .helpers import HANDWRITTEN, expectation

VALID = sorted((HANDWRITTEN / "valid").glob("*.hlo"))
INVALID = sorted((HANDWRITTEN / "invalid").glob("*.hlo"))


def test_corpus_size():
    assert len(VALID) >= 60 and len(INVALID) >= 60


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_module_is_clean(path):
    text = path.read_text()
    assert expectation(text) is None
    result = validate_module(text)
    assert [d for d in result.diagnostics if d.severity >= Severity.WARNING] == []
    assert result.computations, "a valid module has at least one computation"


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_module_reports_expected(path):
    text = path.read_text()
    exp = expectation(text)
    assert exp is not None, "an invalid module states its expected diagnostic on line 1"
    severity, line, code = exp
    result = validate_module(text)
    wanted = Severity.ERROR if severity == "error" else Severity.WARNING
    hits = [
        d
        for d in result.diagnostics
        if d.code == code and d.severity == wanted and d.range.start_line <= line <= d.range.end_line
    ]
    assert hits, [(d.range, d.code, d.message) for d in result.diagnostics]
    if severity == "warning":
        assert not [d for d in result.diagnostics if d.severity >= Severity.ERROR]
