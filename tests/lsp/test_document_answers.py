"""End-to-end: the whole-document requests through the real server, as an editor sends them.

- After random edit sequences, each answer the server keeps or derives (the outline, folding ranges and code
  lenses kept per version, the semantic-token delta applied to the array held) equals what the same server
  answers for the final text opened fresh as another document.
- A cancelled request gets ``RequestCancelled`` and a later one still answers.
- A hover sent while whole-document requests on a large generated module are being computed is answered
  before them (order, not time).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import shutil

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled

from benchmarks.synth_module import synthesize
from hlo_lsp.lsp.doc_answers import PACK_MIN_BYTES, apply_token_edits
from tests.fixtures import DATA
from tests.lsp.util import open_doc, tdp, uri

STEM = "module_0000.jit_piecewise.cpu_after_optimizations"
SRC_DIR = DATA / "jax-cpu" / "cond_switch"
BIG_SRC = DATA / "jax-cpu" / "loops_scan_while" / "module_0000.jit_rnn_loss_and_grad.cpu_after_optimizations.txt"
EDITS = st.lists(
    st.tuples(st.floats(0, 0.999), st.sampled_from(["space", "blank", "delete", "rename"])), min_size=1, max_size=5
)
_dirs = itertools.count()


def _copy_module(root) -> None:
    for f in SRC_DIR.glob(f"{STEM}*"):
        shutil.copy(f, root / f.name)


def _edit(lines: list[str], frac: float, what: str) -> lsp.TextDocumentContentChangePartial | None:
    ln = int(frac * len(lines))
    text = lines[ln]
    if what == "space":
        lines[ln] = text + " "
        return _change(ln, len(text), ln, len(text), " ")
    if what == "blank":
        lines.insert(ln, "")
        return _change(ln, 0, ln, 0, "\n")
    if what == "delete" and ln + 1 < len(lines):
        del lines[ln]
        return _change(ln, 0, ln + 1, 0, "")
    k = text.find("%")
    if k < 0:
        return None
    lines[ln] = text[: k + 1] + "z" + text[k + 1 :]
    return _change(ln, k + 1, ln, k + 1, "z")


def _send_edit(client, u: str, lines: list[str], frac: float, what: str, version: int) -> bool:
    """`_edit` ``lines`` and send the change as ``version`` of ``u``; False when there was nothing to edit."""
    change = _edit(lines, frac, what)
    if change is None:
        return False
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=version), content_changes=[change]
        )
    )
    return True


def _change(sl, sc, el, ec, text) -> lsp.TextDocumentContentChangePartial:
    return lsp.TextDocumentContentChangePartial(
        range=lsp.Range(start=lsp.Position(line=sl, character=sc), end=lsp.Position(line=el, character=ec)), text=text
    )


async def _whole(client, u: str) -> tuple:
    """(outline, folding, code lenses) of ``u``, as plain data with the document's own URI taken out."""
    doc = lsp.TextDocumentIdentifier(uri=u)
    syms = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc))
    folds = await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc))
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(text_document=doc))
    conv = client.protocol._converter
    data = conv.unstructure((syms, folds, lenses))
    return tuple(_strip(x, u) for x in data)


def _strip(x, u: str):
    if isinstance(x, str):
        return x.replace(u, "<doc>")
    if isinstance(x, list):
        return [_strip(y, u) for y in x]
    if isinstance(x, dict):
        return {k: _strip(v, u) for k, v in x.items()}
    return x


async def _tokens(client, u: str) -> lsp.SemanticTokens:
    return await client.text_document_semantic_tokens_full_async(
        lsp.SemanticTokensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(edits=EDITS)
async def test_kept_and_delta_answers_equal_a_fresh_document(client, tmp_path_factory, edits):
    n = next(_dirs)
    edited_dir, fresh_dir = tmp_path_factory.mktemp(f"edited{n}"), tmp_path_factory.mktemp(f"fresh{n}")
    _copy_module(edited_dir)
    _copy_module(fresh_dir)
    path = edited_dir / f"{STEM}.txt"
    lines = path.read_text().split("\n")
    u = open_doc(client, path)
    held = await _tokens(client, u)
    data, rid = list(held.data), held.result_id
    edited = await _whole(client, u)
    assert rid and edited == await _whole(client, u)  # asked again: the kept answer
    for version, (frac, what) in enumerate(edits, start=2):
        if not _send_edit(client, u, lines, frac, what, version):
            continue
        delta = await client.text_document_semantic_tokens_full_delta_async(
            lsp.SemanticTokensDeltaParams(text_document=lsp.TextDocumentIdentifier(uri=u), previous_result_id=rid)
        )
        if isinstance(delta, lsp.SemanticTokensDelta):
            data = apply_token_edits(
                data, [{"start": e.start, "deleteCount": e.delete_count, "data": e.data} for e in delta.edits]
            )
        else:
            data = list(delta.data)
        rid = delta.result_id
        edited = await _whole(client, u)
    fresh_path = fresh_dir / f"{STEM}.txt"
    fresh_path.write_text("\n".join(lines))
    fu = open_doc(client, fresh_path)
    assert data == list((await _tokens(client, fu)).data)
    assert _strip(await _whole(client, u), u) == _strip(await _whole(client, fu), fu)
    assert edited == await _whole(client, u)
    for d in (u, fu):
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=d)))


