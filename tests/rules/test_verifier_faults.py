"""Verifier-level faults injected into the real HLO modules of tests/data (every jax-cpu after-optimizations
module and the old-style GPU seed 001; reshapes from the before-optimizations modules): the rule fires on the
edited line with its code and no rule fires
elsewhere (the table), and the shared aggregator shows a warning or error on that line and nothing else."""

from __future__ import annotations

from collections import Counter

from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.hlo.read import read_hlo
from hlo_lsp.core.hlo.rules.verifier import VERIFIER_RULES, verify
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.fixtures import DATA
from tests.rules.faults import format_table, score
from tests.rules.hlo_faults import BEFORE_FAULTS, HLO_FAULTS, read

FILES = sorted(DATA.glob("jax-cpu/*/*after_optimizations.txt")) + sorted(DATA.glob("seeds/001_*.txt"))
BEFORE = sorted(DATA.glob("jax-cpu/*/*before_optimizations.txt"))
CODES = {c for _rule, codes in VERIFIER_RULES for c in codes}


def _faults():
    out = []
    for p in FILES:
        text = p.read_text()
        instrs = read(text)
        for gen in HLO_FAULTS:
            out.extend(gen(p.resolve(), text, instrs))
    for p in BEFORE:
        text = p.read_text()
        for gen in BEFORE_FAULTS:
            out.extend(gen(p.resolve(), text, read(text)))
    return out


FAULTS = _faults()


def test_files_and_faults_found():
    assert len(FILES) >= 20
    counts = Counter(f.name for f in FAULTS)
    assert len(counts) == len(HLO_FAULTS) + len(BEFORE_FAULTS), counts
    assert min(counts.values()) >= 1, counts


def test_rule_table():
    """Rule level (`verify` on the edited module): exactly the expected (code, line)."""
    results = []
    bad = []
    for f in FAULTS:
        observed = {(f.path, d.code, d.range.start_line) for d in verify(read_hlo(f.text))}
        expected = {(f.path, f.code, f.line)}
        results.append((type("F", (), {"expected": expected})(), observed))
        if observed != expected:
            bad.append(f"{f.name} in {f.path.name}: got {sorted(observed)}")
    table = score(results)
    print("\n" + format_table(table, "verifier rules: fault injection over real HLO modules"))
    print(Counter(f.name for f in FAULTS))
    assert not bad, "\n".join(bad[:20])
    assert set(table) <= CODES


def test_aggregator_reports_each_fault_on_its_line_only():
    """Through the server/CLI aggregator: a warning or error on the edited line (the grammar may own it as an
    error, e.g. a written operand shape), and no warning or error on any other line."""
    bad = []
    for f in FAULTS:
        if f.code == "verifier.name-reused":
            continue  # information only: see below
        ws = Workspace()
        ws.open(str(f.path), f.text)
        diags = [d for d in document_diagnostics(ws, str(f.path)) if d.severity >= Severity.WARNING]
        lines = {d.range.start_line for d in diags}
        if lines != {f.line}:
            bad.append(f"{f.name} in {f.path.name} line {f.line}: {[(d.range.start_line, d.code) for d in diags]}")
        mine = [d for d in diags if d.code in CODES]
        if mine and {d.code for d in mine} != {f.code}:
            bad.append(f"{f.name}: wrong code {[d.code for d in mine]}")
    assert not bad, "\n".join(bad[:20])


def test_name_reuse_is_information_only():
    f = next(f for f in FAULTS if f.code == "verifier.name-reused")
    ws = Workspace()
    ws.open(str(f.path), f.text)
    ds = [d for d in document_diagnostics(ws, str(f.path)) if d.code == "verifier.name-reused"]
    assert [(d.range.start_line, d.severity) for d in ds] == [(f.line, Severity.INFORMATION)]


def test_the_summaries_of_the_read_give_the_verifiers_own_answer():
    """A machine-written module's diagnostics run the verifier on the summaries the rows pass of its read made
    (`StructuralChecker.summaries`, not made again): on every faulty module, the same findings as the verifier
    summarizing each computation itself."""
    checked = 0
    for f in FAULTS:
        ws = Workspace()
        ws.open(str(f.path), f.text)
        a = ws.analysis(str(f.path))
        if a.hlo is None or not a.hlo.rows_read or a.checker is None:
            continue
        assert verify(a.hlo, a.checker.summaries()) == verify(read_hlo(f.text)), f.name
        checked += 1
    assert checked >= len(FAULTS) // 2


