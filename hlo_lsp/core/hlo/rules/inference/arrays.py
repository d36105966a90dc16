"""Shape inference of the data-movement opcodes: broadcast, transpose, reshape, slice, dynamic-slice,
dynamic-update-slice, concatenate, pad, reverse, gather, scatter, sort, tuple, and the fixed-shape ones
(partition-id, replica-id, get-dimension-size, after-all). Each function cites the XLA function it follows."""

from __future__ import annotations

from hlo_lsp.core.hlo.rules.inference import Site, Want, infers, like
from hlo_lsp.core.hlo.rules.inference.attrs import int_value, ints, padding, slices


def _array(s: Site, k: int = 0):
    o = s.operands[k]
    return o if o.is_array else None


@infers("broadcast", xla="ShapeVerifier::HandleBroadcast")
def broadcast(s: Site):
    """The operand's type; each operand dimension k at output dimension ``dimensions[k]``; the others free."""
    o = _array(s)
    dims = ints(s.attrs, "dimensions")
    if o is None or dims is None or not s.shape.is_array:
        return None
    if len(dims) != o.rank:
        return (
            f"broadcast dimensions={{{','.join(map(str, dims))}}} name {len(dims)} dimensions, but the "
            f"operand has rank {o.rank}"
        )
    out: list[int | None] = [None] * s.shape.rank
    for k, d in enumerate(dims):
        if not 0 <= d < len(out):
            return f"broadcast dimension {d} is outside the result's rank {len(out)}"
        out[d] = o.dims[k]
    return Want(o.element_type, tuple(out))


@infers("transpose", xla="ShapeInference::InferTransposeShape")
def transpose(s: Site):
    o = _array(s)
    perm = ints(s.attrs, "dimensions")
    if o is None or perm is None:
        return None
    if sorted(perm) != list(range(o.rank)):
        return (
            f"transpose dimensions={{{','.join(map(str, perm))}}} is not a permutation of the operand's "
            f"{o.rank} dimensions"
        )
    return Want(o.element_type, tuple(o.dims[p] for p in perm))


@infers("reshape", xla="ShapeVerifier::HandleReshape")
def reshape(s: Site):
    """The operand's element type (the element count is `verifier.element-count`'s)."""
    o = _array(s)
    return None if o is None else Want(o.element_type, None)


@infers("dynamic-reshape", xla="ShapeVerifier::HandleDynamicReshape", dynamic=True)
def dynamic_reshape(s: Site):
    """The operand's element type, one size operand per result dimension, and as many elements (bounded
    dimensions at their bound, ``ShapeUtil::ElementsIn``)."""
    o = _array(s)
    if o is None or not s.shape.is_array:
        return None
    if s.shape.rank + 1 != len(s.operands):
        return f"dynamic-reshape has {len(s.operands) - 1} size operands for a result of rank {s.shape.rank}"
    if _elements(o.dims) != _elements(s.shape.dims):
        return f"dynamic-reshape turns {_elements(o.dims)} elements into {_elements(s.shape.dims)}"
    return Want(o.element_type, None)


