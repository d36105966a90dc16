"""Build a large, valid synthetic HLO module by replicating a real one.

Usage::

    python3 benchmarks/synth_module.py [SRC] OUT --size-mb N [--verify]

Algorithm
---------
The source module (an XLA ``*after_optimizations.txt`` dump) is cut into three parts with a line scan:
the ``HloModule`` line, the header tables (``FileNames`` / ``FunctionNames`` / ``FileLocations`` /
``StackFrames``), and the computations (a line at column 0 ending in ``{`` up to the next line ``}``).
Every name the module defines (computation names and instruction names) is collected, and each
computation is turned into a *template* once: its text split right after every ``%name`` reference to a
defined name (quoted strings are skipped) and, in computation headers, after every ``name:`` parameter.
A copy ``k`` is then ``suffix.join(template)`` with ``suffix = ".k<k>"``, so renaming costs one string join
per computation and copy. In the ENTRY body the ``parameter(j)`` numbers are also cut out of the template
and renumbered to ``k * P + j`` (``P`` = parameters of the source ENTRY).

The output holds the header tables once, then ``K`` copies of every non-ENTRY computation, then a single
ENTRY holding ``K`` renamed copies of the source ENTRY body, whose ``ROOT`` is a tuple of the copies' roots.
The module line is rewritten to match: ``entry_computation_layout`` is regenerated from the copies'
parameter and root shapes, ``input_output_alias`` entries are renumbered per copy (output ``{i}`` of copy
``k`` becomes ``{k, i}``), the ``allow_spmd_sharding_propagation_*`` lists are repeated ``K`` times and
``buffer_donor`` (if any) is dropped. ``K`` is chosen from the size of one copy so that the output is about
``N`` MB. The output is deterministic (same source and size give the same bytes).

With ``--verify`` (or ``--verify-if-available``) the result is parsed by XLA's own parser
(``jaxlib._hlo.hlo_module_from_text``); this needs jaxlib, e.g. ``/tmp/jaxenv/bin/python``.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SRC = (
    REPO
    / "tests/data/jax-cpu/transformer_block_f32"
    / "module_0002.jit_block_train_step_f32.cpu_after_optimizations.txt"
)
SYNTH_ROOT_NAME = "synth_root_tuple"

_NAME = r"[A-Za-z_][\w.\-]*"
# A quoted string (skipped, so metadata text is never renamed) or a %name reference. The alternatives start
# with different characters and the string body is a single character class, so there is no backtracking.
_REF_RX = re.compile(r'"(?:[^"\\\n]|\\.)*"|%(' + _NAME + ")")
# A parameter name in a computation header: "(name: shape" or ", name: shape".
_HEADER_PARAM_RX = re.compile(r"[(,]\s*(" + _NAME + r"):")
_PARAM_NUMBER_RX = re.compile(r"\sparameter\((\d+)\)")
_INSTR_RX = re.compile(r"\s+(ROOT\s+)?%?(" + _NAME + r")\s*=\s*")
_COMP_NAME_RX = re.compile(r"(?:ENTRY\s+)?%?(" + _NAME + ")")


@dataclass
class Computation:
    """One computation of the source module: its name, text lines and whether it is the ENTRY."""

    name: str
    lines: list[str]
    is_entry: bool


@dataclass
class SourceModule:
    """The source split into its module line, header-table text and computations."""

    module_line: str
    tables: str
    computations: list[Computation]


def split_module(text: str) -> SourceModule:
    """Split HLO module text into module line, header tables and computations.

    Raises ValueError if there is no ``HloModule`` line, no ENTRY, or an unterminated computation.
    """
    lines = text.splitlines()
    if not lines or not lines[0].startswith("HloModule"):
        raise ValueError("source does not start with an HloModule line")
    tables: list[str] = []
    comps: list[Computation] = []
    current: list[str] | None = None
    for line in lines[1:]:
        if current is not None:
            current.append(line)
            if line == "}":
                head = current[0]
                name = _COMP_NAME_RX.match(head)
                if name is None:
                    raise ValueError(f"cannot read computation name: {head[:80]}")
                comps.append(Computation(name.group(1), current, head.startswith("ENTRY")))
                current = None
        elif line and not line[0].isspace() and line.rstrip().endswith("{") and not line[0].isdigit():
            current = [line]
        elif not comps:
            tables.append(line)
    if current is not None:
        raise ValueError("unterminated computation at end of file")
    if sum(c.is_entry for c in comps) != 1:
        raise ValueError("source must have exactly one ENTRY computation")
    return SourceModule(lines[0], "\n".join(tables).strip("\n"), comps)


def defined_names(module: SourceModule) -> set[str]:
    """Return every computation and instruction name the module defines."""
    names = {c.name for c in module.computations}
    for comp in module.computations:
        for line in comp.lines[1:]:
            m = _INSTR_RX.match(line)
            if m:
                names.add(m.group(2))
    return names


def shape_at(text: str, pos: int) -> str:
    """Return the shape text starting at ``pos``: up to the first space outside brackets and comments.

    Returns "" when ``pos`` is at the end of ``text``.
    """
    depth = 0
    i = pos
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        elif ch == " " and depth == 0:
            break
        i += 1
    return text[pos:i]


def _template(text: str, names: set[str], header: bool) -> list[str]:
    """Return ``text`` cut right after every reference to a defined name (see the module docstring)."""
    cuts = [m.end(1) for m in _REF_RX.finditer(text) if m.group(1) in names]
    if header:
        sig_end = text.rfind("->")
        sig = text if sig_end < 0 else text[:sig_end]
        cuts += [m.end(1) for m in _HEADER_PARAM_RX.finditer(sig) if m.group(1) in names]
        cuts.sort()
    pieces, last = [], 0
    for cut in cuts:
        pieces.append(text[last:cut])
        last = cut
    pieces.append(text[last:])
    return pieces


@dataclass
class EntryTemplate:
    """The source ENTRY body as templates, plus what the combined ENTRY needs from each copy."""

    body: list[list[str]]  # per parameter-number segment: a name template (see _template)
    param_numbers: list[int]  # parameter number that follows body[i] (len(body) - 1 items)
    params: list[tuple[int, str, str]]  # (number, name, shape) of each parameter instruction
    root_name: str
    root_shape: str


def entry_template(comp: Computation, names: set[str]) -> EntryTemplate:
    """Template the ENTRY body (header and closing brace dropped; ``ROOT`` removed from the root line).

    Raises ValueError when the ENTRY has no ROOT or its parameter numbers are not 0..P-1.
    """
    params: list[tuple[int, str, str]] = []
    root_name = root_shape = ""
    chunks: list[str] = []  # body text, cut before and after each parameter number
    numbers: list[int] = []
    pending = ""
    for line in comp.lines[1:-1]:
        m = _INSTR_RX.match(line)
        if m and m.group(1):
            root_name, root_shape = m.group(2), shape_at(line, m.end())
            line = line[: m.start(1)] + line[m.end(1) :]
            m = _INSTR_RX.match(line)
        if m:
            shape = shape_at(line, m.end())
            p = _PARAM_NUMBER_RX.match(line, m.end() + len(shape))
            if p:
                params.append((int(p.group(1)), m.group(2), shape))
                chunks.append(pending + line[: p.start(1)])
                numbers.append(int(p.group(1)))
                pending = line[p.end(1) :] + "\n"
                continue
        pending += line + "\n"
    chunks.append(pending)
    if not root_name:
        raise ValueError("ENTRY has no ROOT instruction")
    params.sort()
    if [n for n, _, _ in params] != list(range(len(params))):
        raise ValueError("ENTRY parameter numbers are not 0..P-1")
    body = [_template(chunk, names, False) for chunk in chunks]
    return EntryTemplate(body, numbers, params, root_name, root_shape)


def _split_top_level(text: str) -> list[str]:
    """Split ``text`` at commas outside brackets and quoted strings."""
    parts, depth, start, i, n = [], 0, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            i = end
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


_ALIAS_RX = re.compile(r"\{([\d,\s]*)\}:\s*\((\d+),\s*(\{[\d,\s]*\})((?:,\s*[\w\-]+)?)\)")


def module_line(src_line: str, entry: EntryTemplate, copies: int) -> str:
    """Return the ``HloModule`` line of the combined module (see the module docstring)."""
    parts = _split_top_level(src_line[len("HloModule") :])
    out = [f"HloModule {parts[0]}"]
    n_params = len(entry.params)
    for attr in parts[1:]:
        key, _, value = attr.partition("=")
        if key == "entry_computation_layout":
            params = ", ".join(shape for _, _, shape in entry.params)
            results = ", ".join([entry.root_shape] * copies)
            out.append(f"{key}={{({', '.join([params] * copies) if params else ''})->({results})}}")
        elif key == "input_output_alias":
            entries = []
            for k in range(copies):
                for m in _ALIAS_RX.finditer(value):
                    index = ", ".join([str(k)] + [i.strip() for i in m.group(1).split(",") if i.strip()])
                    param = k * n_params + int(m.group(2))
                    entries.append(f"{{{index}}}: ({param}, {m.group(3)}{m.group(4)})")
            out.append(f"{key}={{ {', '.join(entries)} }}")
        elif key.startswith("allow_spmd_sharding_propagation_to_"):
            flags = value.strip().strip("{}")
            out.append(f"{key}={{{','.join([flags] * copies)}}}")
        elif key != "buffer_donor":
            out.append(attr)
    return ", ".join(out)


def copies_for_size(
    module: SourceModule, entry: EntryTemplate, others: list[tuple[list[str], list[str]]], target_bytes: float
) -> int:
    """Return the number of copies that makes the output about ``target_bytes`` long (at least 1).

    Copy ``k`` costs its template text, ``len(".k<k>")`` per renamed reference, and its share of the
    ENTRY signature, the ROOT tuple and the regenerated module line.
    """
    templates = [t for pair in others for t in pair] + entry.body
    text_bytes = sum(len(piece) for t in templates for piece in t)
    references = sum(len(t) - 1 for t in templates)
    params = sum(len(name) + len(shape) + 4 for _, name, shape in entry.params)
    root = len(entry.root_shape) + 2
    shared = params + len(entry.params) * 7 + 3 * root + len(entry.root_name) + 4
    total = len(module.module_line) + len(module.tables) + 200
    copies = 0
    while True:
        suffix = len(f".k{copies}")
        cost = text_bytes + references * suffix + shared + len(entry.params) * suffix
        if copies and total + cost > target_bytes:
            return copies
        total += cost
        copies += 1


def synthesize(src_text: str, out_path: Path, size_mb: float) -> int:
    """Write the synthetic module of about ``size_mb`` MB to ``out_path``; return the number of copies."""
    module = split_module(src_text)
    names = defined_names(module)
    entry_comp = next(c for c in module.computations if c.is_entry)
    entry = entry_template(entry_comp, names)
    others = [
        (_template(c.lines[0], names, True), _template("\n".join(c.lines[1:]) + "\n\n", names, False))
        for c in module.computations
        if not c.is_entry
    ]
    copies = copies_for_size(module, entry, others, size_mb * 1_000_000)
    for fixed_name in (entry_comp.name, SYNTH_ROOT_NAME):
        m = re.fullmatch(r"(.*)\.k([1-9]\d*|0)", fixed_name)
        if m and m.group(1) in names and int(m.group(2)) < copies:
            raise ValueError(f"name {fixed_name!r} collides with a renamed copy")
    with open(out_path, "w", encoding="utf-8", newline="\n") as out:
        out.write(module_line(module.module_line, entry, copies) + "\n\n")
        if module.tables:
            out.write(module.tables + "\n\n")
        for k in range(copies):
            suffix = f".k{k}"
            for header, body in others:
                out.write(suffix.join(header) + "\n")
                out.write(suffix.join(body))
        entry_name = entry_comp.name
        signature = ", ".join(f"{name}.k{k}: {shape}" for k in range(copies) for _, name, shape in entry.params)
        results = ", ".join([entry.root_shape] * copies)
        out.write(f"ENTRY %{entry_name} ({signature}) -> ({results}) {{\n")
        n_params = len(entry.params)
        for k in range(copies):
            suffix = f".k{k}"
            for i, segment in enumerate(entry.body):
                out.write(suffix.join(segment))
                if i < len(entry.param_numbers):
                    out.write(str(k * n_params + entry.param_numbers[i]))
        roots = ", ".join(f"%{entry.root_name}.k{k}" for k in range(copies))
        out.write(f"  ROOT %{SYNTH_ROOT_NAME} = ({results}) tuple({roots})\n}}\n\n")
    return copies


def verify_with_xla(path: Path) -> str:
    """Parse ``path`` with XLA's parser; return the module name. Raises ImportError without jaxlib."""
    from jaxlib import _hlo  # noqa: PLC0415  (optional: only in the jax scratch venv)

    return _hlo.hlo_module_from_text(path.read_text()).name


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the process exit code."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", nargs="?", type=Path, default=DEFAULT_SRC, help="source after-optimizations module")
    ap.add_argument("out", type=Path, help="output file")
    ap.add_argument("--size-mb", type=float, required=True, help="approximate output size in MB (10^6 bytes)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--verify", action="store_true", help="parse the output with jaxlib (required)")
    group.add_argument("--verify-if-available", action="store_true", help="parse with jaxlib when importable")
    args = ap.parse_args(argv)
    if args.out.resolve() == args.src.resolve():
        ap.error("OUT must differ from SRC")
    try:
        copies = synthesize(args.src.read_text(encoding="utf-8"), args.out, args.size_mb)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    size = args.out.stat().st_size
    print(f"{args.out}: {size / 1e6:.1f} MB, {copies} copies of {args.src.name}")
    if args.verify or args.verify_if_available:
        try:
            name = verify_with_xla(args.out)
        except ImportError:
            if args.verify:
                print("error: --verify needs jaxlib (run with /tmp/jaxenv/bin/python)", file=sys.stderr)
                return 2
            print("jaxlib not importable: XLA parse check skipped")
        except Exception as exc:  # noqa: BLE001  (XLA raises its own runtime error type)
            print(f"error: XLA rejected {args.out}: {exc}", file=sys.stderr)
            return 1
        else:
            print(f"XLA parser accepts it (module {name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
