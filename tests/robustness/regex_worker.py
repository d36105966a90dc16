"""Worker of test_regex_worst_case: feeds each pattern its adversarial inputs and reports on stdout.

Input (stdin, JSON): ``[[pattern, flags, scan], ...]``; ``scan``: the code tries the pattern at every position
(finditer), else at one (match). For each pattern, every input from `adversarial_inputs` is
first run at `SMALL` characters (one ``START <i> small`` line before the batch; each timed as the fastest of
`SMALL_RUNS` runs), the `KEEP` slowest are then run
at `BIG` characters (``START <i> <input description>`` before each, ``DONE <i>`` after the pattern). The parent
kills the worker when a line does not come within its hang timeout and names what was running. At `BIG`
characters linear work takes milliseconds and quadratic work takes minutes, so the hang timeout separates them
with a wide margin; the small run only picks which inputs to try big.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import time

try:
    import re._parser as sre_parse  # Python 3.11+
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

SMALL = 2_000
BIG = 100_000
KEEP = 4
_CATEGORY = {
    "CATEGORY_DIGIT": "7",
    "CATEGORY_SPACE": " ",
    "CATEGORY_WORD": "w",
    "CATEGORY_NOT_DIGIT": "x",
    "CATEGORY_NOT_SPACE": "x",
    "CATEGORY_NOT_WORD": "-",
}


def analyse(pattern: str, flags: int) -> tuple[list[str], bool]:
    """(characters the pattern names, whether it repeats anything): literals, ends of class ranges, a
    representative of each category, and a character outside negated classes and '.'."""
    chars: set[str] = set()
    repeats = False

    def walk(items):
        nonlocal repeats
        for op, av in items:
            name = str(op)
            if name == "LITERAL":
                chars.add(chr(av))
            elif name == "NOT_LITERAL":
                chars.update((chr(av), "§"))
            elif name == "IN":
                for op2, av2 in av:
                    n2 = str(op2)
                    if n2 == "LITERAL":
                        chars.add(chr(av2))
                    elif n2 == "RANGE":
                        chars.update((chr(av2[0]), chr(av2[1])))
                    elif n2 == "CATEGORY":
                        chars.add(_CATEGORY.get(str(av2), "x"))
                    elif n2 == "NEGATE":
                        chars.add("§")
            elif name == "ANY":
                chars.add("q")
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                repeats = repeats or av[1] > 1
                walk(av[2])
            elif name == "SUBPATTERN":
                walk(av[-1])
            elif name == "ATOMIC_GROUP":  # its argument is the group's pattern itself
                walk(av)
            elif name == "BRANCH":
                for b in av[1]:
                    walk(b)
            elif name in ("ASSERT", "ASSERT_NOT"):
                walk(av[1])
            elif name == "CATEGORY":
                chars.add(_CATEGORY.get(str(av), "x"))

    walk(sre_parse.parse(pattern, flags))
    chars.update(" \n")
    return sorted(chars), repeats


def adversarial_inputs(chars: list[str], n: int) -> list[tuple[str, str]]:
    """(description, text) pairs of length about n: each character repeated, each ordered pair alternated,
    one character then a run of another (a line start then a long name), triples, and each run followed by a
    character the pattern cannot expect."""
    cs = chars[:16]
    out = [(f"{c!r}*n", c * n) for c in cs]
    out += [(f"{c!r}*n+'§'", c * n + "§") for c in cs]
    out += [(f"({a + b!r})*n", (a + b) * (n // 2)) for a, b in itertools.permutations(cs, 2)]
    out += [(f"{a!r}+{b!r}*n", a + b * n) for a, b in itertools.permutations(cs, 2)]
    out += [(f"({a + b + c!r})*n", (a + b + c) * (n // 3)) for a, b, c in itertools.combinations(cs, 3)][:120]
    return out


def _run(rx: re.Pattern, text: str, scan: bool = True) -> None:
    if scan:
        for _ in rx.finditer(text):
            pass
    else:
        rx.match(text)
    rx.fullmatch(text)


SMALL_RUNS = 3  # each small input timed this many times, the fastest kept (`small_time`)


def small_time(rx: re.Pattern, text: str, scan: bool = True) -> float:
    """Seconds ``_run`` takes on a small input, the fastest of `SMALL_RUNS`: timed once, a pause of the machine
    (a collection, another process's turn) during a cheap input could rank it above the quadratic one."""
    best = float("inf")
    for _ in range(SMALL_RUNS):
        t0 = time.perf_counter()
        _run(rx, text, scan)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    jobs = json.load(sys.stdin)
    for i, (pattern, flags, scan) in enumerate(jobs):
        rx = re.compile(pattern, flags)
        chars, repeats = analyse(pattern, flags)
        if not repeats:  # nothing to backtrack over: linear by construction
            print(f"DONE {i}", flush=True)
            continue
        print(f"START {i} small inputs", flush=True)
        timed = []
        for desc, text in adversarial_inputs(chars, SMALL):
            timed.append((small_time(rx, text, scan), desc))
        slowest = {d for _, d in sorted(timed, reverse=True)[:KEEP]}
        for desc, text in adversarial_inputs(chars, BIG):
            if desc in slowest:
                print(f"START {i} {desc} ({len(text)} chars)", flush=True)
                _run(rx, text, scan)
        print(f"DONE {i}", flush=True)


if __name__ == "__main__":
    main()
