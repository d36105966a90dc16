"""Check one attribute value against its kind from the opcode table (hlo_lsp.core.hlo.opcodes).

The grammar parses every attribute value as a balanced token sequence; here each kind's syntax, as
HloParserImpl::ParseAttributeHelper reads it, is checked on that sequence.  Each function returns None
when the value is fine, else (token index, message).  Kinds without a checker here ("any", "sharding",
"json", ...) are accepted as long as they parsed.
"""

from __future__ import annotations

from collections.abc import Callable

from hlo_lsp.core.hlo.opcodes import ENUMS

from .model import Tok

_NAMES = ("NAME", "PNAME")


def _is_int(t: Tok) -> bool:
    return t.type == "INT"


def _int_list(toks: list[Tok], i: int) -> int | None:
    """Index after a braced int list starting at i, or None."""
    if i >= len(toks) or toks[i].type not in ("LBRACE", "LAYOUT_OPEN"):
        return None
    i += 1
    if i < len(toks) and toks[i].type == "RBRACE":
        return i + 1
    while True:
        if i >= len(toks) or not _is_int(toks[i]):
            return None
        i += 1
        if i < len(toks) and toks[i].type == "COMMA":
            i += 1
            continue
        if i < len(toks) and toks[i].type == "RBRACE":
            return i + 1
        return None


def check_value(kind: str, toks: list[Tok]) -> tuple[int, str] | None:
    """None when ``toks`` is a value of ``kind``, else (index of the token at fault, message)."""
    if not toks:
        return 0, "a value is missing"
    single = _ONE_TOKEN.get(kind)
    if single is not None:
        return None if len(toks) == 1 and toks[0].type in single[0] else (0, single[1])
    opening = _OPENS_WITH.get(kind)
    if opening is not None:
        return None if toks[0].type in opening[0] else (0, opening[1])
    check = _CHECKS.get(kind)
    if check is not None:
        return check(toks)
    if kind.startswith("enum:"):
        return _check_enum(kind[5:], toks)
    return None


def _check_int_list(toks: list[Tok]) -> tuple[int, str] | None:
    end = _int_list(toks, 0)
    return None if end == len(toks) else (0, "expects a list of integers such as {0,1}")


def _check_int_list_list(toks: list[Tok]) -> tuple[int, str] | None:
    msg = "expects a list of integer lists such as {{0,1},{1,0}}"
    if toks[0].type not in ("LBRACE", "LAYOUT_OPEN"):
        return 0, msg
    i = 1
    if i < len(toks) and toks[i].type == "RBRACE":
        return None if i + 1 == len(toks) else (i + 1, "unexpected tokens after the list")
    while True:
        end = _int_list(toks, i)
        if end is None:
            return min(i, len(toks) - 1), msg
        i = end
        if i < len(toks) and toks[i].type == "COMMA":
            i += 1
            continue
        if i < len(toks) and toks[i].type == "RBRACE" and i + 1 == len(toks):
            return None
        return min(i, len(toks) - 1), msg


def _check_computation(toks: list[Tok]) -> tuple[int, str] | None:
    if len(toks) == 1 and toks[0].type in _NAMES:
        return None
    if toks[0].type == "LBRACE":
        return None  # an inline computation body; XLA parses it as a nested instruction list
    return 0, "expects a computation name"


def _check_names(toks: list[Tok], what: str) -> tuple[int, str] | None:
    """``{%a, %b}``: a braced list of ``what`` (computation or instruction) names."""
    msg = f"expects a list of {what} names such as {{%a, %b}}"
    if toks[0].type not in ("LBRACE",) or toks[-1].type != "RBRACE":
        return 0, msg
    for j, t in enumerate(toks[1:-1], 1):
        if (j % 2 == 1 and t.type not in _NAMES) or (j % 2 == 0 and t.type != "COMMA"):
            return j, msg
    if len(toks) > 2 and len(toks) % 2 == 0:
        return len(toks) - 2, msg
    return None


def _check_padding(toks: list[Tok]) -> tuple[int, str] | None:
    first = toks[0]
    ok = (
        len(toks) == 1
        and first.type == "PAD"
        and all(len(d.split("_")) in (2, 3) for d in first.text.replace("x-", "x~").split("x"))
    )
    return None if ok else (0, "expects a padding config such as 0_0_0x1_1_0")


def _check_enum(enum: str, toks: list[Tok]) -> tuple[int, str] | None:
    allowed = ENUMS.get(enum)
    first = toks[0]
    if len(toks) != 1 or first.type != "NAME" or (allowed and first.text not in allowed):
        names = ", ".join(sorted(allowed)) if allowed else "a name"
        return 0, f"expects one of {names}"
    return None


