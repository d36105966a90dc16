"""Hostile inputs, built from the issue's list and from real dumps in tests/data (small, copied there).

Each case is ``(name, text)``; `disk_cases` adds byte-level files (NUL bytes, invalid UTF-8, a BOM) that only
exist on disk. The names of the document a case is opened as are in `DOC_NAMES`: the kind detection follows
the file name first, so the same text is tried as HLO, as a split buffer file and as a plain ``.txt``.
"""

from __future__ import annotations

import random
from pathlib import Path

from tests.fixtures import DATA

SEEDS = DATA / "seeds"
HLO_SEED = SEEDS / "001_2b3b731b0feb0bfe.txt"  # GPU HLO module, old operand-with-shape style
BA_SEED = SEEDS / "004_a3085531593bac68.txt"  # old single-file buffer assignment
TPU_SEED = SEEDS / "003_6f652c95ac4cfb4d.txt"  # old single file with TPU tiling
SPLIT_DIR = DATA / "jax-cpu" / "cond_switch"
SPLIT_STEM = "module_0000.jit_piecewise.cpu_after_optimizations"
SPLIT_SUFFIXES = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
)

DOC_NAMES = (
    "m.cpu_after_optimizations.txt",
    "m.cpu_after_optimizations-buffer-assignment.txt",
    "m.cpu_after_optimizations-live-range.txt",
    "plain.txt",
)

DEEP = 50_000
HUGE_INT = "123456789012345678901234567890"  # 30 digits
DIMS_100K = ",".join(["9"] * 100_000)


def split_files() -> dict[str, Path]:
    """The cond_switch split set: suffix ('' for the HLO file) -> path."""
    out = {"": SPLIT_DIR / f"{SPLIT_STEM}.txt"}
    out.update({s: SPLIT_DIR / f"{SPLIT_STEM}{s}" for s in SPLIT_SUFFIXES})
    return out


def _module(body: str, sig: str = "()", result: str = "f32[]") -> str:
    return f"HloModule m\n\nENTRY %e {sig} -> {result} {{\n{body}\n}}\n"


def _unicode_digits(text: str, rng: random.Random) -> str:
    """``text`` with about one ASCII digit in five replaced by a digit of another script."""
    other = "\u00b2\u0663"
    return "".join(rng.choice(other) if c.isascii() and c.isdigit() and rng.random() < 0.2 else c for c in text)


