"""``hlo-lsp peak DIR``: every module of a dump folder (and of the folders under it) ranked by XLA's peak and by
the bytes reserved at the allocated view's peak, each with its largest source lines (`core.memory.ranking`)."""

from __future__ import annotations

import json
import os

from hlo_lsp.cli_insight import _emit, _fail
from hlo_lsp.core.ranking import rank_modules, ranking_text


def rank_folder(folder: str, top: int, fmt: str) -> int:
    by_peak, by_reserved, bad = rank_modules(folder)
    if not by_peak and not bad:
        return _fail(f"{folder}: no module with buffer files under this folder (dump with --xla_dump_hlo_as_text)")
    if fmt == "json":
        data = {
            "folder": folder,
            "modules": [r.as_json(folder) for r in by_peak],
            "by_reserved": [os.path.relpath(r.path, folder) for r in by_reserved],
            "unreadable": [r.as_json(folder) for r in bad],
        }
        _emit(json.dumps(data, indent=1))
        return 0
    _emit(ranking_text(folder, by_peak, by_reserved, bad, top))
    return 0
