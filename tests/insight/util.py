"""Independent helpers for the insight tests: XLA's human sizes, ByteSizeOf of simple shapes, token decoding."""

from __future__ import annotations

import re

BITS = {
    "pred": 8,
    "s8": 8,
    "u8": 8,
    "s16": 16,
    "u16": 16,
    "f16": 16,
    "bf16": 16,
    "s32": 32,
    "u32": 32,
    "f32": 32,
    "s64": 64,
    "u64": 64,
    "f64": 64,
    "c64": 64,
    "c128": 128,
}


def human(n: int) -> str:
    """tsl::strings::HumanReadableNumBytes, written out again for the tests."""
    if n < 1024:
        return f"{n}B"
    units = ["KiB", "MiB", "GiB", "TiB"]
    u = 0
    while n >= 1024 * 1024 and u < len(units) - 1:
        n //= 1024
        u += 1
    return f"{n / 1024:.1f}{units[u]}" if u == 0 else f"{n / 1024:.2f}{units[u]}"


def array_bytes(shape: str) -> int | None:
    """Bytes of an array shape ``f32[128,512]{1,0}``; None for anything else."""
    m = re.fullmatch(r"([a-z0-9]+)\[([0-9,]*)\](?:\{[^}]*\})?", shape)
    if not m or m.group(1) not in BITS:
        return None
    n = 1
    for d in filter(None, m.group(2).split(",")):
        n *= int(d)
    return n * BITS[m.group(1)] // 8


def decode_tokens(data: list[int], types: list[str]) -> list[tuple[int, int, int, str, int]]:
    """(line, start, length, type name, modifiers) from LSP's relative encoding."""
    out = []
    line = start = 0
    for i in range(0, len(data), 5):
        dl, ds, length, t, mods = data[i : i + 5]
        line += dl
        start = start + ds if dl == 0 else ds
        out.append((line, start, length, types[t], mods))
    return out
