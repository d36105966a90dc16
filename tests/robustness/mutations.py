"""Mutations of real dumps for the fuzz tests (hypothesis strategies) and the long runner in ``fuzz/``."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.robustness.cases import BA_SEED, HLO_SEED, TPU_SEED, split_files

SEEDS = [HLO_SEED, BA_SEED, TPU_SEED] + list(split_files().values())
TOKENS = [
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "%",
    "=",
    ",",
    ":",
    "->",
    "ENTRY",
    "ROOT",
    "HloModule",
    "parameter(",
    "f32[",
    "s32[]",
    "(f32[], s32[])",
    "{1,0}",
    "{0:T(8,128)}",
    "\n",
    "\r\n",
    "\r",
    "\x00",
    "\ufeff",
    "\t",
    "9" * 30,
    "1" * 5000,
    "-1",
    "BufferAssignment:",
    "allocation 0: size ",
    " value: <",
    "Used values:",
    "HloLiveRange (max ",
    "InstructionSequence:",
    "BufferLiveRange:",
    'metadata={op_name="',
    "\\",
    '"',
    "calls=",
    "to_apply=",
    "index=",
    "sharding={",
    "/*",
    "*/",
    "é",
    "中",
    "\u00b2",  # a digit to str.isdigit(), not to int()
    "\u0663",
    "\U0001f600",
]


@st.composite
def mutated(draw) -> tuple[str, str]:
    """(seed file name, mutated text): 1-6 edits (insert a token, delete a span, duplicate a span, truncate,
    splice a span of another seed) on one real dump."""
    seed = draw(st.sampled_from(SEEDS))
    text = seed.read_text()
    for _ in range(draw(st.integers(1, 6))):
        n = len(text)
        op = draw(st.sampled_from(["insert", "delete", "duplicate", "truncate", "splice", "replace-digits"]))
        i = draw(st.integers(0, n))
        j = min(n, i + draw(st.integers(0, 400)))
        if op == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) * draw(st.integers(1, 50)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[j:]
        elif op == "duplicate":
            text = text[:j] + text[i:j] * draw(st.integers(1, 20)) + text[j:]
        elif op == "truncate":
            text = text[:i]
        elif op == "splice":
            other = draw(st.sampled_from(SEEDS)).read_text()
            k = draw(st.integers(0, len(other)))
            text = text[:i] + other[k : k + 2000] + text[j:]
        else:
            text = text[:i] + "".join("9" if c.isdigit() else c for c in text[i:j]) + "99999999999999999999" + text[j:]
    return seed.name, text
