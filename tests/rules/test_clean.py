"""Soundness: no error or warning on any real dump (tests/data and ../shared), through the one aggregator the
server and `hlo-lsp check` share, with every rule of this package running."""

from __future__ import annotations

import pytest

from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.fixtures import IN_CI, SHARED
from tests.rules.dumps import all_dump_files, modules

FILES = all_dump_files()


def test_found_real_dumps():
    """tests/data always holds the copies; ../shared is checked too when it is present (and must be under CI)."""
    assert len([p for p in FILES if "tests" in p.parts]) >= 200, "tests/data lost its real dumps"
    shared = [p for p in FILES if str(p).startswith(str(SHARED.resolve()))]
    if not shared:
        if IN_CI:
            pytest.fail(f"no dumps found under {SHARED} with CI=true")
        pytest.skip(f"{SHARED} is absent: only tests/data was swept")
    assert len(shared) >= 140  # 5 seeds + 138 jax-cpu files


def test_no_error_or_warning_on_real_dumps():
    ws = Workspace()
    bad = []
    for p in FILES:
        for d in document_diagnostics(ws, str(p)):
            if d.severity >= Severity.WARNING:
                bad.append(f"{p}:{d.range.start_line + 1}: {d.code}: {d.message}")
    assert not bad, "\n".join(bad[:40])


def test_rules_have_work_on_real_dumps():
    """The clean sweep means something only if the rules saw candidates: count what the overlap rule compares
    (values sharing bytes in one allocation, both with a live range) and the touching pairs it must accept."""
    shared_bytes = touching = 0
    for m in modules():
        live = m.live()
        by_alloc: dict[int, list[dict]] = {}
        for v in m.values():
            if v["key"] in live:
                by_alloc.setdefault(v["allocation"], []).append(v)
        for vs in by_alloc.values():
            for i, a in enumerate(vs):
                for b in vs[i + 1 :]:
                    if a["offset"] < b["offset"] + b["size"] and b["offset"] < a["offset"] + a["size"]:
                        shared_bytes += 1
                        (sa, ea, _), (sb, eb, _) = live[a["key"]], live[b["key"]]
                        if max(sa, sb) == min(ea, eb):
                            touching += 1
    assert shared_bytes >= 100 and touching >= 10, (shared_bytes, touching)
