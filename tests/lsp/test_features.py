"""End-to-end: the real server over stdio, every navigation capability, on real dumps (old and new layouts).

Expected positions and facts are read from the dump text in the test (tests.fixtures), never from hlo_lsp.
"""

from __future__ import annotations

import re

import pytest
from lsprotocol import types as lsp

from tests.fixtures import DATA, find, instruction_lines
from tests.lsp.util import open_doc, tdp

COND = DATA / "jax-cpu" / "cond_switch"
STEM = "module_0000.jit_piecewise.cpu_after_optimizations"
HLO = COND / f"{STEM}.txt"
BA = COND / f"{STEM}-buffer-assignment.txt"
VALUES = COND / f"{STEM}-buffer-assignment-values.txt"
LIVE = COND / f"{STEM}-live-range.txt"
SEED002 = DATA / "seeds" / "002_b0117d631587537a.txt"
SEED003 = DATA / "seeds" / "003_6f652c95ac4cfb4d.txt"
SEED004 = DATA / "seeds" / "004_a3085531593bac68.txt"
SEED001 = DATA / "seeds" / "001_2b3b731b0feb0bfe.txt"


def lines_of(path) -> list[str]:
    return path.read_text().split("\n")


def field(text: str, label: str) -> str:
    m = re.search(rf"\*\*{re.escape(label)}\*\* ([^\n]*)", text)
    assert m, f"no {label} in hover:\n{text}"
    return m.group(1).rstrip()


async def hover_at(client, u, line, col):
    h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, line, col)))
    return h.contents.value if h else None


async def test_server_capabilities(client):
    result = client.init_result.capabilities
    for name in (
        "hover_provider",
        "definition_provider",
        "references_provider",
        "type_definition_provider",
        "document_symbol_provider",
        "workspace_symbol_provider",
        "folding_range_provider",
        "document_highlight_provider",
        "document_link_provider",
        "call_hierarchy_provider",
        "declaration_provider",
    ):
        assert getattr(result, name), name
    assert (
        result.diagnostic_provider is None
    )  # VS Code 1.65 pulls none: it is sent them (tests/session/test_pull_or_push)
    sync = result.text_document_sync
    assert sync.change == lsp.TextDocumentSyncKind.Incremental


async def test_hover_value_split_layout(client):
    u = open_doc(client, LIVE)
    lines = lines_of(LIVE)
    ln, col = find(lines, "    cond.1.clone{0}:")
    start, end = map(int, lines[ln].split(":")[-1].split("-"))
    text = await hover_at(client, u, ln, col + 5)
    ba_line = next(x for x in lines_of(BA) if "cond.1.clone{0}" in x)
    size = int(re.search(r"size=(\d+)", ba_line).group(1))
    offset = int(re.search(r"offset=(\d+)", ba_line).group(1))
    assert field(text, "Size").startswith(f"{size} bytes")
    assert field(text, "Offset").startswith(f"{offset} ")
    assert field(text, "Live range").startswith(f"`[{start}, {end}]`")  # a code span: no Markdown link
    seq = {int(x.split(":")[0]): x.split(":")[1] for x in lines if re.match(r"^    \d+:", x)}
    max_step = int(re.search(r"HloLiveRange \(max (\d+)\)", LIVE.read_text()).group(1))
    last = "end of program" if end == max_step else f"`{seq[end]}`"
    assert field(text, "Live range") == f"`[{start}, {end}]` (`{seq[start]}` … {last})"
    peak = int(re.search(r"Live ranges at (\d+)", LIVE.read_text()).group(1))
    assert field(text, "At XLA peak").startswith("live" if start <= peak <= end else "not live")


@pytest.mark.parametrize("path", [BA, VALUES], ids=["assignment", "values"])
async def test_hover_on_a_value_id_is_the_value_hover(client, path):
    """`<ID name @0>`: hovering the numeric id shows the value's hover (the one its name gives), over the id."""
    u = open_doc(client, path)
    lines = lines_of(path)
    hits = [(n, m) for n, line in enumerate(lines) for m in re.finditer(r"<(\d+) ([^ >]+)", line)]
    assert len(hits) >= 5
    for n, m in hits[:5]:
        on_name = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, n, m.start(2) + 1)))
        for col in (m.start(1), m.end(1) - 1):
            on_id = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, n, col)))
            assert on_id is not None and on_name is not None, (path.name, n, lines[n])
            assert on_id.contents.value == on_name.contents.value
            assert f"id {m.group(1)}" in on_id.contents.value.split("\n")[0], on_id.contents.value
            r = on_id.range
            assert (r.start.line, r.start.character, r.end.line, r.end.character) == (n, m.start(1), n, m.end(1))
    # the "<" before the id is not the id
    n, m = hits[0]
    h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, n, m.start(1) - 1)))
    assert h is None or "id " + m.group(1) not in h.contents.value.split("\n")[0]


