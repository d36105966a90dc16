"""Read-only by design: the server and `hlo-lsp check` never write, rename or delete a user's file, and sibling
discovery never leaves the opened document's folder.

A real dump folder is copied to a temporary directory; the real server then opens every file, sends every
request it offers (rename included: a successful one on a before-optimizations module, a refused one on an
after-optimizations module whose buffer files name its instructions), edits, saves and closes documents, and runs
the timeline command; `hlo-lsp check` runs over the folder too. Before and after, every file's bytes and
mtime (ns) and the folder listing are compared. Sibling discovery is checked in-process by recording every
path the core opens while symlinks and ``..`` point out of the folder.
"""

from __future__ import annotations

import builtins
import os
import shutil
import subprocess
import sys
from pathlib import Path

from lsprotocol import types as lsp

from hlo_lsp.core import kinds
from hlo_lsp.core.workspace import Workspace
from tests.lsp.util import uri
from tests.robustness.cases import SPLIT_DIR, SPLIT_STEM
from tests.robustness.drive import drive_core
from tests.robustness.server_drive import Stats, alive, ask, drive_server


def snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """path -> (mtime_ns, bytes) of every file under ``folder`` (symlinks as their own lstat)."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for n in sorted(dirs + files):
            p = Path(root) / n
            st = os.lstat(p)
            data = os.readlink(p).encode() if p.is_symlink() else (p.read_bytes() if p.is_file() else b"<dir>")
            out[str(p.relative_to(folder))] = (st.st_mtime_ns, data)
    return out


def _copy_dump(tmp_path: Path) -> Path:
    folder = tmp_path / "dump"
    shutil.copytree(SPLIT_DIR, folder)
    for p in folder.iterdir():  # old timestamps, so that any rewrite would show in mtime
        os.utime(p, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    return folder


async def test_full_server_run_changes_no_file(client, tmp_path):
    folder = _copy_dump(tmp_path)
    before = snapshot(folder)
    stats = Stats()
    files = sorted(p for p in folder.iterdir() if p.suffix == ".txt")
    renamed = refused = 0
    for path in files:
        text = path.read_text()
        u = uri(path)
        client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=u, language_id="hlo", version=1, text=text)
            )
        )
        await drive_server(client, u, text.split("\n"), stats, limit=4)
        lines = text.split("\n")
        for ln, line in enumerate(lines):  # rename every instruction-looking name once until one succeeds
            col = line.find("%")
            if col < 0 or "=" not in line:
                continue
            edit = await ask(
                stats,
                "rename",
                client.text_document_rename_async(
                    lsp.RenameParams(
                        text_document=lsp.TextDocumentIdentifier(uri=u),
                        position=lsp.Position(line=ln, character=col + 1),
                        new_name="renamed_by_test",
                    )
                ),
            )
            if isinstance(edit, lsp.WorkspaceEdit):
                renamed += 1
                assert edit.changes or edit.document_changes
                break
            refused += 1
            if refused > 200:
                break
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=2),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text + "\n// edited\n")],
            )
        )
        client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u), text=text)
        )
        await ask(
            stats,
            "timeline",
            client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(command="hlo.showMemoryTimeline", arguments=[u, "html"])
            ),
        )
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
    assert await alive(client, stats)
    assert stats.hangs == []
    assert renamed >= 1 and refused >= 1, (renamed, refused)  # both rename paths were exercised
    assert snapshot(folder) == before


def test_check_changes_no_file(tmp_path):
    folder = _copy_dump(tmp_path)
    before = snapshot(folder)
    for fmt in ("text", "json"):
        r = subprocess.run(
            [sys.executable, "-m", "hlo_lsp", "check", "--format", fmt, str(folder)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode in (0, 1), r.stderr
    assert snapshot(folder) == before


def _record_opens(monkeypatch) -> list[str]:
    opened: list[str] = []
    real_open = builtins.open

    def spy(file, *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)):
            opened.append(os.path.realpath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    return opened


def test_sibling_discovery_never_leaves_the_folder(tmp_path, monkeypatch):
    """Siblings that are symlinks out of the folder (to a file, to a parent's file) and a document path written
    with ``..`` are never read; only files whose real path is in the document's own folder are."""
    inside = tmp_path / "inside"
    outside = tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    hlo = inside / f"{SPLIT_STEM}.txt"
    shutil.copy(SPLIT_DIR / hlo.name, hlo)
    for suffix in ("-buffer-assignment.txt", "-live-range.txt"):
        shutil.copy(SPLIT_DIR / f"{SPLIT_STEM}{suffix}", outside / f"{SPLIT_STEM}{suffix}")
    os.symlink(outside / f"{SPLIT_STEM}-buffer-assignment.txt", inside / f"{SPLIT_STEM}-buffer-assignment.txt")
    os.symlink(f"../outside/{SPLIT_STEM}-live-range.txt", inside / f"{SPLIT_STEM}-live-range.txt")
    shutil.copy(SPLIT_DIR / f"{SPLIT_STEM}-buffer-assignment-values.txt", inside)  # a genuine sibling
    assert set(kinds.sibling_paths(hlo)) == {"hlo", "values"}
    dotted = str(inside / ".." / "inside" / hlo.name)
    opened = _record_opens(monkeypatch)
    for path in (str(hlo), dotted):
        ws = Workspace()
        assert drive_core(path, None, ws=ws, limit=4) == []
        b = ws.bundle(path)
        assert kinds.ASSIGNMENT not in b.buffer_docs and kinds.LIVE_RANGE not in b.buffer_docs
    data_files = [p for p in opened if p.endswith(".txt")]
    assert data_files, "the spy saw no file read"
    assert all(Path(p).parent == inside.resolve() for p in data_files), data_files
    assert str(outside.resolve()) not in " ".join(opened)
