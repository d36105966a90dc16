"""The ``Used values:`` listing (`-buffer-assignment-values.txt`): ``<id name{index} @color>`` headers with their
positions, uses and ``from instruction:`` line; a block in XLA's exact form is read in one regex step, any other
line by line (a header glued to the previous line's end included).
"""

from __future__ import annotations

import re
from itertools import repeat
from operator import add

from hlo_lsp.core.buffers.columns import NONE, shape_index
from hlo_lsp.core.buffers.read_common import CODE_STRUCTURE, ReaderState, intern_str, value_names
from hlo_lsp.core.buffers.text import FROM, HEADER, INDEX, NAME, POSITION, USE
from hlo_lsp.core.occurrences import COL_BITS
from hlo_lsp.core.occurrences import pair_code as occ_pair_code

BLOCK = re.compile(
    rf"<(\d+) ({NAME})({INDEX})?( \(phi\))?(?: @(\d+))?>\n"
    rf" positions:\n((?:  {NAME}(?: {INDEX})?\n)+)"
    rf" uses:\n((?:  {NAME}, operand \d+(?: {INDEX})?\n)+|  \(none\)\n)"
    rf" from instruction: ?%?({NAME})(?![^\s{{}}<>:,=()])[^\n]*\n"  # the name ends where it ends: linear
)


def block_items(pos_text: str, use_text: str) -> tuple[list[str], list[str]]:
    """The instruction names of a block's ``positions:`` and ``uses:`` items (``use_text`` may be ``  (none)``),
    their indices and operand numbers checked: ValueError for one the reader would report. The texts are
    `BLOCK`'s groups: without an index (nearly every block) nothing can fail (an operand is digits), and the
    names are cut from each text in one split."""
    if "{" not in pos_text and "{" not in use_text:
        names = pos_text[2:-1].split("\n  ")
        if use_text == "  (none)\n":
            return names, []
        return names, [item.partition(", ")[0] for item in use_text[2:-1].split("\n  ")]
    positions = []
    for item in pos_text[:-1].split("\n"):
        name, _, index_text = item[2:].partition(" ")
        if index_text:
            shape_index(index_text)
        positions.append(name)
    uses = []
    if use_text != "  (none)\n":
        for item in use_text[:-1].split("\n"):
            name, _, rest = item[2:].partition(", operand ")
            operand, _, index_text = rest.partition(" ")
            int(operand)
            if index_text:
                shape_index(index_text)
            uses.append(name)
    return positions, uses


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
        add_value, from_lines = used._add_value, used.from_line
        occ = doc.occurrences
        pos_more, end_more, code_more, key_more = occ.pos.extend, occ.ends.extend, occ.codes.extend, occ.keys.extend
        use_code = occ_pair_code("instruction", "use")
        line_step = 1 << COL_BITS
        value_use, instruction_use = self.value_use, self.instruction_use
        diagnostics = doc.diagnostics
        intern = intern_str
        match = BLOCK.match
        first = ln
        while True:
            m = match(text, base)
            if m is None or text[m.end() - 2] == ">":  # the next header glued to the `from instruction:` line
                break
            vid, instr, itext, phi, color, pos_text, use_text, from_name = m.groups()
            try:  # everything that can fail is done before anything is recorded
                vid = int(vid)
                color = int(color) if color is not None else None
                if itext is not None:
                    shape_index(itext)
                positions, uses = block_items(pos_text, use_text)
            except ValueError:
                break
            self.skipping = False
            self.mark = len(diagnostics)
            s = m.start(2) - base
            e = (m.end(3) if itext is not None else m.end(2)) - base
            instr = intern(instr)  # `value_names` without the check (done above), inlined: once per used value
            if itext is not None:
                itext = intern(itext)
            key = intern(instr + itext if itext is not None else instr + "{}")
            i = len(from_lines)
            add_value(vid, key, instr, itext, phi is not None, color, ln, s, e)
            value_use(ln, s, e, key)
            # each item a use of its instruction at column 2 of its own line: the positions from line ln + 2 on,
            # the uses after the `` uses:`` line; each run added by C iterators (a Python step per item was
            # 180,000 of them in the benchmark's values file); its key the interned name (the instruction's
            # own string for its own name: interned already)
            k = ln + 2
            for names in (positions, uses):
                n = len(names)
                if n:
                    at = (k << COL_BITS) | 2
                    pos_more(range(at, at + n * line_step, line_step))
                    end_more(map(add, map(len, names), repeat(2)))
                    code_more(repeat(use_code, n))
                    key_more(map(intern, names))
                k += n + 1  # then the `` uses:`` line; after the uses, the `` from instruction:`` line
            if not uses:
                k += 1  # ``  (none)``
            k -= 1
            from_lines.append(k)
            line_start = m.end(7)
            instruction_use(
                k, m.start(8) - line_start, m.end(8) - line_start, instr if from_name == instr else intern(from_name)
            )
            self.value = i
            self.sub = "done"
            ln = k + 1
            base = m.end()
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
