"""The lenses of a buffer file's own text written straight as JSON (`handlers_document._file_lens_json`) equal
the same lenses made as `Lens` objects and converted as every other lens is (`_lens_json`), in every position
encoding, on a header line holding a non-ASCII character after its ``allocation N`` token too."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import lens
from hlo_lsp.lsp.handlers_document import _file_lens_json, _lens_json
from tests.core.test_buffers_patch import FILES


def _parsed(result) -> list:
    return json.loads(b"".join(result.parts))


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("kind", ["assignment", "live-range"])
def test_file_lenses_written_straight_equal_the_lens_objects(tmp_path, encoding, kind):
    text = FILES[kind].read_text()
    if kind == "assignment":
        lines = text.split("\n")
        k = next(i for i, x in enumerate(lines) if x.startswith("allocation ") and x.endswith(":"))
        lines[k] = lines[k][:-1] + ", output shape is |f32[2]{0} é|:"  # XLA's optional property, with an é in it
        text = "\n".join(lines)
    path = str(tmp_path / FILES[kind].name)
    ws = Workspace()
    ws.open(path, text, 1)
    ls = SimpleNamespace(
        ws=ws, workspace=SimpleNamespace(position_encoding=encoding), lines_of=lambda p: ws.document(p).lines
    )
    fast = _parsed(_file_lens_json(ls, path))
    assert fast == _parsed(_lens_json(ls, path, lens.file_lenses(ws, path)))
    assert fast  # an assignment file's allocations, a live-range file's peak timeline
