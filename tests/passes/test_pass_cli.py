"""``hlo-lsp passes`` (issue 21) on the real pass-by-pass dump of tests/data: the list of passes, the contract of
``--trace NAME --format json`` (sequence order, the before- and after-optimizations files first and last with a
null seq, 1-based lines that define the name), ``--diff SEQ``, and clear errors for what is no pass dump."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.fixtures import DATA
from tests.passes.reading import pass_order, ran

MLP = DATA / "passes" / "mlp_sgd"


def run(*args):
    return subprocess.run([sys.executable, "-m", "hlo_lsp", "passes", *map(str, args)], capture_output=True, text=True)


def test_list_of_passes_in_order():
    r = run(MLP)
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if re.match(r"\s+(\d{4}|-)\s", ln)]
    assert len(rows) == 45
    assert "before optimizations" in rows[0] and "after optimizations" in rows[-1]
    assert [ln.split()[0] for ln in rows[1:-1]] == [f"{i:04d}" for i in range(43)]
    fusion = next(ln for ln in rows if " fusion (HLO_passes_after_layout_assignment)" in ln)
    count = len(re.findall(r"^\s+(?:ROOT )?%\S+ = ", next(MLP.glob("*.0035.*")).read_text(), re.M))
    assert re.search(rf"\s{count}\s+\d+\s+\+\d+ -\d+ ~\d+$", fusion), fusion
    data = json.loads(run(MLP, "--format", "json").stdout)
    (module,) = data
    assert module["module"] == "jit_train_step" and len(module["files"]) == 45
    assert module["files"][36]["pass"] == "fusion" and module["files"][36]["instructions"] == count


def test_trace_contract():
    r = run(MLP, "--trace", "%multiply_subtract_fusion.1", "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["name"] == "multiply_subtract_fusion.1" and data["module"] == "jit_train_step"
    history = data["history"]
    assert history[0]["change"] == "made" and history[0]["seq"] == "0035" and history[0]["pass"] == "fusion"
    assert history[-1]["seq"] is None and history[-1]["file"].endswith("cpu_after_optimizations.txt")
    seqs = [int(h["seq"]) for h in history if h["seq"] is not None]
    assert seqs == sorted(seqs)
    for h in history:
        assert set(h) >= {"seq", "file", "pipeline", "pass", "change", "line"}
        assert h["change"] in ("made", "changed", "unchanged", "removed")
        line = (MLP / h["file"]).read_text().split("\n")[h["line"] - 1]
        assert re.match(r"\s+(ROOT )?%multiply_subtract_fusion\.1 = ", line), (h, line)


def test_trace_from_the_input_includes_before_optimizations_first():
    before = (MLP / "module_0000.jit_train_step.before_optimizations.txt").read_text()
    name = re.search(r"^\s+%(x\.\d+) = ", before, re.M).group(1)
    history = json.loads(run(MLP, "--trace", name, "--format", "json").stdout)["history"]
    assert history[0]["seq"] is None and history[0]["file"].endswith("before_optimizations.txt")
    assert history[0]["change"] == "made" and history[0]["pass"] is None
    text = run(MLP, "--trace", name).stdout
    assert text.startswith(f"%{name}: already in the input")


def test_diff_of_one_pass():
    r = run(MLP, "--diff", "0026")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("cse: +0 -13 ~12 instructions")
    data = json.loads(run(MLP, "--diff", "26", "--format", "json").stdout)
    assert data["pass"] == "cse" and data["new"].startswith("module_0000.jit_train_step.0026.")
    removed = [x["name"] for c in data["computations"] for x in c["removed"]]
    assert len(removed) == 13


def test_errors_are_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    for args, words in [
        ((tmp_path,), "no pass-by-pass files here"),
        ((tmp_path / "nope",), "no such file or folder"),
        ((MLP, "--module", "jit_other"), "no module 'jit_other'"),
        ((MLP, "--trace", "no_such.1"), "%no_such.1 is in no file"),
        ((MLP, "--diff", "0099"), "no pass file with sequence number 0099"),
        ((MLP / "module_0000.jit_train_step.before_optimizations.txt", "--diff", "0000"), None),
    ]:
        r = run(*args)
        if words is None:  # a file of the history stands for its module; 0000 has a file before it
            assert r.returncode == 0, r.stderr
            continue
        assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1


def test_two_modules_need_module(tmp_path):
    for p in MLP.glob("*.txt"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
        (tmp_path / p.name.replace("module_0000.", "module_0001.")).write_bytes(p.read_bytes())
    r = run(tmp_path, "--trace", "copy.4")
    assert r.returncode == 2 and "choose one with --module" in r.stderr
    r = run(tmp_path, "--trace", "copy.4", "--module", "0001", "--format", "json")
    assert r.returncode == 0 and all(
        Path(h["file"]).name.startswith("module_0001.") for h in json.loads(r.stdout)["history"]
    )


def _copy(tmp_path: Path) -> Path:
    for p in MLP.glob("*.txt"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    return tmp_path


def _check(*args):
    return subprocess.run([sys.executable, "-m", "hlo_lsp", "check", *map(str, args)], capture_output=True, text=True)


def test_check_of_a_pass_dump(tmp_path):
    """`hlo-lsp check` over a pass dump: clean as XLA wrote it; a numbered pass file that still reads as
    machine-written is checked by the fast reader's structural checks and the verifier (an undefined operand is
    found), one with a line that is no instruction row by the grammar (a syntax error is found)."""
    r = _check(MLP)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    folder = _copy(tmp_path)
    layout = next(folder.glob("*.0027.*"))  # layout-assignment
    text = layout.read_text()
    line = next(ln for ln in text.split("\n") if re.match(r"\s+%mul\.14 = ", ln))
    layout.write_text(text.replace(line, line.replace("multiply(%dot,", "multiply(%no_such_operand,")))
    row = text.split("\n").index(line) + 1
    cse = next(folder.glob("*.0026.*"))
    lines = cse.read_text().split("\n")
    bad = next(k for k, ln in enumerate(lines) if re.match(r"\s+%\S+ = ", ln))
    lines[bad] = lines[bad].split("(", 1)[0] + "(%broken"  # unclosed: no row, no valid instruction
    cse.write_text("\n".join(lines))
    r = _check(folder)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    found = [ln for ln in r.stdout.splitlines() if ": error: " in ln]
    assert any(ln.startswith(f"{layout}:{row}:") and "[undefined-operand]" in ln for ln in found), r.stdout
    assert any(ln.startswith(f"{cse}:{bad + 1}:") for ln in found), r.stdout
    assert {ln.split(":")[0] for ln in found} == {str(layout), str(cse)}


def test_trace_summary_in_the_issues_words():
    """The first line of a trace: "made by `P` (file NNNN), changed by `Q`, `R`; gone after `S`" for an
    instruction a pass made, others changed and one removed, each pass read from the file names here."""
    files = pass_order(MLP)
    texts = []
    for p in files:
        defs = {}
        for line in p.read_text().split("\n"):
            m = re.match(r"\s+(?:ROOT )?%([^\s=]+) = ", line)
            if m:
                defs[m.group(1)] = line
        texts.append(defs)
    checked = 0
    for name in {n for d in texts for n in d}:
        seen = [k for k, d in enumerate(texts) if name in d]
        made, gone = seen[0], seen[-1] + 1
        changed = [k for k in seen[1:] if texts[k - 1].get(name) not in (None, texts[k][name])]
        if made == 0 or gone >= len(files) or not changed or gone - made != len(seen):
            continue
        if any(ran(files[k]) is None for k in (made, gone, *changed)):
            continue  # a nested pipeline's start file: the pass that ran is not in its own name
        by = list(dict.fromkeys(ran(files[k]) for k in changed))
        want = f"%{name}: made by `{ran(files[made])}` (file {files[made].name.split('.')[2]}), changed by "
        want += ", ".join(f"`{p}`" for p in by) + f"; gone after `{ran(files[gone])}`"
        first = run(MLP, "--trace", name).stdout.split("\n")[0]
        assert first == want or first.startswith(want + " (its op_name and source now on %"), (first, want)
        checked += 1
    assert checked >= 3


def test_diff_names_a_computation_added_whole_in_one_row():
    """The fusion pass adds whole fused computations: each is one row of the diff text, with its instruction count
    and its header's line in the new file (read from the two files here)."""

    def computations(path: Path) -> dict[str, tuple[int, int]]:
        out, name = {}, None
        for i, line in enumerate(path.read_text().split("\n")):
            head = re.match(r"(?:ENTRY )?%([^\s(]+) .*\{$", line)
            if head:
                name = head.group(1)
                out[name] = (i + 1, 0)
            elif name and re.match(r"\s+(?:ROOT )?%\S+ = ", line):
                out[name] = (out[name][0], out[name][1] + 1)
            elif line == "}":
                name = None
        return out

    old, new = computations(next(MLP.glob("*.0034.*"))), computations(next(MLP.glob("*.0035.*")))
    added = {c: v for c, v in new.items() if c not in old}
    text = run(MLP, "--diff", "0035").stdout
    rows = {
        c: m.groups()
        for c in added
        for m in [re.search(rf"^%{re.escape(c)} \(added, (\d+) instructions?\) new:(\d+)$", text, re.M)]
        if m
    }
    assert added and set(rows) == set(added)
    for c, (line, count) in added.items():
        assert rows[c] == (str(count), str(line)), c
