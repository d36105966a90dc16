"""XLA's out-of-memory report as a document in the real server (issue 20), on the real TPU reports of
tests/data/oom with the dumps of their compilations: told by its text (opened as ``plaintext``, under any name,
also inside a longer log), each ``XLA label`` name linked to its instruction's line in the after-optimizations
HLO (the contract), go-to-definition to the instruction and its allocation header, a hover with the report's
fields and the dump's value facts, the two lists in the outline, no diagnostics; the dump folder found beside the
report, or set by ``hlo.oom.dumpFolder``. Expected lines and allocations come from the files' text with this
file's own regexes."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

from lsprotocol import types as lsp

from tests.fixtures import DATA
from tests.lsp.util import open_doc, pos, uri

OOM = DATA / "oom"
LONG = OOM / "long_1dev" / "oom-long-1dev.log"
SHORT = OOM / "short" / "oom-short.log"
LABEL = re.compile(r"^\s*XLA label: ([\w.\-]+) = ")
ENTRY = re.compile(r"^\s*(\d+)\. Size: (\S+)\s*$")
SECTION = re.compile(r"^\s*Largest program (allocations|arguments and outputs) in (\w+):\s*$")


def _module(folder: Path) -> Path:
    return next(folder.glob("*after_optimizations.txt"))


def _defining_line(module: Path, name: str) -> int:
    lines = module.read_text().split("\n")
    return next(i for i, x in enumerate(lines) if re.match(rf"\s*(ROOT )?%{re.escape(name)} = ", x))


def _labels(text: str) -> list[tuple[int, str, int]]:
    """(line, name, column) of every ``XLA label`` that names an instruction."""
    out = []
    for i, x in enumerate(text.split("\n")):
        m = LABEL.match(x)
        if m:
            out.append((i, m.group(1), m.start(1)))
    return out


def _td(u: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=u)


async def _links(client, u: str) -> list[lsp.DocumentLink]:
    return await client.text_document_document_link_async(lsp.DocumentLinkParams(text_document=_td(u))) or []


def _check_links(links, text: str, module: Path) -> None:
    by_line = {ln.range.start.line: ln for ln in links}
    labels = _labels(text)
    assert labels and len(links) == len(labels)
    for line, name, col in labels:
        link = by_line[line]
        assert (link.range.start.character, link.range.end.character) == (col, col + len(name))
        target, _, frag = link.target.partition("#L")
        assert target == uri(module)
        assert int(frag.split(",")[0]) - 1 == _defining_line(module, name), (name, frag)


async def test_a_saved_report_links_each_label_to_its_instruction(client):
    u = open_doc(client, LONG)  # plaintext, name says nothing: the text does
    _check_links(await _links(client, u), LONG.read_text(), _module(LONG.parent))
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_td(u)))


async def test_definition_hover_outline_and_no_diagnostics(client):
    u = open_doc(client, LONG)
    await _links(client, u)  # waits until the dump is read
    text = LONG.read_text()
    lines = text.split("\n")
    module = _module(LONG.parent)
    assignment = next(LONG.parent.glob("*-buffer-assignment.txt"))
    line, name, col = _labels(text)[1]
    got = await client.text_document_definition_async(
        lsp.DefinitionParams(text_document=_td(u), position=pos(line, col))
    )
    targets = {(Path(x.uri.removeprefix("file://")).name, x.range.start.line) for x in got}
    assert (module.name, _defining_line(module, name)) in targets
    alloc_lines = [ln for p, ln in targets if p == assignment.name]
    assert len(alloc_lines) == 1
    header = assignment.read_text().split("\n")[alloc_lines[0]]
    index = re.match(r"allocation (\d+): ", header).group(1)
    h = await client.text_document_hover_async(lsp.HoverParams(text_document=_td(u), position=pos(line, col + 1)))
    value = h.contents.value
    assert name in value and f"**Allocation** {index} " in value and "**Live range**" in value, value
    block = assignment.read_text().split("\n")[alloc_lines[0] + 1 :]
    others = next((i for i, x in enumerate(block) if not x.startswith(" value:")), len(block)) - 1
    assert f"**Shares it with** {others} other value" in value, value
    size_line = next(i for i in range(line, -1, -1) if ENTRY.match(lines[i]))
    h2 = await client.text_document_hover_async(lsp.HoverParams(text_document=_td(u), position=pos(size_line, 4)))
    assert h2 is not None and name in h2.contents.value  # anywhere on the entry
    arg_line = next(i for i, x in enumerate(lines) if x.strip() == "XLA label: Argument 1 index {}")
    h3 = await client.text_document_hover_async(lsp.HoverParams(text_document=_td(u), position=pos(arg_line, 8)))
    assert "**Donation**" in h3.contents.value and "donate_argnums" in h3.contents.value, h3.contents.value
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=_td(u)))
    want: dict[str, int] = {}
    section = None
    for x in lines:
        sm = SECTION.match(x)
        if sm:
            section = f"Largest program {sm.group(1)} in {sm.group(2)}"
        elif section and ENTRY.match(x):
            want[section] = want.get(section, 0) + 1
    assert {s.name: len(s.children) for s in symbols} == want
    report = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=_td(u)))
    assert list(report.items) == []
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_td(u)))


async def test_a_report_inside_a_longer_log_beside_its_dump_folder(client, tmp_path):
    dump = tmp_path / "dump"
    shutil.copytree(LONG.parent, dump, ignore=shutil.ignore_patterns("*.log"))
    noise = [f"I1124 07:00:{i:02d}.000000 12345 trainer.py:{100 + i}] step {i} loss 0.{i:03d}" for i in range(60)]
    log = tmp_path / "train-run-7.out"
    log.write_text("\n".join(noise + LONG.read_text().split("\n") + noise))
    u = open_doc(client, log)
    _check_links(await _links(client, u), log.read_text(), _module(dump))  # the dump in a folder beside it
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_td(u)))


async def test_the_short_form_set_against_the_dumps_total(client):
    u = open_doc(client, SHORT)
    await _links(client, u)
    lines = SHORT.read_text().split("\n")
    ln = next(i for i, x in enumerate(lines) if "HLO temporaries (" in x)
    report = next(SHORT.parent.glob("*-memory-usage-report.txt")).read_text()
    total = re.search(r"^Total bytes: (\d+) ", report, re.M).group(1)
    h = await client.text_document_hover_async(lsp.HoverParams(text_document=_td(u), position=pos(ln, 2)))
    assert h is not None and total in h.contents.value and "22.00G" in h.contents.value, h
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_td(u)))


async def test_the_dump_folder_setting(client, tmp_path):
    log = tmp_path / "pasted.txt"
    log.write_text(LONG.read_text())  # alone: no dump beside it
    u = open_doc(client, log)
    assert await _links(client, u) == []
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"hlo": {"oom": {"dumpFolder": str(LONG.parent)}}})
    )
    for _ in range(100):
        links = await _links(client, u)
        if links:
            break
        await asyncio.sleep(0.1)
    _check_links(links, log.read_text(), _module(LONG.parent))
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"hlo": {"oom": {"dumpFolder": ""}}})
    )
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_td(u)))


async def test_the_failed_compilation_among_several_dumps(client, tmp_path):
    """A log beside a dump folder of other programs and two OOM dumps in folders of their own: each report is
    tied to its own compilation (the module defining its labels; for the short form, which names none, the one
    whose memory-usage report's Total bytes is its HLO temporaries)."""
    shutil.copytree(DATA / "jax-cpu" / "cond_switch", tmp_path, dirs_exist_ok=True)  # other modules beside it
    for name in ("long_1dev", "short"):
        shutil.copytree(OOM / name, tmp_path / f"dump_{name}", ignore=shutil.ignore_patterns("*.log", "*.oom_*"))
    long_log, short_log = tmp_path / "long.log", tmp_path / "short.log"
    long_log.write_text(LONG.read_text())
    short_log.write_text(SHORT.read_text())
    u = open_doc(client, long_log)
    _check_links(await _links(client, u), LONG.read_text(), _module(tmp_path / "dump_long_1dev"))
    s = open_doc(client, short_log)
    await _links(client, s)
    ln = next(i for i, x in enumerate(SHORT.read_text().split("\n")) if "HLO temporaries (" in x)
    h = await client.text_document_hover_async(lsp.HoverParams(text_document=_td(s), position=pos(ln, 2)))
    assert f"dump_short/{_module(tmp_path / 'dump_short').name}" in h.contents.value, h.contents.value
    assert "23623441408" in h.contents.value
    for d in (u, s):
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=_td(d)))


def test_prose_about_reports_is_not_a_report():
    """Only XLA's message lines with their numbers make a report: this project's own docs, which quote them, and
    every real dump in tests/data are not taken for one; the real reports are, also after 60 lines of a log."""
    from hlo_lsp.core.memory.oom import looks_like_oom

    root = Path(__file__).resolve().parents[2]
    for doc in (
        root / "README.md",
        root / "editors" / "nvim" / "doc" / "hlo.txt",
        root / "editors" / "vscode" / "README.md",
    ):
        assert not looks_like_oom(doc.read_text()), doc
    dumps = sorted(p for p in DATA.rglob("*.txt") if p.is_file())
    assert len(dumps) > 100
    assert [p for p in dumps if looks_like_oom(p.read_text(errors="replace"))] == []
    noise = "\n".join(f"I1124 step {i}" for i in range(60))
    for log in (LONG, SHORT, *sorted(OOM.rglob("*.oom_top_memory_consuming_instructions"))):
        assert looks_like_oom(log.read_text()), log
        if log.suffix == ".log":
            assert looks_like_oom(f"{noise}\n{log.read_text()}"), log
