"""Fuzzing (seeded, in CI, under a minute): mutations of real dumps from tests/data (`mutations.mutated`)
driven through every core feature and through the real server over stdio.

Hypothesis runs with a fixed seed (`derandomize`), so a CI failure reproduces locally; the longer run with
fresh seeds is ``fuzz/run.py`` (see fuzz/README.md).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, given, seed, settings

from tests.lsp.util import uri
from tests.robustness.drive import drive_core
from tests.robustness.mutations import mutated
from tests.robustness.server_drive import Stats, alive, drive_server

# HLO_FUZZ_SEED (set by fuzz/run.py) replaces the fixed seed with the given one
FUZZ_SEED = os.environ.get("HLO_FUZZ_SEED")
FUZZ = settings(
    derandomize=FUZZ_SEED is None,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
_seeded = seed(int(FUZZ_SEED)) if FUZZ_SEED else (lambda f: f)


def _doc_name(seed: str) -> str:
    """The mutated text keeps its seed's name, so the kind follows the same file-name rule."""
    return seed


@_seeded
@settings(FUZZ, max_examples=200)
@given(case=mutated())
def test_core_survives_mutated_dumps(tmp_path_factory, case):
    seed, text = case
    folder = tmp_path_factory.mktemp("fuzz")
    errors = drive_core(str(folder / _doc_name(seed)), text, limit=3)
    assert errors == [], "\n".join(errors[:2])


async def test_server_survives_mutated_dumps(client, tmp_path):
    """30 mutated dumps opened in the real server, every request sent on each, then edited into another
    mutation and asked again; drawn from the same seeded strategy."""
    from lsprotocol import types as lsp

    cases = []

    @_seeded
    @settings(FUZZ, max_examples=31, phases=[Phase.generate])
    @given(mutated())
    def draw(x):  # one mutation per example: the first example hypothesis makes is its simplest, so skip it
        cases.append(x)

    draw()
    cases = cases[1:31]
    stats = Stats()
    for k, (case_seed, text) in enumerate(cases):
        u = uri(tmp_path / f"{k}-{_doc_name(case_seed)}")
        client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=u, language_id="plaintext", version=1, text=text)
            )
        )
        await drive_server(client, u, text.split("\n"), stats, limit=2)
        nxt = cases[(k + 1) % len(cases)][1]
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=2),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=nxt)],
            )
        )
        await drive_server(client, u, nxt.split("\n"), stats, limit=1)
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
    assert len(cases) == 30
    assert stats.hangs == [], stats.hangs
    assert await alive(client, stats)
    print(
        f"\nfuzz server run: {stats.requests} requests, {stats.errors} JSON-RPC errors, {len(stats.hangs)} hangs, "
        f"worst latency {stats.worst_s:.2f} s ({stats.worst})"
    )
