"""An allocation header's properties in an order other than XLA's go through the property scanner
(`read_allocations.AllocationsReader._properties`); a malformed one is reported where it stands."""

from __future__ import annotations

import pytest

from hlo_lsp.core.buffers import read_buffers

VALUE = " value: <3 p.1 @0> (size=16,offset=0): f32[4]{0}"


def _read(header: str):
    doc = read_buffers(f"BufferAssignment:\n{header}\n{VALUE}\n", "assignment")
    return doc.allocations[0], doc.diagnostics


def test_properties_out_of_xla_order_are_all_read():
    a, diags = _read(
        "allocation 0: size 16, maybe-live-out, parameter 2, shape |f32[4]| at ShapeIndex {1,0}, "
        "constant, output shape is |(f32[4], s32[])|, thread-local, color 5, preallocated-temp:"
    )
    assert diags == []
    assert (a.index, a.size, a.color, a.parameter) == (0, 16, 5, 2)
    assert (a.parameter_shape, a.parameter_shape_index, a.output_shape) == ("f32[4]", (1, 0), "(f32[4], s32[])")
    assert a.constant and a.thread_local and a.maybe_live_out and a.preallocated_temp


@pytest.mark.parametrize(
    "props, message, piece",
    [
        (", color 1, color x", "expected a color number", "color "),
        (", color 1, parameter , color 1", "expected a parameter number", "parameter "),
        (", color 1, parameter 1, shape |f32[4]", "unterminated `shape |...|`", ", shape |f32[4]"),
        (", color 1, parameter 1 at ShapeIndex {1", "unterminated shape index", " at ShapeIndex {1"),
        (", color 1, parameter 1 at ShapeIndex {1,x}", "bad shape index", "{1,x}"),
        (", color 1, output shape is |f32[", "unterminated `output shape is |...|`", "output shape is |f32["),
        (", color 1, very-live", "unknown allocation property 'very-live'", "very-live"),
        (", color 1; constant", "expected `, ` between allocation properties", "; constant"),
    ],
)
def test_a_malformed_property_is_reported_where_it_stands(props, message, piece):
    header = f"allocation 0: size 16{props}:"
    a, diags = _read(header)
    assert [d.message for d in diags] == [message]
    d = diags[0]
    assert d.range.start_line == 1
    assert header[d.range.start_col :].startswith(piece.rstrip()), (header[d.range.start_col :], piece)
    assert a.color == 1  # what stood before it was read