def test_the_call_and_root_comparisons_decide_as_their_definitions():
    """`summary.call_ok` compares a call's operand shape texts with its callee's parameters as one tuple, and
    `root_ok` a single callee's root directly (the verifier's join over the 23 MB benchmark module's 16,712 calls:
    29 -> 19 ms): each decides as its definition, element by element, over random signatures and shapes."""
    import random

    from hlo_lsp.core.hlo.rules.summary import call_ok, root_ok

    def call_def(op, sigs, callee, shapes):
        if callee not in sigs:
            return True
        sig = sigs[callee]
        if sig is None or len(sig) != (1 if op == "while" else len(shapes)):
            return False
        return op in ("reduce", "map") or all(t is not None and t == p for p, t in zip(sig, shapes))

    def root_def(op, roots, callees, result):
        if op not in ("fusion", "call", "while"):
            return True
        texts = [roots.get(c) for c in callees]
        if op != "while":
            return len(texts) == 1 and texts[0] == result
        return result in texts and all(t == result or (t is not None and t.startswith("pred[]")) for t in texts)

    rng = random.Random(3)
    texts = ["f32[2]{0}", "s32[]", "pred[]", "f32[2,2]{1,0}", None]
    ops = ["fusion", "call", "while", "reduce", "map", "all-reduce", "conditional"]
    seen = set()
    for _ in range(4000):
        sigs = {
            f"c{k}": (None if rng.random() < 0.1 else tuple(rng.choice(texts[:4]) for _ in range(rng.randrange(3))))
            for k in range(3)
        }
        roots = {f"c{k}": rng.choice(texts) for k in range(3)}
        op = rng.choice(ops)
        shapes = tuple(rng.choice(texts) for _ in range(rng.randrange(3)))
        callee = f"c{rng.randrange(4)}"
        callees = tuple(f"c{rng.randrange(4)}" for _ in range(rng.randrange(1, 3)))
        result = rng.choice(texts[:4])
        got = call_ok(op, sigs, callee, shapes)
        assert got == call_def(op, sigs, callee, shapes)
        assert call_ok(op, sigs, callee, list(shapes)) == got
        r = root_ok(op, roots, callees, result)
        assert r == root_def(op, roots, callees, result)
        seen.add((got, r))
    assert seen == {(True, True), (True, False), (False, True), (False, False)}


def test_the_joins_calls_decide_as_call_ok_and_root_ok():
    """`Candidates._join` decides a fusion's call inline (the common case, with its maps made by C iteration): over
    random computations, summaries and calls (one callee or more, callees the module does not hold, shapes as
    lists or tuples, a repeated computation name, a computation with no summary), the calling instructions it
    marks are those `call_ok` and `root_ok` mark, as are its other candidates and slow computations."""
    import random

    from hlo_lsp.core.hlo.model import Computation, HloModule
    from hlo_lsp.core.hlo.rules.candidates import Candidates
    from hlo_lsp.core.hlo.rules.summary import Summary, call_ok, root_ok

    rng = random.Random(5)
    texts = ["f32[2]{0}", "s32[]", "pred[]", "f32[2,2]{1,0}", None]
    ops = ["fusion", "fusion", "fusion", "call", "while", "reduce", "map", "all-reduce"]
    for _ in range(600):
        n = rng.randrange(1, 6)
        names = [f"c{rng.randrange(6)}" if rng.random() < 0.1 else f"c{k}" for k in range(n)]
        mod = HloModule(lines=[])
        start = 0
        for k, name in enumerate(names):
            size = rng.randrange(1, 5)
            mod.computations.append(Computation(name, k, 0, False, "", k, range(start, start + size)))
            mod.computation_by_name.setdefault(name, k)
            start += size
        summaries: list = []
        for c in mod.computations:
            if rng.random() < 0.05:
                summaries.append(None)
                continue
            size = len(c.instructions)
            calls = tuple(
                (
                    rng.randrange(size),
                    rng.choice(ops),
                    tuple(f"c{rng.randrange(7)}" for _ in range(1 if rng.random() < 0.8 else 2)),
                    (tuple if rng.random() < 0.5 else list)(rng.choice(texts) for _ in range(rng.randrange(3))),
                    rng.choice(texts[:4]),
                )
                for _ in range(rng.randrange(3))
            )
            sig = None if rng.random() < 0.1 else tuple(rng.choice(texts[:4]) for _ in range(rng.randrange(3)))
            cand = tuple(("add", rng.randrange(size)) for _ in range(rng.randrange(2)))
            summaries.append(Summary(cand, sig, calls, rng.choice(texts)))
        got = Candidates(mod, summaries)._join()
        # the reference: the join as defined, every call through `call_ok` and `root_ok`
        want: dict[str, list[int]] = {}
        sigs: dict = {}
        roots: dict = {}
        slow = []
        pending = []
        for c, sm in zip(mod.computations, summaries):
            if sm is None or c.name in sigs:
                slow.append(c)
                sigs[c.name] = None
                continue
            sigs[c.name], roots[c.name] = sm.sig, sm.root
            for op, i in sm.cand:
                want.setdefault(op, []).append(c.instructions.start + i)
            pending += [(c.instructions.start, call) for call in sm.calls]
        for start, (i, op, callees, shapes, result) in pending:
            ok = all(call_ok(op, sigs, callee, shapes) for callee in callees)
            if not ok or not root_ok(op, roots, callees, result):
                want.setdefault(op, []).append(start + i)
        assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
