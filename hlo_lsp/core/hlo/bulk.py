"""The rows pass as `read_hlo`'s path for machine-written modules (`read_rows`): the instruction table, each
computation's checks and its verifier summary in one pass over the rows (`rows`), a computation that repeats an
earlier one but for its names read from that one (`_Template`); see `rows` for why the rows equal the per-line
reader's.

The module was once read in two parts at once, the later in a forked child. With the templates the read of the
23 MB benchmark module takes 0.45 s in one process (0.72 s before them), and the two parts took 0.55-0.7 s: on this
machine's two cores each process ran 40-70 % slower while the other ran, and the child's result (5 MB pickled,
then unpickled and merged here) cost 0.1 s more (`benchmarks/README.md`).
"""

from __future__ import annotations

import re
import sys
from array import array
from operator import itemgetter
from typing import TYPE_CHECKING

from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.rows import NAME, PREFIX, ROOT, ROW, columns, row_calls, row_uses, structurally_clean
from hlo_lsp.core.hlo.structure import bulk_computations
from hlo_lsp.core.process import pieces, turns

if TYPE_CHECKING:
    from hlo_lsp.core.hlo.rules.summary import Summary

TEMPLATES = True  # read a computation that differs from one read before in names alone from that one (`_Template`)
TEMPLATE_MAX_CHARS = 100_000  # a longer computation (an entry, say) is read on its own: it is never a repeat
TEMPLATE_TRIAL = 256  # after this many computations with fewer than a quarter repeats, stop looking for repeats
PIECE_CHARS = 1 << 17  # a computation longer than this is read a piece at a time (`_rows_in_pieces`: 1 ms a piece)
# A name where the rows pattern reads one (after `%`, the same characters); over a computation's lines it finds
# every instruction's name (the first on its line), operand and callee, and whatever else in the text looks so.
OCCURRENCE = re.compile(r"%([\w.\-]+)")


def read_rows(mod: HloModule, scan: str) -> bool:
    """Read a machine-written module (``scan`` is "\\n" + its text) in one pass: the computations from the
    column-0 lines (`structure.bulk_computations`), then each computation's rows, from which come the instruction
    table, the structural checks of every computation (`is_clean`; one that is not clean is left for the
    per-line checks) and the verifier summaries. False (``mod`` then half-filled: start again) unless every
    line of every computation is a row. A computation that repeats one read before but for its names is read from
    that one (`_Template`)."""
    from hlo_lsp.core.hlo.rules.summary import summarize  # the rules import this module

    offsets = bulk_computations(mod, scan)
    if offsets is None:
        return False
    comps = mod.computations
    known = mod.computation_by_name  # every computation of the module, made by `bulk_computations`
    spans = [(scan.find("\n", h + 1), c) for h, c in offsets]  # each computation's instruction lines
    names: list[str] = []
    line_of = array("i")
    col_of = array("i")
    flags = bytearray()
    lines = mod.lines
    clean: list = []  # per computation: () when clean, None when the per-line checks must look at it
    summaries: list[Summary | None] = []
    findall = ROW.findall
    templates: dict[str, _Template | None] = {}
    cut = OCCURRENCE.split  # text between names, name, text... (one pass for the text without names and the names)
    tried = repeats = 0
    read_from = array("i")  # per computation: the computation it repeats (`HloModule.repeats`), or -1
    for k, (comp, (a, b)) in enumerate(zip(comps, spans)):
        if not k & 63:
            turns.give_way()  # a background read lets the requests under way go first
        n = comp.end_line - comp.line - 1
        lo = len(names)
        key = None
        occ: list[str] = []
        if TEMPLATES and n and b - a <= TEMPLATE_MAX_CHARS and (tried < TEMPLATE_TRIAL or repeats * 4 >= tried):
            tried += 1
            parts = cut(scan[a:b])
            key = "%".join(parts[0::2])
            occ = parts[1::2]
            t = templates.get(key)
            if t is not None and t.fits(occ):
                repeats += 1
                if t.clean and t.computation not in mod.repeat_uses:
                    uses = t.relative_uses(scan)
                    if uses is not None:
                        mod.repeat_uses[t.computation] = uses
                names.extend(t.names(occ))
                col_of.extend(t.col_of)
                flags.extend(t.flags)
                line_of.extend(range(comp.line + 1, comp.end_line))
                comp.instructions = range(lo, lo + n)
                comp.root = lo + t.root
                calls = t.calls(occ)
                clean.append(() if t.clean and _known(calls, known) else None)
                summaries.append(t.summary_at(lo, calls))
                read_from.append(t.computation)
                continue
        rows = findall(scan, a, b) if b - a <= PIECE_CHARS else _rows_in_pieces(scan, a, b)
        if len(rows) != n:
            return False
        cols = columns(rows)
        if rows:
            names.extend(cols[NAME])
            col_of.extend(map(len, cols[PREFIX]))
            flags.extend(map(bool, cols[ROOT]))
        line_of.extend(range(comp.line + 1, comp.end_line))
        comp.instructions = range(lo, lo + n)
        r = flags.rfind(1, lo, lo + n)
        comp.root = r if r >= 0 else (lo + n - 1 if n else None)
        calls = _calls(rows, lo, lines, line_of, scan, a, b)
        structural = structurally_clean(rows, cols)
        clean.append(() if structural and _known(calls, known) else None)
        summary = summarize(mod, comp, rows, calls, cols)
        summaries.append(summary)
        read_from.append(-1)
        if key is not None and key not in templates:
            templates[key] = _Template.of(
                occ, cols, lines, comp, k, (a, b), col_of[lo:], flags[lo:], calls, structural, summary
            )
        elif len(rows) > pieces.PIECE:  # (no template keeps them: a long one's rows freed a piece at a time)
            del cols
            pieces.release(rows)
    mod.instructions = InstructionTable(names, line_of, col_of, flags, lines)
    mod.by_name = by = first_index(names)
    mod.pre_checked = (clean, summaries)
    mod.rows_read = True
    mod.repeats = read_from
    _join_longest(mod, scan, spans)
    # the users and callers maps are built later (`HloModule.build_maps`, in the background): until then a
    # module whose operands are all local answers `users` from one computation
    mod.local_names = len(by) == len(names) and all(c is not None for c in clean)
    return True


