"""The rows pass as `read_hlo`'s path for machine-written modules (`read_rows`): the instruction table, each
computation's checks and its verifier summary in one pass over the rows (`rows`), a computation that repeats an
earlier one but for its names read from that one (`_Template`); see `rows` for why the rows equal the per-line
reader's.

A long module is read in two parts at once, the later in a child forked before anything is read
(`_split_offset`). Before the templates such a split was slower than one pass (0.55-0.7 s against 0.72 s for the
23 MB benchmark module: on this machine's two cores each process ran 40-70 % slower while the other ran, and the
child's 5 MB result took 0.1 s to load and join; d582a93 removed it); with them, one pass takes 0.30 s and two
parts 0.23 s, the child forked before anything is read and its part read from its pipe as it comes (the 100 MB
module: 1.38-1.44 s, 0.94-0.96 s; `benchmarks/README.md`).
"""

from __future__ import annotations

import re
import sys
import time
from array import array
from operator import itemgetter
from typing import TYPE_CHECKING

from hlo_lsp.core.hlo.instructions import InstructionTable
from hlo_lsp.core.hlo.model import Computation, HloModule, distinct
from hlo_lsp.core.hlo.rows import NAME, PREFIX, ROOT, ROW, columns, row_calls, row_uses, structurally_clean
from hlo_lsp.core.hlo.structure import bulk_computations, lead
from hlo_lsp.core.process import fork, pieces, turns

if TYPE_CHECKING:
    from hlo_lsp.core.hlo.rules.summary import Summary

TEMPLATES = True  # read a computation that differs from one read before in names alone from that one (`_Template`)
TEMPLATE_MAX_CHARS = 100_000  # a longer computation (an entry, say) is read on its own: it is never a repeat
TEMPLATE_TRIAL = 256  # after this many computations with fewer than a quarter repeats, stop looking for repeats
PIECE_CHARS = 1 << 17  # a computation longer than this is read a piece at a time (`_rows_in_pieces`: 1 ms a piece)
# A name where the rows pattern reads one (after `%`, the same characters); over a computation's lines it finds
# every instruction's name (the first on its line), operand and callee, and whatever else in the text looks so.
OCCURRENCE = re.compile(r"%([\w.\-]+)")
# the same over ASCII text, where ``\w`` is ``[A-Za-z0-9_]``: a quarter faster than the Unicode class (the 23 MB
# module's 16,000 computations of the earlier part split in 69 ms instead of 89)
ASCII_OCCURRENCE = re.compile(r"%([A-Za-z0-9_.\-]+)")


def read_rows(mod: HloModule, scan: str) -> bool:
    """Read a machine-written module (``scan`` is "\\n" + its text, or its text when that begins with its module
    header: `structure.lead`) in one pass: the computations from the
    column-0 lines (`structure.bulk_computations`), then each computation's rows, from which come the instruction
    table, the structural checks of every computation (`is_clean`; one that is not clean is left for the
    per-line checks) and the verifier summaries. False (``mod`` then half-filled: start again) unless every
    line of every computation is a row. A computation that repeats one read before but for its names is read from
    that one (`_Template`). A long module's later computations are read at the same time in a forked child,
    forked before anything is read (`_split_offset`): it finds its own computations and reads them, and its part
    comes back pickled; the parts are joined here as one pass would have made them (`_join_later`)."""
    import hlo_lsp.core.hlo.rules.summary  # noqa: F401 - imported before a fork (`_read_part` imports it)

    cut = _split_offset(scan)
    child = None
    if cut is not None:
        # the child cannot know how many computations and instructions come before its part (this process reads
        # them meanwhile): it counts its own from 0, and `_join_later` moves them
        child = fork.start(lambda _: _read_later(mod.lines, scan, cut, 0, 0), None, freeze=False)
        fork.drain(child)  # (its part read from the pipe as it comes, while this process reads its own)
    began = time.monotonic()
    spans = bulk_computations(mod, scan, 0, cut)  # each computation's instruction lines
    if spans is None:
        fork.discard(child)
        return False
    comps = mod.computations
    m = len(comps)
    # the earlier computations' names are all this part knows: a call of a later one is checked at the join
    outside: list = []
    first = _read_part(mod, scan, spans, 0, m, 0, mod.repeat_uses, outside=outside if cut is not None else None)
    if first is None:
        fork.discard(child)
        return False
    later = None
    seen = None
    if cut is not None:
        if child is not None:  # a child stuck for longer than its part could take is not waited for
            child.deadline = min(child.deadline, time.monotonic() + max(SPLIT_WAIT_S, 3 * (time.monotonic() - began)))
        # whether a name repeats, from this part's names while the child's part comes (it waited 57-120 ms for
        # the 100 MB module's: its entry's summary pickled, 9 MB, then sent), its names added at the join
        seen = set(first[0])
        later = fork.result(child)
        if later is None:  # no child, or it failed: the later part read here
            later = _read_later(mod.lines, scan, cut, m, len(first[0]))
        if not later:
            return False
    names, line_of, col_of, flags, clean, summaries, read_from, _, _ = first
    start = len(names)
    if later:
        _join_later(mod, first, later, spans, outside)
    mod.instructions = InstructionTable(names, line_of, col_of, flags, mod.lines)
    # the name index is made on its first use (`HloModule.by_name`), after the pulled diagnostics as a rule: they
    # need only whether a name repeats (a set of the names: 9-13 ms for the 23 MB module's 200,000, the index 40)
    if seen is None:
        mod.index_on_use(distinct(names))
    else:
        seen.update(names[start:])
        mod.index_on_use(len(seen) == len(names))
    mod.pre_checked = (clean, summaries)
    mod.rows_read = True
    mod.repeats = read_from
    _join_longest(mod, scan, spans)
    # the users and callers maps are built later (`HloModule.build_maps`, in the background): until then a
    # module whose operands are all local answers `users` from one computation
    mod.local_names = mod.names_unique() and None not in clean
    return True


