"""Files a dump names (FileNames, source_file) are offered as a definition only when they may be (issue 15:
definition on an `op_name` whose FileNames entry said `/etc/shadow` opened and read it, as did `../` paths,
`/proc/self/environ`, a symlink leading out of the dump folder and another module, which was parsed and kept).

The rule: an existing regular file whose real path is a `.py` file or lies inside the workspace folders or the
dump's own folder; its range comes from the dump, never from reading it. Anything else: the dump's own
`FileLocations` row."""

from __future__ import annotations

import os
import re
import shutil

import pytest
from lsprotocol import types as lsp

from tests.fixtures import DATA
from tests.lsp.util import open_doc, tdp

SRC = DATA / "jax-cpu" / "mlp_sgd" / "module_0002.jit_predict.cpu_after_optimizations.txt"
SECRET_LINE = "short"  # shorter than the dump's column range: a range clamped to it would show the file was read


def _expected_row(text: str, line_no: int) -> tuple[int, int, int]:
    """(FileLocations row line, column, end column) of the innermost frame of the instruction at ``line_no``."""
    lines = text.split("\n")
    frame = re.search(r"stack_frame_id=(\d+)", lines[line_no]).group(1)
    loc = re.search(rf"^{frame} {{file_location_id=(\d+)", text, re.M).group(1)
    start = lines.index("FileLocations")
    row = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(f"{loc} {{"))
    cols = re.search(r"column=(\d+) end_column=(\d+)", lines[row])
    return row, int(cols.group(1)) - 1, int(cols.group(2)) - 1


def _dump(folder, name: str) -> tuple:
    """The dump copied into ``folder`` with FileNames entry 1 set to ``name``: (path, text, line, col) where
    (line, col) is inside the `op_name` of an instruction with a stack frame."""
    folder.mkdir(parents=True, exist_ok=True)
    text = SRC.read_text().replace('1 "programs/mlp_sgd.py"', f'1 "{name}"', 1)
    path = folder / SRC.name
    path.write_text(text)
    lines = text.split("\n")
    ln = next(i for i, x in enumerate(lines) if "stack_frame_id=" in x and "op_name=" in x)
    return path, text, ln, lines[ln].index("op_name=") + 10


@pytest.fixture
def outside(tmp_path):
    """A folder outside the dump's, with a secret (a regular file) and a second module."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text(SECRET_LINE + "\n")
    shutil.copy(SRC, out / "other.cpu_after_optimizations.txt")
    return out


async def _definition(client, path, text, ln, col):
    u = open_doc(client, path, text=text)
    got = await client.text_document_definition_async(lsp.DefinitionParams(**tdp(u, ln, col)))
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=u)))
    return u, got


@pytest.mark.parametrize("case", ["absolute", "dotdot", "proc", "symlink_out", "other_module", "fifo"])
async def test_a_file_outside_the_roots_is_text_only(client, tmp_path, outside, case):
    dump_dir = tmp_path / "dumps" / case / "a" / "b"
    dump_dir.mkdir(parents=True)
    depth = len(dump_dir.relative_to("/").parts)
    name = {
        "absolute": str(outside / "secret.txt"),
        "dotdot": "../" * depth + str(outside / "secret.txt").lstrip("/"),
        "proc": "/proc/self/environ",
        "symlink_out": "link.txt",
        "other_module": str(outside / "other.cpu_after_optimizations.txt"),
        "fifo": "pipe.py",  # a FIFO: opening it would block the server
    }[case]
    if case == "symlink_out":
        os.symlink(outside / "secret.txt", dump_dir / "link.txt")
    if case == "fifo":
        os.mkfifo(dump_dir / "pipe.py")
    path, text, ln, col = _dump(dump_dir, name)
    u, got = await _definition(client, path, text, ln, col)
    row, _, _ = _expected_row(text, ln)
    assert got is not None and len(got) == 1
    assert got[0].uri == u and got[0].range.start.line == row  # the dump's own FileLocations row


@pytest.mark.parametrize("case", ["python_anywhere", "inside_dump_folder"])
async def test_an_allowed_file_gets_the_dumps_range_without_being_read(client, tmp_path, outside, case):
    dump_dir = tmp_path / "dumps" / case
    if case == "python_anywhere":
        target = outside / "prog.py"
    else:
        target = dump_dir / "notes.txt"
    dump_dir.mkdir(parents=True)
    path, text, ln, col = _dump(dump_dir, str(target))
    row, c0, c1 = _expected_row(text, ln)
    line = int(re.search(r"line=(\d+)", text.split("\n")[row]).group(1))
    target.write_text("\n".join([SECRET_LINE] * (line + 2)))  # every line shorter than the dump's columns
    assert c1 > len(SECRET_LINE)
    _, got = await _definition(client, path, text, ln, col)
    assert got is not None and len(got) == 1
    assert got[0].uri == target.resolve().as_uri()
    r = got[0].range
    assert (r.start.line, r.start.character, r.end.line, r.end.character) == (line - 1, c0, line - 1, c1)
