"""Occurrences, outline summaries, block split and caching, laziness, recovery and robustness."""

from __future__ import annotations

import re
import subprocess
import sys

from hlo_lsp.core.diagnostics import Severity
from hlo_lsp.core.hlo.grammar import split_blocks, validate_block, validate_module
from hlo_lsp.core.occurrences import OccurrenceIndex

MODULE = """HloModule m

FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=1 end_line=1 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main (p: f32[8]) -> f32[] {
  p = f32[8] parameter(0), metadata={op_name="p" stack_frame_id=1}
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
"""


def _pos(text, needle, nth=0):
    """(line, col) of the nth occurrence of needle, computed from the text."""
    idx = -1
    for _ in range(nth + 1):
        idx = text.index(needle, idx + 1)
    line = text.count("\n", 0, idx)
    return line, idx - (text.rfind("\n", 0, idx) + 1)


def test_occurrences_cover_instructions_computations_and_frames():
    result = validate_module(MODULE)
    assert [d for d in result.diagnostics if d.severity >= Severity.WARNING] == []
    index = OccurrenceIndex(result.occurrences)
    # to_apply=add is a use of computation add, defined on its header line.
    line, col = _pos(MODULE, "to_apply=add")
    use = index.at(line, col + len("to_apply="))
    assert use is not None and (use.kind, use.key, use.role) == ("computation", "add", "use")
    definition = index.definition("computation", "add")
    assert (definition.line, definition.start) == _pos(MODULE, "add {")
    # Operand z in reduce(p, z) refers to instruction z of main.
    line, col = _pos(MODULE, "reduce(p, z)")
    z_use = index.at(line, col + len("reduce(p, "))
    assert (z_use.kind, z_use.key, z_use.role) == ("instruction", "z", "use")
    # stack_frame_id=1 is a use of stack frame 1, defined in the StackFrames table.
    line, col = _pos(MODULE, "stack_frame_id=1")
    frame = index.at(line, col + len("stack_frame_id="))
    assert (frame.kind, frame.key) == ("stack_frame", "1")
    assert index.definition("stack_frame", "1").line == _pos(MODULE, "1 {file_location_id")[0]
    # Document order.
    keys = [(o.line, o.start) for o in result.occurrences]
    assert keys == sorted(keys)


def test_summaries():
    result = validate_module(MODULE)
    names = [c.name for c in result.computations]
    assert names == re.findall(r"^(?:ENTRY )?(\w+) .*\{$", MODULE, re.M)
    main = result.computations[-1]
    assert main.is_entry and main.root == "r"
    assert main.parameters[0][0] == "p"
    assert [n for n, _ in main.instructions] == ["p", "z", "r"]
    assert main.start_line == _pos(MODULE, "ENTRY main")[0]
    assert main.end_line == MODULE.rstrip().count("\n")
    add = result.computations[0]
    assert add.root == "s" and not add.is_entry


def test_root_defaults_to_last_instruction():
    text = "c {\n  a = f32[] parameter(0)\n  b = f32[] negate(a)\n}\n"
    assert validate_module(text).computations[0].root == "b"


def test_block_split_and_cache_reuse():
    blocks = split_blocks(MODULE)
    assert [b.kind for b in blocks] == ["header", "tables", "computation", "computation"]
    before = [validate_block(b) for b in blocks]
    edited = MODULE.replace("ROOT r = f32[] reduce", "ROOT r = f32[] reduce")  # same text: all cached
    again = [validate_block(b) for b in split_blocks(edited)]
    assert all(a is b for a, b in zip(before, again))
    changed = MODULE.replace("ROOT s = f32[] add(x, y)", "ROOT s = f32[] add(y, x)")
    after = [validate_block(b) for b in split_blocks(changed)]
    assert after[0] is before[0] and after[1] is before[1] and after[3] is before[3]
    assert after[2] is not before[2]


def test_broken_computation_does_not_hide_others():
    text = MODULE.replace("ROOT s = f32[] add(x, y)", "ROOT s = f32[] add(x, y")
    text = text.replace("ROOT r = f32[] reduce(p, z)", "ROOT r = f32[] reduce(p, q)")
    result = validate_module(text)
    codes = {d.code for d in result.diagnostics if d.severity == Severity.ERROR}
    assert {"syntax-error", "undefined-operand"} <= codes
    index = OccurrenceIndex(result.occurrences)
    assert index.definition("instruction", "x") is not None  # navigation in the broken block
    assert index.definition("computation", "main") is not None