SPLIT_MIN_CHARS = 8_000_000  # a module at least this long is read in two parts at once (`_split_offset`)
SPLIT_SHARE = 0.26  # of the work: the forked child's part (it also pickles its result, which is then joined here)
SPLIT_LONG_WEIGHT = 1.5  # a computation read row by row costs this much more a character than a repeat
SPLIT_WAIT_S = 2.0  # the least time the child is waited for once this process's part is read (or three times that)


def _split_offset(scan: str) -> int | None:
    """Where the part a forked child reads begins (`read_rows`): the offset in ``scan`` of the newline ending a
    closing brace's line (``\\n}\\n``), found before any computation is read, so that the child starts at once and
    finds its own computations (the headers of the 23 MB benchmark module took 75 ms before the child could start,
    the second core idle). None when the module is read in one part: shorter than `SPLIT_MIN_CHARS`, no forking
    here (not Linux, or this is a child already), a read in the background (a buffer file's module: its child's
    result, loaded in one C call, would hold the GIL while the file's requests are answered), or no such line.
    The later part holds about `SPLIT_SHARE` of the work, counted in characters, the last computation's (the
    entry, as XLA prints it) weighing `SPLIT_LONG_WEIGHT` a character when it is longer than
    `TEMPLATE_MAX_CHARS` (never a repeat: read row by row)."""
    if len(scan) < SPLIT_MIN_CHARS or not fork.ENABLED or fork.in_child() or turns.in_background():
        return None
    last_close = scan.rfind("\n}")
    last = scan.rfind("\n}\n", 0, last_close)  # the closing line before the last computation
    if last < 0:
        return None
    tail = len(scan) - last
    weight = tail * (SPLIT_LONG_WEIGHT if tail > TEMPLATE_MAX_CHARS else 1.0)
    left = (last + weight) * SPLIT_SHARE - weight  # characters before the last computation the child reads
    at = last if left <= 0 else scan.find("\n}\n", max(0, int(last - left)), last + 3)
    return at + 2 if at > 0 else None


def _read_later(lines: list[str], scan: str, cut: int, m: int, base: int):
    """The later part of a module split at ``cut`` (`_split_offset`), read as `read_rows` reads the earlier one:
    its computations (column-0 lines from ``cut`` on, made here: a part starting after a closing line has no
    module header), numbered from computation ``m`` and instruction ``base`` (0 in the forked child, which cannot
    know them; the earlier part's counts when this process reads it), then `_read_part` over them; with their
    spans, ``m`` and ``base``, and the calls of computations the part does not hold (looked up at the join). False
    when the part is not all rows."""
    part = HloModule(lines=lines)
    spans = bulk_computations(part, scan, cut)
    if spans is None:
        return False
    outside: list = []
    read = _read_part(part, scan, spans, 0, len(spans), base, {}, number=m, outside=outside)
    if read is None:
        return False
    # (the hints read the part's own columns as an instruction table: its numbers must start at 0, as a child's do)
    hints = _entry_hints(part, scan, cut, read) if base == 0 else None
    # the computations as tuples: a pickled (slotted) dataclass loads at 4 us each, 20 ms for 5,000
    comps = [(c.name, c.line, c.name_start, c.is_entry, c.signature, c.end_line) for c in part.computations]
    return comps, spans, outside, m, base, read, hints


