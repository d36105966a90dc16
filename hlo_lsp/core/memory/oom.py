"""XLA's compile-time out-of-memory report (``RESOURCE_EXHAUSTED``), read from its text and tied to the dump.

Two forms, both recognised anywhere in a longer log:

- **long** (TPU, error E1000): ``Ran out of memory in memory space hbm. Used 15.75G of 15.75G hbm. Exceeded hbm
  capacity by 4.76M.``, the totals, then ``Largest program allocations in hbm:`` and ``Largest program arguments
  and outputs in hbm:``, each a numbered list of entries (``Size``, ``Operator: op_name=``, ``Shape``, ``Unpadded
  size``, ``XLA label: <name> = <opcode>(...)``, ``Allocation type``), each ended by a row of ``=``;
- **short**: ``... the total memory required for HLO temporaries (22.00G) exceeds available HBM (15.75G).``

Sizes are XLA's human-readable numbers (``32.00M``: binary units, two decimals), so a size is known to its
printed precision: `OomEntry.size` is the nearest byte count and `OomEntry.matches(bytes)` compares at that
precision. `resolve` ties each entry naming an instruction to its line in the module's HLO, its allocation in the
buffer assignment and the Python line that made it; ``overlays`` and ``Argument N index {}`` / ``Output index {k}``
name no instruction. Nothing here raises on odd text: what cannot be read is left out.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from hlo_lsp.core.buffers.bufferset import BufferSet
from hlo_lsp.core.hlo.line import parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.source import instruction_source
from hlo_lsp.core.kinds import sibling_paths

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)([KMGTP]?)B?")
_LONG = re.compile(
    r"Ran out of memory in memory space (\w+)\. Used ([0-9.]+[KMGTP]?B?) of ([0-9.]+[KMGTP]?B?) \w+\."
    r"(?: Exceeded \w+ capacity by ([0-9.]+[KMGTP]?B?)\.)?"
)
_SHORT = re.compile(
    r"total memory required for HLO temporaries \(([0-9.]+[KMGTP]?B?)\) exceeds available (\w+) "
    r"\(([0-9.]+[KMGTP]?B?)\)"
)
_PROGRAM = re.compile(r"^Program (\w+) requirement [0-9.]+[KMGTP]?B?:\s*$")  # the dump's oom_top_... file
_SECTION = re.compile(r"^\s*Largest program (allocations|arguments and outputs) in (\w+):\s*$")
_ENTRY = re.compile(r"^\s*(\d+)\. Size: (\S+)\s*$")
_FIELD = re.compile(r"^\s*(Operator|Shape|Unpadded size|XLA label|Allocation type): ?(.*?)\s*$")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_LABEL_NAME = re.compile(r"([\w.\-]+) = ")
_END = re.compile(r"^\s*=+\s*$")


def parse_size(text: str | None) -> int | None:
    """Bytes of XLA's ``32.00M`` / ``512B`` / ``1.00G`` (binary units); None when it is not one."""
    if not text:
        return None
    m = _SIZE.fullmatch(text.strip())
    if m is None:
        return None
    return round(float(m.group(1)) * _UNITS[m.group(2)])


@dataclass(slots=True)
class OomEntry:
    section: str  # "allocations" | "arguments"
    rank: int
    size_text: str
    line: int  # 0-based line of ``N. Size:``
    op_name: str | None = None
    shape: str | None = None
    unpadded_text: str | None = None
    label: str | None = None  # the whole ``XLA label:`` text
    label_line: int | None = None
    allocation_type: str | None = None
    # resolved against the dump (`resolve`)
    instruction_line: int | None = None  # 0-based line in the module's HLO
    allocation: int | None = None
    allocation_line: int | None = None  # 0-based line in -buffer-assignment.txt
    assigned_size: int | None = None  # the buffer assignment's size of the value
    value_key: str | None = None  # the buffer assignment's value the entry measures (``copy-start.12{0}``)
    source: str | None = None  # ``file.py:12`` of the innermost frame

    @property
    def size(self) -> int | None:
        return parse_size(self.size_text)

    @property
    def name(self) -> str | None:
        """The instruction the label names (``copy-start.12``); None for ``overlays`` or an argument/output."""
        if self.label is None:
            return None
        m = _LABEL_NAME.match(self.label)
        return m.group(1) if m else None

    @property
    def name_span(self) -> tuple[int, int] | None:
        """(start, end) columns of `name` on `label_line` (for links and hover)."""
        return self._span

    _span: tuple[int, int] | None = None

    def matches(self, nbytes: int) -> bool:
        """Whether ``nbytes`` prints as `size_text` at XLA's precision (two decimals of its unit)."""
        m = _SIZE.fullmatch(self.size_text.strip())
        if m is None:
            return False
        unit = _UNITS[m.group(2)]
        decimals = len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
        return abs(nbytes / unit - float(m.group(1))) <= 0.5 * 10**-decimals + 1e-12


