"""Document links of a buffer file whose large siblings are still being read (issue 14): the first
``documentLink`` used to wait for the whole join (2.9-3.8 X on the benchmark dump; and an HLO module, which has no
links, waited for its siblings too). Now the peak list's links come from the file's own text at once, each
without its target but with the entry it stands for, and ``documentLink/resolve`` gives the target, the line
defining the value in the module, once the module's files are read.

Real server over stdio; a generated set whose module and values file are over the server's 2 MB "large" size,
with a live-range file naming copy 0's values (the source dump's own, each defined name renamed as the
generator renames copy 0: its peak list is what the links come from)."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from benchmarks.synth_buffers import DEFAULT_SRC, synthesize_set
from benchmarks.synth_module import defined_names, split_module
from tests.lsp.util import open_doc

SIZE_MB = 6.0
LIVE = "-live-range.txt"


def _live_range_of_copy_0(out_dir, module_path) -> tuple:
    source = DEFAULT_SRC.read_text()
    names = defined_names(split_module(source))
    text = DEFAULT_SRC.with_name(DEFAULT_SRC.name[: -len(".txt")] + LIVE).read_text()
    word = re.compile(r"(?<![\w.\-])([A-Za-z_][\w.\-]*)")
    renamed = word.sub(lambda m: m.group(1) + ".k0" if m.group(1) in names else m.group(1), text)
    path = out_dir / (module_path.name[: -len(".txt")] + LIVE)
    path.write_text(renamed)
    return path, renamed


async def test_peak_links_at_once_and_their_targets_on_resolve(client, tmp_path):
    paths = synthesize_set(DEFAULT_SRC, tmp_path, SIZE_MB)
    module = paths[""]
    live, text = _live_range_of_copy_0(tmp_path, module)
    lines = text.split("\n")
    peak = {i: m.group(1) for i, x in enumerate(lines) if (m := re.match(r"^    (\S+): \d+ bytes", x))}
    assert peak
    module_lines = module.read_text().split("\n")

    u = open_doc(client, live)
    links = await client.text_document_document_link_async(
        lsp.DocumentLinkParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    assert sorted(k.range.start.line for k in links) == sorted(peak)
    assert any(k.target is None for k in links)  # answered before the module's files were joined
    for k in links:
        if k.target is None:
            assert k.data is not None
            k = await client.document_link_resolve_async(k)
        assert k.target is not None and k.target.startswith(module.resolve().as_uri() + "#L")
        line = int(k.target.split("#L")[1].split(",")[0]) - 1
        name = peak[k.range.start.line].split("{")[0]  # `name{index}` in the peak list
        assert re.match(rf"^\s+(ROOT )?%{re.escape(name)} = ", module_lines[line]), (name, module_lines[line])


async def test_an_hlo_module_has_no_links(client, tmp_path):
    paths = synthesize_set(DEFAULT_SRC, tmp_path, SIZE_MB)
    u = open_doc(client, paths[""])
    links = await client.text_document_document_link_async(
        lsp.DocumentLinkParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    assert not links
