"""A pass-by-pass dump in the editor (issue 21), over the real server: a file's lenses place it in the history
(its pass, the diff against the file before, the files on either side); an instruction's hover names the pass
that made it and links each version; a fusion in the optimized module lists what it absorbed; commands give the
previous and next version (and show them with window/showDocument), the diff document and the file list.
Expected lines come from the files with this file's own regex."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.fixtures import DATA
from tests.lsp.util import open_doc, pos, uri
from tests.passes.reading import pass_order

MLP = DATA / "passes" / "mlp_sgd"
FUSION = next(MLP.glob("*.0035.*"))
FINAL = MLP / "module_0000.jit_train_step.cpu_after_optimizations.txt"


def _line_of(path: Path, name: str) -> int:
    lines = path.read_text().split("\n")
    return next(i for i, x in enumerate(lines) if re.match(rf"\s+(ROOT )?%{re.escape(name)} = ", x))


def _pass_of(path: Path) -> str:
    """The pass a numbered file shows the work of: ``after_<A>`` of a between-pass file, else its pass."""
    parts = path.name.split(".")
    tail = ".".join(parts[4:-1])
    return tail[len("after_") :].split(".before_")[0] if ".before_" in tail else parts[3]


def _text_of(path: Path, name: str) -> str | None:
    m = re.search(rf"^\s+(?:ROOT )?%{re.escape(name)} = .*$", path.read_text(), re.M)
    return m.group(0) if m else None


async def _run(client, command: str, *args):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=command, arguments=list(args)))


async def _lenses(client, u: str) -> list[lsp.CodeLens]:
    """The document's lenses once the history is built (the server asks for them again then)."""
    for _ in range(100):
        got = await client.text_document_code_lens_async(
            lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
        )
        if any(x.command and x.command.title.startswith("pass file ") for x in got or ()):
            return got
        await asyncio.sleep(0.1)
    raise AssertionError("no pass lenses")


async def test_file_lenses_and_instruction_lenses(client):
    u = open_doc(client, FUSION)
    lenses = await _lenses(client, u)
    top = [x.command for x in lenses if x.range.start.line == 0]
    titles = [c.title for c in top]
    assert titles[0] == "pass file 37 of 45: 0035 fusion (HLO_passes_after_layout_assignment)"
    diff = next(c for c in top if c.command == "hlo.passDiff")
    assert re.fullmatch(r"\+\d+ -\d+ ~\d+ instructions", diff.title)
    prev = next(c for c in top if c.title == "◀ 0034")
    assert prev.command == "hlo.showPassFile" and unquote(urlparse(prev.arguments[0]).path) == str(
        next(MLP.glob("*.0034.*"))
    )
    assert any(c.title == "0036 ▶" for c in top)
    ln = _line_of(FUSION, "multiply_subtract_fusion.1")
    mine = [x for x in lenses if x.range.start.line == ln]
    # changed by: the passes of the files, in the whole history, whose line for it differs from the file before's
    order = pass_order(MLP)
    texts = [_text_of(p, "multiply_subtract_fusion.1") for p in order]
    changed_in = [order[k + 1] for k, (a, b) in enumerate(zip(texts, texts[1:])) if a and b and a != b]
    n = len({_pass_of(p) for p in changed_in})
    assert n > 0
    assert [x.command.title for x in mine] == [f"made by fusion (0035) · changed by {n} pass{'es' if n > 1 else ''}"]
    assert mine[0].command.command == "hlo.showPreviousVersion" and list(mine[0].command.arguments) == [u, ln]
    # an instruction of the input no pass touched has no lens; one that passes changed says how many
    assert all(x.command.title.startswith(("made by", "in the input")) for x in lenses if x.range.start.line > 0)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))


async def test_hover_names_the_pass_and_fusion_absorbed(client):
    u = open_doc(client, FINAL)
    await _lenses(client, u)
    ln = _line_of(FINAL, "multiply_subtract_fusion.1")
    col = FINAL.read_text().split("\n")[ln].index("multiply_subtract_fusion.1")
    h = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=u), position=pos(ln, col + 3))
    )
    text = h.contents.value
    assert "**Passes** made by `fusion` (file 0035)" in text, text
    link = re.search(r"\[0035 made\]\((file://\S+)#L(\d+)\)", text)
    assert link and Path(unquote(urlparse(link.group(1)).path)) == FUSION
    assert int(link.group(2)) - 1 == _line_of(FUSION, "multiply_subtract_fusion.1")
    absorbed = re.search(r"\*\*Absorbed\*\* \(in 0034, before fusion\) (.*)", text)
    assert absorbed, text
    before = next(MLP.glob("*.0034.*"))
    for name, target, line in re.findall(r"\[%([\w.\-]+)\]\((file://\S+?)#L(\d+)\)", absorbed.group(1)):
        assert Path(unquote(urlparse(target).path)) == before
        assert _line_of(before, name) == int(line) - 1
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))


