"""Golden views of syntax errors: the source line, a caret under the offending token, the message."""

from __future__ import annotations

from hlo_lsp.core.hlo.grammar import caret_view, validate_module


def first_error_view(text: str) -> str:
    diag = [d for d in validate_module(text).diagnostics if d.code == "syntax-error"][0]
    return caret_view(text, diag)


def test_missing_equal():
    text = "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y f32[] negate(x)\n}\n"
    assert first_error_view(text) == (
        "3:   ROOT y f32[] negate(x)\n"
        "            ^^^\n"
        "error[syntax-error]: unexpected name 'f32'; expected '=' (an instruction is 'name = shape opcode(operands)')"
    )


def test_missing_close_paren_points_at_line_end():
    text = "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] add(x, x\n}\n"
    view = first_error_view(text)
    assert view.splitlines()[0] == "3:   ROOT y = f32[] add(x, x"
    assert view.splitlines()[1] == " " * (len("3: ") + len("  ROOT y = f32[] add(x, ")) + "^"
    assert "expected ')', ',' or '('" in view


def test_unexpected_character():
    text = "ENTRY e {\n  x = f32[] parameter(0) $\n}\n"
    assert first_error_view(text) == (
        "2:   x = f32[] parameter(0) $\n"
        "                            ^\n"
        "error[syntax-error]: unexpected '$'; expected '}', ')', ',', a name or 'ROOT'"
    )


def test_unclosed_computation_points_at_its_name():
    text = "first {\n  x = f32[] parameter(0)\nsecond {\n  y = f32[] parameter(0)\n}\n"
    assert first_error_view(text) == (
        "1: first {\n"
        "   ^^^^^\n"
        "error[syntax-error]: this computation is not closed: missing '}' before the end of the block"
    )


def test_expected_list_is_cut():
    text = "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x), dimensions=\n}\n"
    view = first_error_view(text)
    assert "…" in view or "a value" in view