def _entry_hints(part: HloModule, scan: str, cut: int, read) -> tuple[int, int, list, bool] | None:
    """The donation hints (`rules.donation`) of the ENTRY computation when the later part read in ``part``, counted
    from instruction 0, holds it: (the module header's line they read, the entry's line, the hints, whether
    `entry_layout.quiet`); None otherwise. Made where the entry was read (the forked child's part ends with it,
    as XLA prints it), they are no longer made after the join with the pulled diagnostics waiting (24 ms for the
    23 MB module's 12,001 parameters, and 5-7 ms for the layout); the verifier's run takes them when the module's
    header line and entry are these (`HloModule.read_hints`). The header line is the first ``HloModule`` line
    before ``cut``, as the earlier part's prefix has it in a module XLA wrote."""
    from hlo_lsp.core.hlo.rules import entry_layout
    from hlo_lsp.core.hlo.rules.donation import donation_hints
    from hlo_lsp.core.hlo.rules.facts import ModuleFacts

    summaries = read[5]
    k = next((k for k, c in enumerate(part.computations) if c.is_entry), None)
    at = scan.find("\nHloModule", 0, cut) if lead(scan) else 0  # (the text itself: its first line is the header)
    if k is None or summaries[k] is None or at < 0:
        return None
    part.header_line = scan.count("\n", 0, at)
    part.instructions = InstructionTable(read[0], read[1], read[2], read[3], part.lines)
    quiet = entry_layout.quiet(ModuleFacts(part, summaries))
    return part.header_line, part.computations[k].line, donation_hints(part, summaries[k]), quiet


def _join_later(mod: HloModule, first, later, spans: list[tuple[int, int]], outside: list) -> None:
    """The later part (`_read_later`) joined to the earlier one (``first``, read here: its columns are extended in
    place, ``spans`` and ``outside`` too): its computations added to ``mod`` after the earlier ones, its
    computation and instruction numbers moved past the earlier part's (a forked child's count from 0), and every
    computation found clean but for a call of one its part did not hold marked for the per-line checks unless the
    module has that computation."""
    names, line_of, col_of, flags, clean, summaries, read_from, _, _ = first
    later_comps, later_spans, later_outside, m_guess, base_guess, read, mod.read_hints = later
    more, more_lines, more_cols, more_flags, more_clean, more_summaries, more_from, uses, placed = read
    m, base = len(mod.computations), len(names)
    dm, db = m - m_guess, base - base_guess
    if dm or db:  # (summaries number instructions from their computation's first: they hold as they are)
        more_from = array("i", [r + dm if r >= 0 else r for r in more_from])
        uses = {k + dm: v for k, v in uses.items()}
        placed = [(lo + db, None if root is None else root + db) for lo, root in placed]
    comps, by_comp = mod.computations, mod.computation_by_name
    intern = sys.intern
    for (name, line, at, is_entry, signature, end), (lo, root) in zip(later_comps, placed):
        name = intern(name)
        c = Computation(name, line, at, is_entry, signature, end, range(lo, lo + end - line - 1), root)
        by_comp.setdefault(name, len(comps))
        comps.append(c)
    names += more
    line_of += more_lines
    col_of += more_cols
    flags += more_flags
    clean += more_clean
    summaries += more_summaries
    read_from += more_from
    mod.repeat_uses.update(uses)
    spans += later_spans
    outside += [(m + k, callees) for k, callees in later_outside]
    for k, callees in outside:
        if not all(cc in by_comp for cc in callees):
            clean[k] = None


