"""Build a large synthetic dump set: a module from ``synth_module.py`` and its buffer-assignment files.

Usage::

    python3 benchmarks/synth_buffers.py [SRC] OUTDIR --size-mb N

``SRC`` is a real ``*after_optimizations.txt`` whose ``-buffer-assignment.txt`` and
``-buffer-assignment-values.txt`` lie beside it (default: the loops_scan_while RNN module of
``tests/data/jax-cpu``). The module is replicated ``K`` times by ``synth_module.synthesize`` (every defined name
``X`` of copy ``k`` becomes ``X.k<k>``, ENTRY parameter ``j`` becomes ``k * P + j``), and both buffer files
are replicated the same way, copy after copy, so that every value names an instruction of the synthetic
module:

- ``allocation I: ... parameter J ...`` becomes allocation ``k * A + I`` (``A`` = allocations of the source)
  and parameter ``k * P + J``;
- a value ``<ID NAME @POS>`` becomes ``<k * V + ID NAME.k<k> @POS>`` (``V`` = the largest value id + 1), in the
  allocation lines and in the values file's headers; the names under ``positions:`` and ``uses:`` are renamed;
- ``from instruction:`` lines rename every ``%name`` reference the way the module does (quoted text is left);
- ``Total bytes used`` is multiplied by ``K``;
- the ``-live-range.txt`` beside ``SRC``, when there is one, as the copies running one after the other: copy
  ``k``'s instructions take steps ``k * S + i`` of the sequence (``S`` = the source's steps) under their copy
  names, every buffer live range moves with them, the header's max grows to match; the peak list and its
  stack-trace breakdown are copy 0's (`replicate_live_range`).

``N`` sizes the module (as ``synth_module.py --size-mb``); the values file of the default source is then
about the module's size, the assignment file about a quarter of it. The files share the stem
``module_0000.jit_synth.cpu_after_optimizations`` (so the server pairs them) unless ``--stem`` says otherwise.
Deterministic: the same source and size give the same bytes.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synth_module import _REF_RX, defined_names, split_module, synthesize  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SRC = (
    REPO / "tests/data/jax-cpu/loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"
)
DEFAULT_STEM = "module_0000.jit_synth.cpu_after_optimizations"
ASSIGNMENT, VALUES, LIVE_RANGE = "-buffer-assignment.txt", "-buffer-assignment-values.txt", "-live-range.txt"

_NAME = r"[A-Za-z_][\w.\-]*"
_ALLOC_RX = re.compile(r"^allocation (\d+): (.*?)(?:(parameter )(\d+)(.*))?$")
_VALUE_LINE_RX = re.compile(r"^( value: <)(\d+) (" + _NAME + ")(.*)$")
_VALUE_HEAD_RX = re.compile(r"^<(\d+) (" + _NAME + ")(.*)$")
_NAMED_RX = re.compile(r"^(  )(" + _NAME + ")(.*)$")
_FROM = " from instruction: "
_PARAM_RX = re.compile(_FROM + r"%(" + _NAME + r") = .*?\sparameter\((\d+)\)")
_ENTRY_PARAM_RX = re.compile(r"\s+%?(" + _NAME + r") = \S+ parameter\(\d+\)")
_TOTAL_RX = re.compile(r"^Total bytes used: (\d+)")


def _renamer(names: set[str], suffix: str):
    """A function that renames a name the module defines, and leaves any other text."""
    return lambda name: name + suffix if name in names else name


def _rename_refs(text: str, names: set[str], suffix: str) -> str:
    """``text`` with every ``%name`` reference to a defined name renamed (quoted strings are left)."""

    def sub(m: re.Match) -> str:
        name = m.group(1)
        return "%" + name + suffix if name is not None and name in names else m.group(0)

    return _REF_RX.sub(sub, text)


def _human(n: int) -> str:
    """Bytes as ``tsl::strings::HumanReadableNumBytes`` prints them beside a total: ``512B``, ``789.0KiB``,
    ``392.95MiB`` (integer-divided by 1024 while at least 1 MiB, then one decimal for KiB, two above)."""
    if n < 1024:
        return f"{n}B"
    unit = 0
    while n >= 1024 * 1024 and unit < 3:
        n //= 1024
        unit += 1
    return f"{n / 1024.0:.1f}KiB" if unit == 0 else f"{n / 1024.0:.2f}{'MGT'[unit - 1]}iB"


def replicate(text: str, names: set[str], copies: int, entry_params: set[str]) -> str:
    """One buffer file (assignment or values) replicated ``copies`` times (see the module docstring).

    ``entry_params`` are the names of the source ENTRY's parameters: their ``from instruction:`` lines get the
    copy's parameter number, as in the module."""
    n_params = len(entry_params)
    lines = text.split("\n")
    allocs = [int(m.group(1)) for x in lines if (m := _ALLOC_RX.match(x))]
    ids = [int(m.group(2)) for x in lines if (m := _VALUE_LINE_RX.match(x))]
    ids += [int(m.group(1)) for x in lines if (m := _VALUE_HEAD_RX.match(x))]
    n_allocs, n_values = (max(allocs) + 1 if allocs else 0), (max(ids) + 1 if ids else 0)
    head: list[str] = []  # lines before the first allocation or value (kept once)
    body: list[str] = []
    for i, line in enumerate(lines):
        if _ALLOC_RX.match(line) or _VALUE_HEAD_RX.match(line):
            head, body = lines[:i], lines[i:]
            break
    else:
        return text
    while body and body[-1] == "":
        body.pop()
    out: list[str] = []
    for line in head:
        m = _TOTAL_RX.match(line)
        out.append(f"Total bytes used: {int(m.group(1)) * copies} ({_human(int(m.group(1)) * copies)})" if m else line)
    for k in range(copies):
        suffix = f".k{k}"
        rename = _renamer(names, suffix)
        for line in body:
            if m := _ALLOC_RX.match(line):
                line = f"allocation {k * n_allocs + int(m.group(1))}: {m.group(2)}"
                if m.group(3):
                    line += f"{m.group(3)}{k * n_params + int(m.group(4))}{m.group(5)}"
            elif m := _VALUE_LINE_RX.match(line):
                line = f"{m.group(1)}{k * n_values + int(m.group(2))} {rename(m.group(3))}{m.group(4)}"
            elif m := _VALUE_HEAD_RX.match(line):
                line = f"<{k * n_values + int(m.group(1))} {rename(m.group(2))}{m.group(3)}"
            elif line.startswith(_FROM):
                if (m := _PARAM_RX.match(line)) and m.group(1) in entry_params:
                    line = f"{line[: m.start(2)]}{k * n_params + int(m.group(2))}{line[m.end(2) :]}"
                line = _FROM + _rename_refs(line[len(_FROM) :], names, suffix)
            elif m := _NAMED_RX.match(line):
                line = f"{m.group(1)}{rename(m.group(2))}{m.group(3)}"
            out.append(line)
    return "\n".join(out) + "\n"


