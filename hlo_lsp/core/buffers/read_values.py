"""The ``Used values:`` listing (`-buffer-assignment-values.txt`): ``<id name{index} @color>`` headers with their
positions, uses and ``from instruction:`` line; a block in XLA's exact form is read in one regex step, any other
line by line (a header glued to the previous line's end included).
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import add, lshift, or_

from hlo_lsp.core.buffers.columns import _HI, NONE, shape_index
from hlo_lsp.core.buffers.read_common import CODE_STRUCTURE, ReaderState, intern_str, value_names
from hlo_lsp.core.buffers.text import FROM, HEADER, INDEX, NAME, POSITION, USE
from hlo_lsp.core.occurrences import COL_BITS
from hlo_lsp.core.occurrences import pair_code as occ_pair_code
from hlo_lsp.core.process import pieces, turns

BLOCK = re.compile(
    rf"<(\d+) ({NAME})({INDEX})?( \(phi\))?(?: @(\d+))?>\n"
    rf" positions:\n((?:  {NAME}(?: {INDEX})?\n)+)"
    rf" uses:\n((?:  {NAME}, operand \d+(?: {INDEX})?\n)+|  \(none\)\n)"
    rf" from instruction: ?%?({NAME})(?![^\s{{}}<>:,=()])[^\n]*\n"  # the name ends where it ends: linear
)

GIVE_WAY_BLOCKS = 255  # blocks (a mask) between two `turns.give_way` of a run: about 1,000 lines (`GIVE_WAY_LINES`)
_USE_NAMES = re.compile(rf"  ({NAME}), operand ")  # the instruction of each use of a block's uses
_POSITION_ITEMS = re.compile(rf"  ({NAME})(?: ({INDEX}))?\n")  # as `BLOCK` matched them: name, index
_USE_ITEMS = re.compile(rf"  ({NAME}), operand (\d+)(?: ({INDEX}))?\n")  # name, operand, index


def block_items(pos_text: str, use_text: str) -> tuple[list[str], list[str]]:
    """The instruction names of a block's ``positions:`` and ``uses:`` items (``use_text`` may be ``  (none)``),
    their indices and operand numbers checked: ValueError for one the reader would report. The texts are
    `BLOCK`'s groups: without an index (nearly every block) nothing can fail (an operand is digits), and the
    names are cut from each text in one split; with indices, the items are read by one `findall` a text and
    each distinct index and operand checked once (a tuple's value lists thousands of `{i}`)."""
    if "{" not in pos_text and "{" not in use_text:
        names = pos_text[2:-1].split("\n  ")
        if use_text == "  (none)\n":
            return names, []
        return names, _USE_NAMES.findall(use_text)
    items = _POSITION_ITEMS.findall(pos_text)
    for index_text in {i for _, i in items}:
        if index_text:
            shape_index(index_text)
    positions = [name for name, _ in items]
    if use_text == "  (none)\n":
        return positions, []
    items = _USE_ITEMS.findall(use_text)
    for _, operand, index_text in set(items):
        int(operand)
        if index_text:
            shape_index(index_text)
    return positions, [name for name, _, _ in items]


def _run_occurrences(occ, first: int, end: int, keys: list[str], heads: tuple, froms: tuple, gaps: list[int]) -> None:
    """Add to ``occ`` the occurrences of the run of blocks on lines ``first`` to ``end`` (`used_blocks`): one on
    each line but the ``gaps``, in document order, its key from ``keys``; an item's at column 2 and as long as
    its name, a value's own and an instruction's (``heads``, ``froms``: occurrence numbers and columns) where
    the block put them. Made column by column by C iterators, a piece at a time (`pieces.PIECE` items a C call:
    the values file of the benchmark has 180,000 occurrences, read in the background beside the hovers)."""
    n = len(keys)
    starts = [2] * n
    heads_at, head_start, head_end = heads
    froms_at, from_start = froms
    for j, c in zip(heads_at, head_start):
        starts[j] = c
    for j, c in zip(froms_at, from_start):
        starts[j] = c
    on_line = bytearray(b"\x01") * (end - first)
    for g in gaps:
        on_line[g - first] = 0
    step = pieces.PIECE
    lines: list[int] = []
    for lo in pieces.starts(first, end, step):  # each piece's C calls hold the GIL 1-6 ms: a request goes first
        lines += compress(range(lo, min(lo + step, end)), on_line[lo - first : lo - first + step])
    codes = bytearray((occ_pair_code("instruction", "use"),)) * n
    value_code = occ_pair_code("value", "use")
    for j in heads_at:
        codes[j] = value_code
    ends: list[int] = []
    for lo in pieces.starts(0, n, step):
        hi = lo + step
        occ.pos.extend(map(or_, map(lshift, lines[lo:hi], repeat(COL_BITS)), starts[lo:hi]))
        ends += map(add, starts[lo:hi], map(len, keys[lo:hi]))
        occ.keys.extend(map(intern_str, keys[lo:hi]))
    for j, e in zip(heads_at, head_end):
        ends[j] = e  # a value's key may end in ``{}`` that its line does not have
    occ.ends.extend(ends)
    occ.codes.extend(codes)


class ValuesReader(ReaderState):
    """The used-values section of `reader._Reader`."""

    # ------------------------------------------------------------------ headers
    def values_header(self, ln: int, line: str) -> None:
        """``Used values:``: the values' blocks follow."""
        self.section = "used"
        self.saw.add("values")

    def value_header(self, ln: int, line: str) -> None:
        """A ``<id name @color>`` line that reached the dispatcher (not read as a block by `used_lines`)."""
        if self.section != "used":
            # Recover: report once, then read the values as if `Used values:` had been there.
            self.err(ln, 0, len(line), "a value header outside `Used values:`", CODE_STRUCTURE)
            self.finish_alloc()
            self.section = "used"
            self.saw.add("values")
        self.used_header(ln, line)

    # ------------------------------------------------------------------ used values
    def used_header(self, ln: int, line: str) -> None:
        self.finish_value()
        m = self.header(ln, line, HEADER, "`<id name @color>`")
        if m is None:
            return
        self.start_value(ln, m)

    def glued_header(self, ln: int, line: str) -> None:
        """The next value's ``<id name @color>`` header at the end of a `` from instruction:`` line, where
        jaxlib 0.4.30 and 0.4.35 write it (their values listing has no line break after an instruction's text);
        nothing when the line does not end with one. Names hold no ``<``, so the header starts at the last."""
        m = HEADER.match(line, line.rfind("<"))
        if m is not None:
            self.finish_value()
            self.skipping = False
            self.start_value(ln, m)

    def start_value(self, ln: int, m: re.Match) -> None:
        """Record the used value whose header ``m`` matched on line ``ln``; it becomes the current one. A malformed
        index raises ValueError (reported on the line by the caller's guard) and its parts are skipped."""
        self.mark = len(self.doc.diagnostics)
        s, e = m.start(2), (m.end(3) if m.group(3) is not None else m.end(2))
        try:
            instr, itext, key = value_names(m.group(2), m.group(3))
        except ValueError:
            self.skipping = True  # the value's lines belong to what was not read
            raise
        color = m.group(5)
        vid = int(m.group(1))
        color = int(color) if color is not None else None
        used = self.doc.used_values
        self.value = len(used)
        used.add(vid, key, instr, itext, m.group(4) is not None, color, ln, s, e)
        self.value_use(ln, s, e, key)
        self.sub = None

    def used_blocks(self, text: str, base: int, ln: int) -> int:
        """Read the used values from the header on line ``ln`` (at offset ``base`` of ``text``) on, a block at a
        time while the blocks have XLA's exact form and follow each other, with the same records, occurrences
        and state as reading them line by line; the number of lines read, 0 when the first block is not of that
        form (or has a line the reader would report). One call reads a whole well-formed listing: the benchmark's
        37,286 blocks took 0.40 s read one call each through three functions, with each block's item names
        listed, then walked."""
        doc = self.doc
        used = doc.used_values
        # the columns `UsedValues.add` fills, appended to here (three Python calls a block, the value's columns,
        # its own occurrence and its instruction's, and eight extends of the occurrence columns a block were
        # more than half of this loop's time)
        vid_app, vkey_app, instr_app, itext_app = (
            used.value_id.append,
            used.key.append,
            used.instruction.append,
            used.index_text.append,
        )
        phi_app, color_app, line_app, start_app, end_app = (
            used.phi.append,
            used.color.append,
            used.line.append,
            used.start.append,
            used.end.append,
        )
        from_lines = used.from_line
        from_app = from_lines.append
        # the run's occurrences, in document order, are made once it is read (`_run_occurrences`): here their
        # keys (each block's value key, its items' names, its instruction's name) and what is not an item's
        keys: list[str] = []
        keys_app, keys_more = keys.append, keys.extend
        heads: list[int] = []  # the occurrence number of each value's own occurrence, then its start and end
        head_start: list[int] = []
        head_end: list[int] = []
        froms: list[int] = []  # the occurrence number of each `` from instruction:`` name, then its start
        from_start: list[int] = []
        gaps: list[int] = []  # the run's lines without an occurrence (`` positions:``, `` uses:``, ``  (none)``)
        heads_app, hs_app, he_app, froms_app, fs_app, gaps_app = (
            heads.append,
            head_start.append,
            head_end.append,
            froms.append,
            from_start.append,
            gaps.append,
        )
        intern = intern_str
        match = BLOCK.match
        first = ln
        every = GIVE_WAY_BLOCKS
        while True:
            if not len(from_lines) & every:
                turns.give_way()  # a background read lets the requests under way go first (the run is 0.2 s)
            m = match(text, base)
            if m is None or text[m.end() - 2] == ">":  # the next header glued to the `from instruction:` line
                break
            vid, instr, itext, phi, color, pos_text, use_text, from_name = m.groups()
            try:  # everything that can fail is done before anything is recorded
                vid = int(vid)
                color = int(color) if color is not None else NONE
                if itext is not None:
                    shape_index(itext)
                positions, uses = block_items(pos_text, use_text)
            except ValueError:
                break
            if vid > _HI or color > _HI:  # digits: never below the column's range
                break  # `used_lines` reads it, and `UsedValues.put` keeps it on the side
            s = m.start(2) - base  # a column of a few digits: never past the packed range
            e = (m.end(3) if itext is not None else m.end(2)) - base
            instr = intern(instr)  # `value_names` without the check (done above), inlined: once per used value
            if itext is not None:
                itext = intern(itext)
            key = intern(instr + itext if itext is not None else instr + "{}")
            vid_app(vid)
            vkey_app(key)
            instr_app(instr)
            itext_app(itext)
            phi_app(phi is not None)
            color_app(color)
            line_app(ln)
            start_app(s)
            end_app(e)
            heads_app(len(keys))  # the value's occurrence: `value_use(ln, s, e, key)`
            hs_app(s)
            he_app(e)
            keys_app(key)
            keys_more(positions)  # each item a use of its instruction at column 2 of its own line
            keys_more(uses)
            k = ln + 2 + len(positions)  # the `` uses:`` line
            gaps_app(ln + 1)
            gaps_app(k)
            k += len(uses) + 1
            if not uses:
                gaps_app(k)
                k += 1
            from_app(k)
            line_start = m.end(7)
            froms_app(len(keys))  # the instruction's occurrence: `instruction_use(k, start, end, name)`
            fs_app(m.start(8) - line_start)
            keys_app(instr if from_name == instr else from_name)
            ln = k + 1
            base = m.end()
        if ln > first:
            _run_occurrences(doc.occurrences, first, ln, keys, (heads, head_start, head_end), (froms, from_start), gaps)
            self.skipping = False
            self.mark = len(doc.diagnostics)
            self.value = len(from_lines) - 1
            self.sub = "done"
        return ln - first

    def used_lines(self, start: int) -> int:
        """The fast loop of the ``Used values:`` section (see `read_common`): from line ``start``, each value's
        run of blocks in XLA's exact form in one step (`used_blocks`), else its header's and parts' lines one by one,
        reading the parts inline (`used_part` only reports the lines this loop does not take; the items
        themselves are read again when asked for, `columns.UsedValues`). Returns the first line it does not take:
        a header to read line by line (`used_header`), a line in error, or the next section's."""
        lines = self.lines
        n = len(lines)
        block_text = self.block_text
        intern = intern_str
        pos_match, use_match = POSITION.match, USE.match
        occ = self.doc.occurrences  # the occurrence table's columns (what `instruction_use` appends)
        occ_pos, occ_end, occ_code, occ_key = occ.pos.append, occ.ends.append, occ.codes.append, occ.keys.append
        use_code = occ_pair_code("instruction", "use")
        col_bits = COL_BITS
        ln = start
        while ln < n:
            line = lines[ln]
            if not line:
                ln += 1
                continue
            try:
                c = line[0]
                v = self.value
                if c == "<":
                    k = self._block_at(ln) if block_text is not None else 0
                    if not k:
                        return ln
                    ln += k
                    continue
                if c != " " or v is None:
                    return ln
                if line[1:2] == " ":
                    sub = self.sub
                    if sub == "positions":
                        m = pos_match(line)
                        if m is None:
                            return ln
                        name, itext = m.group(1, 2)
                        if itext:
                            shape_index(itext)  # a bad index is reported here, as reading it would
                    elif sub == "uses" and line != "  (none)":
                        m = use_match(line)
                        if m is None:
                            return ln
                        name, opnd, itext = m.group(1, 2, 3)
                        int(opnd)
                        if itext:
                            shape_index(itext)
                    else:
                        return ln
                    occ_pos((ln << col_bits) | 2)  # instruction_use(ln, 2, end, name), written out
                    occ_end(m.end(1))
                    occ_code(use_code)
                    occ_key(intern(name))
                elif line == " uses:":
                    self.sub = "uses"
                elif line == " positions:":
                    self.sub = "positions"
                elif not (line.startswith(" from instruction:") and self._from_line(ln, line, v)):
                    return ln
            except Exception as exc:
                self.internal_error(ln, line, exc)
            ln += 1
        return n

    def _block_at(self, ln: int) -> int:
        """`used_blocks` from the header on line ``ln``, once the value before it is closed."""
        v = self.value
        if v is not None and self.doc.used_values.from_line[v] == NONE:
            self.finish_value()
        assert self.block_text is not None
        return self.used_blocks(self.block_text, self.line_offsets[ln] + ln, ln)

    def _from_line(self, ln: int, line: str, v: int) -> bool:
        """Read the `` from instruction:`` line that closes value ``v`` (and a next header glued to its end);
        False when it is not one."""
        m = FROM.match(line)
        if m is None:
            return False
        self.doc.used_values.from_line[v] = ln  # its text and name range are read when asked for
        self.instruction_use(ln, m.start(2), m.end(2), intern_str(m.group(2)))
        self.sub = "done"
        if line[-1] == ">":
            self.glued_header(ln, line)
        return True

    def used_part(self, ln: int, line: str) -> None:
        """A used value's indented line that `used_lines` did not take: what is wrong with it (nothing for a
        ``  (none)`` under `` uses:``)."""
        if self.value is None:
            self.err(ln, 0, len(line), "a value part before any `<id name @color>` header", CODE_STRUCTURE)
        elif line[1] != " ":
            if line.startswith(" from instruction:"):
                self.bad_line(ln, line, "` from instruction: %name = ...`")
            else:
                self.bad_line(ln, line, "` positions:`, ` uses:` or ` from instruction:`")
        elif self.sub == "positions":
            self.bad_line(ln, line, "a position `  name {index}`")
        elif self.sub == "uses":
            if line != "  (none)":
                self.bad_line(ln, line, "a use `  name, operand N {index}`")
        else:
            self.bad_line(ln, line, "` positions:` or ` uses:` before list items")

    def finish_value(self) -> None:
        i = self.value
        if i is not None and self.doc.used_values.from_line[i] == NONE and len(self.doc.diagnostics) == self.mark:
            v = self.doc.used_values[i]
            self.err(
                v.line,
                v.range.start_col,
                v.range.end_col,
                f"value {v.name} ends before its ` from instruction:` line",
                CODE_STRUCTURE,
            )
        self.value = None
        self.sub = None