@dataclass(slots=True)
class OomReport:
    kind: str  # "long" | "short"
    line: int  # 0-based line of the message
    memory_space: str | None = None
    used_text: str | None = None
    capacity_text: str | None = None
    exceeded_text: str | None = None
    required_text: str | None = None  # short form: HLO temporaries
    entries: list[OomEntry] = field(default_factory=list)

    @property
    def exceeded_by(self) -> int | None:
        return parse_size(self.exceeded_text)

    def allocations(self) -> list[OomEntry]:
        return [e for e in self.entries if e.section == "allocations"]

    def arguments(self) -> list[OomEntry]:
        return [e for e in self.entries if e.section == "arguments"]


def read_oom(text: str) -> OomReport | None:
    """The first out-of-memory report in ``text`` (a saved or pasted message, or a longer log); None without one."""
    lines = text.split("\n")
    report: OomReport | None = None
    section: str | None = None
    entry: OomEntry | None = None
    for ln, line in enumerate(lines):
        if report is None:
            m = _LONG.search(line)
            if m is not None:
                report = OomReport("long", ln, m.group(1), m.group(2), m.group(3), m.group(4))
                continue
            s = _SHORT.search(line)
            if s is not None:
                return OomReport("short", ln, s.group(2), None, s.group(3), None, s.group(1))
            p = _PROGRAM.match(line)
            if p is not None:  # the dump's copy of the message's program part: no usage line above it
                report = OomReport("long", ln, p.group(1))
            continue
        sm = _SECTION.match(line)
        if sm is not None:
            section = "allocations" if sm.group(1) == "allocations" else "arguments"
            entry = None
            continue
        if section is None:
            continue
        em = _ENTRY.match(line)
        if em is not None:
            entry = OomEntry(section, int(em.group(1)), em.group(2), ln)
            report.entries.append(entry)
            continue
        if entry is None:
            continue
        if _END.match(line):
            entry = None
            continue
        fm = _FIELD.match(line)
        if fm is None:
            if line.strip() and not line.startswith(" "):
                break  # the report ended (the log goes on)
            continue
        key, value = fm.groups()
        if key == "Operator":
            om = _OP_NAME.search(value)
            entry.op_name = om.group(1) if om else value
        elif key == "Shape":
            entry.shape = value
        elif key == "Unpadded size":
            entry.unpadded_text = value
        elif key == "Allocation type":
            entry.allocation_type = value
        else:
            entry.label = value
            entry.label_line = ln
            name = entry.name
            if name is not None:
                start = line.index("XLA label: ") + len("XLA label: ")
                entry._span = (start, start + len(name))
    return report


def resolve(report: OomReport, hlo: HloModule | None, bs: BufferSet | None) -> None:
    """Fill each entry's instruction line, allocation (index, header line, assigned size) and source line from
    the module's HLO and joined buffer files. The value is the one whose listed shape is the entry's ``Shape``;
    else, for a ``copy-start``, its ``{0}`` element (the HBM side, as XLA's report measures it); else ``{}``."""
    for e in report.entries:
        name = e.name
        if name is None:
            continue
        if hlo is not None:
            ins = hlo.instruction(name)
            if ins is not None:
                e.instruction_line = ins.line
                d = parse_instruction_line(hlo.lines[ins.line]) if ins.line < len(hlo.lines) else None
                if d is not None and d.metadata:
                    frames = instruction_source(hlo, d)
                    if frames:
                        e.source = f"{frames[0].file}:{frames[0].line}"
        if bs is not None:
            vals = [x for x in bs.values_of(name) if x.allocation is not None]
            want = (0,) if e.label and " = copy-start(" in e.label and not (e.shape or "").startswith("(") else ()
            v = (
                next((x for x in vals if e.shape and x.shape == e.shape), None)
                or next((x for x in vals if tuple(x.index or ()) == want), None)
                or next(iter(vals), None)
            )
            if v is not None and v.allocation is not None:
                e.value_key = v.key
                e.allocation = v.allocation
                e.assigned_size = v.size
                alloc = bs.allocation(v.allocation)
                e.allocation_line = alloc.line if alloc is not None else None


