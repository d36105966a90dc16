"""Golden hover snapshots, a few per file kind, through the real server. Each snapshot was checked by hand
against its dump when recorded; regenerate with HLO_LSP_UPDATE_GOLDEN=1 and review the diff."""

from __future__ import annotations

import os

import pytest
from lsprotocol import types as lsp

from tests.fixtures import DATA, find
from tests.lsp.util import open_doc, tdp

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
COND = DATA / "jax-cpu" / "cond_switch" / "module_0000.jit_piecewise.cpu_after_optimizations"
CASES = [
    ("split-assignment-value", f"{COND}-buffer-assignment.txt", "<19 tuple.2{} @0>", 5),
    ("split-allocation-header", f"{COND}-buffer-assignment.txt", "allocation 3:", 2),
    ("split-values-entry", f"{COND}-buffer-assignment-values.txt", "<18 x.5 @0>", 5),
    ("split-live-range-entry", f"{COND}-live-range.txt", "    wrapped_convert{}:", 6),
    ("split-peak-entry", f"{COND}-live-range.txt", "    pred_.1{}: 1 bytes", 6),
    ("hlo-instruction", f"{COND}.txt", "%cond.1.clone = ", 3),
    ("hlo-called-computation", f"{COND}.txt", "calls=%wrapped_convert_computation", 9),
    ("single-tpu-tiled-value", str(DATA / "seeds" / "004_a3085531593bac68.txt"), "<45 all-reduce.28{1} @0>", 6),
    ("single-gpu-peak-bare-name", str(DATA / "seeds" / "000_45ad91e6d67cdb55.txt"), "Live ranges at", 0),
    ("single-thread-local", str(DATA / "seeds" / "003_6f652c95ac4cfb4d.txt"), "<12 y.108 @0>", 5),
    ("old-style-hlo-instruction", str(DATA / "seeds" / "001_2b3b731b0feb0bfe.txt"), "%gather.3 = ", 3),
]


@pytest.mark.parametrize("name,path,needle,offset", CASES, ids=[c[0] for c in CASES])
async def test_hover_golden(client, name, path, needle, offset):
    from pathlib import Path

    p = Path(path)
    lines = p.read_text().split("\n")
    ln, col = find(lines, needle)
    if name == "single-gpu-peak-bare-name":  # the first entry of the old peak list (a bare instruction name)
        ln, col = ln + 1, 4
    u = open_doc(client, p)
    h = await client.text_document_hover_async(lsp.HoverParams(**tdp(u, ln, col + offset)))
    got = h.contents.value if h else "<no hover>"
    golden = os.path.join(GOLDEN, f"{name}.md")
    if os.environ.get("HLO_LSP_UPDATE_GOLDEN"):
        with open(golden, "w") as f:
            f.write(got + "\n")
    with open(golden) as f:
        assert got == f.read().rstrip("\n")
