"""End-to-end: a large module's users and callers maps are built in the background after its read (0.3 s for the
23 MB benchmark module, 1.2 s for the 100 MB one), never on the event loop. A request that needs them right after
the first diagnostics (references of a computation: its callers) waits for them in a worker thread while a hover
sent after it is answered first; a hover on a computation's name says its callers are being indexed instead of
building the maps; once they are built the answers are complete and the same."""

from __future__ import annotations

import asyncio
import re

import pytest
from lsprotocol import types as lsp

from benchmarks.synth_module import synthesize
from tests.fixtures import DATA
from tests.lsp.util import open_doc, tdp
from tests.server_client import record_published

SRC = DATA / "jax-cpu" / "loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"
CALL = re.compile(r"calls=%([\w.\-]+)")


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    path = tmp_path_factory.mktemp("maps") / "module_0000.jit_maps.cpu_after_optimizations.txt"
    synthesize(SRC.read_text(), path, 8)
    return path, path.read_text()


def _published(client, u: str) -> bool:
    return any(p.uri == u for p in client.published)


@pytest.fixture(scope="module", autouse=True)
def _record_publications(client):
    record_published(client)  # (every publication, with its version)
    yield


async def test_callers_right_after_the_read_wait_off_the_loop(client, big):
    path, text = big
    lines = text.split("\n")
    # the computation called most often, and one of its call sites' lines
    counts: dict[str, int] = {}
    for x in lines:
        for m in CALL.finditer(x):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    callee = max(counts, key=counts.get)
    header = next(i for i, x in enumerate(lines) if x.startswith(f"%{callee} "))
    user = next(i for i, x in enumerate(lines) if f"calls=%{callee}" in x)
    name_at = lines[user].index("%") + 1

    u = open_doc(client, path, text=text)
    while not _published(client, u):
        await asyncio.wait_for(client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 120)

    done: list[str] = []

    async def ask(label: str, request):
        got = await request
        done.append(label)
        return got

    refs_params = lsp.ReferenceParams(**tdp(u, header, 1), context=lsp.ReferenceContext(include_declaration=True))
    refs = asyncio.ensure_future(ask("references", client.text_document_references_async(refs_params)))
    await asyncio.sleep(0)  # (sent first)
    hover = asyncio.ensure_future(
        ask("hover", client.text_document_hover_async(lsp.HoverParams(**tdp(u, user, name_at))))
    )
    callee_hover = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, header, 1)))
    early, h = await asyncio.wait_for(asyncio.gather(refs, hover), 120)
    assert done.index("hover") < done.index("references"), done  # the hover did not wait for the maps
    assert h is not None and lines[user][name_at:].split(" ")[0] in h.contents.value
    assert callee_hover is not None and callee in callee_hover.contents.value
    value = callee_hover.contents.value
    assert "being indexed" in value or "**Called by**" in value

    # asked again once the maps are built: the same references, and the hover lists the callers
    later = await client.text_document_references_async(refs_params)
    key = lambda r: (r.range.start.line, r.range.start.character)  # noqa: E731
    assert early and sorted(map(key, early)) == sorted(map(key, later))
    assert len(early) == counts[callee] + 1  # each call site and the header
    again = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, header, 1)))
    assert again is not None and "**Called by**" in again.contents.value and "being indexed" not in again.contents.value


async def test_the_outgoing_calls_of_a_large_entry_are_the_in_process_answer(client, big):
    """The outgoing calls of a large ENTRY (every call site's line parsed: 0.4 s for the 23 MB module's, made in a
    worker thread) are those the call hierarchy gives in-process, with a hover answered meanwhile. (Which of the
    two answers arrives first says nothing here: the server writes a small answer before a large one queued with
    it.)"""
    first, text = big
    path = first.with_name(first.name.replace("module_0000", "module_0001"))  # (a document of its own)
    path.write_text(text)
    lines = text.split("\n")
    u = open_doc(client, path, text=text)
    while not _published(client, u):
        await asyncio.wait_for(client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 120)
    entry = next(i for i, x in enumerate(lines) if x.startswith("ENTRY %"))
    items = await client.text_document_prepare_call_hierarchy_async(
        lsp.CallHierarchyPrepareParams(**tdp(u, entry, len("ENTRY %") + 1))
    )
    assert items and len(items) == 1
    user = next(i for i in range(entry + 1, len(lines)) if "calls=%" in lines[i])
    out = client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(item=items[0]))
    hover = client.text_document_hover_async(lsp.HoverParams(**tdp(u, user, lines[user].index("%") + 1)))
    calls, h = await asyncio.wait_for(asyncio.gather(out, hover), 120)
    assert h is not None
    from hlo_lsp.core.workspace import Workspace
    from hlo_lsp.ide import calls as call_hierarchy

    ws = Workspace()
    ws.open(str(path), text, 1)
    item = call_hierarchy.prepare(ws, str(path), entry, len("ENTRY %") + 1)[0]
    want = sorted((c.item.name, len(c.ranges)) for c in call_hierarchy.outgoing(ws, item))
    assert want and sorted((c.to.name, len(c.from_ranges)) for c in calls) == want