def text_cases() -> list[tuple[str, str]]:
    """Every text-level hostile input of the issue, by name."""
    rng = random.Random(8)
    hlo = HLO_SEED.read_text()
    ba = BA_SEED.read_text()
    split = {k: p.read_text() for k, p in split_files().items()}
    hlo_lines = hlo.split("\n")
    ba_lines = ba.split("\n")
    garbage = ["}{)(", "%%%", "ENTRY", "allocation 7: size", " value: <", "->", "\t\t", "{0}", "[", "=", "·é中"]
    interleaved = "\n".join(x for ln in hlo_lines[:400] for x in (ln, rng.choice(garbage)))
    cases = [
        ("empty", ""),
        ("only-newlines", "\n" * 1000),
        ("random-printable", "".join(rng.choice("%{}()[]<>,=:.-_ abcfsu0123456789\n") for _ in range(20_000))),
        (
            "random-unicode",
            "".join(chr(rng.randrange(1, 0x10FFFF)) for _ in range(5_000))
            .encode("utf-8", "replace")
            .decode("utf-8", "replace"),
        ),
        ("nul-chars", hlo[:3000].replace("\n", "\x00\n", 20) + "\x00" * 100),
        ("lone-surrogate-escaped", hlo[:2000] + "\udcff\ud800"),
        ("bom-hlo", "\ufeff" + hlo[:20_000]),
        ("bom-ba", "\ufeff" + ba),
        ("crlf-hlo", hlo.replace("\n", "\r\n")),
        ("crlf-ba", ba.replace("\n", "\r\n")),
        ("lone-cr-hlo", hlo.replace("\n", "\r")),
        ("lone-cr-ba", ba.replace("\n", "\r")),
        ("mixed-eol", "".join(ln + rng.choice(("\n", "\r\n", "\r", "\u2028", "\x0b")) for ln in hlo_lines[:500])),
        ("one-2mb-line", _module('  ROOT %c = f32[] constant(0), metadata={op_name="' + "x" * 2_000_000 + '"}')),
        ("2mb-line-no-newline", "%" + "a" * 2_000_000),
        ("parens-50k", _module("  ROOT %c = f32[] constant(" + "(" * DEEP + ")" * DEEP + ")")),
        ("open-parens-50k", _module("  ROOT %c = f32[] constant(" + "(" * DEEP)),
        ("tuple-50k", _module("  ROOT %c = f32[] constant(0)", result="(" * DEEP + "f32[]" + ")" * DEEP)),
        (
            "tuple-shape-50k",
            _module("  %p = " + "(" * DEEP + "f32[]" + ")" * DEEP + " parameter(0)\n  ROOT %c = f32[] constant(0)"),
        ),
        ("braces-50k", _module("  ROOT %c = f32[] constant(0), backend_config=" + "{" * DEEP + "}" * DEEP)),
        ("literal-50k", _module("  ROOT %c = f32[1] constant(" + "{" * DEEP + "1" + "}" * DEEP + ")")),
        ("ba-nested-50k", ba.replace("ShapeIndex {}", "ShapeIndex " + "{" * DEEP, 1)),
        (
            "int-30-digits",
            _module(
                f"  %p = f32[{HUGE_INT}] parameter({HUGE_INT})\n"
                f"  %g = f32[] get-tuple-element(%p), index={HUGE_INT}\n"
                f"  ROOT %c = s32[] constant({HUGE_INT})",
                sig=f"(p: f32[{HUGE_INT}])",
            ),
        ),
        (
            "int-5000-digits",
            _module(
                f"  %p = (f32[]) parameter(0)\n  ROOT %g = f32[] get-tuple-element(%p), index={'7' * 5000}",
                sig="(p: (f32[]))",
            ),
        ),
        (
            "dims-100k",
            _module(
                f"  %p = f32[{DIMS_100K}] parameter(0)\n  ROOT %r = f32[2] reshape(%p)",
                sig=f"(p: f32[{DIMS_100K}])",
                result="f32[2]",
            ),
        ),
        ("ba-int-30-digits", ba.replace("size ", f"size {HUGE_INT}", 3).replace("offset=", f"offset={HUGE_INT}")),
        ("ba-huge-live-range", ba.replace("(max ", "(max 99999999999").replace(":0-", ":0-9999999999")),
        ("half-hlo-half-ba", "\n".join(hlo_lines[: len(hlo_lines) // 2] + ba_lines[len(ba_lines) // 2 :])),
        ("half-ba-half-hlo", "\n".join(ba_lines[: len(ba_lines) // 2] + hlo_lines[len(hlo_lines) // 2 :])),
        ("interleaved-garbage", interleaved),
        ("ba-sections-shuffled", "\n".join(rng.sample(ba_lines, len(ba_lines)))),
        ("hlo-lines-shuffled", "\n".join(rng.sample(hlo_lines, len(hlo_lines)))),
        ("split-files-concatenated", "\n".join(split.values())),
        # digits that str.isdigit() accepts and int() does not (superscript two) or does (Arabic-Indic three),
        # where XLA writes numbers: parameter numbers, dimensions, sizes, offsets, live ranges, source lines
        ("unicode-digits-hlo", _unicode_digits(hlo, rng)),
        ("unicode-digits-ba", _unicode_digits(ba, rng)),
        *((f"unicode-digits-split{kind or '-module'}", _unicode_digits(t, rng)) for kind, t in sorted(split.items())),
        (
            "xla-abort-parameter-2",
            _module(
                "  %a = f32[] parameter(0)\n  %b = f32[] parameter(2)\n  ROOT %s = f32[] add(%a, %b)",
                sig="(a: f32[], b: f32[])",
            ),
        ),
        (
            "xla-abort-reshape-count",
            _module(
                "  %a = f32[2,3] parameter(0)\n  ROOT %r = f32[7] reshape(%a)", sig="(a: f32[2,3])", result="f32[7]"
            ),
        ),
    ]
    return cases


def disk_cases() -> list[tuple[str, bytes]]:
    """Byte-level files: only the disk can hold these."""
    hlo = HLO_SEED.read_bytes()
    return [
        ("random-bytes", random.Random(1).randbytes(50_000)),
        ("nul-bytes", hlo[:4000] + b"\x00" * 64 + hlo[4000:8000]),
        ("invalid-utf8", hlo[:4000] + b"\xff\xfe\xc3(" + hlo[4000:8000]),
        ("latin1", "HloModule m, é\n".encode("latin-1") + hlo[:4000]),
        ("utf16", hlo[:4000].decode().encode("utf-16")),
        ("bom-utf8", b"\xef\xbb\xbf" + hlo),
        ("empty", b""),
    ]


def prefixes(text: str, count: int) -> list[str]:
    """``count`` prefixes of ``text`` spread evenly, plus every line boundary when count allows."""
    n = len(text)
    cuts = sorted({round(i * n / count) for i in range(count + 1)})
    return [text[:c] for c in cuts]
