"""Python source locations of an instruction, from its metadata and the module's source tables.

Current dumps carry ``stack_frame_id=N`` and four tables: ``FileNames``, ``FunctionNames``, ``FileLocations``
(file, function, line, columns) and ``StackFrames`` (file location, parent). XLA prints a frame's parent as the
parent's id plus one, so ``parent_frame_id=1`` means "no parent" and ``parent_frame_id=4`` means frame 3 (in the
corpus this is what makes every chain end at ``<module>``). Older dumps write ``source_file=`` and
``source_line=`` into the metadata instead.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from hlo_lsp.core.hlo.line import InstructionLine
from hlo_lsp.core.hlo.model import HloModule

MAX_STACK = 256
MAX_PARENTS = 4  # a relative file name is looked for beside the dump and in this many folders above it


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def allowed_source_file(dump_path: str, file: str, roots: list[str] | tuple[str, ...] = ()) -> str | None:
    """The real path of the existing regular file a dump names as a source (``FileNames``, ``source_file``),
    when it may be offered as a location: symlinks and ``..`` resolved first, it must be a Python source
    (``.py``, what XLA's stack frames name) or lie inside one of ``roots`` (the workspace folders) or the
    dump's own folder. None otherwise (missing, a FIFO, a device, ``/etc/shadow``, ``/proc/...``, a symlink
    leading out): the dump's text is all that is shown. The file is never opened here (a stat only)."""
    if not file or "\x00" in file:
        return None
    folder = os.path.realpath(os.path.dirname(os.path.abspath(dump_path)))
    bases = [""] if os.path.isabs(file) else []
    base = os.path.dirname(os.path.abspath(dump_path))
    if not bases:
        for _ in range(MAX_PARENTS):
            bases.append(base)
            parent = os.path.dirname(base)
            if parent == base:
                break
            base = parent
    allowed = [folder] + [os.path.realpath(r) for r in roots if r]
    for b in bases:
        real = os.path.realpath(os.path.join(b, file) if b else file)
        try:
            if not stat.S_ISREG(os.stat(real).st_mode):
                continue
        except (OSError, ValueError):
            continue
        if real.endswith(".py") or any(_inside(real, a) for a in allowed):
            return real
    return None


@dataclass(frozen=True, slots=True)
class SourceFrame:
    file: str
    function: str | None
    line: int  # one-based, as the dump writes it
    column: int | None = None  # one-based column where the dump has one
    end_line: int | None = None
    end_column: int | None = None
    frame_id: int | None = None
    file_location_id: int | None = None

    def label(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where} ({self.function})" if self.function else where


def _int(fields: dict[str, str], key: str) -> int | None:
    v = fields.get(key)
    return int(v) if v is not None and v.isascii() and v.isdigit() and len(v) < 12 else None


def file_location(mod: HloModule, loc_id: int, frame_id: int | None = None) -> SourceFrame | None:
    """The FileLocations row ``loc_id`` as a SourceFrame; None when the row or its file is missing."""
    row = mod.table_row("FileLocations", loc_id)
    if row is None:
        return None
    f = row.fields()
    fname = mod.table_row("FileNames", _int(f, "file_name_id") or -1)
    func = mod.table_row("FunctionNames", _int(f, "function_name_id") or -1)
    line = _int(f, "line")
    if fname is None or line is None:
        return None
    return SourceFrame(
        fname.string(),
        func.string() if func else None,
        line,
        _int(f, "column"),
        _int(f, "end_line"),
        _int(f, "end_column"),
        frame_id,
        loc_id,
    )


def stack(mod: HloModule, frame_id: int) -> list[SourceFrame]:
    """The call stack of StackFrames row ``frame_id``, innermost first; [] when the frame is unknown.
    Cycles and chains longer than MAX_STACK stop the walk."""
    out: list[SourceFrame] = []
    seen: set[int] = set()
    fid: int | None = frame_id
    while fid and fid not in seen and len(out) < MAX_STACK:
        seen.add(fid)
        row = mod.table_row("StackFrames", fid)
        if row is None:
            break
        f = row.fields()
        loc = file_location(mod, _int(f, "file_location_id") or -1, fid)
        if loc is not None:
            out.append(loc)
        parent = _int(f, "parent_frame_id")
        fid = parent - 1 if parent else None
    return out


def instruction_source(mod: HloModule, detail: InstructionLine) -> list[SourceFrame]:
    """The Python call stack that made an instruction (innermost first); [] when its metadata names none."""
    md = detail.metadata
    sf = md.get("stack_frame_id")
    if sf is not None and sf.text.isascii() and sf.text.isdigit() and len(sf.text) < 12:
        frames = stack(mod, int(sf.text))
        if frames:
            return frames
    file = md.get("source_file")
    line = md.get("source_line")
    if file is not None and line is not None and line.text.isascii() and line.text.isdigit() and len(line.text) < 12:
        return [SourceFrame(file.text, None, int(line.text))]
    return []
