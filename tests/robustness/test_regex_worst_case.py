"""No catastrophic regexes: every regular expression hlo_lsp applies to file text, fed its worst cases.

Patterns are found two ways, so a new one cannot slip past: every compiled `re.Pattern` reachable from the
globals and classes of every module under ``hlo_lsp/``, and every pattern literal passed to ``re.compile``,
``re.match``, ``re.search``, ... anywhere in the source (by AST); the lark grammar's terminals are added too,
since its lexer runs them on the file. The adversarial inputs are built from each pattern's own characters
(every character it names and a representative of every class, repeated alone and in pairs, 40,000 long, with
and without a closing character), the shapes that make backtracking engines quadratic or exponential. A worker
process runs finditer, fullmatch and sub on each; a pair still running after `HANG_S` is a catastrophic case
(linear work on these inputs takes milliseconds). This is a hang timeout, not a timing assertion.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import hlo_lsp

ROOT = Path(hlo_lsp.__file__).resolve().parent
HANG_S = 15.0
RE_FUNCS = {"compile", "match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split"}


def _module_patterns() -> dict[tuple[str, int], str]:
    """Compiled patterns in module and class namespaces -> "module.NAME" (NAME: the variable holding it)."""
    out: dict[tuple[str, int], str] = {}
    for info in pkgutil.walk_packages([str(ROOT)], "hlo_lsp."):
        if info.name.endswith("__main__"):  # importing it would start the server
            continue
        try:
            mod = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - an optional module (charts) may not import; its literals still count
            continue
        spaces = [vars(mod)] + [vars(v) for v in vars(mod).values() if isinstance(v, type)]
        for space in spaces:
            for var, v in list(space.items()):
                items = v if isinstance(v, (list, tuple)) else v.values() if isinstance(v, dict) else [v]
                for x in items:
                    for y in x if isinstance(x, tuple) else (x,):
                        if isinstance(y, re.Pattern) and isinstance(y.pattern, str):
                            out[(y.pattern, y.flags & ~re.UNICODE)] = f"{info.name}.{var}"
    return out


def _literal_patterns() -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in RE_FUNCS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
            ):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out[(arg.value, 0)] = f"{path.relative_to(ROOT)}:{node.lineno} re.{node.func.attr}"
            elif isinstance(arg, ast.JoinedStr):  # an f-string pattern: check its constant skeleton
                skeleton = "".join(v.value if isinstance(v, ast.Constant) else "x" for v in arg.values)
                try:
                    re.compile(skeleton)
                    out[(skeleton, 0)] = f"{path.relative_to(ROOT)}:{node.lineno} re.{node.func.attr} (f-string)"
                except re.error:
                    pass
    return out


def _lark_patterns() -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    try:
        from hlo_lsp.core.hlo.grammar import parser as gp
    except Exception:  # noqa: BLE001
        return out
    for name in dir(gp):
        obj = getattr(gp, name)
        if callable(obj) and name.startswith(("get_parser", "parser", "_parser", "build")):
            try:
                lark = obj()
            except TypeError:
                continue
            for t in getattr(lark, "terminals", []):
                out[(t.pattern.to_regexp(), 0)] = f"lark terminal {t.name}"
    return out


SCANNING = {"search", "finditer", "findall", "sub", "subn", "split"}


def scanning(where: str, sources: str) -> bool:
    """Whether a pattern is tried at every position of a text (search, finditer, sub, ...), as opposed to
    matched at one position (match, fullmatch, a lexer's match at the current token). Lark's lexer matches at
    the token position only. A compiled pattern counts as scanning when any module calls one of the scanning
    methods on a name that holds it."""
    if where.startswith("lark terminal"):
        return False
    if " re." in where:
        return where.split(" re.")[1].split(" ")[0] in SCANNING or where.split(" re.")[1].startswith("compile")
    module, var = where.rsplit(".", 1)
    own = ROOT.joinpath(*module.split(".")[1:]).with_suffix(".py")
    texts = [own.read_text()] if own.exists() else [sources]
    # other modules that use the same name without defining it (they imported it)
    texts += [t for t in sources.split("\x00") if var in t and not re.search(rf"^{re.escape(var)} = ", t, re.M)]
    call = re.compile(rf"\b{re.escape(var)}\.(?:{'|'.join(SCANNING)})\(")
    return any(call.search(t) for t in texts)


def all_patterns() -> dict[tuple[str, int], str]:
    found = _literal_patterns()
    found.update(_lark_patterns())
    found.update(_module_patterns())
    return found


def test_patterns_are_found():
    found = all_patterns()
    sources = {v.split(":")[0].split(" ")[0] for v in found.values()}
    # the readers that scan file text must be among those found (a guard against this test finding nothing)
    for must in ("hlo_lsp.core.buffers.reader", "hlo_lsp.ide.hover", "hlo_lsp.core.hlo.line"):
        assert any(s.startswith(must + ".") for s in sources), must
    assert len(found) >= 20, len(found)


def test_every_regex_is_linear_on_its_worst_case():
    jobs, names = [], []
    sources = "\x00".join(p.read_text() for p in ROOT.rglob("*.py"))
    for (pattern, flags), where in sorted(all_patterns().items()):
        jobs.append((pattern, flags, scanning(where, sources)))
        names.append(f"{where}: {pattern!r}")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.robustness.regex_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    proc.stdin.write(json.dumps(jobs))
    proc.stdin.close()
    done = 0
    running = "worker start"
    try:
        while done < len(jobs):
            try:
                line = lines.get(timeout=HANG_S)
            except queue.Empty:
                raise AssertionError(f"catastrophic regex (no answer in {HANG_S:.0f} s): {running}") from None
            kind, i, *what = line.split(" ", 2)
            if kind == "START":
                running = f"{names[int(i)]} on {what[0].strip() if what else ''}"
            else:
                done += 1
    finally:
        proc.kill()
        proc.wait()
    assert done == len(jobs)


OLD_QUADRATIC = {  # patterns as they were before their fixes, each quadratic on the input shape named
    "hover._SHAPE_AT": (r"(?:[a-z][a-z0-9]*\[[^\]]*\](?:\{[^}]*\})?|\((?:[^()]|\([^()]*\))*\))", "run"),
    "hlo._HEADER_LINE": (r"\n(ENTRY[ \t]+)?%?([^\s(%{=}/][^\s(%{=]*)[ \t]*([^\n]*?)\{[ \t]*(?=\n|\Z)", "line"),
    "hlo._ATTR_KEY": (r"([A-Za-z_][A-Za-z0-9_.]*)=", "run"),
}


def test_the_worker_picks_the_inputs_that_made_old_patterns_quadratic():
    """The method itself: for each pattern this test found quadratic (since fixed), the small run ranks the
    input shape that makes it quadratic among the slowest, so the big run tries exactly that shape."""
    from tests.robustness import regex_worker as w

    name_chars = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
    for name, (old, shape) in OLD_QUADRATIC.items():
        chars, repeats = w.analyse(old, 0)
        assert repeats
        rx = re.compile(old)
        timed = []
        for _, text in w.adversarial_inputs(chars, w.SMALL):
            timed.append((w.small_time(rx, text), text))
        slowest = [t for _, t in sorted(timed, key=lambda x: -x[0])[: w.KEEP]]
        if shape == "line":
            assert any(t[0] == "\n" and set(t[1:]) <= name_chars for t in slowest), (name, [t[:4] for t in slowest])
        else:
            assert any(len(set(t[1:]) - name_chars) == 0 for t in slowest), (name, [t[:4] for t in slowest])