def _rows_in_pieces(scan: str, a: int, b: int) -> list[tuple[str, ...]]:
    """``ROW.findall(scan, a, b)`` of a long computation, made `PIECE_CHARS` at a time (each piece ends at a line's
    end, and no row crosses one): the 100 MB module's entry computation (25 MB) was one C call holding the GIL
    for 0.12 s, the 23 MB module's 0.05 s, and a background read of it struck the hovers of its buffer files."""
    rows: list[tuple[str, ...]] = []
    findall = ROW.findall
    while a < b:
        end = scan.find("\n", min(a + PIECE_CHARS, b))
        end = b if end < 0 or end > b else end
        rows += findall(scan, a, end)
        a = end
        turns.give_way()
    return rows


def first_index(names: list[str]) -> dict[str, int]:
    """Name -> the index of its first occurrence in ``names``, made `pieces.PIECE` names at a time (from the last
    piece to the first, each read backwards, so the first occurrence is the one kept): one C call over the 100 MB
    module's 640,000 names held the GIL for 0.19 s."""
    out: dict[str, int] = {}
    n = len(names)
    step = pieces.PIECE
    for start in reversed(range(0, n, step)):
        end = min(start + step, n)
        out.update(zip(reversed(names[start:end]), range(end - 1, start - 1, -1)))
        turns.give_way()
    return out


def _join_longest(mod: HloModule, scan: str, spans: list[tuple[int, int]]) -> None:
    """The longest computation's lines joined for the hovers before the users map is built
    (`HloModule.join_computation`), from the text read (a slice, no join): the first hover in it after the open
    of the 100 MB module joined its 91,000 lines, 40-50 ms beside the editor's on-open requests."""
    from hlo_lsp.core.hlo.model import JOINED_MIN

    sizes = [len(c.instructions) for c in mod.computations]
    if not sizes or max(sizes) < JOINED_MIN:
        return
    k = sizes.index(max(sizes))
    a, b = spans[k]
    mod.join_computation(k, scan[a + 1 : b])


def _known(calls: dict[int, list[str]], known: dict[str, int]) -> bool:
    """Every computation ``calls`` names is one of the module's."""
    return all(cc in known for called in calls.values() for cc in called)


