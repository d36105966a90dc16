"""A listing's allocations kept by column (`columns.Allocations`) read as the `Allocation`s they stand for: what
the outline, folding and lenses read from the columns without making the objects (`kinds`, `last_lines`,
`ints`) equals what each made `Allocation` says, on every real listing of the test data (colors, parameters,
outputs, constants, thread-local, live-out and preallocated temps among them)."""

from __future__ import annotations

import pytest

from hlo_lsp.core.buffers import read_buffers
from hlo_lsp.core.buffers.columns import Allocations
from tests.fixtures import DATA

LISTINGS = sorted(
    p
    for p in DATA.rglob("*.txt")
    if p.name.endswith("-buffer-assignment.txt") or (p.parent.name == "seeds" and "BufferAssignment:" in p.read_text())
)


def test_the_test_data_holds_listings_of_every_kind_of_allocation():
    kinds: set[str] = set()
    for p in LISTINGS:
        for a in read_buffers(p.read_text()).allocations:
            kinds |= {k.split()[0] for k in a.kinds()}
    assert len(LISTINGS) > 40
    assert {"color", "parameter", "output", "constant", "thread-local", "maybe-live-out", "preallocated-temp"} <= kinds


@pytest.mark.parametrize("path", LISTINGS, ids=lambda p: str(p.relative_to(DATA)))
def test_columns_say_what_each_allocation_says(path):
    A = read_buffers(path.read_text()).allocations
    assert isinstance(A, Allocations) and len(A)
    made = [A[i] for i in range(len(A))]  # made one at a time, before the list keeps them
    assert [A.kinds(i) for i in range(len(A))] == [a.kinds() for a in made]
    assert A.last_lines() == [a.last_line for a in made]
    assert list(A.ints("size")) == [a.size for a in made]
    assert list(A.ints("number")) == [a.index for a in made]
    assert list(A) == made and list(A)[0] is list(A)[0]  # kept once every one was asked for
    assert A[len(A) - 1] is list(A)[-1]


def test_a_number_too_large_for_its_column_reads_exactly():
    huge = 1 << 70
    A = read_buffers(
        f"BufferAssignment:\nallocation {huge}: size {huge}, color {huge}, parameter {huge}:\n"
        f" value: <1 x @0> (size=4,offset=0): f32[1]{{0}}\n",
        "assignment",
    ).allocations
    (a,) = A
    assert (a.index, a.size, a.color, a.parameter) == (huge, huge, huge, huge)
    assert A.kinds(0) == a.kinds() == [f"color {huge}", f"parameter {huge}"]
    assert list(A.ints("size")) == [huge] and list(A.ints("line")) == [1]
