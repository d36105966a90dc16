"""Shape inference of the computing opcodes: dot, convolution, reduce, reduce-window, map, fft,
triangular-solve, topk. Each function cites the XLA function it follows."""

from __future__ import annotations

from hlo_lsp.core.hlo.rules.inference import NEEDS_CALLEE, Site, Want, infers
from hlo_lsp.core.hlo.rules.inference.attrs import dim_labels, int_value, ints, raw, window, window_output


@infers("dot", xla="ShapeInference::InferDotOpShape")
def dot(s: Site):
    """Batch dimensions (in lhs order), then lhs and rhs free dimensions in order; the element type is the
    preferred type, taken from the result itself (free)."""
    if len(s.operands) != 2 or raw(s.attrs, "sparsity") is not None:
        return None
    lhs, rhs = s.operands
    if not lhs.is_array or not rhs.is_array:
        return None
    a = s.attrs
    lb, lc = ints(a, "lhs_batch_dims", ()), ints(a, "lhs_contracting_dims", ())
    rb, rc = ints(a, "rhs_batch_dims", ()), ints(a, "rhs_contracting_dims", ())
    if lb is None or lc is None or rb is None or rc is None:
        return None
    if len(lb) != len(rb) or len(lc) != len(rc):
        return "dot has unequal numbers of lhs and rhs batch or contracting dimensions"
    for x, y in zip(lc, rc):
        if lhs.dims[x] != rhs.dims[y]:
            return f"dot contracts lhs dimension {x} ({lhs.dims[x]}) with rhs dimension {y} ({rhs.dims[y]})"
    lhs_used, rhs_used = set(lb) | set(lc), set(rb) | set(rc)
    out = [lhs.dims[d] for d in lb]
    out += [n for d, n in enumerate(lhs.dims) if d not in lhs_used]
    out += [n for d, n in enumerate(rhs.dims) if d not in rhs_used]
    return Want(None, tuple(out))


@infers("convolution", xla="ShapeInference::InferConvolveShape")
def convolution(s: Site):
    """Output batch = input batch / batch_group_count, output feature = the kernel's output feature, each
    spatial dimension from the window (``InferWindowOutputShape``), placed by the output's dim labels."""
    labels = dim_labels(s.attrs)
    win = window(s.attrs)
    if labels is None or win is None or len(s.operands) != 2:
        return None
    lhs, rhs = s.operands
    inp, ker, outl = labels
    if len(inp) != lhs.rank or len(ker) != rhs.rank or len(outl) != s.shape.rank:
        return None
    spatial = sorted(c for c in inp if c.isdigit())
    if len(win) != len(spatial):
        return None
    bgc = int_value(s.attrs, "batch_group_count", 1)
    if not bgc:
        return None
    out: list[int | None] = [None] * len(outl)
    for k, c in enumerate(outl):
        if c == "b":
            out[k] = lhs.dims[inp.index("b")] // bgc
        elif c == "f":
            out[k] = rhs.dims[ker.index("o")]
        elif c.isdigit():
            i = spatial.index(c)
            out[k] = window_output(lhs.dims[inp.index(c)], win[i])
    return Want(None, tuple(out))


@infers("reduce", xla="ShapeInference::InferReduceShape")
def reduce(s: Site):
    """Each input without the reduced dimensions, of its init value's type; a tuple for several inputs."""
    n = len(s.operands) // 2
    dims = ints(s.attrs, "dimensions")
    if n < 1 or len(s.operands) != 2 * n or dims is None:
        return None
    first = s.operands[0]
    if any(not 0 <= d < first.rank for d in dims):
        return f"reduce dimensions={{{','.join(map(str, dims))}}} are outside the operand's rank {first.rank}"
    reduced = set(dims)
    kept = tuple(n_ for d, n_ in enumerate(first.dims) if d not in reduced)
    outs = [Want(init.element_type, kept) for init in s.operands[n:]]
    return outs[0] if n == 1 else tuple(outs)


@infers("reduce-window", xla="ShapeInference::InferReduceWindowShape")
def reduce_window(s: Site):
    """Each input through the window (``InferWindowOutputShape``), of its init value's type."""
    n = len(s.operands) // 2
    win = window(s.attrs)
    if n < 1 or len(s.operands) != 2 * n or win is None:
        return None
    first = s.operands[0]
    if len(win) != first.rank:
        return f"the window has {len(win)} dimensions, but the operand has rank {first.rank}"
    dims = tuple(window_output(d, w) for d, w in zip(first.dims, win))
    outs = [Want(init.element_type, dims) for init in s.operands[n:]]
    return outs[0] if n == 1 else tuple(outs)


@infers("map", xla="ShapeInference::InferMapShape")
def map_(s: Site):
    """The operands' dimensions, of the type ``to_apply`` returns."""
    if not s.operands or not s.operands[0].is_array:
        return None
    root = s.callee_root()
    if isinstance(root, str):  # NEEDS_CALLEE
        return NEEDS_CALLEE
    etype = root.element_type if root is not None and root.is_array else None
    return Want(etype, s.operands[0].dims)


@infers("fft", xla="ShapeInference::InferFftShape")
def fft(s: Site):
    o = s.operands[0]
    kind = raw(s.attrs, "fft_type")
    length = ints(s.attrs, "fft_length")
    if not o.is_array or kind is None or not length or o.rank < len(length):
        return None
    dims = list(o.dims)
    if kind in ("FFT", "IFFT"):
        return Want(o.element_type, tuple(dims))
    if kind == "RFFT":
        dims[-1] = length[-1] // 2 + 1
        return Want({"f32": "c64", "f64": "c128"}.get(o.element_type), tuple(dims))
    if kind == "IRFFT":
        dims[-1] = length[-1]
        return Want({"c64": "f32", "c128": "f64"}.get(o.element_type), tuple(dims))
    return None


@infers("triangular-solve", xla="ShapeInference::InferTriangularSolveShape")
def triangular_solve(s: Site):
    """The right-hand side ``b``'s shape."""
    return s.operands[1] if len(s.operands) == 2 else None


@infers("topk", xla="ShapeInference::InferTopKShape")
def topk(s: Site):
    """(values, s32 indices), the operand's dimensions with the last one ``k``."""
    o = s.operands[0]
    k = int_value(s.attrs, "k")
    if not o.is_array or k is None or not o.rank:
        return None
    dims = o.dims[:-1] + (k,)
    return (Want(o.element_type, dims), Want("s32", dims))