class _Template:
    """A computation the rows pass read, kept to read each later computation whose lines are its lines with other
    names (the same text once every name is cut out, `OCCURRENCE`, and the same names in the same places: one
    name here is one name there, and two are two). Such a computation reads as the same rows with those names
    (a name's characters never change how the rows pattern reads a line), so its instruction names are its own
    names in the template's places, and its ROOT flags, name columns, structural check and verifier summary are
    the template's: the checks and the summary look at names only to tell them apart and to find what they
    name (`rows.structurally_clean`, `summary.summarize`), and look at callees only through the calls, which
    are the template's with the names mapped. A module of fused computations is mostly such repeats: the
    benchmark's 17,570 computations are 46 templates.

    Made only from a computation whose every line is a row and where each line's first name is its instruction's
    name and each callee a name of its line (else the template is None and such computations are read
    row by row)."""

    __slots__ = (
        "occ",
        "distinct",
        "_names",
        "col_of",
        "flags",
        "root",
        "_callees",
        "clean",
        "summary",
        "at",
        "computation",
        "span",
    )

    def __init__(self, occ, distinct, names, col_of, flags, root, callees, clean, summary, at, computation, span):
        self.occ, self.distinct, self._names = occ, distinct, names
        self.col_of, self.flags, self.root = col_of, flags, root
        self._callees, self.clean, self.summary, self.at = callees, clean, summary, at
        self.computation, self.span = computation, span

    @classmethod
    def of(cls, occ, cols, lines, comp, index, span, col_of, flags, calls, clean, summary) -> _Template | None:
        """The template of computation number ``index``, read as rows (``cols``, its `calls`, whether it is
        structurally clean, its summary; ``occ`` its name occurrences, ``span`` its lines' offsets in the read's
        text, ``col_of`` and ``flags`` its table columns); None when its names cannot be placed (see the
        class)."""
        firsts = []
        j = 0
        for ln in range(comp.line + 1, comp.end_line):
            firsts.append(j)
            j += len(OCCURRENCE.findall(lines[ln]))
        if j != len(occ) or any(occ[f] != nm for f, nm in zip(firsts, cols[NAME])):
            return None
        ends = firsts[1:] + [len(occ)]
        callees = {}
        for k, called in calls.items():
            try:
                callees[k] = [occ.index(c, firsts[k], ends[k]) for c in called]
            except ValueError:
                return None  # a callee written in characters a name never has here
        names = itemgetter(*firsts) if len(firsts) > 1 else (lambda o, f=firsts[0]: (o[f],))
        r = flags.rfind(1)
        root = r if r >= 0 else len(flags) - 1
        at = comp.instructions.start
        return cls(occ, len(set(occ)), names, col_of, flags, root, callees, clean, summary, at, index, span)

    def fits(self, occ: list[str]) -> bool:
        """``occ`` (a computation of the template's text but for its names) names as the template does: as many
        occurrences, and each of the template's names always paired with one and the same name of ``occ``."""
        d = self.distinct
        return len(occ) == len(self.occ) and len(set(occ)) == d and len(set(zip(self.occ, occ))) == d

    def names(self, occ: list[str]) -> tuple[str, ...]:
        """The instruction names of the computation whose name occurrences are ``occ``, in order."""
        return self._names(occ)

    def calls(self, occ: list[str]) -> dict[int, list[str]]:
        """`rows.row_calls` of the computation whose name occurrences are ``occ``."""
        intern = sys.intern
        return {k: [intern(occ[j]) for j in at] for k, at in self._callees.items()}

    def relative_uses(self, scan: str) -> tuple[array, array, tuple[int, ...]] | None:
        """The template's uses as (defining, using) instruction pairs counted from its first instruction, in the
        users map's order (`rows.users_and_callers`), and its rows that call a computation, read again from its
        text in ``scan`` (the read's own: no edit is in it); None when an operand names no instruction of it. A
        repeat has these, renumbered, while names are unique in the module."""
        a, b = self.span
        rows = ROW.findall(scan, a, b)
        local = dict(zip(reversed(self.names(self.occ)), range(len(rows) - 1, -1, -1)))
        dst, src = array("i"), array("i")
        other: dict = {}
        row_uses(rows, 0, local, dst, src, other)
        return None if other else (dst, src, tuple(sorted(self._callees)))

    def summary_at(self, start: int, calls: dict[int, list[str]]) -> Summary | None:
        """The template's verifier summary for the computation whose instructions start at ``start``, with its
        ``calls``: the same shapes, its own instruction numbers and callees."""
        s = self.summary
        if s is None or not (s.cand or s.calls):
            return s  # nothing numbered in it: shared
        delta = start - self.at
        cand = tuple([(op, i + delta) for op, i in s.cand])
        called = tuple([(i + delta, op, tuple(calls[i - self.at]), ops, res) for i, op, _, ops, res in s.calls])
        return s._replace(cand=cand, calls=called)


def _calls(rows, lo: int, lines: list[str], line_of, scan: str, a: int, b: int) -> dict[int, list[str]]:
    """`row_calls` of one computation's rows; {} at once when no line of it (``scan[a:b]``) holds ``=%`` or
    ``={%`` (the reader's condition for reading calls)."""
    if scan.find("=%", a, b) < 0 and scan.find("={%", a, b) < 0:
        return {}
    return row_calls(rows, lo, lines, line_of)
