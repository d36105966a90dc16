"""The text primitives of HLO, at the bottom of `core.hlo`: the regexes every reader shares (an instruction
line, a computation header, operand lists, call and attribute keys, index comments) and the scanners of one
line (operands, brackets, attribute values). Nothing here knows a module; one definition of each.
"""

from __future__ import annotations

import re

# General per-line form: `  ROOT %name = <shape> opcode(` — the shape is matched lazily up to the first
# ` word(` (one space, so the match stays linear: each word is tried only from the single space before it).
INSTR = re.compile(r"\s*(ROOT\s+)?(%?)([\w.\-]+)\s*=\s*(?:(.*?) )??([a-z][a-z0-9_\-]*)\(")
# The index form, scanned over "\n" + text: an instruction line is an indented `[ROOT] [%]name =`. It starts
# with a literal newline so the regex engine jumps between lines at memchr speed. Groups: 1 ROOT, 2 name.
INDEX_INSTR = re.compile(r"\n[ \t]*(ROOT[ \t]+)?%?([\w.\-]+)[ \t]*=")
TOP_LINE = re.compile(r"\n([^ \t\n][^\n]*)")  # over "\n" + text: lines starting in column 0
COMP_NAME = re.compile(r"(ENTRY\s+)?%?([^\s(%{]+)")


def computation_header(line: str) -> tuple[bool, int, str, str] | None:
    """(is ENTRY, name start, name, signature) of a computation header line (`[ENTRY] [%]name sig {`);
    None for any other line. The signature is the text between the name and the final `{`."""
    body = line.rstrip()
    if not body.endswith("{") or " = " in body:
        return None
    m = COMP_NAME.match(body)
    if m is None or m.end() >= len(body) + 1:
        return None
    return m.group(1) is not None, m.start(2), m.group(2), body[m.end() : -1].strip()


TABLE_ROW = re.compile(r"(\d+) (.*)$")
CALL_ATTR_PCT = re.compile(
    r"[\s,](calls|to_apply|body|condition|true_computation|false_computation|branch_computations|"
    r"called_computations|select|scatter|comparator)=(\{[^}]*\}|%[\w.\-]+)"
)
CALLED_NAME = re.compile(r"%?([^\s,{}%]+)")
# a call attribute key, found before the string-aware attribute reader runs on a line
CALLED_ANY = re.compile(
    r"(?:calls|to_apply|body|condition|true_computation|false_computation|branch_computations|"
    r"called_computations|select|scatter|comparator)="
)
# a key starts after a non-name character: search stays linear on a long run of name characters without '='
ATTR_KEY = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_.]*)=")
CALL_ATTRS = frozenset(
    {
        "calls",
        "to_apply",
        "body",
        "condition",
        "true_computation",
        "false_computation",
        "branch_computations",
        "called_computations",
        "select",
        "scatter",
        "comparator",
    }
)
COMMENT_INDEX = re.compile(r"/\*[^*]*\*/")
# XLA numbers the items of a long list (`%a, ..., /*index=5*/%f`); a plain operand list is `%name` items only
INDEX_NUMBER_TEXT = r"/\*index=[0-9]+\*/"
INDEX_NUMBER = re.compile(INDEX_NUMBER_TEXT)
OPERAND_TEXT = r"(?:%s)?%%[\w.\-]+" % INDEX_NUMBER_TEXT
OPERAND_LIST_TEXT = r"%s(?:, %s)*" % (OPERAND_TEXT, OPERAND_TEXT)
NUMBERED_OPERANDS = re.compile(OPERAND_LIST_TEXT)


def plain_operand_names(ops: str) -> list[str]:
    """The names of a plain operand list's text (`OPERAND_LIST_TEXT`, or ""); what `read_operands` returns
    for it."""
    if not ops:
        return []
    if "/" in ops:
        ops = INDEX_NUMBER.sub("", ops)
    return ops.replace("%", "").split(", ")


TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def split_operands(seg: str) -> list[tuple[int, int]]:
    """Spans (start, end) of the comma-separated items of an operand list, depth-aware over (), {} and []."""
    spans = []
    depth = 0
    start = 0
    if "(" not in seg and "{" not in seg:
        pos = 0
        for part in seg.split(","):
            spans.append((pos, pos + len(part)))
            pos += len(part) + 1
        return spans if seg.strip() else []
    for i, ch in enumerate(seg):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == "," and depth == 0:
            spans.append((start, i))
            start = i + 1
    spans.append((start, len(seg)))
    return spans if seg.strip() else []


def operand_name(item: str) -> tuple[str, int] | None:
    """The operand name in one operand item (``f32[4]{0} %x`` or ``%x`` or ``x``) and its offset in ``item``;
    None for an inline nested instruction or an empty item."""
    s = item.rstrip()
    if not s or s.endswith(")"):
        return None
    k = max(s.rfind(" "), s.rfind("/"))
    tok_start = k + 1
    tok = s[tok_start:]
    if tok.startswith("%"):
        tok = tok[1:]
        tok_start += 1
    if not tok or "[" in tok or "{" in tok:
        return None
    return tok, tok_start


