"""End-to-end (pytest-lsp, the real server process): inlay hints, code lens, semantic tokens, completion and
rename. Expected values come from the dump text with this file's own regexes (tests/insight/util.py,
tests/fixtures.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.fixtures import DATA, instruction_lines, parse_assignment_listing, parse_live_ranges
from tests.insight.test_peak import independent_allocated
from tests.insight.util import array_bytes, decode_tokens, human
from tests.lsp.util import open_doc, pos, tdp

PREDICT = DATA / "jax-cpu" / "mlp_sgd"
STEM = "module_0002.jit_predict.cpu_after_optimizations"
HLO = PREDICT / f"{STEM}.txt"
ASSIGN = PREDICT / f"{STEM}-buffer-assignment.txt"
LIVE = PREDICT / f"{STEM}-live-range.txt"
INSTR = re.compile(r"^\s+(?:ROOT )?%([^ =]+) = (\S+) ([a-z][a-z0-9\-_]*)\(")

HANDWRITTEN = """HloModule m

%add_comp (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p: f32[4]) -> f32[] {
  %p = f32[4]{0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %zero), dimensions={0}, to_apply=%add_comp
}
"""


def covered(slices: list[tuple[int, int]]) -> int:
    """Bytes covered by byte ranges: a +1/-1 event sweep, counting where at least one range is open."""
    events = sorted([(s, 1) for s, _ in slices] + [(e, -1) for _, e in slices])
    total, depth, prev = 0, 0, None
    for x, d in events:
        if depth > 0:
            total += x - prev
        depth += d
        prev = x
    return total


def whole(lines: list[str]) -> lsp.Range:
    return lsp.Range(start=pos(0, 0), end=pos(len(lines), 0))


# ------------------------------------------------------------------------------------------------ inlay hints


async def test_inlay_hints_in_hlo_give_size_and_live_range(client):
    u = open_doc(client, HLO)
    lines = HLO.read_text().split("\n")
    live = parse_live_ranges(LIVE.read_text())
    hints = await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(text_document=lsp.TextDocumentIdentifier(uri=u), range=whole(lines))
    )
    by_line = {h.position.line: h for h in hints}
    checked = 0
    for n, line in enumerate(lines):
        m = INSTR.match(line)
        if not m or array_bytes(m.group(2)) is None:
            continue
        h = by_line[n]
        assert h.position.character == line.index(" = ") + 3 + len(m.group(2))
        assert h.label.startswith(": " + human(array_bytes(m.group(2))))
        ranges = [r for k, r in live.items() if k.startswith(m.group(1) + "{")]
        if ranges:
            s, e = min(r[0] for r in ranges), max(r[1] for r in ranges)
            assert h.label.endswith(f"live {s}–{e}" if s != e else f"live {s}"), (h.label, ranges)
        checked += 1
    assert checked >= 20


async def test_inlay_hints_in_buffer_listing(client):
    u = open_doc(client, ASSIGN)
    lines = ASSIGN.read_text().split("\n")
    live = parse_live_ranges(LIVE.read_text())
    values = parse_assignment_listing(ASSIGN.read_text())
    hints = await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(text_document=lsp.TextDocumentIdentifier(uri=u), range=whole(lines))
    )
    by_line = {h.position.line: h for h in hints}
    assert len(by_line) == len(values)
    for v in values:
        h = by_line[v["line"]]
        assert h.position.character == len(lines[v["line"]].rstrip())
        assert h.label.startswith(": " + human(v["size"]))
        if v["key"] in live:
            s, e = live[v["key"]]
            assert h.label.endswith(f"live {s}–{e}" if s != e else f"live {s}")
    # a range request answers for its lines only
    part = await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(
            text_document=lsp.TextDocumentIdentifier(uri=u), range=lsp.Range(start=pos(0, 0), end=pos(5, 0))
        )
    )
    assert {h.position.line for h in part} == {v["line"] for v in values if v["line"] <= 5}


# ------------------------------------------------------------------------------------------------ code lens


async def test_code_lens_on_allocations_and_peak(client):
    text = ASSIGN.read_text()
    u = open_doc(client, ASSIGN)
    lenses = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    headers = [
        (n, int(m.group(1)), int(m.group(2)))
        for n, line in enumerate(text.split("\n"))
        if (m := re.match(r"allocation (\d+): size (\d+)", line))
    ]
    total = sum(size for _, _, size in headers)
    counts = {}
    for v in parse_assignment_listing(text):
        counts[v["allocation"]] = counts.get(v["allocation"], 0) + 1
    by_line = {x.range.start.line: x for x in lenses}
    assert len(by_line) == len(headers)
    totals, _ = independent_allocated(LIVE)
    peak_step = totals.index(max(totals))
    live = parse_live_ranges(LIVE.read_text())
    slices: dict[int, list[tuple[int, int]]] = {}
    for v in parse_assignment_listing(text):
        r = live.get(v["key"])
        if r and r[0] <= peak_step <= r[1]:
            slices.setdefault(v["allocation"], []).append((v["offset"], v["offset"] + v["size"]))
    in_use = {a: covered(sl) for a, sl in slices.items()}
    for n, index, size in headers:
        title = by_line[n].command.title
        n_values = counts[index]
        assert title.startswith(f"{100 * size / total:.0f}% of total, {n_values} value{'s' if n_values != 1 else ''}, ")
        assert f" of {human(size)} in use at the allocated peak (step {peak_step})" in title
        assert f", {human(in_use.get(index, 0))} of " in title

    u2 = open_doc(client, LIVE)
    live_text = LIVE.read_text()
    step = int(re.search(r"Live ranges at (\d+) \(peak\)", live_text).group(1))
    printed = sum(int(x) for x in re.findall(r"^    \S+: (\d+) bytes \(cumulative", live_text, re.M))
    lenses = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=u2))
    )
    peak_line = next(n for n, line in enumerate(live_text.split("\n")) if "(peak)" in line)
    seq_line = next(
        n
        for n, line in enumerate(live_text.split("\n"))
        if line == f"    {step}:" + line.split(":")[-1] and line.strip().startswith(f"{step}:")
    )
    titled: dict[int, dict[str, lsp.Command]] = {}
    for x in lenses:
        titled.setdefault(x.range.start.line, {})[x.command.command] = x.command
    for ln in (peak_line, seq_line):
        timeline, heap = titled[ln]["hlo.showMemoryTimeline"], titled[ln]["hlo.showHeapMap"]
        assert list(timeline.arguments) == [u2] and list(heap.arguments) == [u2]
        assert timeline.title.startswith(f"XLA peak at step {step}: {human(printed)} live")
        assert heap.title == "heap map"
        assert titled[ln]["hlo.peakGroups"].title.startswith("by source: ")


async def test_code_lens_on_computation_headers(client):
    text = HLO.read_text()
    lines = text.split("\n")
    u = open_doc(client, HLO)
    lenses = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    live_text = LIVE.read_text()
    entries = re.findall(r"^    (\S+)\{[\d,]*\}: (\d+) bytes \(cumulative", live_text, re.M)
    entry_line = next(n for n, line in enumerate(lines) if line.startswith("ENTRY "))
    entry_end = next(n for n in range(entry_line, len(lines)) if lines[n] == "}")
    defined = instruction_lines(text)
    in_entry = sum(int(b) for name, b in entries if entry_line < defined[name] < entry_end)
    total = sum(int(b) for _, b in entries)
    lens = next(x for x in lenses if x.range.start.line == entry_line)
    assert lens.command.title.startswith(f"{100 * in_entry / total:.0f}% of the peak: {human(in_entry)} in ")


# ------------------------------------------------------------------------------------------------ semantic tokens

# The server's legend as the protocol sends it (written out here: a reordered legend must fail these tests)
TOKEN_TYPES = [
    "namespace",
    "function",
    "variable",
    "parameter",
    "type",
    "keyword",
    "macro",
    "property",
    "string",
    "number",
    "comment",
    "enumMember",
]


async def _full_tokens(client, path: Path) -> tuple[str, list[str], list]:
    """Open ``path`` and ask for all its semantic tokens: (uri, the file's lines, the decoded tokens)."""
    u = open_doc(client, path)
    full = await client.text_document_semantic_tokens_full_async(
        lsp.SemanticTokensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    return u, path.read_text().split("\n"), decode_tokens(full.data, TOKEN_TYPES)


async def test_semantic_tokens_full_and_range(client):
    u, lines, toks = await _full_tokens(client, HLO)
    at = {(ln, s): (length, t, mods) for ln, s, length, t, mods in toks}
    checked = 0
    for n, line in enumerate(lines):
        m = INSTR.match(line)
        if not m:
            continue
        name_col = line.index("%" + m.group(1) + " ") + 1
        assert at[(n, name_col)] == (len(m.group(1)), "variable", 1)
        op_col = line.index(" " + m.group(3) + "(", name_col) + 1
        assert at[(n, op_col)] == (len(m.group(3)), "keyword", 0)
        shape_col = line.index(" = ") + 3
        if not m.group(2).startswith("("):
            assert at[(n, shape_col)] == (len(m.group(2)), "type", 0)
        checked += 1
    assert checked >= 20
    comp = next(n for n, line in enumerate(lines) if line.startswith("ENTRY %"))
    assert at[(comp, len("ENTRY %"))][1:] == ("function", 1)
    # tokens never overlap and are sorted
    for a, b in zip(toks, toks[1:]):
        assert (a[0], a[1] + a[2]) <= (b[0], b[1]) or a[0] < b[0]
    rng = await client.text_document_semantic_tokens_range_async(
        lsp.SemanticTokensRangeParams(
            text_document=lsp.TextDocumentIdentifier(uri=u), range=lsp.Range(start=pos(comp, 0), end=pos(comp + 5, 0))
        )
    )
    assert decode_tokens(rng.data, TOKEN_TYPES) == [t for t in toks if comp <= t[0] <= comp + 5]


async def test_semantic_tokens_in_buffer_file(client):
    _, lines, toks = await _full_tokens(client, ASSIGN)
    at = {(ln, s): (length, t) for ln, s, length, t, _ in toks}
    for v in parse_assignment_listing(ASSIGN.read_text()):
        line = lines[v["line"]]
        assert at[(v["line"], v["col"])][1] == "variable"
        shape_col = line.rindex(": ") + 2
        if array_bytes(v["shape"]) is not None:
            assert at[(v["line"], shape_col)] == (len(v["shape"]), "type")
        size_col = line.index("size=") + 5
        assert at[(v["line"], size_col)] == (len(str(v["size"])), "number")


# ------------------------------------------------------------------------------------------------ completion


async def _complete(client, path: Path, text: str, line: int, col: int) -> list[lsp.CompletionItem]:
    u = open_doc(client, path, text=text)
    res = await client.text_document_completion_async(lsp.CompletionParams(**tdp(u, line, col)))
    return res.items if isinstance(res, lsp.CompletionList) else (res or [])


async def test_completion_contexts(client, tmp_path):
    path = tmp_path / "hand.hlo"
    path.write_text(HANDWRITTEN)
    lines = HANDWRITTEN.split("\n")
    root = next(n for n, line in enumerate(lines) if "ROOT %r" in line)

    def with_line(text: str) -> str:
        return "\n".join(lines[:root] + [text] + lines[root + 1 :])

    t = "  ROOT %r = f32[] red"
    items = await _complete(client, path, with_line(t), root, len(t))
    labels = {i.label for i in items}
    assert {"reduce", "add", "parameter", "while", "all-reduce"} <= labels
    assert all(i.kind == lsp.CompletionItemKind.Keyword for i in items)

    t = "  ROOT %r = f32[] reduce(%p, "
    items = await _complete(client, path, with_line(t), root, len(t))
    assert {i.label for i in items} == {"p", "zero"}  # defined earlier in ENTRY, not add_comp's a/b/s

    t = "  ROOT %r = f32[] reduce(%p, %zero), dimensions={0}, to_apply="
    items = await _complete(client, path, with_line(t), root, len(t))
    assert {i.label for i in items} == {"add_comp"}

    t = "  ROOT %r = f32[] reduce(%p, %zero), "
    items = await _complete(client, path, with_line(t), root, len(t))
    labels = {i.label for i in items}
    assert {"dimensions", "to_apply", "metadata"} <= labels and "lhs_contracting_dims" not in labels

    items = await _complete(client, path, HANDWRITTEN, 0, 3)  # inside `HloModule`: nothing
    assert list(items) == []


# ------------------------------------------------------------------------------------------------ rename


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        ln = e.range.start.line
        assert e.range.end.line == ln
        lines[ln] = lines[ln][: e.range.start.character] + e.new_text + lines[ln][e.range.end.character :]
    return "\n".join(lines)


async def test_rename_instruction_and_computation(client, tmp_path):
    path = tmp_path / "hand.hlo"
    path.write_text(HANDWRITTEN)
    u = open_doc(client, path)
    lines = HANDWRITTEN.split("\n")
    zl = next(n for n, line in enumerate(lines) if "%zero = " in line)
    prep = await client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(**tdp(u, zl, lines[zl].index("zero") + 1))
    )
    assert prep.placeholder == "zero"
    edit = await client.text_document_rename_async(
        lsp.RenameParams(**tdp(u, zl, lines[zl].index("zero") + 1), new_name="init")
    )
    new = apply_edits(HANDWRITTEN, edit.changes[u])
    assert new == HANDWRITTEN.replace("%zero", "%init")
    assert path.read_text() == HANDWRITTEN  # the server never writes

    cl = next(n for n, line in enumerate(lines) if line.startswith("%add_comp"))
    edit = await client.text_document_rename_async(lsp.RenameParams(**tdp(u, cl, 3), new_name="sum"))
    assert apply_edits(HANDWRITTEN, edit.changes[u]) == HANDWRITTEN.replace("%add_comp", "%sum")

    # parameter `a` of add_comp: the header's `a:` and its uses, not ENTRY's names
    al = next(n for n, line in enumerate(lines) if "%a = " in line)
    edit = await client.text_document_rename_async(
        lsp.RenameParams(**tdp(u, al, lines[al].index("%a") + 1), new_name="lhs")
    )
    expected = HANDWRITTEN.replace("(a: f32[]", "(lhs: f32[]").replace("%a ", "%lhs ").replace("(%a,", "(%lhs,")
    assert apply_edits(HANDWRITTEN, edit.changes[u]) == expected

    with pytest.raises(JsonRpcException, match="already exists"):
        await client.text_document_rename_async(
            lsp.RenameParams(**tdp(u, zl, lines[zl].index("zero") + 1), new_name="p")
        )
    with pytest.raises(JsonRpcException, match="not a valid HLO name"):
        await client.text_document_rename_async(
            lsp.RenameParams(**tdp(u, zl, lines[zl].index("zero") + 1), new_name="1x y")
        )


async def test_rename_refused_where_buffer_files_name_the_instructions(client):
    u = open_doc(client, HLO)
    lines = HLO.read_text().split("\n")
    n = next(i for i, line in enumerate(lines) if INSTR.match(line))
    col = lines[n].index("%") + 1
    with pytest.raises(JsonRpcException, match="buffer assignment"):
        await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(**tdp(u, n, col)))
    ua = open_doc(client, ASSIGN)
    v = parse_assignment_listing(ASSIGN.read_text())[0]
    with pytest.raises(JsonRpcException, match="buffer-assignment files"):
        await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(**tdp(ua, v["line"], v["col"])))
