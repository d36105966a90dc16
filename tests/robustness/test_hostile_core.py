"""No crash, no hang (core API): every hostile input of issue 8 through every feature of `hlo_lsp.ide`.

Each input is opened under several file names (HLO, split buffer files, plain .txt), since the kind follows the
name first; `drive.drive_core` calls every feature at a spread of cursors and returns the exceptions raised. The
deep-nesting inputs run at Python's default recursion limit, so recursion would fail them. Specific checks:
sizes beyond int64 are diagnostics with short messages, never huge numbers; XLA's abort cases get errors.
"""

from __future__ import annotations

import re
import sys

import pytest

from hlo_lsp.core.workspace import Workspace
from hlo_lsp.ide import hover, inlay
from hlo_lsp.ide.diagnostics import document_diagnostics
from tests.robustness.cases import (
    BA_SEED,
    DIMS_100K,
    DOC_NAMES,
    HLO_SEED,
    HUGE_INT,
    SPLIT_DIR,
    SPLIT_STEM,
    TPU_SEED,
    prefixes,
    split_files,
    text_cases,
)
from tests.robustness.drive import drive_core

CASES = text_cases()
LONG_DIGITS = re.compile(r"\d{41}")


@pytest.fixture(autouse=True)
def default_recursion_limit():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(old)


@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_every_feature_answers(tmp_path, name, text):
    for doc in DOC_NAMES:
        errors = drive_core(str(tmp_path / doc), text, limit=6)
        assert errors == [], f"{name} as {doc}:\n" + "\n".join(errors[:3])


def _diags(text: str, name: str = "m.hlo"):
    ws = Workspace()
    path = f"/nonexistent-dir/{name}"
    ws.open(path, text, 1)
    return ws, path, document_diagnostics(ws, path)


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n")


@pytest.mark.parametrize("case", ["int-30-digits", "dims-100k"])
def test_sizes_beyond_int64_are_diagnostics(case):
    text = dict(CASES)[case]
    ws, path, diags = _diags(text)
    line = _line_of(text, "%p = f32[")
    big = [d for d in diags if d.range.start_line == line and d.severity.label == "error"]
    assert big, f"no error on line {line}: {[(d.code, d.message[:80]) for d in diags]}"
    for d in diags:
        assert len(d.message) < 500 and not LONG_DIGITS.search(d.message), d.message[:200]
    h = hover.hover(ws, path, line, text.split("\n")[line].index("%p") + 1)
    assert h is None or not LONG_DIGITS.search(h.markdown.replace(DIMS_100K, "").replace(HUGE_INT, ""))
    for hint in inlay.inlay_hints(ws, path, 0, 10):
        assert not LONG_DIGITS.search(hint.label) and len(hint.label) < 200


def test_huge_tuple_index_is_out_of_range_not_a_crash():
    text = dict(CASES)["int-5000-digits"]
    _, _, diags = _diags(text)
    line = _line_of(text, "get-tuple-element")
    assert any(d.range.start_line == line for d in diags), [(d.code, d.message[:80]) for d in diags]
    assert all(len(d.message) < 500 for d in diags)


@pytest.mark.parametrize(
    "case,needle", [("xla-abort-parameter-2", "parameter(2)"), ("xla-abort-reshape-count", "reshape(")]
)
def test_inputs_xla_aborts_on_get_an_error(case, needle):
    text = dict(CASES)[case]
    _, _, diags = _diags(text)
    line = _line_of(text, needle)
    assert any(d.range.start_line == line and d.severity.label == "error" for d in diags), [
        (d.range.start_line, d.code, d.message) for d in diags
    ]


@pytest.mark.parametrize(
    "path", [HLO_SEED, BA_SEED, TPU_SEED] + list(split_files().values()), ids=lambda p: p.name[-40:]
)
def test_every_prefix_of_a_real_dump(tmp_path, path):
    """Every line prefix (and 300 character prefixes) of real dumps: analysis and diagnostics never fail; every
    20th prefix runs every feature."""
    text = path.read_text()
    doc = str(tmp_path / path.name)
    line_cuts = [text[: m.end()] for m in re.finditer("\n", text)]
    ws = Workspace()
    for i, prefix in enumerate(line_cuts + prefixes(text, 300)):
        if i % 20 == 0:
            errors = drive_core(doc, prefix, limit=2)
        else:
            ws.open(doc, prefix, i)
            errors = []
            try:
                document_diagnostics(ws, doc)
            except Exception as e:  # noqa: BLE001
                errors = [repr(e)]
        assert errors == [], f"prefix of {len(prefix)} chars:\n" + "\n".join(errors[:2])


def _split_copy(tmp_path, mutate: dict[str, str | None]):
    """The cond_switch split set copied into tmp_path, with files replaced (text) or left out (None)."""
    out = {}
    for suffix, src in split_files().items():
        dst = tmp_path / src.name
        text = mutate.get(suffix, src.read_text())
        if text is not None:
            dst.write_text(text)
            out[suffix] = dst
    return out


DISAGREE = {
    "missing-values": {"-buffer-assignment-values.txt": None},
    "missing-assignment": {"-buffer-assignment.txt": None},
    "missing-hlo": {"": None},
    "only-live-range": {
        "": None,
        "-buffer-assignment.txt": None,
        "-buffer-assignment-values.txt": None,
        "-memory-usage-report.txt": None,
    },
    "sizes-disagree": {
        "-buffer-assignment.txt": re.sub(
            r"size=(\d+)", r"size=\g<1>7", (SPLIT_DIR / f"{SPLIT_STEM}-buffer-assignment.txt").read_text()
        )
    },
    "ranges-disagree": {
        "-live-range.txt": re.sub(
            r":(\d+)-(\d+)$", r":\2-\1", (SPLIT_DIR / f"{SPLIT_STEM}-live-range.txt").read_text(), flags=re.M
        )
    },
    "names-disagree": {"": (SPLIT_DIR / f"{SPLIT_STEM}.txt").read_text().replace("%", "%z")},
    "sibling-is-other-module": {"-buffer-assignment-values.txt": HLO_SEED.read_text()},
    "sibling-empty": {"-live-range.txt": "", "-buffer-assignment.txt": ""},
    "sibling-garbage": {"-buffer-assignment-values.txt": "\x01\x02garbage{{{(((" * 100},
}


@pytest.mark.parametrize("case", list(DISAGREE))
def test_split_sets_whose_siblings_disagree_or_are_missing(tmp_path, case):
    files = _split_copy(tmp_path, DISAGREE[case])
    ws = Workspace()
    for path in files.values():
        errors = drive_core(str(path), None, ws=ws, limit=4)
        assert errors == [], f"{case}, {path.name}:\n" + "\n".join(errors[:2])


def test_sibling_with_bad_bytes_on_disk(tmp_path):
    files = _split_copy(tmp_path, {})
    (files["-buffer-assignment-values.txt"]).write_bytes(b"Used values:\n\xff\xfe\x00\x00")
    (files["-live-range.txt"]).write_bytes(b"\xef\xbb\xbf" + files["-live-range.txt"].read_bytes())
    ws = Workspace()
    for path in files.values():
        assert drive_core(str(path), None, ws=ws, limit=4) == []
