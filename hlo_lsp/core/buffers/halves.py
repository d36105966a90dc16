"""A large buffer file read in two parts at once: the later part in a forked child, read as `patch` reads a block.

The benchmark's 11 MB values file took 0.5 s to read on one core while the machine's other core waited: its
first diagnostics came 0.6 X after ``didOpen``. Its records are all blocks (`patch`): from a record's first line
on, the lines read after the section's primer (its header line) are read as in the whole file. So a child
forked before anything is read reads the text from a record's first line near the middle on
(`patch.read_block_text`, with its checks of the state the lines leave), this process reads the lines before it
as a text of their own (the read of that text closes its last record at its end, as the whole read does at the
next record's first line), and the child's block is spliced after them as a patch splices a new block
(`patch._splice`), then the checks of the whole text run (`patch._finish`): the same model as one read of the
whole text (`tests/core/test_buffers_halves.py`). The line offsets of the whole text are joined from the two
parts' as well (the whole text is never split here).
"""

from __future__ import annotations

import sys
from array import array

from hlo_lsp.core.buffers.columns import Records
from hlo_lsp.core.buffers.model import BufferDoc
from hlo_lsp.core.buffers.patch import LISTS, PRIMERS, _columns, _finish, _splice, plus, read_block_text
from hlo_lsp.core.buffers.reader import _Reader
from hlo_lsp.core.document import TextLines
from hlo_lsp.core.process import fork, turns

SPLIT_MIN_CHARS = 4_000_000  # a buffer file at least this long is read in two parts at once
# the kinds read so: their section, how a line that starts one of its records begins, and the child's part of
# the text (it also pickles its result; the assignment file's later allocations cost more a character: in the
# benchmark's, 80 ms a MB against 60 for the earlier)
_RECORDS = {"values": ("used", "\n<", 0.48), "assignment": ("alloc", "\nallocation ", 0.42)}


def read_in_two(text: TextLines, kind: str | None, min_chars: int = SPLIT_MIN_CHARS) -> BufferDoc | None:
    """The model `read_buffers` makes of ``text`` (of the file kind ``kind``), read in two parts at once (see the
    module docstring); None when it is not read so (then read it whole): not a values or assignment file, shorter
    than ``min_chars``, a text with a carriage return, no forking here (not Linux, a child already, a read in the
    background: loading the child's result in one C call would hold the GIL while requests are answered), no
    record's first line in the later part, or the child did not give its part."""
    found = _RECORDS.get(kind) if kind is not None else None
    if kind is None or found is None or not fork.ENABLED or fork.in_child() or turns.in_background():
        return None
    whole = text.text
    if len(whole) < min_chars or "\r" in whole:
        return None
    section, start, share = found
    at = whole.find(start, int(len(whole) * (1 - share)))
    if at < 0:
        return None
    at += 1  # the offset of the first line of the child's part
    child = fork.start(lambda _: _read_later(section, kind, whole, at), None, freeze=False)
    if child is None:
        return None
    fork.drain(child)  # (its part read from the pipe as it comes, while this process reads its own)
    try:
        earlier = TextLines(whole[:at])
        first = _Reader(earlier, kind).run(finish=False)
    except BaseException:
        fork.discard(child)
        raise
    later = fork.result(child)
    if later is None:
        return None
    block, offsets = later
    _intern(block)
    cut = len(earlier) - 1  # the earlier text ends with the newline before the child's first line
    out = _splice(first, BufferDoc(kind=kind), block, cut, cut, cut - len(PRIMERS[section]), 0, [])
    if out is None:
        return None
    before = earlier.offsets()
    text.know_offsets(before[: cut + 1] + plus(offsets[1:], before[cut]))
    out.used_values.text = out.allocations.text = text
    out.patched = None  # a read, not a patch of the earlier part's model
    _finish(out, text)
    return out


def _read_later(section: str, kind: str, whole: str, at: int) -> tuple[BufferDoc, array] | None:
    """In the child: the text from offset ``at`` on read as a block of ``section`` (`patch.read_block_text`),
    without its text (the parent has it), with the line offsets of that part of the text; None when it is no
    block (its lines opened another section, say: the parent then reads the whole text)."""
    primer = PRIMERS[section]
    block = read_block_text(section, kind, "\n".join(primer) + "\n" + whole[at:])
    if block is None:
        return None
    offsets = block.used_values.text.offsets()[len(primer) :]
    block.used_values.text = block.allocations.text = None
    block.allocations._made = None  # (the allocations' objects: made again when asked for, as a patch's are)
    return block, plus(offsets, -offsets[0])


def _intern(doc: BufferDoc) -> None:
    """The child's names, keys and shapes made this process's interned strings again (a pickle's strings load as
    new ones): the module's other files share them."""
    intern = sys.intern
    occ = doc.occurrences
    occ.keys = list(map(intern, occ.keys))
    for name in (*LISTS, "allocations"):
        records: Records = getattr(doc, name)
        for column in _columns(records):
            col = getattr(records, column)
            if isinstance(col, list):  # (names, keys, shapes; texts or None; a parameter's index tuples)
                setattr(records, column, [intern(s) if type(s) is str else s for s in col])