async def test_hover_value_old_layout_seed002(client):
    u = open_doc(client, SEED002)  # a plain .txt name: the kind comes from the first line
    lines = lines_of(SEED002)
    ln, col = find(lines, "<153 fusion.10{0} @0> (size=")
    text = await hover_at(client, u, ln, col + 6)
    assert field(text, "Size").startswith("939524096 bytes (896.00MiB)")
    assert field(text, "Offset").startswith("81920 · bytes `[81920, 939606016)`")
    alloc_line = max(i for i in range(ln) if lines[i].startswith("allocation "))
    alloc = int(re.match(r"allocation (\d+)", lines[alloc_line]).group(1))
    assert field(text, "Allocation").startswith(f"{alloc} (preallocated-temp")
    lr = next(x for x in lines if x.strip().startswith("fusion.10{0}:"))
    s, e = lr.strip().split(":")[1].split("-")
    assert field(text, "Live range").startswith(f"`[{s}, {e}]`")


async def test_hover_thread_local_has_no_live_range(client):
    u = open_doc(client, SEED003)
    lines = lines_of(SEED003)
    ln, col = find(lines, "<13 maximum.109 @0>")
    assert not any(x.strip().startswith("maximum.109{") for x in lines)
    text = await hover_at(client, u, ln, col + 5)
    assert field(text, "Live range") == "no live range in this dump"
    assert "thread-local" in field(text, "Allocation")


async def test_hover_allocation_header(client):
    u = open_doc(client, BA)
    lines = lines_of(BA)
    ln, _ = find(lines, "allocation 3:")
    text = await hover_at(client, u, ln, 3)
    assert field(text, "Size").startswith("132 bytes")
    assert field(text, "Kind") == "preallocated-temp"
    n_values = 0
    for x in lines[ln + 1 :]:
        if not x.startswith(" value:"):
            break
        n_values += 1
    assert field(text, "Values") == str(n_values)
    total = int(re.search(r"Total bytes used: (\d+)", VALUES.read_text()).group(1))
    assert f"{100 * 132 / total:.1f}%" in field(text, "Share of total")


async def test_hover_instruction_with_source_and_buffers(client):
    u = open_doc(client, HLO)
    lines = lines_of(HLO)
    ln, col = find(lines, "%wrapped_convert = ")
    text = await hover_at(client, u, ln, col + 3)
    assert text.startswith("**fusion** `%wrapped_convert`")
    assert field(text, "Shape") == "`s32[]`"
    assert field(text, "Bytes") == "4 bytes"
    assert field(text, "op_name") == "`jit(piecewise)/convert_element_type`"
    # stack_frame_id=3 -> FileLocations row 3 -> line 12 of programs/cond_switch.py (read from the tables here)
    frame = int(re.search(r"stack_frame_id=(\d+)", lines[ln]).group(1))
    frame_row = next(x for x in lines if x.startswith(f"{frame} {{file_location_id="))
    loc = int(re.search(r"file_location_id=(\d+)", frame_row).group(1))
    loc_row = next(x for x in lines if x.startswith(f"{loc} {{file_name_id="))
    src_line = int(re.search(r" line=(\d+)", loc_row).group(1))
    assert field(text, "Source").startswith(f"`programs/cond_switch.py:{src_line} ")
    ba_line = next(x for x in lines_of(BA) if "<17 wrapped_convert @0>" in x)
    offset = re.search(r"offset=(\d+)", ba_line).group(1)
    assert f"offset {offset} size 4 bytes" in field(text, "Buffer")


