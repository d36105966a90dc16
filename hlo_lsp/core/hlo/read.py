"""Read HLO module text into the model (`read_hlo`): the rows pass (`bulk`) when the text is machine-written,
else the instruction scan (`text`) and the structure from the column-0 lines (`structure`).
"""

from __future__ import annotations

from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.structure import read_structure
from hlo_lsp.core.hlo.text import scan_instructions
from hlo_lsp.core.process import collector, turns


def read_hlo(text: str, lines: list[str] | None = None, check: bool = True) -> HloModule:
    """Index HLO module text; never raises. Lines it cannot read become ``syntax-error`` diagnostics.

    ``lines``, when given, must be ``text.split("\\n")`` (an editor's line store): the module then shares that
    list, so an in-place edit of a line is seen by the module (see `incremental.patch_module`). With ``check``
    (the default) a machine-written module is read by the rows pass, which also checks every computation and
    summarizes it for the verifier (`HloModule.pre_checked`); without, only the index is built (the reader
    alone, as `benchmarks/bench_reader.py` times it)."""
    if text.startswith("\ufeff"):
        text = text[1:]
        lines = None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = None
    if lines is None:
        lines = split_in_pieces(text) if turns.in_background() else text.split("\n")
    mod = HloModule(lines=lines)
    # the rows pass reads the text itself when its first line is the module header (as XLA writes it): a newline
    # before it, which the patterns that start with one would need to see line 0, is then no use (line 0 holds no
    # computation and no row; `structure.bulk_headers` reads the header with one): the copy that adds it was one C
    # call of 13-15 ms for the 23 MB module (fresh pages), 50-60 ms for the 100 MB one
    scan = text if text.startswith("HloModule") else "\n" + text
    # ~10^5 small objects: generational collections would cost a third of the time; a large model is frozen
    with collector.paused(keep=len(text) >= collector.KEEP_MIN_CHARS):
        from hlo_lsp.core.hlo.bulk import read_rows

        if check and read_rows(mod, scan):
            return mod  # machine-written: read and checked in one pass
        mod = HloModule(lines=lines)
        turns.give_way()  # (background reads) one C call: 13 ms for the 23 MB module's copy, its fresh pages mostly
        scan = "\n" + text
        offsets, names, line_of, col_of, roots = scan_instructions(scan)
        flags = bytearray(len(names))
        for r in roots:
            flags[r] = 1
        instrs = InstructionTable(names, line_of, col_of, flags, lines)
        read_structure(mod, scan, offsets, instrs, roots)
    return mod


SPLIT_PIECE_CHARS = 1 << 20  # characters of text a background read splits into lines in one C call


def split_in_pieces(text: str) -> list[str]:
    """``text.split("\\n")``, a piece of about `SPLIT_PIECE_CHARS` at a time (each up to a newline), giving way
    between (`turns.give_way`): one C call over a buffer file's 23 MB module held the GIL 23 ms, and Neovim's hover
    on the buffer file, sent as its module's background read began, waited for it (21.7 ms)."""
    lines: list[str] = []
    a = 0
    while (b := text.find("\n", a + SPLIT_PIECE_CHARS)) >= 0:
        lines += text[a:b].split("\n")  # the lines up to the one the newline at ``b`` ends
        a = b + 1
        turns.give_way()
    lines += text[a:].split("\n")
    return lines


# over "\n" + text: a computation header line; groups: 1 ENTRY, 2 name, 3 signature (text before the final `{`)
# (the lookaheads keep the name and the blanks after it whole, so a long line is scanned once, not once per
# shorter name: finditer was quadratic on a long column-0 line; the signature is taken greedily to the line's
# last `{`, the only one blanks alone can follow, which is the one the lazy form found char by char)