async def test_previous_and_next_version_commands(client):
    later = next(MLP.glob("*.0027.*"))  # layout-assignment
    u = open_doc(client, later)
    await _lenses(client, u)
    text = later.read_text()
    earlier = next(MLP.glob("*.0026.*")).read_text()
    # an instruction layout-assignment changed: its previous version is in 0026, its line there defines it
    name = next(
        n
        for n in re.findall(r"^\s+(?:ROOT )?%([^\s=]+) = ", text, re.M)
        if re.search(rf"^\s+(ROOT )?%{re.escape(n)} = .*$", earlier, re.M)
        and re.search(rf"^\s+(?:ROOT )?%{re.escape(n)} = .*$", earlier, re.M).group(0)
        != re.search(rf"^\s+(?:ROOT )?%{re.escape(n)} = .*$", text, re.M).group(0)
    )
    ln = _line_of(later, name)
    got = await _run(client, "hlo.passNeighbor", u, ln, "previous")
    assert unquote(urlparse(got["uri"]).path) == str(next(MLP.glob("*.0026.*")))
    assert got["line"] == _line_of(next(MLP.glob("*.0026.*")), name)
    nxt = await _run(client, "hlo.passNeighbor", u, ln, "next")
    assert nxt is None or nxt["change"] in ("changed", "removed")
    client.shown_documents.clear()
    await _run(client, "hlo.showPreviousVersion", u, ln)
    for _ in range(100):
        if client.shown_documents:
            break
        await asyncio.sleep(0.05)
    (params,) = client.shown_documents
    assert params.uri == got["uri"] and params.selection.start.line == got["line"]
    with pytest.raises(JsonRpcException, match="no instruction on line 1"):
        await _run(client, "hlo.passNeighbor", u, 0, "next")
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))


async def test_diff_document_and_file_list(client, tmp_path):
    got = await _run(client, "hlo.passDiff", uri(FUSION))
    assert got["title"] == "Pass diff: 0035 fusion (HLO_passes_after_layout_assignment)"
    assert got["text"].startswith("fusion: +")
    files = await _run(client, "hlo.passFiles", uri(FUSION))
    assert files["index"] == 36 and len(files["files"]) == 45
    assert unquote(urlparse(files["files"][35]["uri"]).path) == str(next(MLP.glob("*.0034.*")))
    trace = await _run(client, "hlo.passTrace", uri(FUSION), "copy.4")
    assert trace["text"].startswith("%copy.4: made by `copy-insertion` (file 0038)")
    (tmp_path / "plain.txt").write_text("HloModule m\n")
    with pytest.raises(JsonRpcException, match="not a file of a pass-by-pass dump"):
        await _run(client, "hlo.passDiff", uri(tmp_path / "plain.txt"))


def _tags(line: str) -> tuple:
    op = re.search(r'op_name="((?:[^"\\]|\\.)*)"', line)
    frame = re.search(r"stack_frame_id=(\d+)", line)
    kind = re.search(r" = (.*?[a-z0-9-]+)\(", line)
    return (op.group(1) if op else None, frame.group(1) if frame else None, kind.group(1) if kind else None)


async def test_hover_in_the_input_follows_an_instruction_to_where_it_ended_up(client):
    """From before_optimizations.txt: an instruction a pass removed links to what that pass made of it, in the
    file where it went: names new there with its op_name, stack frame, shape and opcode."""
    order = pass_order(MLP)
    before = order[0]
    u = open_doc(client, before)
    await _lenses(client, u)
    texts = [p.read_text() for p in order]
    defs = [dict(re.findall(r"^\s+(?:ROOT )?%([^\s=]+) = (.*)$", t, re.M)) for t in texts]
    checked = 0
    for name, rest in defs[0].items():
        gone = next((k for k in range(1, len(order)) if name not in defs[k]), None)
        if gone is None or _tags(rest)[0] is None:
            continue
        old = defs[gone - 1][name]
        new = [n for n, r in defs[gone].items() if n not in defs[gone - 1] and _tags(r) == _tags(old)]
        if not new:
            continue
        ln = _line_of(before, name)
        col = before.read_text().split("\n")[ln].index(f"%{name} ") + 1
        h = await client.text_document_hover_async(
            lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=u), position=pos(ln, col + 1))
        )
        text = h.contents.value
        now = re.search(r"now in (\d{4}): (.*)", text)
        assert now and now.group(1) == order[gone].name.split(".")[2], text
        links = re.findall(r"\[%([\w.\-]+)\]\((file://\S+?)#L(\d+)\)", now.group(2))
        assert links and {n for n, _, _ in links} <= set(new), (name, links, new)
        for n, target, line in links:
            assert Path(unquote(urlparse(target).path)) == order[gone]
            assert _line_of(order[gone], n) == int(line) - 1
        checked += 1
        if checked == 5:
            break
    assert checked >= 3
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