def _check_slice(toks: list[Tok]) -> tuple[int, str] | None:
    msg = "expects slice ranges such as {[0:4:1], [0:2]}"
    if toks[0].type not in ("LBRACE", "LAYOUT_OPEN") or toks[-1].type != "RBRACE":
        return 0, msg
    i = 1
    while i < len(toks) - 1:
        if toks[i].type != "LSQB":
            return i, msg
        j = i + 1
        nums = 0
        while j < len(toks) and toks[j].type != "RSQB":
            if toks[j].type == "INT":
                nums += 1
            elif toks[j].type != "COLON":
                return j, msg
            j += 1
        if nums not in (2, 3):
            return i, msg
        i = j + 1
        if i < len(toks) - 1 and toks[i].type == "COMMA":
            i += 1
    return None


_WINDOW_KEYS = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"}


def _check_window(toks: list[Tok]) -> tuple[int, str] | None:
    if toks[0].type not in ("LBRACE",) or toks[-1].type != "RBRACE":
        return 0, "expects a window such as {size=3x3 stride=1x1 pad=1_1x1_1}"
    i = 1
    seen = set()
    while i < len(toks) - 1:
        t = toks[i]
        if t.type != "ATTR_NAME" or t.text[:-1] not in _WINDOW_KEYS:
            return i, "expects a window sub-attribute: size=, stride=, pad=, lhs_dilate=, rhs_dilate= or rhs_reversal="
        key = t.text[:-1]
        if key in seen:
            return i, f"sub-attribute '{key}=' already exists"
        seen.add(key)
        if i + 1 >= len(toks) - 1:
            return i, f"'{key}=' needs a value"
        v = toks[i + 1]
        if key == "pad":
            if v.type not in ("PAD",):
                return i + 1, "expects window pad pattern, e.g., '0_0x3_3'"
        elif v.type not in ("INT", "DXD"):
            return i + 1, f"expects '{key}=' followed by an integer or a size such as 3x3"
        i += 2
    return None


def _check_replica_groups(toks: list[Tok]) -> tuple[int, str] | None:
    """``{{0,1},{2,3}}``, ``{}``, the iota form ``[2,2]<=[4]`` / ``[2,2]<=[2,2]T(1,0)``, or ``mesh[...]``."""
    first = toks[0]
    if first.type in ("LBRACE", "LAYOUT_OPEN"):
        return check_value("int_list_list", toks)
    if first.type == "NAME" and first.text == "mesh":
        return None
    msg = "expects replica groups such as {{0,1},{2,3}} or [2,2]<=[4]"
    i = 0
    for part in ("dims", "leq", "reshape", "perm"):
        if part == "leq":
            if i >= len(toks) or toks[i].type != "LEQ":
                return min(i, len(toks) - 1), msg
            i += 1
            continue
        if part == "perm":
            if i == len(toks):
                return None
            if toks[i].type != "IOTA_T" or i + 1 >= len(toks) or toks[i + 1].type != "LPAR":
                return i, msg
            i += 1
        opener, closer = ("LPAR", "RPAR") if part == "perm" else ("LSQB", "RSQB")
        if i >= len(toks) or toks[i].type != opener:
            return min(i, len(toks) - 1), msg
        i += 1
        want_int = True
        while i < len(toks) and toks[i].type != closer:
            if (want_int and toks[i].type != "INT") or (not want_int and toks[i].type != "COMMA"):
                return i, "expects integer" if want_int else msg
            want_int = not want_int
            i += 1
        if want_int or i >= len(toks):
            return min(i, len(toks) - 1), "expects integer"
        i += 1
    return None if i == len(toks) else (i, msg)


# kind -> (the token types its one token may have, the message otherwise)
_ONE_TOKEN: dict[str, tuple[frozenset[str], str]] = {
    "int": (frozenset({"INT"}), "expects an integer"),
    "float": (frozenset({"INT", "DECIMAL", "KW_INF"}), "expects a number"),
    "bool": (frozenset({"KW_TRUE", "KW_FALSE"}), "expects true or false"),
    "string": (frozenset({"STRING"}), "expects a quoted string"),
    "dim_labels": (frozenset({"DIM_LABELS"}), "expects dim labels such as b01f_01io->b01f"),
    "json": (frozenset({"STRING", "JSON_DICT"}), "expects a string or a JSON dictionary"),
}
# kind -> (the token types its value may start with, the message otherwise)
_OPENS_WITH: dict[str, tuple[frozenset[str], str]] = {
    "shape": (frozenset({"PRIM_TYPE", "LPAR"}), "expects a shape"),
    "metadata": (frozenset({"LBRACE", "LAYOUT_OPEN"}), "expects {op_type=... op_name=...}"),
    "sharding": (frozenset({"LBRACE", "LAYOUT_OPEN"}), "expects a braced value"),
    "frontend": (frozenset({"LBRACE", "LAYOUT_OPEN"}), "expects a braced value"),
}
_CHECKS: dict[str, Callable[[list[Tok]], tuple[int, str] | None]] = {
    "int_list": _check_int_list,
    "int_list_list": _check_int_list_list,
    "computation": _check_computation,
    "computation_list": lambda toks: _check_names(toks, "computation"),
    "instruction_list": lambda toks: _check_names(toks, "instruction"),
    "padding": _check_padding,
    "slice": _check_slice,
    "window": _check_window,
    "replica_groups": _check_replica_groups,
}
