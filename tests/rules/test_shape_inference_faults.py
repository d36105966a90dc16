"""Shape inference (`verifier.shape-inference` and the older per-opcode verifier rules) under fault injection:
in real HLO modules (CPU, TPU and GPU), one dimension or the element type of one instruction's result is
changed where XLA infers it (`shape_faults`), per opcode of issue 17's list. Recall: the edited line gets a
verifier warning. Precision: no finding outside the edited line and the lines the change legitimately reaches
(its users, its computation's callers when it is the root, the module header for the ENTRY root), and no
finding at all on the unchanged modules. Print the table with ``pytest -s``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rules.verifier import verify
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.fixtures import DATA
from tests.rules.shape_faults import FREE_TYPE, OPCODES, ShapeFault, shape_faults

PER_CELL = 2  # faults per (opcode, kind, platform)


def _modules(paths) -> list[Path]:
    return [p for p in paths if p.read_text(errors="replace").lstrip().startswith("HloModule")]


REAL = _modules(
    sorted(DATA.glob("jax-cpu/*/*optimizations.txt"))
    + sorted(DATA.glob("seeds/*.txt"))
    + sorted(DATA.glob("shape-inference/*/*.txt"))
    + sorted(
        p
        for p in DATA.glob("producers/**/*.txt")
        if not any(k in p.name for k in ("buffer-assignment", "live-range", "memory-usage"))
    )
)
HANDWRITTEN = sorted(DATA.glob("handwritten/valid/*.hlo"))


def _faults() -> tuple[list[ShapeFault], set[str]]:
    """Faults from the real modules, capped per cell; then, for an opcode no real module has, from the
    hand-written valid modules (XLA's parser accepts each)."""
    cells: dict[tuple, int] = defaultdict(int)
    out: list[ShapeFault] = []
    for p in REAL:
        for f in shape_faults(p, p.read_text(), per_opcode=PER_CELL):
            key = (f.opcode, f.kind, f.platform)
            if cells[key] < PER_CELL:
                cells[key] += 1
                out.append(f)
    real_ops = {f.opcode for f in out}
    for p in HANDWRITTEN:
        for f in shape_faults(p, p.read_text(), per_opcode=1):
            if f.opcode not in real_ops and cells[(f.opcode, f.kind, "hand")] < PER_CELL:
                cells[(f.opcode, f.kind, "hand")] += 1
                f.platform = "hand-written"
                out.append(f)
    return out, real_ops


FAULTS, REAL_OPCODES = _faults()


def _observe(f: ShapeFault) -> tuple[bool, int]:
    """(the edited line has a verifier warning, number of findings outside the allowed lines)."""
    lines = {d.range.start_line for d in verify(read_hlo(f.text)) if d.severity >= Severity.WARNING}
    return f.line in lines, len(lines - {f.line} - f.allowed)


def test_every_listed_opcode_is_injected():
    kinds = {(f.opcode, f.kind) for f in FAULTS}
    missing = [op for op in OPCODES if (op, "dims") not in kinds]
    assert not missing, missing
    missing_types = [op for op in OPCODES if op not in FREE_TYPE and (op, "type") not in kinds]
    assert not missing_types, missing_types
    assert {"cpu", "tpu", "gpu"} <= {f.platform for f in FAULTS}


def test_unchanged_modules_have_no_finding():
    bad = []
    for p in REAL + HANDWRITTEN:
        for d in verify(read_hlo(p.read_text())):
            if d.severity >= Severity.WARNING:
                bad.append(f"{p.name}:{d.range.start_line + 1}: {d.code}: {d.message}")
    assert not bad, "\n".join(bad[:20])


def test_recall_and_precision_per_opcode():
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # faults, caught, type faults, caught, stray
    platforms: dict[str, set[str]] = defaultdict(set)
    misses = []
    for f in FAULTS:
        caught, stray = _observe(f)
        r = rows[f.opcode]
        k = 0 if f.kind == "dims" else 2
        r[k] += 1
        r[k + 1] += caught
        r[4] += stray
        platforms[f.opcode].add(f.platform)
        if not caught or stray:
            misses.append(f"{f.opcode} {f.kind} {f.path.name}:{f.line + 1} caught={caught} stray={stray}")
    out = [
        "shape inference: fault injection per opcode (dims: one result dimension; type: the element type)",
        f"{'opcode':26} {'platforms':22} {'dims':>5} {'recall':>6} {'types':>5} {'recall':>6} {'stray':>5} "
        f"{'precision':>9}",
    ]
    for op in OPCODES:
        n, c, tn, tc, stray = rows[op]
        rec = c / n if n else float("nan")
        trec = tc / tn if tn else float("nan")
        prec = (c + tc) / (c + tc + stray) if c + tc + stray else float("nan")
        out.append(
            f"{op:26} {','.join(sorted(platforms[op])):22} {n:5} {rec:6.2f} {tn:5} {trec:6.2f} {stray:5} {prec:9.2f}"
        )
    out.append(
        f"{len(FAULTS)} faults over {len(REAL)} real modules (+ hand-written for "
        f"{sorted(set(OPCODES) - REAL_OPCODES)}); unchanged modules: no finding"
    )
    print("\n" + "\n".join(out))
    assert not misses, "\n".join(misses[:30])


def test_the_server_shows_one_fault_per_opcode_on_its_line():
    """Through the aggregator the server and `hlo-lsp check` share: a warning or error on the edited line (a
    verifier code, or the grammar's own error where it owns the fault, e.g. a reshape's element count)."""
    seen: set[str] = set()
    bad = []
    for f in FAULTS:
        if f.opcode in seen or f.kind != "dims":
            continue
        seen.add(f.opcode)
        ws = Workspace()
        ws.open(str(f.path), f.text)
        diags = [
            d
            for d in document_diagnostics(ws, str(f.path))
            if d.severity >= Severity.WARNING and d.range.start_line == f.line
        ]
        if not diags:
            bad.append(f"{f.opcode} in {f.path.name}:{f.line + 1}: {[(d.code, d.message) for d in diags]}")
    assert not bad, "\n".join(bad)
