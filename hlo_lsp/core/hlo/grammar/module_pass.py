"""The cross-block pass of `validate.validate_module`: over every block's result, the header and tables where XLA
wants them, computations defined once and called only from below, one ENTRY, stack-frame ids that exist; then
every block's diagnostics and occurrences shifted by its first line (`join_blocks`)."""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Diagnostic, Range, Related, error, moved, warning
from hlo_lsp.core.occurrences import Occurrence

from .blocks import Block
from .results import BlockResult, ComputationSummary, GrammarResult


def join_blocks(text: str, blocks: list[Block], results: list[BlockResult]) -> GrammarResult:
    """The module's result from its blocks' (``text`` is the module's, for the error of one without a computation)."""
    p = _ModulePass()
    summaries: list[ComputationSummary] = []
    for i, (b, r) in enumerate(zip(blocks, results)):
        p.placement(i, b, r)
        p.diags.extend(moved(d, b.start_line) for d in r.diagnostics)
        p.definitions(i, b.start_line, r)
        if r.summary is not None:
            summaries.append(r.summary)
    occ: list[Occurrence] = []
    for i, (b, r) in enumerate(zip(blocks, results)):
        dl = b.start_line
        p.calls(i, dl, r)
        p.frame_uses(dl, r)
        if dl:
            occ.extend(Occurrence(o.line + dl, o.start, o.end, o.kind, o.key, o.role) for o in r.occurrences)
        else:
            occ.extend(r.occurrences)
    diags = p.diags
    if not any(b.kind == "computation" for b in blocks) and not diags:
        last = max(0, text.count("\n"))
        diags.append(
            error(
                Range(0, 0, 0, 1) if not text.strip() else Range(last, 0, last, 1),
                "syntax-error",
                "the module has no computation",
            )
        )
    diags.sort(key=lambda d: (d.range.start_line, d.range.start_col))
    return GrammarResult(diags, occ, summaries, blocks)


class _ModulePass:
    """What the pass has seen so far: computations by name (block index, document range), the first ENTRY, the
    stack frames of the tables, whether a computation came yet; and the diagnostics."""

    def __init__(self) -> None:
        self.diags: list[Diagnostic] = []
        self.defined: dict[str, tuple[int, Range]] = {}
        self.entry: Range | None = None
        self.frames: set[str] | None = None
        self.seen_computation = False

    def placement(self, i: int, b: Block, r: BlockResult) -> None:
        """The header first, the tables before any computation (their stack frames are noted)."""
        dl = b.start_line
        if b.kind == "header" and (i > 0):
            self.diags.append(
                error(Range(dl, 0, dl, 9), "syntax-error", "'HloModule' must be the first line of the module")
            )
        if b.kind == "tables":
            if self.seen_computation:
                self.diags.append(
                    error(
                        Range(dl, 0, dl, 9),
                        "syntax-error",
                        "the FileNames/FunctionNames/FileLocations/StackFrames tables must come "
                        "before the first computation",
                    )
                )
            if r.ok:
                self.frames = set(r.facts.frames)
        if b.kind == "computation":
            self.seen_computation = True

    def definitions(self, i: int, dl: int, r: BlockResult) -> None:
        """Block ``i`` (first line ``dl``) defines its computation once in the module, and the ENTRY once."""
        for name in r.facts.defines:
            at = Range(name.line + dl, name.start, name.line + dl, name.end)
            first = self.defined.get(name.text)
            if first is not None:
                self.diags.append(
                    error(
                        at,
                        "duplicate-computation",
                        f"computation '{name.text}' is already defined",
                        related=(Related(first[1], "first defined here"),),
                    )
                )
            else:
                self.defined[name.text] = (i, at)
        if r.facts.entry is not None:
            t = r.facts.entry
            at = Range(t.line + dl, t.col, t.line + dl, t.end)
            if self.entry is not None:
                self.diags.append(
                    error(
                        at,
                        "duplicate-entry",
                        "expects only one ENTRY computation",
                        related=(Related(self.entry, "the first ENTRY"),),
                    )
                )
            else:
                self.entry = at

    def calls(self, i: int, dl: int, r: BlockResult) -> None:
        """Each computation block ``i`` calls exists and is defined above it."""
        for use in r.facts.calls:
            at = Range(use.line + dl, use.start, use.line + dl, use.end)
            target = self.defined.get(use.name)
            if target is None:
                self.diags.append(error(at, "unknown-computation", f"computation '{use.name}' does not exist"))
            elif target[0] >= i:
                what = "itself" if target[0] == i else "a computation defined below it"
                self.diags.append(
                    error(
                        at,
                        "unknown-computation",
                        f"'{use.name}' is {what}; XLA's parser needs a called computation defined above its caller",
                        related=(Related(target[1], "defined here"),),
                    )
                )

    def frame_uses(self, dl: int, r: BlockResult) -> None:
        """Each ``stack_frame_id`` the block names is in the tables (a warning: XLA's parser accepts one that
        points nowhere)."""
        frames = self.frames
        for use in r.facts.frame_uses:
            if frames is None or use.name not in frames:
                at = Range(use.line + dl, use.start, use.line + dl, use.end)
                where = "the StackFrames table" if frames is not None else "this module (it has no StackFrames table)"
                self.diags.append(warning(at, "unknown-stack-frame", f"stack frame {use.name} is not in {where}"))