_MAX_RX = re.compile(r"^HloLiveRange \(max (\d+)\):$")
_SEQ_RX = re.compile(r"^(    )(\d+):(" + _NAME + ")$")
_RANGE_RX = re.compile(r"^(    )(" + _NAME + r")(\{[\d,]*\}):(\d+)-(\d+)$")
_WORD_RX = re.compile(r"(?<![\w.\-])(" + _NAME + ")")


def replicate_live_range(text: str, names: set[str], copies: int) -> str:
    """The live-range file replicated ``copies`` times as the copies run one after the other: copy ``k``'s
    instructions take the steps ``k * S + i`` of the sequence (``S`` = the source's steps) under their copy names,
    each buffer's live range moves with them; the peak list and its stack-trace breakdown are copy 0's."""
    lines = text.rstrip("\n").split("\n")
    top = int(m.group(1)) if lines and (m := _MAX_RX.match(lines[0])) else None
    steps = sum(1 for x in lines if _SEQ_RX.match(x))  # the header's max may count a step past the sequence
    out = [f"HloLiveRange (max {copies * steps + top - steps}):"] if top is not None else []
    section: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in lines[1:] if top is not None else lines:
        if line.startswith("  ") and not line.startswith("    "):
            section = []
            sections.append((line, section))
        else:
            section.append(line)
    word = lambda m: m.group(1) + ".k0" if m.group(1) in names else m.group(1)  # noqa: E731
    for head, body in sections:
        out.append(head)
        if head.strip() in ("InstructionSequence:", "BufferLiveRange:"):
            for k in range(copies):
                base, rename = k * steps, _renamer(names, f".k{k}")
                for line in body:
                    if m := _SEQ_RX.match(line):
                        line = f"{m.group(1)}{base + int(m.group(2))}:{rename(m.group(3))}"
                    elif m := _RANGE_RX.match(line):
                        a, b = base + int(m.group(4)), base + int(m.group(5))
                        line = f"{m.group(1)}{rename(m.group(2))}{m.group(3)}:{a}-{b}"
                    out.append(line)
        else:
            out.extend(_WORD_RX.sub(word, line) for line in body)
    return "\n".join(out) + "\n"


def synthesize_set(src: Path, out_dir: Path, size_mb: float, stem: str = DEFAULT_STEM) -> dict[str, Path]:
    """Write the module and its buffer files (assignment, values, live range) into ``out_dir``; return their
    paths by suffix ("" = module)."""
    text = src.read_text(encoding="utf-8")
    module = split_module(text)
    names = defined_names(module)
    entry = next(c for c in module.computations if c.is_entry)
    entry_params = {m.group(1) for x in entry.lines if (m := _ENTRY_PARAM_RX.match(x))}
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"": out_dir / f"{stem}.txt"}
    copies = synthesize(text, paths[""], size_mb)
    base = str(src)[: -len(".txt")]
    for suffix in (ASSIGNMENT, VALUES):
        source = Path(base + suffix)
        paths[suffix] = out_dir / f"{stem}{suffix}"
        paths[suffix].write_text(
            replicate(source.read_text(encoding="utf-8"), names, copies, entry_params), encoding="utf-8", newline="\n"
        )
    source = Path(base + LIVE_RANGE)
    if source.exists():
        paths[LIVE_RANGE] = out_dir / f"{stem}{LIVE_RANGE}"
        text = replicate_live_range(source.read_text(encoding="utf-8"), names, copies)
        paths[LIVE_RANGE].write_text(text, encoding="utf-8", newline="\n")
    return paths


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the process exit code."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", nargs="?", type=Path, default=DEFAULT_SRC, help="source after-optimizations module")
    ap.add_argument("out", type=Path, help="output folder")
    ap.add_argument("--size-mb", type=float, required=True, help="approximate module size in MB (10^6 bytes)")
    ap.add_argument("--stem", default=DEFAULT_STEM, help=f"file stem of the set (default {DEFAULT_STEM})")
    args = ap.parse_args(argv)
    try:
        paths = synthesize_set(args.src, args.out, args.size_mb, args.stem)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in paths.values():
        print(f"{path}: {path.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
