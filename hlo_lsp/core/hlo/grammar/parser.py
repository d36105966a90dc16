"""Lazy construction of the LALR parser for grammar/hlo.lark.

Nothing is built at import time.  The first call to `get_parser()` builds the parser (about 0.1 s),
using lark's ``cache`` so later processes load the tables from a file in the user's cache directory
(``$XDG_CACHE_HOME/hlo-lsp`` or ``~/.cache/hlo-lsp``), never in the source tree or site-packages.  When
that directory cannot be written the parser is built without a cache.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from hlo_lsp.core.resources import grammar_path

START_RULES = ("module", "header", "stack_frame_index", "computation", "instruction", "computation_layout")

_lock = threading.Lock()
_parser = None


def cache_dir() -> Path:
    """The per-user cache directory for parser tables (it may not exist yet)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hlo-lsp"


def _cache_file(grammar_text: str) -> str | None:
    """A writable cache file path keyed by the grammar text and lark version; None when not writable."""
    import lark

    digest = hashlib.sha256((lark.__version__ + "\0" + grammar_text).encode()).hexdigest()[:16]
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError:
        return None
    return str(directory / f"hlo-grammar-{digest}.lark.cache")


def get_parser():
    """The shared lark parser (built on first use; thread-safe)."""
    global _parser
    if _parser is not None:
        return _parser
    with _lock:
        if _parser is None:
            import lark

            text = grammar_path("hlo.lark").read_text(encoding="utf-8")
            options = dict(parser="lalr", lexer="contextual", start=list(START_RULES), keep_all_tokens=True)
            cache = _cache_file(text)
            parser = None
            if cache is not None:
                try:
                    parser = lark.Lark(text, cache=cache, **options)
                except OSError:
                    parser = None
            if parser is None:
                parser = lark.Lark(text, **options)
            _parser = parser
    return _parser


def is_built() -> bool:
    """True once `get_parser()` has built the parser (tests use it to prove laziness)."""
    return _parser is not None