def _elements(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


@infers("slice", xla="ShapeInference::InferSliceShape")
def slice_(s: Site):
    o = _array(s)
    sl = slices(s.attrs)
    if o is None or sl is None:
        return None
    if len(sl) != o.rank:
        return f"slice gives {len(sl)} dimensions, but the operand has rank {o.rank}"
    out = []
    for start, limit, stride in sl:
        if stride < 1 or start < 0 or limit < start:
            return f"slice [{start}:{limit}:{stride}] is not a valid slice"
        out.append((limit - start + stride - 1) // stride)
    return Want(o.element_type, tuple(out))


@infers("dynamic-slice", xla="ShapeInference::InferDynamicSliceShape")
def dynamic_slice(s: Site):
    o = _array(s)
    sizes = ints(s.attrs, "dynamic_slice_sizes")
    if o is None or sizes is None:
        return None
    if len(sizes) != o.rank:
        return f"dynamic_slice_sizes names {len(sizes)} dimensions, but the operand has rank {o.rank}"
    return Want(o.element_type, sizes)


@infers(
    "dynamic-update-slice",
    "select-and-scatter",
    "reverse",
    "cholesky",
    "add-dependency",
    xla="ShapeInference::InferDynamicUpdateSliceShape / InferSelectAndScatterShape / InferReverseShape / "
    "InferCholeskyShape",
)
def same_as_operand(s: Site):
    """The operand's shape (the first operand's: the buffer updated, scattered into, reversed...)."""
    return s.operands[0]


@infers("concatenate", xla="ShapeInference::InferConcatOpShape")
def concatenate(s: Site):
    dims = ints(s.attrs, "dimensions")
    if dims is None or len(dims) != 1 or not all(o.is_array for o in s.operands) or not s.operands:
        return None
    d = dims[0]
    first = s.operands[0]
    if not 0 <= d < first.rank:
        return f"concatenate dimension {d} is outside the operands' rank {first.rank}"
    out = list(first.dims)
    out[d] = sum(o.dims[d] for o in s.operands if o.rank == first.rank)
    return Want(first.element_type, tuple(out))


@infers("pad", xla="ShapeInference::InferPadShape")
def pad(s: Site):
    o = _array(s)
    cfg = padding(s.attrs)
    if o is None or cfg is None:
        return None
    if len(cfg) != o.rank:
        return f"padding gives {len(cfg)} dimensions, but the operand has rank {o.rank}"
    return Want(
        o.element_type, tuple(lo + hi + n + max(n - 1, 0) * interior for n, (lo, hi, interior) in zip(o.dims, cfg))
    )


@infers("gather", xla="ShapeInference::InferGatherShape")
def gather(s: Site):
    """Batch dimensions from the start indices (all but ``index_vector_dim``), offset dimensions from
    ``slice_sizes`` (all but the collapsed and operand-batching ones), placed at ``offset_dims``."""
    if len(s.operands) != 2:
        return None
    o, idx = s.operands
    a = s.attrs
    offset = ints(a, "offset_dims")
    collapsed = ints(a, "collapsed_slice_dims", ())
    batching = ints(a, "operand_batching_dims", ())
    sizes = ints(a, "slice_sizes")
    ivd = int_value(a, "index_vector_dim")
    if (
        offset is None
        or collapsed is None
        or batching is None
        or sizes is None
        or ivd is None
        or not o.is_array
        or not idx.is_array
    ):
        return None
    if len(sizes) != o.rank:
        return f"slice_sizes names {len(sizes)} dimensions, but the operand has rank {o.rank}"
    batch = [d for k, d in enumerate(idx.dims) if k != ivd]
    dropped = set(collapsed) | set(batching)
    window = [n for k, n in enumerate(sizes) if k not in dropped]
    rank = len(offset) + len(batch)
    offsets = set(offset)
    out: list[int] = []
    bi = wi = 0
    for i in range(rank):
        if i in offsets:
            out.append(window[wi])
            wi += 1
        else:
            out.append(batch[bi])
            bi += 1
    return Want(o.element_type, tuple(out))


@infers("scatter", xla="ShapeInference::InferScatterShape")
def scatter(s: Site):
    """The operands updated: one array, or a tuple of the first (n-1)/2 operands."""
    n = (len(s.operands) - 1) // 2
    if n < 1 or len(s.operands) != 2 * n + 1:
        return None
    return s.operands[0] if n == 1 else tuple(like(o) for o in s.operands[:n])


@infers("sort", xla="ShapeInference::InferVariadicOpShape (kSort)")
def sort(s: Site):
    if not s.operands:
        return None
    return s.operands[0] if len(s.operands) == 1 else tuple(like(o) for o in s.operands)


@infers("tuple", xla="ShapeInference::InferVariadicOpShape (kTuple)")
def tuple_(s: Site):
    return tuple(like(o) for o in s.operands)


@infers("opt-barrier", xla="ShapeVerifier::HandleOptimizationBarrier")
def opt_barrier(s: Site):
    return s.operands[0] if len(s.operands) == 1 else None


@infers("partition-id", "replica-id", xla="ShapeVerifier::HandlePartitionId / HandleReplicaId")
def device_id(s: Site):
    return Want("u32", ())


@infers("after-all", xla="ShapeVerifier::HandleAfterAll")
def after_all(s: Site):
    return Want("token", ())


@infers("get-dimension-size", xla="ShapeInference::InferGetDimensionSizeShape")
def dimension_size(s: Site):
    return Want("s32", ())


@infers("rng-bit-generator", xla="ShapeVerifier::HandleRngBitGenerator")
def rng_bit_generator(s: Site):
    """A tuple result holds the new state first, of the state operand's shape; the rest is free."""
    if not s.shape.is_tuple or len(s.operands) != 1:
        return None
    if len(s.shape.tuple_shapes) != 2:
        return f"rng-bit-generator returns a tuple of {len(s.shape.tuple_shapes)} elements; XLA expects 2"
    return (like(s.operands[0]), Want(None, None))
