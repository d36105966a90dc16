"""What every hover renders with: labelled fields in Markdown and plain text (`Fields`), byte sizes, shortened
texts, and an instruction's defining line and source (op_name, Python frames) from its module."""

from __future__ import annotations

from hlo_lsp.core import shapes
from hlo_lsp.core.diagnostics import Range
from hlo_lsp.core.hlo.line import InstructionLine, parse_instruction_line
from hlo_lsp.core.hlo.model import HloModule
from hlo_lsp.core.hlo.source import instruction_source
from hlo_lsp.ide.context import Cursor
from hlo_lsp.ide.types import HoverResult

MAX_DEF_TEXT = 160
MAX_SHAPE_TEXT = 400  # a hover shows at most this much of a shape (100,000 dimensions would be 400 KB)


def fmt_bytes(n: int | None) -> str:
    """``32768 bytes (32.0KiB)``; ``?`` for an unknown size."""
    if n is None:
        return "?"
    return f"{n} bytes ({shapes.human_size(n)})" if n >= 1024 else f"{n} bytes"


def size_of_shape(text: str | None, pointer_size: int = 8) -> tuple[int | None, int | None, str | None]:
    """(unpadded bytes, padded bytes when tiling changes it, error) of a shape string."""
    if not text:
        return None, None, None
    sh = shapes.parse_shape(text)
    if sh is None:
        return None, None, None
    unpadded = shapes.byte_size(sh, pointer_size)
    if isinstance(unpadded, shapes.SizeError):
        return None, None, unpadded.message
    padded = shapes.padded_byte_size(sh, pointer_size) if shapes.is_tiled(sh) else None
    if isinstance(padded, shapes.SizeError) or padded == unpadded:
        padded = None
    return unpadded, padded, None


def shorten(text: str, limit: int = MAX_DEF_TEXT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Fields:
    """Labelled lines rendered as Markdown and as plain text."""

    def __init__(self, title_md: str, title_plain: str):
        self.md = [title_md, ""]
        self.plain = [title_plain]

    def add(self, label: str, md: str, plain: str | None = None) -> None:
        self.md.append(f"**{label}** {md}".rstrip() + "  ")
        self.plain.append(f"{label}: {plain if plain is not None else md.replace('`', '')}".rstrip())

    def block(self, code: str) -> None:
        self.md += ["", "```hlo", code, "```"]
        self.plain.append(code)

    def result(self, rng: Range) -> HoverResult:
        return HoverResult("\n".join(self.md).rstrip(), "\n".join(self.plain), rng)


def defining_text(cur: Cursor, instruction: str) -> str | None:
    h = cur.bundle.hlo
    if h is None or h.hlo is None:
        return None
    ins = h.hlo.instruction(instruction)
    return h.hlo.lines[ins.line].strip() if ins is not None else None


def source_fields(f: Fields, cur: Cursor, instruction: str) -> None:
    """op_name and the Python source line of ``instruction``, from the module's HLO text when present."""
    h = cur.bundle.hlo
    if h is None or h.hlo is None:
        return
    ins = h.hlo.instruction(instruction)
    if ins is None:
        return
    d = parse_instruction_line(h.hlo.lines[ins.line])
    if d is None:
        return
    metadata_fields(f, h.hlo, d)


def metadata_fields(f: Fields, mod: HloModule, d: InstructionLine) -> None:
    """The op_name of an instruction's line ``d`` and its Python source with the frames that called it."""
    op = d.metadata.get("op_name")
    if op is not None:
        f.add("op_name", f"`{op.text}`")
    frames = instruction_source(mod, d)
    if frames:
        f.add("Source", f"`{frames[0].label()}`")
        if len(frames) > 1:
            f.add("Called from", " ← ".join(f"`{fr.label()}`" for fr in frames[1:6]))