def looks_like_oom(text: str) -> bool:
    """Whether ``text`` holds an out-of-memory report (`read_oom` reads it): XLA's own message lines, with their
    numbers (prose that only names them is not one); a substring test first, so any plain-text document a client
    opens costs little."""
    if "Ran out of memory in memory space " in text and _LONG.search(text):
        return True
    if "HLO temporaries (" in text and _SHORT.search(text):
        return True
    return text.lstrip().startswith("Program ") and _PROGRAM.match(text.lstrip().split("\n", 1)[0]) is not None


MAX_CANDIDATES = 200  # after-optimizations modules looked at for one report


def dump_modules(folder: str) -> list[str]:
    """After-optimizations HLO files with a buffer assignment beside them, in ``folder`` and then in its immediate
    subfolders (a log saved beside the ``--xla_dump_to`` folder); sorted by folder, at most MAX_CANDIDATES.
    Nothing is opened (names and stats only)."""

    def modules_in(d: str) -> list[str]:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            return []
        out = []
        for name in names:
            if name.endswith("after_optimizations.txt"):
                path = os.path.join(d, name)
                if "assignment" in sibling_paths(path):
                    out.append(path)
        return out

    found = modules_in(folder)
    try:
        subs = sorted(e.path for e in os.scandir(folder) if e.is_dir(follow_symlinks=False))
    except OSError:
        subs = []
    for d in subs:
        if len(found) >= MAX_CANDIDATES:
            break
        found += modules_in(d)
    return found[:MAX_CANDIDATES]


_TOTAL = re.compile(r"^Total bytes: (\d+) ", re.M)


def _report_total(module: str) -> int | None:
    """The memory-usage report's first ``Total bytes`` beside ``module`` (memory space 0)."""
    path = sibling_paths(module).get("memory-report")
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            m = _TOTAL.search(f.read(4096))
    except OSError:
        return None
    return int(m.group(1)) if m else None


def pick_module(report: OomReport, modules: list[str]) -> str | None:
    """The compilation that failed among ``modules``: the one whose text defines most of the report's instruction
    names (None when none defines any); for the short form, which names none, the one whose memory-usage report's
    ``Total bytes`` is the report's HLO temporaries at its printed precision (else the first)."""
    names = [e.name for e in report.entries if e.name]
    if not names:
        probe = OomEntry("allocations", 0, report.required_text or "", report.line)
        totals = ((m, _report_total(m)) for m in modules)
        return next((m for m, t in totals if t is not None and probe.matches(t)), modules[0] if modules else None)
    best, score = None, 0
    for path in modules:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        n = sum(f"%{x} = " in text or f" {x} = " in text for x in names)
        if n > score:
            best, score = path, n
    return best


_ARGUMENT = re.compile(r"^Argument (\d+) index (\{[\d,]*\})$")
_OUTPUT = re.compile(r"^Output index (\{[\d,]*\})$")
_ALIAS = re.compile(r"input_output_alias=\{(.*?)\}\s*(?:,\s*\w+=|$)")
_ALIASED_PARAM = re.compile(r":\s*\((\d+),")


@dataclass(frozen=True, slots=True)
class Donation:
    """An argument the report lists whose buffer an output of the same shape could reuse (``donate_argnums``)."""

    argument: OomEntry  # ``Argument N index {}``
    output: OomEntry  # ``Output index {k}`` with the same Shape
    parameter: int  # N

    @property
    def bytes(self) -> int:
        return self.argument.size or 0


def aliased_parameters(header: str | None) -> set[int]:
    """Entry parameters already donated: those the module header's ``input_output_alias`` names."""
    m = _ALIAS.search(header or "")
    return {int(p) for p in _ALIASED_PARAM.findall(m.group(1))} if m else set()


def donations(report: OomReport, header: str | None = None) -> list[Donation]:
    """Each listed argument not yet donated (``header``: the module's ``HloModule`` line) paired, one to one and in
    the report's order, with a listed output of exactly its Shape: what ``donate_argnums`` could save. Only the
    report's own lists are looked at (its largest arguments and outputs), so the saving is a lower bound."""
    aliased = aliased_parameters(header)
    outputs = [e for e in report.arguments() if e.label and _OUTPUT.match(e.label) and e.shape]
    used: set[int] = set()
    out = []
    for e in report.arguments():
        m = _ARGUMENT.match(e.label or "")
        if m is None or not e.shape or int(m.group(1)) in aliased:
            continue
        j = next((j for j, o in enumerate(outputs) if j not in used and o.shape == e.shape), None)
        if j is not None:
            used.add(j)
            out.append(Donation(e, outputs[j], int(m.group(1))))
    return out
