"""Value-level rules of XLA's parser that need shapes: literals against their shape, sharding syntax,
and the few shape facts XLA's parser checks (or CHECK-fails on) while building instructions.

Each checker returns None when the value is fine, else (token, message).  Written from
HloParserImpl::ParseDenseLiteral / SetValueInLiteral, ParseSingleSharding and CreateInstruction.
"""

from __future__ import annotations

from .model import Shape, Tok

_OPEN = ("LBRACE", "LAYOUT_OPEN")
_INT_RANGES = {
    "s1": (-1, 0),
    "s2": (-2, 1),
    "s4": (-8, 7),
    "s8": (-128, 127),
    "s16": (-32768, 32767),
    "s32": (-(2**31), 2**31 - 1),
    "s64": (-(2**63), 2**64 - 1),
    "u1": (0, 1),
    "u2": (0, 3),
    "u4": (0, 15),
    "u8": (0, 255),
    "u16": (0, 65535),
    "u32": (0, 2**32 - 1),
    "u64": (0, 2**64 - 1),
}
_FLOAT_MAX = {
    "f16": 65504.0,
    "bf16": 3.3895313892515355e38,
    "f32": 3.4028234663852886e38,
    "f64": 1.7976931348623157e308,
    "f8e5m2": 57344.0,
    "f8e4m3fn": 448.0,
    "f8e4m3b11fnuz": 30.0,
    "f8e5m2fnuz": 57344.0,
    "f8e4m3fnuz": 240.0,
    "f8e4m3": 240.0,
    "f8e3m4": 15.5,
    "f4e2m1fn": 6.0,
}
_COMPLEX = ("c64", "c128")
_SCALARS = ("INT", "DECIMAL", "KW_TRUE", "KW_FALSE", "KW_INF")


def _scalar(element: str, toks: list[Tok], i: int) -> tuple[int, tuple[Tok, str] | None]:
    """Check one scalar starting at toks[i]; returns (next index, problem)."""
    t = toks[i]
    if element in _COMPLEX:
        if t.type != "LPAR":
            return i + 1, (t, f"unsupported primitive type {element.upper()}: write a complex value as (real, imag)")
        j = i + 1
        parts = 0
        while j < len(toks) and toks[j].type != "RPAR":
            if toks[j].type in ("INT", "DECIMAL", "KW_INF"):
                parts += 1
            elif toks[j].type != "COMMA":
                return j + 1, (toks[j], "unexpected token type in a literal")
            j += 1
        if parts != 2:
            return j + 1, (t, "a complex value is (real, imag)")
        return j + 1, None
    if t.type not in _SCALARS:
        return i + 1, (t, "unexpected token type in a literal")
    if element in ("token", "opaque"):
        return i + 1, (t, f"a {element} has no literal value")
    if element == "pred":
        if t.type == "DECIMAL":
            return i + 1, (t, "expects true, false or an integer for pred")
        return i + 1, None
    if t.type in ("KW_TRUE", "KW_FALSE"):
        # XLA's parser aborts the process on `s32[] constant(true)`.
        return i + 1, (t, f"true/false is only a pred value, not {element} (XLA's parser aborts on this)")
    if element in _INT_RANGES:
        if t.type != "INT":
            return i + 1, (t, "expects integer")
        lo, hi = _INT_RANGES[element]
        iv = int(t.text)
        if not lo <= iv <= hi:
            return i + 1, (t, f"value {iv} is out of range for {element} [{lo}, {hi}]")
        return i + 1, None
    if t.type in ("INT", "DECIMAL"):
        try:
            v = float(t.text)
        except ValueError:  # nan(0x..), -nan
            return i + 1, None
        if v in (float("inf"), float("-inf")):
            if "inf" in t.text:
                return i + 1, None
            return i + 1, (t, "the value is out of range for a double and unparsable")
        limit = _FLOAT_MAX.get(element)
        if limit is not None and abs(v) > limit:
            return i + 1, (t, f"value {t.text} is out of range for {element} [-{limit:g}, {limit:g}]")
    return i + 1, None


def check_literal(shape: Shape, toks: list[Tok], at: Tok) -> tuple[Tok, str] | None:
    """The literal of `constant(...)` against its shape (no shape: nothing to check)."""
    if not toks:
        return at, "expects a literal"
    end, problem = _literal(shape, toks, 0)
    if problem is None and end != len(toks):
        return toks[min(end, len(toks) - 1)], "unexpected tokens after the literal"
    return problem