async def test_hover_old_style_source_line(client):
    u = open_doc(client, SEED001)
    lines = lines_of(SEED001)
    ln, col = find(lines, "%convert.163.1 = ")
    text = await hover_at(client, u, ln, col + 2)
    m = re.search(r'source_file="([^"]+)" source_line=(\d+)', lines[ln])
    assert field(text, "Source") == f"`{m.group(1)}:{m.group(2)}`"
    assert field(text, "Shape") == "`s64[32]{0}`"
    assert field(text, "Bytes") == "256 bytes"


async def test_hover_shape_and_nothing(client):
    u = open_doc(client, SEED004)
    lines = lines_of(SEED004)
    ln, col = find(lines, "f32[]{:T(128)}")
    text = await hover_at(client, u, ln, col + 2)
    assert field(text, "Bytes") == "4 bytes" and field(text, "Padded") == "512 bytes"
    assert await hover_at(client, u, 0, 0) is None  # "BufferAssignment:" has nothing to hover


async def test_definition_value_to_hlo_and_type_definition(client):
    u = open_doc(client, VALUES)
    lines = lines_of(VALUES)
    ln, col = find(lines, "<21 cond.1.clone{0} (phi) @0>")
    defs = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, ln, col + 5)))
    assert defs[0].uri == HLO.resolve().as_uri()
    assert defs[0].range.start.line == instruction_lines(HLO.read_text())["cond.1.clone"]
    types = await client.text_document_type_definition_async(lsp.TypeDefinitionParams(**tdp(u, ln, col + 5)))
    ba_lines = lines_of(BA)
    v_line = next(i for i, x in enumerate(ba_lines) if "cond.1.clone{0}" in x)
    header = max(i for i in range(v_line) if ba_lines[i].startswith("allocation "))
    assert types[0].uri == BA.resolve().as_uri() and types[0].range.start.line == header


async def test_definition_old_layout_goes_to_from_instruction(client):
    u = open_doc(client, SEED002)
    lines = lines_of(SEED002)
    ln, col = find(lines, "    fusion.10{0}:")
    defs = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, ln, col + 6)))
    target = defs[0].range.start.line
    assert lines[target].startswith(" from instruction:") and "%fusion.10 = " in lines[target]


async def test_definition_operand_computation_parameter_and_frame(client):
    u = open_doc(client, HLO)
    lines = lines_of(HLO)
    instr = instruction_lines(HLO.read_text())
    ln, col = find(lines, "%cond.1.clone = ")
    op = lines[ln].index("%tuple.2", col) + 2
    d = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, ln, op)))
    assert d[0].range.start.line == instr["tuple.2"]
    callee = lines[ln].index("%region_1.2") + 2
    d = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, ln, callee)))
    header = next(i for i, x in enumerate(lines) if x.startswith("%region_1.2 "))
    assert d[0].range.start.line == header
    # parameter(0) of region_1.2 (branch 1) -> the conditional's operand 2 (operand 0 selects the branch)
    pl, pc = find(lines, "%x.1 = ", header)
    d = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, pl, pc + 2)))
    operand2 = [m.start(1) for m in re.finditer(r"%([\w.\-]+)", lines[ln][lines[ln].index("conditional(") :])][2]
    assert d[0].range.start.line == ln
    assert d[0].range.start.character == lines[ln].index("conditional(") + operand2
    # stack_frame_id -> the FileLocations row (programs/cond_switch.py is not on disk here)
    sf = lines[ln].index("stack_frame_id=") + len("stack_frame_id=")
    d = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, ln, sf)))
    assert lines[d[0].range.start.line].startswith("3 {file_name_id=")


async def test_references_value_across_files(client):
    u = open_doc(client, LIVE)
    lines = lines_of(LIVE)
    ln, col = find(lines, "    tuple.2{}:")
    refs = await client.text_document_references_async(
        lsp.ReferenceParams(**tdp(u, ln, col + 6), context=lsp.ReferenceContext(include_declaration=True))
    )
    uris = {r.uri for r in refs}
    for f in (BA, VALUES, LIVE, HLO):
        assert f.resolve().as_uri() in uris, f.name
    expected_live = sum(1 for x in lines if re.match(r"^\s+(\d+:)?tuple\.2(\{\})?(:|$)", x))
    assert sum(1 for r in refs if r.uri == u) >= expected_live
    no_decl = await client.text_document_references_async(
        lsp.ReferenceParams(**tdp(u, ln, col + 6), context=lsp.ReferenceContext(include_declaration=False))
    )
    assert len(no_decl) < len(refs)


