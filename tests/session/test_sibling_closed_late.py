"""A sibling closed after its buffer files were opened (issue 14): VS Code sends `didClose` for a tab some time
after the tab went away, so in a real session the module's close arrives after the values file beside it was
opened and its siblings joined in the background. The close dropped the bundle the join had made, and the values
file's hover said "not read yet (a large sibling file is still loading)" for good: no one read the siblings again.

Here with the real server over stdio and a generated dump set whose files are all over the server's 2 MB "large"
size, in the order VS Code sends: open the module, open the values file, wait for its full hover, close the
module (once the join is done, and while it is being made); the full hover must come back (the siblings are
joined again in the background)."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from lsprotocol import types as lsp

from benchmarks.synth_buffers import ASSIGNMENT, DEFAULT_SRC, VALUES, synthesize_set
from tests.lsp.util import open_doc, tdp

SIZE_MB = 2.5  # each file over LARGE_SIBLING_BYTES (2 MB)


async def _hover_until(client, u: str, line: int, col: int, want: str, seconds: float = 90.0) -> str:
    deadline = time.monotonic() + seconds
    text = ""
    while time.monotonic() < deadline:
        h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, line, col)))
        text = h.contents.value if h is not None else ""
        if want in text:
            return text
        await asyncio.sleep(0.5)
    raise AssertionError(f"no hover with {want!r} within {seconds}s; last: {text!r}")


@pytest.mark.parametrize("when", ["after_the_join", "during_the_join"])
async def test_a_module_closed_after_its_values_file_opened_keeps_the_join(client, tmp_path, when):
    paths = synthesize_set(DEFAULT_SRC, tmp_path, SIZE_MB)
    assert all(paths[suffix].stat().st_size > 2_000_000 for suffix in ("", VALUES))
    vals = paths[VALUES].read_text().split("\n")
    heads = [(i, x) for i, x in enumerate(vals) if re.fullmatch(r"<\d+ [\w.\-]+ @\d+>", x)]
    line, head = heads[len(heads) // 2]
    vid, name = re.fullmatch(r"<(\d+) ([\w.\-]+) @\d+>", head).groups()
    size = re.search(rf"^ value: <{vid} {re.escape(name)} @\d+> \(size=(\d+),", paths[ASSIGNMENT].read_text(), re.M)
    want = f"**Size** {size.group(1)} bytes"

    mod = open_doc(client, paths[""])
    u = open_doc(client, paths[VALUES])
    if when == "after_the_join":
        first = await _hover_until(client, u, line, head.index(name), want)  # joined in the background
        assert "still loading" not in first
    else:  # while the worker thread joins the values file with its siblings, the open module among them
        await client.text_document_hover_async(lsp.HoverParams(**tdp(u, line, head.index(name))))
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=mod)))
    await asyncio.sleep(0.2)
    again = await _hover_until(client, u, line, head.index(name), want)
    assert "still loading" not in again
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