@pytest.fixture(scope="module")
def outlined(tmp_path_factory):
    """A 1 MB module made from a real dump: about 6,000 instructions, so that the outline's budget of 2,000
    entries is spent in the first computations and most list none (where an edit keeps the outline)."""
    path = tmp_path_factory.mktemp("outlined") / "module_0000.jit_outlined.cpu_after_optimizations.txt"
    synthesize(BIG_SRC.read_text(), path, 1)
    return path


async def _outline(client, u: str):
    doc = lsp.TextDocumentIdentifier(uri=u)
    syms = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc))
    return _strip(client.protocol._converter.unstructure(syms), u)


# where in the text: the second part mostly (its computations list no instruction: the outline is kept), and
# now and then a computation that lists some (the first quarter) or the entry's listed instructions (past 0.9)
WHERE = st.one_of(st.floats(0.3, 0.999), st.sampled_from([0.05, 0.2, 0.91, 0.93, 0.95]))


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@example(edits=[(0.6, "space"), (0.93, "space"), (0.2, "rename"), (0.7, "rename")])
@given(edits=st.lists(st.tuples(WHERE, st.sampled_from(["space", "rename", "space", "blank"])), min_size=2, max_size=5))
async def test_an_outline_kept_over_edits_equals_a_fresh_document(client, outlined, tmp_path_factory, edits):
    """The server keeps a module's outline over edits that leave it as it was (`symbols.outline_kept`): edits in
    the second part of a module whose outline lists none of those computations' instructions, a line added now
    and then; after each, the outline equals the one the server makes for the same text opened fresh."""
    n = next(_dirs)
    path = tmp_path_factory.mktemp(f"outlined{n}") / outlined.name
    lines = outlined.read_text().split("\n")
    path.write_text("\n".join(lines))
    u = open_doc(client, path)
    await _outline(client, u)
    for version, (frac, what) in enumerate(edits, start=2):
        if not _send_edit(client, u, lines, frac, what, version):
            continue
        edited = await _outline(client, u)
        fresh_path = tmp_path_factory.mktemp(f"outlined{n}v{version}") / outlined.name
        fresh_path.write_text("\n".join(lines))
        fu = open_doc(client, fresh_path)
        assert edited == _strip(await _outline(client, fu), fu)
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=fu)))
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A 5 MB module made from a real dump (read by the server in a worker thread, over a second)."""
    path = tmp_path_factory.mktemp("big") / "module_0000.jit_big.cpu_after_optimizations.txt"
    synthesize(BIG_SRC.read_text(), path, 5)
    return path


async def test_cancelled_request_gets_request_cancelled_and_a_later_one_answers(client, big, tmp_path):
    """The pulled diagnostics of a large module just opened wait until it is read and checked (in a worker
    thread, over a second): a cancel sent meanwhile is honoured; the same request sent again is answered,
    about the text as opened (an operand renamed to an undefined name is reported on its line)."""
    lines = big.read_text().split("\n")
    ln = next(i for i, x in enumerate(lines) if " = " in x and "(%" in x)
    k = lines[ln].index("(%") + 2
    lines[ln] = lines[ln][:k] + "nowhere_" + lines[ln][k:]
    path = tmp_path / big.name
    path.write_text("\n".join(lines))
    u = open_doc(client, path)
    doc = lsp.TextDocumentIdentifier(uri=u)
    fut = asyncio.wrap_future(
        client.protocol.send_request(  # written now (send_request_async writes when awaited)
            lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DocumentDiagnosticParams(text_document=doc), msg_id="cancel-me"
        )
    )
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="cancel-me"))
    with pytest.raises(JsonRpcRequestCancelled):
        await fut
    later = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=doc))
    assert isinstance(later, lsp.RelatedFullDocumentDiagnosticReport)
    assert any(d.range.start.line == ln for d in later.items), later.items[:5]
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=doc))


async def test_cancelled_tokens_are_computed_once_and_answer_the_next_request(client, big):
    """Cancelling a whole-document request leaves its computation running (shielded) and kept: the request
    the editor sends next at the same version gets it, with every instruction definition coloured."""
    u = open_doc(client, big)
    params = lsp.SemanticTokensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    fut = asyncio.wrap_future(
        client.protocol.send_request(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, params, msg_id="cancel-tokens")
    )
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="cancel-tokens"))
    try:
        first = await fut
    except JsonRpcRequestCancelled:
        first = None
    later = await _tokens(client, u)
    assert later.data and later.result_id
    if first is not None:
        assert list(first.data) == list(later.data) and first.result_id == later.result_id
    defs = sum(1 for ln in big.read_text().split("\n") if re.match(r"\s*(ROOT )?%[\w.\-]+ = ", ln))
    assert len(later.data) // 5 >= defs  # every instruction's definition is coloured
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))


async def test_hover_answers_while_whole_document_requests_are_computed(client, big, tmp_path):
    path = tmp_path / big.name
    shutil.copy(big, path)
    lines = path.read_text().split("\n")
    u = open_doc(client, path)
    await client.text_document_folding_range_async(  # waits until the document is read
        lsp.FoldingRangeParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    ln = max(i for i, x in enumerate(lines) if re.match(r"\s*(ROOT )?%[\w.\-]+ = ", x))
    col = lines[ln].index("%") + 1
    order: list[str] = []
    doc = lsp.TextDocumentIdentifier(uri=u)
    edit_ln = next(i for i, x in enumerate(lines) if re.match(r"\s*%[\w.\-]+ = ", x))
    for version in (2, 3):  # a new version each time (an instruction line edited): nothing kept, all computed
        lines[edit_ln] += " "
        end = len(lines[edit_ln]) - 1
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=version),
                content_changes=[_change(edit_ln, end, edit_ln, end, " ")],
            )
        )
        order.clear()

        def done(name):
            return lambda _: order.append(name)

        slow = [
            client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=doc)),
            client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc)),
            client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc)),
        ]
        slow = [asyncio.ensure_future(f) for f in slow]  # written in this order, before the hover
        for name, f in zip(("tokens", "outline", "folding"), slow):
            f.add_done_callback(done(name))
        h = asyncio.ensure_future(client.text_document_hover_async(lsp.HoverParams(**tdp(u, ln, col))))
        h.add_done_callback(done("hover"))
        await asyncio.gather(h, *slow)
        assert h.result() is not None and lines[ln].split(" = ")[0].strip().split()[-1][1:] in h.result().contents.value
        # Answered before the slow whole-document requests sent before it: the outline (hundreds of ms of work
        # here, every version) and, at version 2, the first semantic tokens. At version 3 the tokens are made from
        # version 2's outside the edited line (ide.token_reuse), a few ms like the hover: either may rightly come
        # first, as may folding (a few ms) on a loaded machine.
        slow_ones = ("tokens", "outline") if version == 2 else ("outline",)
        assert order.index("hover") < min(order.index(n) for n in slow_ones), order
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=doc))
    assert uri(path) == u


async def test_answers_asked_again_after_the_server_packed_them_are_the_same(client, big, tmp_path):
    """Once the server is idle it keeps its large answers compressed (`DocumentAnswers.pack_kept`): the 5 MB
    module's outline and tokens (each over `PACK_MIN_BYTES` of JSON, so packed) asked again after an idle
    moment are the answers first given, and a delta after an edit still applies to the tokens held."""
    path = tmp_path / big.name
    shutil.copy(big, path)
    lines = path.read_text().split("\n")
    u = open_doc(client, path)
    conv = client.protocol._converter
    outline = conv.unstructure(await _outline(client, u))
    tokens = await _tokens(client, u)
    assert len(json.dumps(outline)) >= PACK_MIN_BYTES and len(json.dumps(list(tokens.data))) >= PACK_MIN_BYTES
    await asyncio.sleep(2.5)  # idle: the server packs what it keeps (`server._pack_when_idle`, after 0.5 s)
    assert conv.unstructure(await _outline(client, u)) == outline
    again = await _tokens(client, u)
    assert list(again.data) == list(tokens.data) and again.result_id == tokens.result_id
    assert _send_edit(client, u, lines, 0.5, "space", 2)
    delta = await client.text_document_semantic_tokens_full_delta_async(
        lsp.SemanticTokensDeltaParams(
            text_document=lsp.TextDocumentIdentifier(uri=u), previous_result_id=again.result_id
        )
    )
    fresh = await _tokens(client, u)
    held = list(again.data)
    if isinstance(delta, lsp.SemanticTokensDelta):
        held = apply_token_edits(held, conv.unstructure(delta.edits))
    else:
        held = list(delta.data)
    assert held == list(fresh.data)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