def find_close_paren(line: str, open_pos: int) -> int:
    """Index of the ``)`` matching the ``(`` at ``open_pos`` (skipping strings); -1 when unbalanced."""
    j = line.find(")", open_pos)
    if j < 0:
        return -1
    seg = line[open_pos + 1 : j]
    if "(" not in seg and '"' not in seg:
        return j
    return find_close(line, open_pos, "(", ")")


def find_close(text: str, open_pos: int, opening: str, closing: str) -> int:
    """Index of the ``closing`` bracket matching the ``opening`` one at ``open_pos``, skipping quoted strings
    (with their backslash escapes); -1 when unbalanced."""
    depth = 0
    in_str = False
    i = open_pos
    n = len(text)
    while i < n:
        ch = text[i]
        if in_str:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


PLAIN_RUN = re.compile(r'[^"(){}\[\],]*')


def scan_value_end(line: str, i: int) -> int:
    """End of an attribute value starting at ``i``: the next top-level ``,`` or unmatched closer (depth-aware
    over (), {}, [] and strings with escapes). Linear; never recursive; runs of ordinary characters are skipped
    by one regex step each."""
    depth = 0
    n = len(line)
    plain = PLAIN_RUN.match
    while i < n:
        i = plain(line, i).end()  # type: ignore[union-attr]  # PLAIN_RUN matches the empty string: never None
        if i >= n:
            break
        ch = line[i]
        if ch == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
        elif ch in "({[":
            depth += 1
        elif ch in ")}]":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0:  # a comma
            return i
        i += 1
    return n


def called_in(attrs: str) -> tuple[str, ...]:
    """Called computation names in the attribute text after an operand list; string- and nesting-aware, so
    a ``calls=`` inside metadata never counts and attributes after metadata still do."""
    out: list[str] = []
    i = 0
    n = len(attrs)
    while i < n:
        m = ATTR_KEY.search(attrs, i)
        if m is None:
            break
        end = scan_value_end(attrs, m.end())
        if m.group(1) in CALL_ATTRS:
            out.extend(x.group(1) for x in CALLED_NAME.finditer(attrs, m.end(), end))
        i = end + 1
    return tuple(out)


def read_operands(line: str, m: re.Match) -> tuple[str, tuple[str, ...], int | None, int]:
    """(opcode, operand names, parameter number, index of the closing parenthesis or -1) of a line `INSTR`
    matched; a simple ``%a, %b`` list is split directly, anything else depth-aware."""
    opcode = m.group(5)
    open_pos = m.end() - 1
    if opcode == "parameter":
        close = line.find(")", open_pos)
        num = line[open_pos + 1 : close].strip() if close > 0 else ""
        return opcode, (), (int(num) if num.isascii() and num.isdigit() and len(num) < 10 else None), close
    close = find_close_paren(line, open_pos)
    seg = line[open_pos + 1 : close] if close >= 0 else line[open_pos + 1 :]
    if not seg or opcode == "constant":
        return opcode, (), None, close
    if "(" not in seg and "[" not in seg and "/" not in seg and seg.count(" ") == seg.count(", "):
        return opcode, tuple(seg.replace("%", "").split(", ")), None, close
    if NUMBERED_OPERANDS.fullmatch(seg):  # `%a, ..., /*index=5*/%f, ...`: a long tuple as XLA prints it
        return opcode, tuple(plain_operand_names(seg)), None, close
    ops = []
    for a, b in split_operands(seg):
        r = operand_name(COMMENT_INDEX.sub(lambda mm: " " * len(mm.group()), seg[a:b]))
        if r is not None:
            ops.append(r[0])
    return opcode, tuple(ops), None, close


def scan_instructions(scan: str) -> tuple[list[int], list[str], list[int], list[int], list[int]]:
    """For every instruction line in document order: its offset in ``scan`` ("\\n" + text: the offset of the
    newline before the line), name, line and name column; plus the indices of ROOT instructions."""
    offsets: list[int] = []
    names: list[str] = []
    line_of: list[int] = []
    col_of: list[int] = []
    roots: list[int] = []
    add_off, add_name, add_line, add_col = offsets.append, names.append, line_of.append, col_of.append
    count = scan.count
    ln = -1
    prev = 0
    for m in INDEX_INSTR.finditer(scan):
        start = m.start()
        ln += count("\n", prev, start + 1)
        prev = start + 1
        if m.start(1) >= 0:
            roots.append(len(names))
        add_off(start)
        add_name(m.group(2))
        add_line(ln)
        add_col(m.start(2) - start - 1)
    return offsets, names, line_of, col_of, roots
