"""Every real HLO module (in ../shared and tests/data) validates with no error or warning."""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.hlo.grammar import validate_module

from .helpers import DATA, SHARED, hlo_files, require_found


def _check(paths):
    for path in paths:
        text = path.read_text(encoding="utf-8")
        result = validate_module(text)
        bad = [
            (d.range.start_line + 1, d.code, d.message) for d in result.diagnostics if d.severity >= Severity.WARNING
        ]
        assert bad == [], f"{path}: {bad[:5]}"
        # Every computation header in the text is in the outline (counted independently).
        headers = sum(
            1
            for line in text.split("\n")
            if line.rstrip().endswith("{")
            and not line.startswith((" ", "\t"))
            and not line.startswith(("HloModule",))
            and "=" not in line.split("(")[0]
        )
        assert len(result.computations) == headers, path


def test_shared_dumps_are_clean():
    files = hlo_files(SHARED) if SHARED.is_dir() else []
    require_found(files, "HLO modules in the shared corpus")
    _check(files)


def test_repo_data_dumps_are_clean():
    files = hlo_files(DATA)
    require_found(files, "HLO modules in tests/data")
    _check(files)
