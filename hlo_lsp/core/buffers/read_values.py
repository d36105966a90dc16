"""The ``Used values:`` listing (`-buffer-assignment-values.txt`): ``<id name{index} @color>`` headers with their
positions, uses and ``from instruction:`` line; a block in XLA's exact form is read in one regex step, any other
line by line (a header glued to the previous line's end included).
"""

from __future__ import annotations

import re

from hlo_lsp.core.buffers.columns import NONE, shape_index
from hlo_lsp.core.buffers.read_common import CODE_STRUCTURE, ReaderState, value_names
from hlo_lsp.core.buffers.read_common import intern_str as intern
from hlo_lsp.core.buffers.text import FROM, HEADER, INDEX, NAME, POSITION, USE
from hlo_lsp.core.occurrences import COL_BITS
from hlo_lsp.core.occurrences import pair_code as occ_pair_code

BLOCK = re.compile(
    rf"<(\d+) ({NAME})({INDEX})?( \(phi\))?(?: @(\d+))?>\n"
    rf" positions:\n((?:  {NAME}(?: {INDEX})?\n)+)"
    rf" uses:\n((?:  {NAME}, operand \d+(?: {INDEX})?\n)+|  \(none\)\n)"
    rf" from instruction: ?%?({NAME})(?![^\s{{}}<>:,=()])[^\n]*\n"  # the name ends where it ends: linear
)


class ValuesReader(ReaderState):
    """The used-values section of `reader._Reader`."""

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
        """Record the used value whose header ``m`` matched on line ``ln``; it becomes the current one."""
        self.mark = len(self.doc.diagnostics)
        s, e = m.start(2), (m.end(3) if m.group(3) is not None else m.end(2))
        instr, itext, key = value_names(m.group(2), m.group(3))
        color = m.group(5)
        vid = int(m.group(1))
        color = int(color) if color is not None else None
        used = self.doc.used_values
        self.value = len(used)
        used.add(vid, key, instr, itext, m.group(4) is not None, color, ln, s, e)
        self.value_use(ln, s, e, key)
        self.sub = None

    def used_block(self, text: str, base: int, ln: int) -> int:
        """Read the used value whose header is line ``ln`` (at offset ``base`` of ``text``) in one step when it
        has XLA's exact form, with the same records, occurrences and state as reading it line by line; the
        number of lines read, 0 when the block is not of that form (or has a line the reader would report)."""
        m = BLOCK.match(text, base)
        if m is None or text[m.end() - 2] == ">":  # the next header glued to the `from instruction:` line
            return 0
        vid, instr, itext, phi, color, pos_text, use_text, from_name = m.groups()
        try:  # everything that can fail is done before anything is recorded
            vid = int(vid)
            color = int(color) if color is not None else None
            if itext is not None:
                shape_index(itext)
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
        except ValueError:
            return 0
        doc = self.doc
        self.skipping = False
        self.mark = len(doc.diagnostics)
        s = m.start(2) - base
        e = (m.end(3) if itext is not None else m.end(2)) - base
        instr = intern(instr)  # `value_names` without the check (done above), inlined: once per used value
        if itext is not None:
            itext = intern(itext)
        key = intern(instr + itext if itext is not None else instr + "{}")
        used = doc.used_values
        i = len(used)
        used.add(vid, key, instr, itext, phi is not None, color, ln, s, e)
        self.value_use(ln, s, e, key)
        # the items' occurrences (what `instruction_use` appends), written out; a value's position and its
        # `from instruction:` name are nearly always its own instruction, already interned
        occ = doc.occurrences
        pos, end, code, keys = occ.pos.append, occ.ends.append, occ.codes.append, occ.keys.append
        use_code = occ_pair_code("instruction", "use")
        k = ln + 2
        for name in positions:
            pos((k << COL_BITS) | 2)
            end(2 + len(name))
            code(use_code)
            keys(instr if name == instr else intern(name))
            k += 1
        k += 1  # `` uses:``
        for name in uses:
            pos((k << COL_BITS) | 2)
            end(2 + len(name))
            code(use_code)
            keys(intern(name))
            k += 1
        if not uses:
            k += 1  # ``  (none)``
        used.from_line[i] = k
        line_start = m.end(7)
        self.instruction_use(
            k, m.start(8) - line_start, m.end(8) - line_start, instr if from_name == instr else intern(from_name)
        )
        self.value = i
        self.sub = "done"
        return k - ln + 1

    def used_part(self, ln: int, line: str) -> None:
        v = self.value
        if v is None:
            self.err(ln, 0, len(line), "a value part before any `<id name @color>` header", CODE_STRUCTURE)
            return
        if line[1] != " ":
            if line == " positions:":
                self.sub = "positions"
            elif line == " uses:":
                self.sub = "uses"
            elif line.startswith(" from instruction:"):
                m = FROM.match(line)
                if m is None:
                    self.bad_line(ln, line, "` from instruction: %name = ...`")
                    return
                self.doc.used_values.from_line[v] = ln  # its text and name range are read when asked for
                self.instruction_use(ln, m.start(2), m.end(2), intern(m.group(2)))
                self.sub = "done"
                if line[-1] == ">":
                    self.glued_header(ln, line)
            else:
                self.bad_line(ln, line, "` positions:`, ` uses:` or ` from instruction:`")
            return
        sub = self.sub
        if sub == "positions":
            m = POSITION.match(line)
            if m is None:
                self.bad_line(ln, line, "a position `  name {index}`")
                return
            itext = m.group(2)
            if itext:
                shape_index(itext)
            self.instruction_use(ln, 2, m.end(1), intern(m.group(1)))
        elif sub == "uses":
            if line == "  (none)":
                return
            m = USE.match(line)
            if m is None:
                self.bad_line(ln, line, "a use `  name, operand N {index}`")
                return
            opnd, itext = m.group(2, 3)
            int(opnd)
            if itext:
                shape_index(itext)
            self.instruction_use(ln, 2, m.end(1), intern(m.group(1)))
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
