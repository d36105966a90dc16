"""Independent helpers for the insight tests: XLA's human sizes, ByteSizeOf of simple shapes, token decoding, the
real buffer-assignment sets under a folder."""

from __future__ import annotations

import re
from pathlib import Path

BITS = {
    "s1": 1,
    "u1": 1,
    "s2": 2,
    "u2": 2,
    "s4": 4,
    "u4": 4,
    "f8e4m3fn": 8,
    "f8e5m2": 8,
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
    """ByteSizeOf of an array shape ``f32[128,512]{1,0}`` (a sub-byte element takes a byte unless the layout
    packs it with ``E(bits)``); None for anything else."""
    m = re.fullmatch(r"([a-z0-9]+)\[([0-9,]*)\](?:\{([^}]*)\})?", shape.strip())
    if not m or m.group(1) not in BITS:
        return None
    n = 1
    for d in filter(None, m.group(2).split(",")):
        n *= int(d)
    bits = BITS[m.group(1)]
    if bits < 8:
        return (n * bits + 7) // 8 if m.group(3) and "E(" in m.group(3) else n
    return n * bits // 8


def union_length(slices) -> int:
    """Bytes covered by ``(start, end)`` slices: merged into disjoint runs (sorted by start; a run grows while the
    next starts inside it)."""
    runs: list[list[int]] = []
    for s, e in sorted(slices):
        if runs and s <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], e)
        else:
            runs.append([s, e])
    return sum(e - s for s, e in runs)


def module_sets(root: Path) -> list[Path]:
    """The file holding BufferLiveRange of every module with buffer files under ``root``: a split set's
    ``-live-range.txt``, an older set's ``-buffer-assignment.txt`` that holds it, or an old single file."""
    out = set()
    for p in root.rglob("*.txt"):
        name = p.name
        if name.endswith("-live-range.txt"):
            out.add(p)
        elif name.endswith("-buffer-assignment.txt"):
            live = p.with_name(name[: -len("-buffer-assignment.txt")] + "-live-range.txt")
            if not live.exists() and "BufferLiveRange:" in p.read_text(encoding="utf-8", errors="replace"):
                out.add(p)
        elif "-buffer-assignment" not in name and "-memory-usage" not in name:
            with open(p, encoding="utf-8", errors="replace") as f:
                if f.read(17) == "BufferAssignment:":
                    out.add(p)
    return sorted(out)


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
