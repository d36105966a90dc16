"""Fuzzing (seeded, in CI, under a minute): mutations of real dumps from tests/data (`mutations.mutated`)
driven through every core feature and through the real server over stdio.

Hypothesis runs with a fixed seed (`derandomize`), so a CI failure reproduces locally; the longer run with
fresh seeds is ``fuzz/run.py`` (see fuzz/README.md).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.lsp.util import uri
from tests.robustness.drive import drive_core
from tests.robustness.mutations import mutated
from tests.robustness.server_drive import Stats, alive, drive_server

FUZZ = settings(derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck), print_blob=True)


def _doc_name(seed: str) -> str:
    """The mutated text keeps its seed's name, so the kind follows the same file-name rule."""
    return seed


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
    from hypothesis.strategies import lists
    from lsprotocol import types as lsp

    cases = []

    @settings(FUZZ, max_examples=1)
    @given(lists(mutated(), min_size=30, max_size=30))
    def draw(xs):
        cases.extend(xs)

    draw()
    stats = Stats()
    for k, (seed, text) in enumerate(cases):
        u = uri(tmp_path / f"{k}-{_doc_name(seed)}")
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
            uri=u, language_id="plaintext", version=1, text=text)))
        await drive_server(client, u, text.split("\n"), stats, limit=2)
        nxt = cases[(k + 1) % len(cases)][1]
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=nxt)]))
        await drive_server(client, u, nxt.split("\n"), stats, limit=1)
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
    assert len(cases) == 30
    assert stats.hangs == [], stats.hangs
    assert await alive(client, stats)
    print(f"\nfuzz server run: {stats.requests} requests, {stats.errors} JSON-RPC errors, {len(stats.hangs)} hangs, "
          f"worst latency {stats.worst_s:.2f} s ({stats.worst})")
