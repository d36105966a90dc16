"""Pass-by-pass dumps in the editor: an instruction's history in its hover, lenses that step between pass files
and versions, what a pass did as a read-only document (`core.passes`). Every answer comes from the history the
worker thread built after the file opened (`Workspace.warm`); until then, none (the server asks for lenses again).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.passes.history import CHANGED, MADE, REMOVED, PassHistory, Version
from hlo_lsp.core.passes.names import PassFile
from hlo_lsp.core.passes.report import diff_text, pass_diff, summary, trace_text
from hlo_lsp.core.workspace import Workspace

SHOW_PASS_FILE = "hlo.showPassFile"  # arguments: a file URI, then a 0-based line (the server shows it)
SHOW_PREVIOUS = "hlo.showPreviousVersion"  # arguments: a file URI, then the instruction's 0-based line
PASS_DIFF = "hlo.passDiff"
PASS_TRACE = "hlo.passTrace"
MAX_INSTRUCTION_LENSES = 20_000  # a file with more instructions gets its file lenses only
MAX_LINKS = 12  # version links in a hover


@dataclass(frozen=True, slots=True)
class PassLens:
    range: Range
    title: str
    command: str = ""
    arguments: tuple = ()


class PassError(Exception):
    """A pass request that cannot be answered, with the reason for the user."""


def _history(ws: Workspace, path: str) -> tuple[PassHistory, int] | None:
    h = ws.passes.get(path)
    if h is None:
        return None
    i = h.index_of(path)
    return None if i is None else (h, i)


def _link(f: PassFile, line: int | None) -> str:
    uri = f"file://{f.path}" if f.path.startswith("/") else f.path
    return f"{uri}#L{line + 1}" if line is not None else uri


def _short(f: PassFile) -> str:
    return f.seq_text or ("before" if f.kind == "before" else "after")


def hover_section(ws: Workspace, path: str, name: str) -> tuple[str, str] | None:
    """(Markdown, plain text) of the instruction's pass history, for its hover; None outside a pass history."""
    got = _history(ws, path)
    if got is None:
        return None
    h, i = got
    versions = h.trace(name)
    if not versions:
        return None
    text = summary(name, versions)
    steps = [v for v in versions if v.change in (MADE, CHANGED, REMOVED)]
    links = []
    for v in steps[:MAX_LINKS]:
        mark = "" if v.index != i else " (this file)"
        links.append(f"[{_short(v.file)} {v.change}{mark}]({_link(v.file, v.line)})")
    if len(steps) > MAX_LINKS:
        links.append(f"{len(steps) - MAX_LINKS} more")
    absorbed = _absorbed(ws, h, i, path, name)
    md = f"**Passes** {text}  \n" + (absorbed[0] + "  \n" if absorbed else "") + " · ".join(links)
    prev, nxt = h.previous_version(i, name), h.next_version(i, name)
    nav = []
    if prev is not None:
        nav.append(f"[◀ previous version ({_short(prev.file)})]({_link(prev.file, prev.line)})")
    if nxt is not None:
        nav.append(f"[next version ({_short(nxt.file)} {nxt.change}) ▶]({_link(nxt.file, nxt.line)})")
    gone = next((v for v in versions if v.change == REMOVED), None)
    if gone is not None and gone.successors:  # where it ended up: what the pass that removed it made of it
        now = [(s, h.locate(gone.index, s)) for s in gone.successors[:4]]
        nav.append(
            f"now in {_short(gone.file)}: "
            + ", ".join(f"[%{s}]({_link(gone.file, at[0])})" for s, at in now if at is not None)
            + (f" and {len(gone.successors) - 4} more" if len(gone.successors) > 4 else "")
        )
    if nav:
        md += "  \n" + " · ".join(nav)
    plain = f"Passes: {text}" + (f"\n{absorbed[1]}" if absorbed else "")
    return md, plain


