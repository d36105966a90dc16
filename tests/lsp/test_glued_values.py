"""jaxlib 0.4.30 and 0.4.35 glue each used value's `<id name @color>` header to the end of the `from instruction:`
line before it. Over the real server: hover on every such header shows that value (its own size from the
allocation listing, its own defining instruction), and definition lands on its instruction in the HLO file.
And a companion file (a GPU thunk sequence) opened in the editor says what it is.
Expected values come from the dump text (tests.fixtures and this file's regex)."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from tests.fixtures import DATA, parse_assignment_listing
from tests.lsp.util import open_doc, tdp

GLUED = re.compile(r"^ from instruction: .*<(\d+) ([^\s<>{}]+)(\{[\d,]*\})?(?: \(phi\))? @\d+>$")
DEF = re.compile(r"^\s+(?:ROOT )?%?([^ =]+) = ")  # these versions print names without `%`


def instruction_lines(hlo_text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for n, line in enumerate(hlo_text.split("\n")):
        m = DEF.match(line)
        if m:
            out.setdefault(m.group(1), n)
    return out


FILES = sorted(
    p for v in ("jax-0.4.30", "jax-0.4.35") for p in (DATA / "producers" / v).rglob("*-buffer-assignment.txt")
)


async def test_hover_and_definition_from_glued_headers(client):
    assert len(FILES) >= 4, "the jax 0.4.30/0.4.35 samples are missing"
    checked = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        sizes = {v["key"]: v["size"] for v in parse_assignment_listing(text)}
        hlo = path.with_name(path.name.replace("-buffer-assignment.txt", ".txt"))
        instr = instruction_lines(hlo.read_text(encoding="utf-8"))
        u = open_doc(client, path)
        for ln, line in enumerate(lines):
            m = GLUED.match(line)
            if not m:
                continue
            name, key = m.group(2), m.group(2) + (m.group(3) or "{}")
            # the value's own `from instruction:` line is the next one that starts so
            own = next(lines[k] for k in range(ln + 1, len(lines)) if lines[k].startswith(" from instruction:"))
            own_instr = re.match(r" from instruction: %?(\S+) = ", own).group(1)
            col = m.start(2) + 1
            h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, ln, col)))
            assert h is not None, (path.name, ln)
            value = h.contents.value
            assert name in value.split("\n")[0], value
            if key in sizes:
                assert f"**Size** {sizes[key]} bytes" in value, (key, value)
            d = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, ln, col)))
            assert d, (path.name, ln, key)
            assert d[0].uri == hlo.resolve().as_uri() and d[0].range.start.line == instr[own_instr], (key, d)
            checked += 1
    assert checked >= 20, checked


async def test_companion_file_says_what_it_is(client):
    """A GPU thunk sequence opened in the editor gets one information on its first line, no error."""
    path = next((DATA / "producers" / "gpu-0.10.2").rglob("*thunk_sequence.txt"))
    u = open_doc(client, path)
    while not client.diagnostics.get(u):
        await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    diags = client.diagnostics[u]
    assert [(d.severity, d.code, d.range.start.line) for d in diags] == [
        (lsp.DiagnosticSeverity.Information, "dump.companion", 0)
    ]
    assert diags[0].message.startswith("GPU thunk sequence")
