"""Workspace symbols ranked from the modules' columns (`symbols.workspace_symbols`) are the answer of the plain
rule: every computation, instruction (of a computation) and allocation of the open files and their siblings whose
name holds the query, case-insensitively; prefix matches first, then shorter names, then by name, then in
document order (files in the order met); at most `MAX_WORKSPACE_SYMBOLS`."""

from __future__ import annotations

import random

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import symbols
from tests.fixtures import DATA

MODULES = sorted((DATA / "jax-cpu").glob("*/module_*.cpu_after_optimizations.txt"))
SEEDS = sorted((DATA / "seeds").glob("*.txt"))


def _plain(ws: Workspace, query: str, paths: list[str]) -> list[tuple]:
    q = query.lower()
    found = []
    seen: list[str] = []
    for p in paths:
        for a in ws.bundle(p).documents():
            if a.path in seen:
                continue
            seen.append(a.path)
            every = []
            if a.hlo is not None:
                mod = a.hlo
                for c in mod.computations:
                    every.append((c.name, "function", c.name_range, mod.name or ""))
                    for i in c.instructions:
                        ins = mod.instructions[i]
                        every.append((ins.name, "variable", ins.name_range, c.name))
            elif a.buffers is not None:
                every += [(f"allocation {al.index}", "object", al.range, "") for al in a.buffers.allocations]
            every.sort(key=lambda s: (s[2].start_line, s[2].start_col))  # document order
            for name, kind, rng, container in every:
                if q in name.lower():
                    found.append(
                        (
                            (0 if name.lower().startswith(q) else 1),
                            len(name),
                            name,
                            (name, kind, a.path, rng, container),
                        )
                    )
    found.sort(key=lambda t: t[:3])
    return [t[3] for t in found[: symbols.MAX_WORKSPACE_SYMBOLS]]


@pytest.mark.parametrize("path", MODULES[:5] + SEEDS, ids=lambda p: p.parent.name + "/" + p.name[:40])
def test_ranked_from_the_columns_as_the_plain_rule_ranks_them(path):
    assert MODULES and SEEDS
    ws = Workspace()
    p = str(path)
    ws.open(p, path.read_text(), 1)
    names = [n for n in ws.analysis(p).hlo.instructions.names] if ws.analysis(p).hlo is not None else ["a"]
    rng = random.Random(path.name)
    queries = ["", "a", "F", "fusion", "param", "allocation 1", "zz-none", "."]
    queries += [n[rng.randrange(len(n)) :][:4].upper() for n in rng.sample(names, min(8, len(names)))]
    for q in queries:
        got = [
            (s.name, s.kind, s.location.path, s.location.range, s.container)
            for s in symbols.workspace_symbols(ws, q, [p])
        ]
        assert got == _plain(ws, q, [p]), q
