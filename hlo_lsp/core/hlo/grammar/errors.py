"""Turn lark's parse exceptions into one diagnostic a person can read.

Terminal names become friendly names ("'}'", "a name", "a shape"), related terminals collapse into one
phrase (PRIM_TYPE and '(' are both "a shape"), the expected list is cut after five entries, and the range
covers the offending token.  `caret_view` renders a diagnostic as the line with a caret underneath
(used by the golden tests and the CLI).
"""

from __future__ import annotations

from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from hlo_lsp.core.diagnostics import Diagnostic, Range, error

FRIENDLY = {
    "NAME": "a name",
    "PNAME": "a name",
    "ATTR_NAME": "an attribute such as 'dimensions='",
    "INT": "an integer",
    "DECIMAL": "a number",
    "STRING": "a string",
    "PRIM_TYPE": "a shape",
    "LPAR": "'('",
    "RPAR": "')'",
    "LBRACE": "'{'",
    "LAYOUT_OPEN": "'{'",
    "RBRACE": "'}'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "EQUAL": "'='",
    "COLON": "':'",
    "ARROW": "'->'",
    "LEQ": "'<='",
    "QMARK": "'?'",
    "KW_ROOT": "'ROOT'",
    "KW_ENTRY": "'ENTRY'",
    "KW_HLOMODULE": "'HloModule'",
    "KW_FILENAMES": "'FileNames'",
    "KW_FUNCTIONNAMES": "'FunctionNames'",
    "KW_FILELOCATIONS": "'FileLocations'",
    "KW_STACKFRAMES": "'StackFrames'",
    "KW_TRUE": "'true'",
    "KW_FALSE": "'false'",
    "KW_INF": "'inf'",
    "DIM_LABELS": "dimension labels",
    "DXD": "a size such as 3x3",
    "PAD": "a padding such as 0_0x1_1",
    "IOTA_T": "'T('",
    "JSON_DICT": "a JSON dictionary",
    "BACKEND_ATTR": "an attribute such as 'dimensions='",
    "FRONTEND_ATTR": "an attribute such as 'dimensions='",
    "$END": "the end of the block",
}

# Order of preference when listing what was expected.
_ORDER = [
    "'}'",
    "')'",
    "']'",
    "','",
    "'='",
    "a name",
    "a shape",
    "an integer",
    "a number",
    "a string",
    "'{'",
    "'('",
    "'['",
    "an attribute such as 'dimensions='",
    "'->'",
    "':'",
    "'ROOT'",
    "'ENTRY'",
]


def friendly(terminal: str) -> str:
    return FRIENDLY.get(terminal, f"'{terminal.lower()}'" if terminal.isupper() else terminal)


def expected_phrase(expected: set[str] | frozenset[str]) -> str:
    """'a name, a shape or '}'' from lark's expected terminal set, collapsed and cut to five."""
    names = {friendly(t) for t in expected}
    if not names:
        return "the end of the block (one computation per block; is a '}' misplaced?)"
    if len(names) > 9:
        return "a value"
    ordered = [n for n in _ORDER if n in names] + sorted(n for n in names if n not in _ORDER)
    if len(ordered) > 5:
        ordered = ordered[:5] + ["…"]
    if len(ordered) == 1:
        return ordered[0]
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]


def describe_token(token) -> str:
    text = str(token)
    if token.type == "$END":
        return "the end of the block"
    if len(text) > 30:
        text = text[:27] + "..."
    kind = (
        friendly(token.type).split(" ", 1)[-1]
        if friendly(token.type).startswith(("a ", "an "))
        else friendly(token.type)
    )
    return (
        f"{kind} '{text}'"
        if token.type in ("NAME", "PNAME", "INT", "DECIMAL", "STRING", "ATTR_NAME", "PRIM_TYPE")
        else f"'{text}'"
    )


def syntax_diagnostic(exc: UnexpectedInput, block_text: str, unclosed: tuple[Range, str] | None) -> Diagnostic:
    """One `syntax-error` diagnostic (block-relative range) for a lark exception.

    ``unclosed`` is (range of the block's header name, block kind) used when the block ends early: the
    error then points at the construct left open, where the person has to add the brace."""
    lines = block_text.split("\n")
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        t = exc.token
        line, col = t.line - 1, t.column - 1
        width = max(1, len(str(t).split("\n")[0]))
        msg = f"unexpected {describe_token(t)}; expected {expected_phrase(exc.expected)}"
        if line > 0 and not lines[line][:col].strip():
            # The token starts its line: what is missing belongs at the end of the previous code line
            # (XLA reports it there too, e.g. `add(x, x` followed by a new line).
            prev = line - 1
            while prev > 0 and not lines[prev].split("//", 1)[0].strip():
                prev -= 1
            code = lines[prev].split("//", 1)[0].rstrip()
            if code:
                return error(
                    Range(prev, len(code) - 1, line, col + width),
                    "syntax-error",
                    f"{msg.replace('unexpected', 'the next line starts with', 1)}; "
                    f"is something missing at the end of this line?",
                )
        if t.type in ("NAME", "PNAME") and "'='" in expected_phrase(exc.expected):
            msg += " (an instruction is 'name = shape opcode(operands)')"
        return error(Range(line, col, line, col + width), "syntax-error", msg)
    if isinstance(exc, UnexpectedCharacters):
        line, col = exc.line - 1, exc.column - 1
        pos = exc.pos_in_stream
        ch = block_text[pos] if pos is not None and pos < len(block_text) else "?"
        msg = f"unexpected character '{ch}'"
        if ch in "\"'":
            msg = "unterminated string (or an invalid escape in it)"
        elif ch == "/":
            msg = "unexpected '/': comments are '// ...' or '/* ... */' (is a '*/' missing?)"
        return error(Range(line, col, line, col + 1), "syntax-error", msg)
    # The block ended while something was still open.
    expected = getattr(exc, "expected", None) or set()
    if unclosed is not None:
        rng, kind = unclosed
        what = "'}'" if kind == "computation" else expected_phrase(expected)
        return error(rng, "syntax-error", f"this {kind} is not closed: missing {what} before the end of the block")
    last = len(lines) - 1
    while last > 0 and not lines[last].strip():
        last -= 1
    end_col = len(lines[last]) if lines else 0
    return error(
        Range(last, max(0, end_col - 1), last, end_col),
        "syntax-error",
        f"unexpected end of the block; expected {expected_phrase(expected)}",
    )


def caret_view(text: str, diag: Diagnostic) -> str:
    """``line N: <source line>`` then a caret line under the diagnostic's range, then the message."""
    lines = text.split("\n")
    r = diag.range
    src = lines[r.start_line] if r.start_line < len(lines) else ""
    end = r.end_col if r.end_line == r.start_line else len(src)
    width = max(1, end - r.start_col)
    return (
        f"{r.start_line + 1}: {src}\n{' ' * (len(str(r.start_line + 1)) + 2 + r.start_col)}{'^' * width}\n"
        f"{diag.severity.label}[{diag.code}]: {diag.message}"
    )