def test_missing_brace_recovers_at_next_header():
    text = (
        "a {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n"
        "b {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(w)\n}\n"
    )
    result = validate_module(text)
    errors = [(d.range.start_line, d.code) for d in result.diagnostics if d.severity == Severity.ERROR]
    assert (0, "syntax-error") in errors
    assert (5, "undefined-operand") in errors


def test_parser_is_built_lazily():
    code = (
        "import hlo_lsp.core.hlo.grammar as g, hlo_lsp.core.hlo.grammar.parser as p; "
        "print(p.is_built()); g.validate_module('c {\\n x = f32[] parameter(0)\\n}'); print(p.is_built())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.split()
    assert out == ["False", "True"]


def test_deep_nesting_is_a_diagnostic():
    deep = "c {\n  x = f32[] parameter(0)\n  ROOT y = f32[] add(" + "(" * 50000 + "x" + ")" * 50000 + ")\n}\n"
    result = validate_module(deep)
    assert any(d.code == "nesting-too-deep" for d in result.diagnostics)
    tuples = "c {\n  ROOT x = " + "(" * 50000 + "f32[]" + ")" * 50000 + " parameter(0)\n}\n"
    assert any(d.code == "nesting-too-deep" for d in validate_module(tuples).diagnostics)


def test_hostile_input_never_raises():
    samples = [
        "",
        "\x00\x00",
        "}}}}",
        "{{{{",
        "HloModule",
        "ENTRY",
        '"' * 1001,
        "/*" * 500,
        "%" * 100,
        "x = f32[] parameter(0)",
        "\ufeffHloModule m\r\nENTRY e {\r\n x = f32[] parameter(0)\r\n}\r\n",
    ]
    for text in samples:
        result = validate_module(text)
        assert isinstance(result.diagnostics, list)


def test_no_computation_is_an_error():
    result = validate_module("HloModule m\n")
    assert [d.code for d in result.diagnostics] == ["syntax-error"]


def test_xla_abort_inputs_get_a_diagnostic():
    # XLA's parser aborts the process (CHECK failure) on parameter numbers that are not 0..n-1.
    text = "ENTRY e {\n  x = f32[] parameter(0)\n  y = f32[] parameter(2)\n  ROOT z = f32[] add(x, y)\n}\n"
    result = validate_module(text)
    hits = [d for d in result.diagnostics if d.code == "parameter-number"]
    assert hits and hits[0].range.start_line == 2


def test_every_input_xla_aborts_on_gets_an_error():
    """The hand-written modules named *_aborts* crash XLA's parser (found with the oracle test)."""
    from .helpers import HANDWRITTEN

    aborting = sorted((HANDWRITTEN / "invalid").glob("*aborts*.hlo"))
    assert len(aborting) >= 5
    for path in aborting:
        errors = [d for d in validate_module(path.read_text()).diagnostics if d.severity == Severity.ERROR]
        assert errors, path.name


def test_mutated_inputs_never_hit_an_internal_error():
    """Prefixes and seeded random edits of real and hand-written modules: every answer is diagnostics."""
    import random

    from .helpers import DATA, HANDWRITTEN, hlo_files

    rnd = random.Random(7)
    sources = [p.read_text() for p in sorted((HANDWRITTEN / "invalid").glob("*.hlo"))[:30]]
    sources += [p.read_text() for p in hlo_files(DATA)[:2]]
    count = 0
    for s in sources:
        cases = [s[:i] for i in range(0, len(s), max(1, len(s) // 25))]
        for _ in range(15):
            i = rnd.randrange(len(s))
            j = min(len(s), i + rnd.randrange(1, 30))
            cases.append(s[:i] + s[j:])
            cases.append(s[:j] + s[i:j] + s[j:])
            cases.append(s[:i] + "".join(rnd.choice("{}()[]%=,:\"'/*<>-x01 \n") for _ in range(6)) + s[i:])
        for case in cases:
            count += 1
            result = validate_module(case)
            assert not [d for d in result.diagnostics if d.code == "internal-error"], case
    assert count > 1000


def test_parser_cache_goes_to_the_user_cache_dir(tmp_path):
    code = (
        "import hlo_lsp.core.hlo.grammar as g; "
        "print(len(g.validate_module('c {\\n x = f32[] parameter(0)\\n}').diagnostics))"
    )
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.stdout.strip() == "0", out.stderr
    assert list((tmp_path / "hlo-lsp").glob("hlo-grammar-*.lark.cache"))
    # An unwritable cache directory falls back to building without a cache.
    env["XDG_CACHE_HOME"] = "/proc/hlo-lsp-not-writable"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.stdout.strip() == "0", out.stderr
