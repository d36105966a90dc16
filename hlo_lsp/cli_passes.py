"""``hlo-lsp passes DIR``: a module's pass-by-pass dump (``--xla_dump_hlo_pass_re=.*``) in pass order, one
instruction's history through it (``--trace NAME``), or what one pass did (``--diff SEQ``); `core.passes`."""

from __future__ import annotations

import json
import os

from hlo_lsp.cli_insight import _emit, _fail
from hlo_lsp.core.passes.history import PassHistory
from hlo_lsp.core.passes.names import PassFile, parse_pass_name, pass_modules
from hlo_lsp.core.passes.report import diff_text, pass_diff, passes_json, passes_text, trace_json, trace_text


def _matches(key: tuple[str, str], want: str) -> bool:
    module_id, module = key
    return want in (module, module_id, f"module_{module_id}.{module}", f"module_{module_id}")


def _modules(target: str, module: str | None) -> tuple[str, dict[tuple[str, str], list[PassFile]]] | str:
    """(folder, the modules asked for) or why there are none."""
    folder = target if os.path.isdir(target) else os.path.dirname(os.path.abspath(target))
    if not os.path.exists(target):
        return f"{target}: no such file or folder"
    found = pass_modules(folder)
    if not os.path.isdir(target):
        f = parse_pass_name(target)
        if f is None or f.key not in found:
            return f"{target}: not a file of a pass-by-pass dump (module_NNNN.<module>.SSSS.<pipeline>...txt)"
        found = {f.key: found[f.key]}
    if module is not None:
        found = {k: v for k, v in found.items() if _matches(k, module)}
        if not found:
            names = ", ".join(f"module_{i}.{m}" for i, m in pass_modules(folder)) or "none"
            return f"{folder}: no module {module!r} with pass files (modules with pass files: {names})"
    if not found:
        return (
            f"{folder}: no pass-by-pass files here (XLA writes them with "
            "--xla_dump_to=DIR --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*)"
        )
    return folder, found


def passes(target: str, module: str | None, trace: str | None, diff: str | None, fmt: str) -> int:
    got = _modules(target, module)
    if isinstance(got, str):
        return _fail(got)
    folder, found = got
    if (trace or diff) and len(found) > 1:
        names = ", ".join(f"module_{i}.{m}" for i, m in found)
        return _fail(f"{folder}: {len(found)} modules have pass files ({names}); choose one with --module")
    out_json: list[dict] = []
    texts: list[str] = []
    for files in found.values():
        h = PassHistory(files)
        if trace:
            name = trace.lstrip("%")
            versions = h.trace(name)
            if not versions:
                return _fail(f"%{name} is in no file of module_{files[0].module_id}.{files[0].module}'s history")
            out_json.append(trace_json(h, name, versions))
            texts.append(trace_text(h, name, versions))
        elif diff:
            i = next((k for k, s in enumerate(h.steps) if s.file.seq_text == diff or s.file.seq == _int(diff)), None)
            if i is None:
                return _fail(f"no pass file with sequence number {diff} (see hlo-lsp passes {target})")
            if i == 0:
                return _fail(f"file {diff} is the first of the history: nothing before it to compare")
            d = pass_diff(h, i)
            out_json.append(d.as_json())
            texts.append(diff_text(d))
        else:
            out_json.append(passes_json(h))
            texts.append(passes_text(h, folder))
    if fmt == "json":
        _emit(json.dumps(out_json[0] if (trace or diff) else out_json, indent=1))
    else:
        _emit("\n".join(texts).rstrip("\n"))
    return 0


def _int(s: str) -> int | None:
    return int(s) if s.isascii() and s.isdigit() else None