async def test_references_computation_callers_and_call_hierarchy(client):
    u = open_doc(client, HLO)
    lines = lines_of(HLO)
    header = next(i for i, x in enumerate(lines) if x.startswith("%fused_computation "))
    refs = await client.text_document_references_async(
        lsp.ReferenceParams(**tdp(u, header, 3), context=lsp.ReferenceContext(include_declaration=False))
    )
    callers = [
        i for i, x in enumerate(lines) if "calls=%fused_computation," in x or x.endswith("calls=%fused_computation")
    ]
    assert sorted(r.range.start.line for r in refs) == callers
    items = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(**tdp(u, header, 3)))
    incoming = await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(item=items[0]))
    assert [c.from_.name for c in incoming] == ["region_0.1"]
    entry = next(i for i, x in enumerate(lines) if x.startswith("ENTRY "))
    items = await client.text_document_prepare_call_hierarchy_async(lsp.CallHierarchyPrepareParams(**tdp(u, entry, 8)))
    outgoing = await client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(item=items[0]))
    called = set(
        re.findall(r"(?:calls|branch_computations)=\{?%([\w.]+)(?:, %([\w.]+))?", "\n".join(lines[entry:]))
        .__iter__()
        .__next__()
    )
    assert {c.to.name for c in outgoing} >= {x for x in called if x}


async def test_document_symbols_folding_highlight(client):
    u = open_doc(client, HLO)
    lines = lines_of(HLO)
    syms = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    module = syms[0]
    assert module.name == "jit_piecewise"
    comp_names = [c.name for c in module.children]
    assert comp_names == [re.match(r"(?:ENTRY )?%([^ ]+)", x).group(1) for x in lines if re.match(r"^(ENTRY )?%", x)]
    entry = module.children[-1]
    assert [c.name for c in entry.children] == [
        re.match(r"\s+(?:ROOT )?%([^ ]+)", x).group(1) for x in lines[entry.range.start.line + 1 : entry.range.end.line]
    ]
    folds = await client.text_document_folding_range_async(
        lsp.FoldingRangeParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    starts = {f.start_line for f in folds}
    assert all(i in starts for i, x in enumerate(lines) if re.match(r"^(ENTRY )?%.*\{$", x))
    ln, col = find(lines, "%tuple.2 = ")
    hl = await client.text_document_document_highlight_async(lsp.DocumentHighlightParams(**tdp(u, ln, col + 2)))
    assert sum(1 for h in hl if h.kind == lsp.DocumentHighlightKind.Write) == 1
    assert sum(1 for h in hl if h.kind == lsp.DocumentHighlightKind.Read) == lines[ln + 1 :].__str__().count(
        "%tuple.2,"
    ) + lines[ln + 1 :].__str__().count("%tuple.2)")


async def test_buffer_symbols_and_peak_links(client):
    u = open_doc(client, BA)
    syms = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    headers = [x for x in lines_of(BA) if x.startswith("allocation ")]
    assert [s.name for s in syms] == [h.split(":")[0] for h in headers]
    lu = open_doc(client, LIVE)
    links = await client.text_document_document_link_async(
        lsp.DocumentLinkParams(text_document=lsp.TextDocumentIdentifier(uri=lu))
    )
    lines = lines_of(LIVE)
    peak_entries = [i for i, x in enumerate(lines) if re.match(r"^    \S+: \d+ bytes", x)]
    assert sorted({lk.range.start.line for lk in links}) == peak_entries
    assert all(lk.target.startswith(HLO.resolve().as_uri() + "#L") for lk in links)


async def test_workspace_symbols(client):
    open_doc(client, HLO)
    res = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="region_1"))
    assert "region_1.2" in [s.name for s in res]
    res = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="allocation 3"))
    assert any(s.name == "allocation 3" and s.location.uri == BA.resolve().as_uri() for s in res)


async def test_nothing_under_cursor_and_unknown_method(client):
    u = open_doc(client, HLO)
    d = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, 1, 0)))
    assert d is None
    with pytest.raises(Exception):  # noqa: B017 - whatever error type the client raises for MethodNotFound
        await client.protocol.send_request_async("hlo/noSuchMethod", {})
