"""The rows pass as `read_hlo`'s path for machine-written modules (`read_rows`): the instruction table, each
computation's checks and its verifier summary in one pass over the rows (`rows`), a large module read in two parts
at once, the later one in a forked child (`process.fork`); see `rows` for why the rows equal the per-line reader's.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple

from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.model import Computation, HloModule
from hlo_lsp.core.hlo.rows import NAME, NON_BLANK, PREFIX, ROOT, ROW, columns, row_calls, structurally_clean
from hlo_lsp.core.hlo.structure import bulk_computations
from hlo_lsp.core.process import fork as forked
from hlo_lsp.core.process import turns

SPLIT_MIN_CHARS = 2_000_000  # a module this large is read in two parts at once, the later one in a forked child
SPLIT_SHARE = 0.45  # of the text, the child's part (it also pickles its result, which the parent then unpickles)


class _Part(NamedTuple):
    """What `_read_part` read of a run of whole computations (instructions numbered from ``base``)."""

    base: int
    computations: list[Computation]
    names: list[str]
    line_of: array
    col_of: array
    flags: bytearray
    clean: list  # per computation: () clean, None not, or the callees not among the part's own computations
    summaries: list


def read_rows(mod: HloModule, scan: str) -> bool:
    """Read a machine-written module (``scan`` is "\\n" + its text) in one pass: the computations from the
    column-0 lines (`structure.bulk_computations`), then each computation's rows, from which come the instruction
    table, the structural checks of every computation (`is_clean`; one that is not clean is left for the
    per-line checks) and the verifier summaries. False (``mod`` then half-filled: start again) unless every
    line of every computation is a row.

    A large module is read in two parts at once: the later computations (from a closing line past
    1 - `SPLIT_SHARE` of the text) in a forked child (`process.fork`), the rest here, the child's part then appended
    (the same objects as read here, in the same order; computed here instead when the child fails)."""
    import hlo_lsp.core.hlo.rules.summary  # noqa: F401 - imported before the fork, not in the child (it reads rows)

    cut = _split_point(scan) if len(scan) >= SPLIT_MIN_CHARS and forked.ENABLED else None
    child = forked.start(_read_later_part, (scan, mod.lines, cut)) if cut is not None else None
    try:
        first = _read_part(mod, scan, 0, cut, 0)
    except BaseException:
        forked.discard(child)  # never left running (or unreaped) behind an error here
        raise
    if first is None:
        forked.discard(child)
        return False
    parts = [first]
    if cut is not None:
        later = forked.result(child)
        if later is None or later.base != len(first.names):  # no child, or it guessed the numbering wrong
            later = _read_part(HloModule(lines=mod.lines), scan, cut, None, len(first.names))
            if later is None:
                return False
        parts.append(later)
    _merge(mod, parts)
    return True


def _split_point(scan: str) -> int | None:
    """Where the later part starts: the newline ending the first closing line past 1 - `SPLIT_SHARE` of the
    text (None when there is none, or only blank lines follow it)."""
    c = scan.find("\n}\n", int(len(scan) * (1 - SPLIT_SHARE)))
    return c + 2 if c >= 0 and NON_BLANK.search(scan, c + 2) else None


def _read_later_part(arg: tuple[str, list[str], int]) -> _Part | None:
    """In the child: the computations from ``cut`` on, numbered after the instruction lines before ``cut``
    (counted as the lines starting with a blank: machine-written instruction lines are indented and nothing
    else is; the parent compares the numbering with its own count and reads the part itself when they differ)."""
    scan, lines, cut = arg
    base = scan.count("\n ", 0, cut) + scan.count("\n\t", 0, cut)
    return _read_part(HloModule(lines=lines), scan, cut, None, base)


def _read_part(mod: HloModule, scan: str, start: int, end: int | None, base: int) -> _Part | None:
    """The rows pass over the computations in ``scan[start:end]``, made and added to ``mod``; None unless
    every line of every computation there is a row."""
    from hlo_lsp.core.hlo.rules.summary import summarize  # the rules import this module

    offsets = bulk_computations(mod, scan, start, end)
    if offsets is None:
        return None
    comps = mod.computations
    known = mod.computation_by_name
    spans = [(scan.find("\n", h + 1), c) for h, c in offsets]  # each computation's instruction lines
    names: list[str] = []
    line_of = array("i")
    col_of = array("i")
    flags = bytearray()
    lines = mod.lines
    clean: list = []
    summaries = []
    findall = ROW.findall
    for k, (comp, (a, b)) in enumerate(zip(comps, spans)):
        if not k & 63:
            turns.give_way()  # a background read lets the requests under way go first
        rows = findall(scan, a, b)
        n = comp.end_line - comp.line - 1
        if len(rows) != n:
            return None
        lo = len(names)
        cols = columns(rows)
        if rows:
            names.extend(cols[NAME])
            col_of.extend(map(len, cols[PREFIX]))
            flags.extend(map(bool, cols[ROOT]))
        line_of.extend(range(comp.line + 1, comp.end_line))
        comp.instructions = range(base + lo, base + lo + n)
        r = flags.rfind(1, lo, lo + n)
        comp.root = base + r if r >= 0 else (base + lo + n - 1 if n else None)
        calls = _calls(rows, lo, lines, line_of, scan, a, b)
        if not structurally_clean(rows, cols):
            clean.append(None)
        else:  # the callees another part defines are looked up once the parts are together
            missing = tuple({cc for called in calls.values() for cc in called if cc not in known})
            clean.append(missing or ())  # () shared by every clean one
        summaries.append(summarize(mod, comp, rows, calls, cols))
    return _Part(base, comps, names, line_of, col_of, flags, clean, summaries)


def _merge(mod: HloModule, parts: list[_Part]) -> None:
    """The parts, in order, into ``mod`` (which holds the first part's computations already)."""
    comps = mod.computations
    by_comp = mod.computation_by_name
    names = parts[0].names
    line_of, col_of, flags = parts[0].line_of, parts[0].col_of, parts[0].flags
    clean, summaries = parts[0].clean, parts[0].summaries
    for p in parts[1:]:
        for c in p.computations:
            by_comp.setdefault(c.name, len(comps))
            comps.append(c)
        names += p.names
        line_of += p.line_of
        col_of += p.col_of
        flags += p.flags
        clean += p.clean
        summaries += p.summaries
    for k, entry in enumerate(clean):
        if entry:
            clean[k] = () if all(n in by_comp for n in entry) else None
    mod.instructions = InstructionTable(names, line_of, col_of, flags, mod.lines)
    mod.by_name = by = dict(zip(reversed(names), range(len(names) - 1, -1, -1)))
    mod.pre_checked = (clean, summaries)
    mod.rows_read = True
    # the users and callers maps are built later (`HloModule.build_maps`, in the background): until then a
    # module whose operands are all local answers `users` from one computation
    mod.local_names = len(by) == len(names) and all(c is not None for c in clean)


def _calls(rows, lo: int, lines: list[str], line_of, scan: str, a: int, b: int) -> dict[int, list[str]]:
    """`row_calls` of one computation's rows; {} at once when no line of it (``scan[a:b]``) holds ``=%`` or
    ``={%`` (the reader's condition for reading calls)."""
    if scan.find("=%", a, b) < 0 and scan.find("={%", a, b) < 0:
        return {}
    return row_calls(rows, lo, lines, line_of)