def _read_part(
    mod: HloModule,
    scan: str,
    spans: list[tuple[int, int]],
    k0: int,
    k1: int,
    base: int,
    uses: dict,
    number: int = 0,
    outside: list | None = None,
):
    """The rows pass over computations ``k0`` to ``k1 - 1`` of ``mod``, whose first instruction is number
    ``base`` and whose first computation is the module's number ``number + k0``: their instruction table columns,
    checks, summaries and the computations they repeat, ``uses`` (the templates' uses, `HloModule.repeat_uses`)
    filled, and each computation's first instruction and root (set on it here too); None unless every line of
    every computation is a row. A call of a computation ``mod`` does not hold leaves its caller unclean, or, with
    ``outside``, clean, the callees not held listed there by its place in the part (`_known`)."""
    from hlo_lsp.core.hlo.rules.summary import summarize  # the rules import this module

    comps = mod.computations
    known = mod.computation_by_name  # every computation of the module, made by `bulk_computations`
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
    cut_ascii = ASCII_OCCURRENCE.split
    tried = repeats = 0
    read_from = array("i")  # per computation: the computation it repeats (`HloModule.repeats`), or -1
    placed: list[tuple[int, int | None]] = []
    for k in range(k0, k1):
        comp = comps[k]
        a, b = spans[k]
        if not k & 63:
            turns.give_way()  # a background read lets the requests under way go first
        n = comp.end_line - comp.line - 1
        here = len(names)  # the computation's first instruction in this part's columns ...
        lo = base + here  # ... and in the module
        key = None
        occ: list[str] = []
        if TEMPLATES and n and b - a <= TEMPLATE_MAX_CHARS and (tried < TEMPLATE_TRIAL or repeats * 4 >= tried):
            tried += 1
            text = scan[a:b]
            parts = cut_ascii(text) if text.isascii() else cut(text)
            key = "%".join(parts[0::2])
            occ = parts[1::2]
            t = templates.get(key)
            if t is not None and t.fits(occ):
                repeats += 1
                if t.clean and t.computation not in uses:
                    found = t.relative_uses(scan)
                    if found is not None:
                        uses[t.computation] = found
                names += t.names(occ)
                col_of += t.col_of
                flags += t.flags
                line_of.extend(range(comp.line + 1, comp.end_line))
                comp.instructions = range(lo, lo + n)
                comp.root = root = lo + t.root
                if t.plain:  # (a fused computation's: no callee)
                    clean.append(t.mark)
                    summaries.append(t.summary)
                else:
                    calls = t.calls(occ)
                    clean.append(() if t.clean and _known(calls, known, outside, len(clean)) else None)
                    summaries.append(t.summary_for(calls))
                read_from.append(t.computation)
                placed.append((lo, root))
                continue
        rows = findall(scan, a, b) if b - a <= PIECE_CHARS else _rows_in_pieces(scan, a, b)
        if len(rows) != n:
            return None
        cols = columns(rows)
        if rows:
            names.extend(cols[NAME])
            col_of.extend(map(len, cols[PREFIX]))
            flags.extend(map(bool, cols[ROOT]))
        line_of.extend(range(comp.line + 1, comp.end_line))
        comp.instructions = range(lo, lo + n)
        r = flags.rfind(1, here, here + n)
        comp.root = base + r if r >= 0 else (lo + n - 1 if n else None)
        calls = _calls(rows, here, lines, line_of, scan, a, b)
        structural = structurally_clean(rows, cols)
        clean.append(() if structural and _known(calls, known, outside, len(clean)) else None)
        summary = summarize(mod, comp, rows, calls, cols)
        summaries.append(summary)
        read_from.append(-1)
        placed.append((lo, comp.root))
        if key is not None and key not in templates:
            templates[key] = _Template.of(
                occ, cols, lines, comp, number + k, (a, b), col_of[here:], flags[here:], calls, structural, summary
            )
        elif len(rows) > pieces.PIECE:  # (no template keeps them: a long one's rows freed a piece at a time)
            del cols
            pieces.release(rows)
    return names, line_of, col_of, flags, clean, summaries, read_from, uses, placed


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


def _join_longest(mod: HloModule, scan: str, spans: list[tuple[int, int]]) -> None:
    """The longest computation's lines joined for the hovers before the users map is built
    (`HloModule.join_computation`), in the text read (no join, no copy): the first hover in it after the open
    of the 100 MB module joined its 91,000 lines, 40-50 ms beside the editor's on-open requests."""
    from hlo_lsp.core.hlo.model import JOINED_MIN

    sizes = [len(c.instructions) for c in mod.computations]
    if not sizes or max(sizes) < JOINED_MIN:
        return
    k = sizes.index(max(sizes))
    a, b = spans[k]
    mod.join_computation(k, scan, a + 1)