def _literal(shape: Shape, toks: list[Tok], i: int) -> tuple[int, tuple[Tok, str] | None]:
    if shape.is_tuple:
        if i >= len(toks) or toks[i].type != "LPAR":
            return i + 1, (toks[min(i, len(toks) - 1)], f"expects a tuple literal for {shape.text}")
        i += 1
        for k, element in enumerate(shape.elements):
            if k:
                if i >= len(toks) or toks[i].type != "COMMA":
                    return i, (toks[min(i, len(toks) - 1)], "expects ',' to separate tuple elements")
                i += 1
            if i >= len(toks):
                return i, (toks[-1], "the tuple literal has too few elements")
            i, problem = _literal(element, toks, i)
            if problem:
                return i, problem
        if i >= len(toks) or toks[i].type != "RPAR":
            return i, (toks[min(i, len(toks) - 1)], f"expects ')' after {len(shape.elements)} tuple elements")
        return i + 1, None
    sizes = shape.dim_sizes()
    element_type = shape.element
    if element_type is None:  # only a tuple has none, and tuples are read above
        return i, None
    if not sizes:
        if toks[i].type in _OPEN:
            return i + 1, (toks[i], "expects nested array in rank 0, but sees larger")
        return _scalar(element_type, toks, i)
    return _dense(element_type, sizes, toks, i)


def _dense(element: str, sizes: list[int | None], toks: list[Tok], i: int) -> tuple[int, tuple[Tok, str] | None]:
    """A nested brace literal of rank len(sizes), read with an explicit stack."""
    rank = len(sizes)
    if toks[i].type not in _OPEN:
        return i + 1, (toks[i], f"expects nested array in rank {rank}, but sees 0")
    counts: list[int] = []
    opens: list[Tok] = []
    j = i
    while j < len(toks):
        t = toks[j]
        if t.type in _OPEN:
            if counts:
                counts[-1] += 1
            if len(counts) == rank:
                return j + 1, (t, f"expects nested array in rank {rank}, but sees larger")
            counts.append(0)
            opens.append(t)
            j += 1
            if j < len(toks) and toks[j].type == "DOTS":
                j += 1
                if j < len(toks) and toks[j].type == "RBRACE" and len(counts) == 1:
                    return j + 1, None
                return j, (toks[j - 1], f"expects `...` at nest level 1, but sees it at nest level {len(counts)}")
            continue
        if t.type == "RBRACE":
            depth = len(counts)
            n = counts.pop()
            opens.pop()
            want = sizes[depth - 1]
            if want is not None and n != want:
                return j + 1, (t, f"expects {want} elements at nesting level {depth}, but sees {n}")
            j += 1
            if not counts:
                return j, None
            continue
        if t.type == "COMMA":
            j += 1
            continue
        if len(counts) < rank:
            return j + 1, (t, f"expects nested array in rank {rank}, but sees {len(counts)}")
        counts[-1] += 1
        j, problem = _scalar(element, toks, j)
        if problem:
            return j, problem
    return j, (opens[-1] if opens else toks[-1], "the literal is not closed")


def check_sharding(toks: list[Tok]) -> tuple[Tok | None, str] | None:
    """`{...}`: a single sharding or a tuple of them (HloParserImpl::ParseSharding)."""
    if not toks or toks[0].type not in _OPEN:
        return (toks[0] if toks else None), "expected '{' to start sharding attribute"
    inner = toks[1:-1]
    if inner and inner[0].type in _OPEN:
        # Tuple sharding: split at top-level commas.
        depth = 0
        start = 0
        for k, t in enumerate(inner + [Tok("COMMA", ",", 0, 0)]):
            if t.type in _OPEN or t.type in ("LSQB", "LPAR"):
                depth += 1
            elif t.type in ("RBRACE", "RSQB", "RPAR"):
                depth -= 1
            elif t.type == "COMMA" and depth == 0:
                problem = _single_sharding(inner[start:k])
                if problem:
                    return problem
                start = k + 1
        return None
    return _single_sharding(toks)


class _Bad(Exception):
    def __init__(self, tok: Tok, message: str):
        self.tok, self.message = tok, message


def _ints_until(toks: list[Tok], j: int, stop: str) -> tuple[list[int], int]:
    """`INT (, INT)*` up to the ``stop`` token; raises _Bad like XLA's "expects integer"."""
    vals = []
    want_int = True
    while j < len(toks) and toks[j].type != stop:
        t = toks[j]
        if want_int and t.type == "INT":
            vals.append(int(t.text))
        elif not want_int and t.type == "COMMA":
            pass
        else:
            raise _Bad(t, "expects integer" if want_int else "expects ','")
        want_int = not want_int
        j += 1
    if want_int and vals:
        raise _Bad(toks[min(j, len(toks) - 1)], "expects integer")
    return vals, j + 1


def _single_sharding(toks: list[Tok]) -> tuple[Tok | None, str] | None:
    try:
        return _single_sharding_checked(toks)
    except _Bad as bad:
        return bad.tok, bad.message


