"""Locate data files shipped with the package (the lark grammars).

In a wheel the top-level ``grammar/`` folder is installed as ``hlo_lsp/_grammar`` (hatch force-include);
in a source checkout it sits beside the package.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent


def grammar_path(name: str) -> Path:
    """Path of grammar file ``name`` (e.g. ``"hlo.lark"``); raises FileNotFoundError naming both places tried."""
    for candidate in (_PKG / "_grammar" / name, _PKG.parent / "grammar" / name):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"grammar {name!r} not found in {_PKG / '_grammar'} or {_PKG.parent / 'grammar'}")