def _known(calls: dict[int, list[str]], known: dict[str, int], outside: list | None = None, at: int = 0) -> bool:
    """Every computation ``calls`` names is one of ``known``; or, with ``outside``, True with ``(at, the names not
    known)`` added to it, to be looked up among the module's once it is whole (a part of the module knows the
    computations of its part only: `read_rows`)."""
    if not calls:
        return True
    if outside is None:
        return all(cc in known for called in calls.values() for cc in called)
    missing = [cc for called in calls.values() for cc in called if cc not in known]
    if missing:
        outside.append((at, missing))
    return True


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
        "_firsts",
        "_pattern",
        "_names",
        "col_of",
        "flags",
        "root",
        "_callees",
        "clean",
        "summary",
        "computation",
        "span",
        "_spread",
        "plain",
        "mark",
    )

    def __init__(self, occ, names, col_of, flags, root, callees, clean, summary, computation, span):
        self.occ, self._names = occ, names
        # each distinct name's number, by first occurrence, at every occurrence; where each first occurs
        numbers = {}  # (name -> its number)
        at_first = []
        for j, name in enumerate(occ):
            if name not in numbers:
                numbers[name] = len(numbers)
                at_first.append(j)
        self._pattern = pattern = [numbers[name] for name in occ]
        self.distinct = d = len(numbers)
        self._firsts = itemgetter(*at_first) if d > 1 else (lambda o, f=at_first[0]: (o[f],)) if d else (lambda o: ())
        # the first names (a tuple) spread over the occurrences as ``occ`` has them, as a list (what ``occ`` is)
        get = itemgetter(*pattern) if len(pattern) > 1 else None
        self._spread = (
            (lambda f: list(get(f))) if get is not None else (lambda f: [f[0]]) if pattern else (lambda f: [])
        )
        # no callee: every repeat's calls are none, its summary the template's, its mark as clean the template's
        self.plain = not callees
        self.mark = () if clean else None
        self.col_of, self.flags, self.root = col_of, flags, root
        self._callees, self.clean, self.summary = callees, clean, summary
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
        return cls(occ, names, col_of, flags, root, callees, clean, summary, index, span)

    def fits(self, occ: list[str]) -> bool:
        """``occ`` (a computation of the template's text but for its names) names as the template does: as many
        occurrences, and each of the template's names always paired with one and the same name of ``occ``."""
        if len(occ) != len(self.occ):
            return False
        # ``occ``'s names where the template's distinct names first occur: one each (no two the same), and
        # ``occ`` is the template's pattern of them (two sets of the occurrences and their pairs took twice as long;
        # the pattern by a map of ``__getitem__``, 1.5 us more a computation than by an `itemgetter`)
        firsts = self._firsts(occ)
        return len(set(firsts)) == self.distinct and self._spread(firsts) == occ

    def names(self, occ: list[str]) -> tuple[str, ...]:
        """The instruction names of the computation whose name occurrences are ``occ``, in order."""
        return self._names(occ)

    def calls(self, occ: list[str]) -> dict[int, list[str]]:
        """`rows.row_calls` of the computation whose name occurrences are ``occ``."""
        if not self._callees:
            return {}  # (a fused computation's, the common case)
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
        row_uses(rows, 0, local.get, dst, src, other)
        return None if other else (dst, src, tuple(sorted(self._callees)))

    def summary_for(self, calls: dict[int, list[str]]) -> Summary | None:
        """The template's verifier summary for a computation whose ``calls`` are these: the same shapes and
        candidates (numbered from the computation's first instruction), its own callees."""
        s = self.summary
        if s is None or not s.calls:
            return s  # no callee in it: shared
        return s._replace(calls=tuple([(i, op, tuple(calls[i]), ops, res) for i, op, _, ops, res in s.calls]))


def _calls(rows, lo: int, lines: list[str], line_of, scan: str, a: int, b: int) -> dict[int, list[str]]:
    """`row_calls` of one computation's rows; {} at once when no line of it (``scan[a:b]``) holds ``=%`` or
    ``={%`` (the reader's condition for reading calls)."""
    if scan.find("=%", a, b) < 0 and scan.find("={%", a, b) < 0:
        return {}
    return row_calls(rows, lo, lines, line_of)
