"""``hlo-lsp peak DIR`` (issue 20): every module with buffer files under a folder, ranked by XLA's peak and by the
bytes reserved at the allocated peak. Expected values from the dump text: the module list from the file names,
each peak from its live-range file's printed ``Live ranges at N (peak)`` list."""

from __future__ import annotations

import json
import re
import shutil

from hlo_lsp.cli import main
from tests.fixtures import DATA

CORPUS = DATA / "jax-cpu"


def _printed_peak(live_range) -> tuple[int, int]:
    text = live_range.read_text()
    m = re.search(r"Live ranges at (\d+) \(peak\):\n", text)
    block = text[m.end() :]
    return int(m.group(1)), sum(int(b) for b in re.findall(r"^    \S+: (\d+) bytes", block, re.M))


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_module_ranked_by_its_printed_peak(capsys):
    code, out, _ = _run(capsys, "peak", CORPUS, "--format", "json")
    assert code == 0
    data = json.loads(out)
    sets = sorted(CORPUS.rglob("*-buffer-assignment.txt"))
    assert len(data["modules"]) == len(sets) >= 20 and data["unreadable"] == []
    want = {}
    for s in sets:
        stem = s.name[: -len("-buffer-assignment.txt")]
        want[str((s.parent / f"{stem}.txt").relative_to(CORPUS))] = _printed_peak(s.with_name(f"{stem}-live-range.txt"))
    got = {m["module"]: (m["xla_peak_step"], m["xla_peak_bytes"]) for m in data["modules"]}
    assert got == want
    peaks = [m["xla_peak_bytes"] for m in data["modules"]]
    assert peaks == sorted(peaks, reverse=True)
    reserved = {m["module"]: m["reserved_peak_bytes"] for m in data["modules"]}
    assert [reserved[m] for m in data["by_reserved"]] == sorted(reserved.values(), reverse=True)
    assert all(sum(x["bytes"] for x in m["top_sources"]) <= m["xla_peak_bytes"] for m in data["modules"])

    code, text, _ = _run(capsys, "peak", CORPUS, "--top", "3")
    assert code == 0
    first = text.split("\n")
    assert first[0].startswith(f"{len(sets)} modules under ")
    top = data["modules"][0]
    assert top["module"] in first[1] and f"at step {top['xla_peak_step']}" in first[1]
    assert f"... {len(sets) - 3} more modules" in text


def test_an_unreadable_module_is_listed_and_an_empty_folder_is_one_error(capsys, tmp_path):
    shutil.copytree(CORPUS / "mlp_sgd", tmp_path / "mlp_sgd")
    broken = next((tmp_path / "mlp_sgd").glob("*jit_predict*-live-range.txt"))
    broken.write_text("not a live range\n")  # its module then has no live ranges to rank by
    code, out, _ = _run(capsys, "peak", tmp_path, "--format", "json")
    data = json.loads(out)
    assert code == 0 and len(data["unreadable"]) == 1 and "jit_predict" in data["unreadable"][0]["module"]
    assert data["modules"] and all("jit_predict" not in m["module"] for m in data["modules"])
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = _run(capsys, "peak", empty)
    assert code == 2 and out == "" and err.count("\n") == 1 and "no module with buffer files" in err
