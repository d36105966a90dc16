"""Command line: ``hlo-lsp [serve]`` (the language server on stdio, or ``--tcp HOST:PORT``) and
``hlo-lsp check PATH...`` (diagnostics of files or whole dump folders, gcc-style text or JSON).

Exit codes of ``check``: 0 when nothing at or above ``--fail-on`` was found, 1 otherwise, 2 on a usage or I/O
error (one line naming the file, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from hlo_lsp import __version__
from hlo_lsp.core import kinds
from hlo_lsp.core.diagnostics import Diagnostic, Range, Severity, info
from hlo_lsp.core.document import Lines
from hlo_lsp.core.hlo.rules.donation import CODE as DONATION_HINT
from hlo_lsp.core.passes.names import parse_pass_name
from hlo_lsp.core.workspace import ReadError, Workspace, read_text_file

FAIL_ON = {"error": Severity.ERROR, "warning": Severity.WARNING}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hlo-lsp", description="Language server and checker for XLA dumps.")
    p.add_argument("--version", action="version", version=f"hlo-lsp {__version__}")
    sub = p.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the language server (default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    serve.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editors)")
    check = sub.add_parser("check", help="report diagnostics for files or dump folders")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--fail-on", choices=tuple(FAIL_ON), default="error")
    check.add_argument(
        "--hints", action="store_true", help="also print advice that is no problem (hlo.donation-hint: what to donate)"
    )
    peak = sub.add_parser("peak", help="what is live at XLA's peak, with sizes and source lines")
    peak.add_argument(
        "dump",
        nargs="?",
        metavar="DUMP",
        help="an old single file or any file of a split set; a folder: every module under it, ranked by peak",
    )
    peak.add_argument("--top", type=int, default=20, metavar="N", help="rows of the text view (0: all; JSON has all)")
    peak.add_argument("--format", choices=("text", "json"), default="text")
    peak.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"), help="what changed at the peak between two dumps")
    peak.add_argument(
        "--group-by",
        choices=("source", "op_name", "dtype", "category", "param"),
        help="also the values live at the peak grouped by this key",
    )
    oom = sub.add_parser("oom", help="XLA's RESOURCE_EXHAUSTED report tied to the dump's instructions and buffers")
    oom.add_argument("log", metavar="LOG", help="a saved or pasted out-of-memory message (or a log holding one)")
    oom.add_argument("--dump", metavar="DIR", help="the dump folder of that compilation (default: the log's folder)")
    oom.add_argument("--format", choices=("text", "json"), default="text")
    passes = sub.add_parser("passes", help="a pass-by-pass dump: the passes in order, an instruction's history, a diff")
    passes.add_argument("dump", metavar="DIR", help="the dump folder (or any file of the module's pass history)")
    passes.add_argument("--module", metavar="M", help="the module (name, id or module_NNNN.name) when there are more")
    passes.add_argument("--trace", metavar="NAME", help="one instruction's history through the passes")
    passes.add_argument("--diff", metavar="SEQ", help="what the pass of file SEQ did (against the file before it)")
    passes.add_argument("--format", choices=("text", "json"), default="text")
    timeline = sub.add_parser(
        "timeline", help="chart of memory by program order, and the heap map (.html, .svg or .png)"
    )
    timeline.add_argument("dump", metavar="DUMP")
    timeline.add_argument("-o", "--output", required=True, metavar="FILE")
    timeline.add_argument("--top", type=int, default=10, metavar="N", help="buffers at the peak to list")
    timeline.add_argument(
        "--view",
        choices=("timeline", "heap", "both"),
        default="timeline",
        help="timeline: bytes reserved per step (the default); heap: each value at its offset over its live range, "
        "per memory space; both: one above the other",
    )
    timeline.add_argument(
        "--max-blocks", type=int, default=4000, metavar="N", help="values the heap map draws at most (largest first)"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0].startswith("--") and argv[0] in ("--tcp", "--stdio"):
        argv = ["serve", *argv]
    args = _parser().parse_args(argv)
    if args.command == "check":
        return check(args.paths, args.format, FAIL_ON[args.fail_on], args.hints)
    if args.command == "oom":
        from hlo_lsp import cli_oom

        return cli_oom.oom(args.log, args.dump, args.format)
    if args.command == "passes":
        from hlo_lsp import cli_passes

        return cli_passes.passes(args.dump, args.module, args.trace, args.diff, args.format)
    if args.command in ("peak", "timeline"):
        from hlo_lsp import cli_insight

        if args.command == "peak" and args.dump and not args.diff and os.path.isdir(args.dump):
            from hlo_lsp import cli_folder

            return cli_folder.rank_folder(args.dump, args.top, args.format)
        if args.command == "peak":
            return cli_insight.peak(args.dump, args.top, args.format, args.diff, args.group_by)
        return cli_insight.timeline(args.dump, args.output, args.top, args.view, args.max_blocks)
    return serve(args.tcp)


def serve(tcp: str | None) -> int:
    from hlo_lsp.core.process.heap import limit_arenas

    limit_arenas()  # before the server starts any thread
    from hlo_lsp.lsp.server import server

    if tcp:
        host, _, port = tcp.rpartition(":")
        if not (port.isascii() and port.isdigit()):
            print(f"hlo-lsp: --tcp expects HOST:PORT, got {tcp!r}", file=sys.stderr)
            return 2
        import asyncio

        from hlo_lsp.lsp import tcp as tcp_server

        try:
            # loopback unless told otherwise
            return asyncio.run(tcp_server.serve(server, host or "127.0.0.1", int(port)))
        except OSError as e:
            print(f"hlo-lsp: cannot listen on {host or '127.0.0.1'}:{port}: {e.strerror or e}", file=sys.stderr)
            return 2
    else:
        server.start_io()
    return 0


def _collect(paths: list[str]) -> tuple[list[str], list[str]]:
    """(files to check, errors): folders expand to the dump files inside them (recursively, sorted)."""
    files: list[str] = []
    errors: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, names in os.walk(p):
                dirs.sort()
                for n in sorted(names):
                    full = os.path.join(root, n)
                    if n.endswith((".txt", ".hlo")) and _is_dump(full):
                        found.append(full)
            if not found:  # a wrong path in a CI job must not pass silently
                errors.append(
                    f"{p}: no XLA dump in this folder (no .txt or .hlo file holding HLO text or a buffer "
                    "assignment); give the folder XLA wrote with --xla_dump_to, or the dump files"
                )
            files.extend(found)
        elif os.path.exists(p):
            files.append(p)
        else:
            errors.append(f"{p}: no such file or directory")
    return files, errors


def _is_dump(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(8192).decode("utf-8", errors="replace")
    except OSError:
        return True  # let the check report it
    # a folder's thunk sequences and config files are no dumps to check
    # (named on the command line, they say what they are)
    return kinds.detect_kind(path, head) not in (None, kinds.COMPANION)


ADVICE = frozenset({DONATION_HINT})  # codes that are advice, not findings: `check` prints them with --hints


def check(paths: list[str], fmt: str, fail_on: Severity, hints: bool = False) -> int:
    from hlo_lsp.ide.diagnostics import analysis_diagnostics

    files, errors = _collect(paths)
    ws = Workspace()
    results: list[tuple[str, Lines, Diagnostic]] = []
    for f in files:
        full = os.path.abspath(f)
        what = kinds.describe_companion(full)
        if what is not None:  # named on the command line: say what it is (it may be binary: not read)
            results.append((f, [""], info(Range(0, 0, 0, 0), "dump.companion", what)))
            continue
        try:
            read_text_file(full)
            a = ws.analysis(full)
        except ReadError as e:
            errors.append(str(e).replace(full, f, 1))
            continue
        if a.kind is None:
            errors.append(f"{f}: not an XLA dump (no HloModule, BufferAssignment or live-range header)")
            continue
        lines = a.lines
        for d in analysis_diagnostics(ws, a, hints=hints):
            if hints or d.code not in ADVICE:
                results.append((f, lines, d))
        pass_file = parse_pass_name(full)
        if pass_file is not None and pass_file.seq is not None:
            ws.close(full)  # a numbered pass file has no siblings: a pass dump's modules are not all kept in memory
    for message in errors:
        print(f"hlo-lsp: {message}", file=sys.stderr)
    if fmt == "json":
        print(json.dumps([_json(f, lines, d) for f, lines, d in results], indent=1))
    else:
        for f, _, d in results:
            print(f"{f}:{d.range.start_line + 1}:{d.range.start_col + 1}: {d.severity.label}: {d.message} [{d.code}]")
    if errors:
        return 2
    return 1 if any(d.severity >= fail_on for _, _, d in results) else 0


def _json(path: str, lines: Lines, d: Diagnostic) -> dict:
    return {
        "path": path,
        "line": d.range.start_line + 1,
        "column": d.range.start_col + 1,
        "end_line": d.range.end_line + 1,
        "end_column": d.range.end_col + 1,
        "severity": d.severity.label,
        "code": d.code,
        "message": d.message,
    }