def _absorbed(ws: Workspace, h: PassHistory, i: int, path: str, name: str) -> tuple[str, str] | None:
    """A fusion's instructions as they stood before the pass that made its fused computation."""
    a = ws.try_analysis(path)
    mod = a.hlo if a is not None else None
    ins = mod.instruction(name) if mod is not None else None
    if ins is None or ins.opcode != "fusion" or not ins.called:
        return None
    got = h.absorbed(i, ins.called[0])
    if got is None or not got[1]:
        return None
    k, found = got
    before = h.steps[k].file
    md = ", ".join(f"[%{n}]({_link(before, ln)})" for n, ln in found[:MAX_LINKS])
    more = f" and {len(found) - MAX_LINKS} more" if len(found) > MAX_LINKS else ""
    made = h.pass_at(k + 1) or h.steps[k + 1].file.label()
    label = f"in {_short(before)}, before {made}"
    return f"**Absorbed** ({label}) {md}{more}", f"Absorbed ({label}): " + ", ".join(n for n, _ in found)


def lenses(ws: Workspace, path: str) -> list[PassLens]:
    """The file's place in the history (previous and next files, what its pass did) on line 0; on each instruction
    that a pass made or changed, how many passes changed it (the command opens its previous version)."""
    got = _history(ws, path)
    if got is None:
        return []
    h, i = got
    step = h.steps[i]
    top = Range(0, 0, 0, 0)
    out = [PassLens(top, f"pass file {i + 1} of {len(h.steps)}: {step.file.label()}")]
    if i > 0:
        prev = h.steps[i - 1].file
        what = step.change_text() + ("" if step.identical else " instructions")
        what = "same as the file before" if what == "same as before" else what
        out.append(PassLens(top, what, PASS_DIFF, (path,)))
        out.append(PassLens(top, f"◀ {_short(prev)}", SHOW_PASS_FILE, (prev.path, 0)))
    if i + 1 < len(h.steps):
        out.append(PassLens(top, f"{_short(h.steps[i + 1].file)} ▶", SHOW_PASS_FILE, (h.steps[i + 1].file.path, 0)))
    a = ws.try_analysis(path)
    mod = a.hlo if a is not None else None
    if mod is None or len(mod.instructions) > MAX_INSTRUCTION_LENSES:
        return out
    for k in range(len(mod.instructions)):
        ins = mod.make_instruction(k)
        n = len(h.changed_by.get(ins.name, ()))
        made = h.made_at.get(ins.name)
        if made is None or (made == 0 and n == 0):
            continue
        made_by = h.steps[made].file
        by = h.pass_at(made)
        title = "in the input" if made == 0 else f"made by {by or made_by.label()} ({_short(made_by)})"
        if n:
            title += f" · changed by {n} pass{'es' if n != 1 else ''}"
        out.append(PassLens(ins.name_range, title, SHOW_PREVIOUS, (path, ins.line)))
    return out


def neighbor(ws: Workspace, path: str, line: int, direction: str) -> Version | None:
    """The previous or next version (``direction`` "previous" / "next") of the instruction on ``line`` of
    ``path``'s file; None when there is none."""
    got = _history(ws, path)
    if got is None:
        raise PassError(f"{os.path.basename(path)}: not a file of a pass-by-pass dump (or its history is being read)")
    h, i = got
    a = ws.try_analysis(path)
    mod = a.hlo if a is not None else None
    ins = mod.instruction_at_line(line) if mod is not None else None
    if ins is None:
        raise PassError(f"no instruction on line {line + 1} of {os.path.basename(path)}")
    return h.previous_version(i, ins.name) if direction == "previous" else h.next_version(i, ins.name)


def diff_document(ws: Workspace, path: str, paths: bool = False) -> tuple[str, str]:
    """(title, text) of what the pass of ``path``'s file did, against the file before it (``paths``: each line
    as ``/path:line``, see `diff_text`)."""
    got = _history(ws, path)
    if got is None:
        raise PassError(f"{os.path.basename(path)}: not a file of a pass-by-pass dump (or its history is being read)")
    h, i = got
    if i == 0:
        raise PassError(f"{os.path.basename(path)} is the first file of its history: nothing before it")
    d = pass_diff(h, i)
    f = h.steps[i].file
    return f"Pass diff: {f.label()}", diff_text(d, paths=paths)


def trace_document(ws: Workspace, path: str, name: str) -> tuple[str, str]:
    got = _history(ws, path)
    if got is None:
        raise PassError(f"{os.path.basename(path)}: not a file of a pass-by-pass dump (or its history is being read)")
    h, _ = got
    versions = h.trace(name)
    if not versions:
        raise PassError(f"%{name} is in no file of this history")
    return f"Pass history: %{name}", trace_text(h, name, versions)
