"""The editors' *compare peaks* and *rank modules* commands over the real server (issue 20): ``hlo.peakDiff``
returns the peak diff of two dumps as a read-only document whose links land on each value's instruction in the old
and the new module, or of a folder's two most recently written modules; ``hlo.rankModules`` ranks a folder.
Expected lines come from the module text with this file's own regex."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.fixtures import DATA
from tests.lsp.util import uri

D = DATA / "diff" / "jax-0.10.2"


def _module(folder: Path) -> Path:
    return next(folder.glob("*after_optimizations.txt"))


async def _run(client, command: str, *args):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=command, arguments=list(args)))


def _defines(path: Path, line: int, name: str) -> bool:
    text = path.read_text().split("\n")[line - 1]
    return re.match(rf"\s*(ROOT )?%{re.escape(name)} = ", text) is not None


@pytest.mark.parametrize("style", ["uri", "path"])
async def test_peak_diff_links_land_on_both_sides(client, style):
    old, new = _module(D / "base"), _module(D / "moved")
    extra = [{"links": "path"}] if style == "path" else []
    got = await _run(client, "hlo.peakDiff", uri(old), uri(new), *extra)
    text = got["text"]
    assert "moved" in text and " -> " in got["title"]
    pattern = (
        r"^    (old|new) ([\w.\-]+)\{[\d,]*\} .*  (file://\S+)#L(\d+)$"
        if style == "uri"
        else r"^    (old|new) ([\w.\-]+)\{[\d,]*\} .*  (/\S+):(\d+)$"
    )
    links = re.findall(pattern, text, re.M)
    assert len(links) >= 10, text[:800]
    for side, name, target, line in links:
        path = Path(unquote(urlparse(target).path)) if style == "uri" else Path(target)
        assert path == (old if side == "old" else new)
        assert _defines(path, int(line), name), (side, name, line)


async def test_peak_diff_of_a_folders_two_newest_modules(client, tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for src, dst in ((D / "base", a), (D / "bf16", b), (D / "moved", c)):
        shutil.copytree(src, dst)
    for i, folder in enumerate((c, a, b)):  # written order: c, then a, then b
        for f in folder.iterdir():
            os.utime(f, (1_700_000_000 + i * 100, 1_700_000_000 + i * 100))
    got = await _run(client, "hlo.peakDiff", uri(tmp_path))
    head = got["text"].split("\n")
    assert head[1] == f"old: {uri(_module(a))}" and head[2] == f"new: {uri(_module(b))}"
    with pytest.raises(JsonRpcException, match="fewer than two modules"):
        await _run(client, "hlo.peakDiff", uri(a))


async def test_rank_modules_of_a_folder(client, tmp_path):
    folder = DATA / "jax-cpu"
    got = await _run(client, "hlo.rankModules", uri(folder))
    lines = got["text"].split("\n")
    n = len(list(folder.rglob("*-buffer-assignment.txt")))
    assert lines[0].startswith(f"{n} modules under ")
    ranked = re.findall(r"^\s+\d+\. .*  (file://\S+)$", got["text"], re.M)
    assert len(ranked) == n and all(Path(unquote(urlparse(u).path)).is_file() for u in ranked)
    with pytest.raises(JsonRpcException, match="no module with buffer files"):
        await _run(client, "hlo.rankModules", uri(tmp_path))