def _single_sharding_checked(toks: list[Tok]) -> tuple[Tok | None, str] | None:
    """`_single_sharding`, raising `_Bad` for a problem inside the braces."""
    if not toks or toks[0].type not in _OPEN or toks[-1].type != "RBRACE":
        return (toks[0] if toks else None), "expected '{' to start sharding attribute"
    body = toks[1:-1]
    if body and body[0].type == "NAME" and body[0].text in ("mesh", "maximal_mesh"):
        return None  # named (mesh) shardings: left to XLA
    parts = _ShardingParts()
    j = 0
    while j < len(body):
        j = parts.read(body, j)
    return parts.problem(toks[0])


_FLAGS = frozenset({"maximal", "replicated", "manual", "unknown", "unreduced", "last_tile_dim_replicate"})


class _ShardingParts:
    """What one sharding's braces hold (HloParserImpl::ParseSingleSharding): its flags, devices, tile shape and
    whether the devices are an iota."""

    def __init__(self) -> None:
        self.flags: set[str] = set()
        self.devices: list[int] = []
        self.tile: list[int] = []
        self.iota = False

    def read(self, body: list[Tok], j: int) -> int:
        """Read the part at ``body[j]``; where the next one starts. Raises `_Bad` for one XLA rejects."""
        t = body[j]
        word = t.text
        if t.type == "NAME" and word in _FLAGS:
            self.flags.add(word)
            return j + 1
        if t.type == "NAME" and word in ("shard_as", "shard_like"):
            if j + 1 >= len(body) or body[j + 1].type != "INT":
                raise _Bad(t, f"{word} needs a group id")
            return j + 2
        if t.type == "ATTR_NAME" and word == "device=":
            if j + 1 >= len(body) or body[j + 1].type != "INT":
                raise _Bad(t, "device= attribute must be an integer")
            self.devices = [int(body[j + 1].text)]
            return j + 2
        if t.type == "ATTR_NAME" and word == "devices=":
            if j + 1 >= len(body) or body[j + 1].type != "LSQB":
                raise _Bad(t, "expected '[' to start sharding devices shape")
            return self._devices(body, j + 2, t)
        if t.type == "ATTR_NAME" and word in ("metadata=", "last_tile_dims="):
            return _past_braces(body, j + 1)
        if t.type == "COMMA":
            return j + 1
        raise _Bad(t, "unexpected token in sharding: expected replicated, maximal, manual, device=, devices=, ...")

    def _devices(self, body: list[Tok], j: int, t: Tok) -> int:
        """``devices=[tile]`` then the device list, or ``<=[reshape]`` with its ``T(perm)`` (an iota)."""
        self.tile, j = _ints_until(body, j, "RSQB")
        if j < len(body) and body[j].type == "LEQ":
            self.iota = True
            reshape, j = _ints_until(body, j + 2, "RSQB")
            if j < len(body) and body[j].type == "IOTA_T":
                perm, j = _ints_until(body, j + 2, "RPAR")
                bad = [p for p in perm if p >= len(reshape) or p < 0]
                if bad:
                    raise _Bad(t, f"out of range iota transpose value {bad[0]}, expecting [0, {len(reshape)})")
                if len(perm) != len(reshape):
                    raise _Bad(t, "iota_transpose_perm should have the same rank as iota_reshape_dims")
            elif len(reshape) > 1:
                raise _Bad(t, "expected 'T(' after a multi-dimensional iota reshape")
            return j
        while j < len(body) and body[j].type in ("INT", "COMMA"):
            if body[j].type == "INT":
                self.devices.append(int(body[j].text))
            j += 1
        return j

    def problem(self, first: Tok) -> tuple[Tok | None, str] | None:
        """What XLA rejects in the parts together (reported on the sharding's first token); None when fine."""
        flags, devices, tile = self.flags, self.devices, self.tile
        if "replicated" in flags and devices:
            return first, "replicated shardings should not have any devices assigned"
        if "maximal" in flags:
            if len(devices) != 1:
                return first, "maximal shardings should have exactly one device assigned"
            return None
        if flags & {"replicated", "manual", "unknown", "unreduced"}:
            if devices:
                return first, "this sharding should not have any devices assigned"
            return None
        if not tile:
            return first, "non-maximal shardings must have a tile assignment list including dimensions"
        if not self.iota:
            if len(devices) <= 1:
                return first, "non-maximal shardings must have more than one device assigned"
            total = 1
            for d in tile:
                total *= d
            if len(devices) > total:
                shown = "x".join(map(str, tile))
                return first, f"{len(devices)} devices for a {shown} tile assignment (XLA's parser aborts on this)"
        return None


def _past_braces(body: list[Tok], j: int) -> int:
    """Past the braced value starting at ``body[j]`` (``j`` itself when no brace opens there)."""
    if j < len(body) and body[j].type in _OPEN:
        depth = 0
        while j < len(body):
            if body[j].type in _OPEN:
                depth += 1
            elif body[j].type == "RBRACE":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
    return j
