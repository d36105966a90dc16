"""Shape inference of the collectives and their asynchronous start/done pairs, and of copy-start/done.

The shard count of all-gather and reduce-scatter is the size of a replica group where XLA's verifier compares
it (``CheckCommonAllGatherInvariants`` and ``HandleReduceScatter``: ``subgroup_size == 1 || shard_count ==
subgroup_size``); when the group size is not in the text (no groups written, or cross-replica-and-partition
mode, where it is multiplied by the module's partition count), only what holds for any shard count is
checked. Start ops' extra tuple elements (context, scratch) are left free: their form changed across XLA
versions."""

from __future__ import annotations

from hlo_lsp.core.hlo.rules.inference import NEEDS_CALLEE, Site, Want, infers, like
from hlo_lsp.core.hlo.rules.inference.attrs import group_size, ints, raw

_FREE = Want(None, None)


def _subgroup(s: Site) -> int | None:
    """The verifier's subgroup size when the text gives it (``GetSubgroupSize``); None otherwise."""
    has_channel = raw(s.attrs, "channel_id") is not None
    global_ids = raw(s.attrs, "use_global_device_ids") == "true"
    if has_channel and not global_ids:
        return None  # kCrossReplicaAndPartition: times the module's partition count
    g = group_size(s.attrs)
    return g if g and g > 1 else None


def _shard_count(s: Site, operand, out, d: int) -> int | None:
    """The all-gather shard count: the group size when the text gives it, else XLA's own
    ``CeilOfRatio(written, operand)`` of the first operand (so a written size that is no multiple differs)."""
    g = _subgroup(s)
    if g is not None:
        return g
    if not (operand.is_array and out.is_array and out.rank == operand.rank and 0 <= d < operand.rank):
        return None
    n = operand.dims[d]
    return -(-out.dims[d] // n) if n else None


def _gathered(operand, d: int, shards: int | None) -> Want | None:
    """One operand gathered along ``d`` into ``shards`` pieces (None: that dimension left free)."""
    if not operand.is_array or not 0 <= d < operand.rank:
        return None
    dims: list[int | None] = list(operand.dims)
    dims[d] = None if shards is None else operand.dims[d] * shards
    return Want(operand.element_type, tuple(dims))


def _gather_all(s: Site, outs) -> tuple | Want | str | None:
    """``CheckCommonAllGatherInvariants`` then ``InferAllGatherShape``: every operand times one shard count."""
    dims = ints(s.attrs, "dimensions")
    if dims is None or len(dims) != 1 or not s.operands:
        return None
    d = dims[0]
    if len(s.operands) == 1:
        return _gathered(s.operands[0], d, _shard_count(s, s.operands[0], outs, d))
    if not outs.is_tuple or len(outs.tuple_shapes) != len(s.operands):
        return tuple(like(o) for o in s.operands)  # the count is wrong: any per-element answer shows it
    shards = _shard_count(s, s.operands[0], outs.tuple_shapes[0], d)
    got = [_gathered(o, d, shards) for o in s.operands]
    return None if None in got else tuple(got)


@infers("all-gather", xla="ShapeInference::InferAllGatherShape")
def all_gather(s: Site):
    return _gather_all(s, s.shape)


@infers("all-gather-start", xla="ShapeInference::InferAllGatherStartShape")
def all_gather_start(s: Site):
    """(operands, gathered results)."""
    if not s.shape.is_tuple or len(s.shape.tuple_shapes) < 2:
        return None
    ins = s.operands[0] if len(s.operands) == 1 else tuple(like(o) for o in s.operands)
    out = _gather_all(s, s.shape.tuple_shapes[1])
    if out is None or isinstance(out, str):
        return out
    return (like(ins) if not isinstance(ins, tuple) else ins, out) + (_FREE,) * (len(s.shape.tuple_shapes) - 2)


def _operands(s: Site):
    """One operand's shape, or the tuple of several (``InferAllReduceShape``, ``InferCollectivePermuteShape``)."""
    return s.operands[0] if len(s.operands) == 1 else tuple(like(o) for o in s.operands)


@infers("all-reduce", "all-reduce-start", xla="ShapeInference::InferAllReduceShape")
def all_reduce(s: Site):
    return _operands(s) if s.operands else None


@infers("reduce-scatter", xla="ShapeInference::InferReduceScatterShape")
def reduce_scatter(s: Site):
    dims_attr = ints(s.attrs, "dimensions")
    if dims_attr is None or len(dims_attr) != 1 or len(s.operands) != 1 or not s.shape.is_array:
        return None
    o, d = s.operands[0], dims_attr[0]
    if not o.is_array or not 0 <= d < o.rank or o.rank != s.shape.rank:
        return None
    dims: list[int | None] = list(o.dims)
    g = _subgroup(s)
    if g is not None:
        if o.dims[d] % g:
            return f"reduce-scatter of {o.dims[d]} along dimension {d} is not divisible by the group size {g}"
        dims[d] = o.dims[d] // g
    else:
        w = s.shape.dims[d]  # XLA's own shard count: CeilOfRatio(operand, written)
        if not w:
            return None
        shard = -(-o.dims[d] // w)
        if o.dims[d] % shard:
            return f"reduce-scatter of {o.dims[d]} along dimension {d} is not divisible by its shard count {shard}"
        dims[d] = o.dims[d] // shard
    return Want(o.element_type, tuple(dims))


@infers("all-to-all", xla="ShapeInference::InferAllToAllShape / InferAllToAllTupleShape")
def all_to_all(s: Site):
    """With a split dimension, the operand's shape; without, the tuple of the operands."""
    if raw(s.attrs, "dimensions") is not None:
        return s.operands[0] if len(s.operands) == 1 else None
    return tuple(like(o) for o in s.operands)


@infers("collective-permute", xla="ShapeInference::InferCollectivePermuteShape")
def collective_permute(s: Site):
    if len(s.operands) == 4 and s.operands[0].is_array and not s.operands[2].is_array:
        return s.operands[1]  # in place: the output buffer
    return _operands(s) if s.operands else None


@infers("collective-permute-start", xla="ShapeInference::InferCollectivePermuteStartShape")
def collective_permute_start(s: Site):
    """(operand, operand, context...) (in place: (input buffer, output buffer, ...)); the context is free."""
    if not s.shape.is_tuple or len(s.shape.tuple_shapes) < 2 or not s.operands:
        return None
    if len(s.operands) == 4 and s.operands[0].is_array and not s.operands[2].is_array:
        a, b = like(s.operands[0]), like(s.operands[1])
    else:
        a = b = like(s.operands[0]) if len(s.operands) == 1 else tuple(like(o) for o in s.operands)
    return (a, b) + (_FREE,) * (len(s.shape.tuple_shapes) - 2)


@infers(
    "all-gather-done",
    "all-reduce-done",
    "collective-permute-done",
    "copy-done",
    "async-done",
    xla="ShapeInference::InferAllGatherDoneShape / InferCollectivePermuteDoneShape / "
    "ShapeVerifier::HandleCopyDone / HandleAsyncDone",
)
def done(s: Site):
    """The result of the start: its element 1 (copy-done: element 0, the destination); all-reduce-done
    forwards its operand."""
    o = s.operands[0] if len(s.operands) == 1 else None
    if o is None:
        return None
    if s.opcode == "all-reduce-done":
        return o
    if not o.is_tuple:
        return None
    k = 0 if s.opcode == "copy-done" else 1
    return o.tuple_shapes[k] if k < len(o.tuple_shapes) else None


@infers("copy-start", xla="ShapeVerifier::HandleCopyStart")
def copy_start(s: Site):
    """(operand, operand, u32[]): destination, source, context."""
    if len(s.operands) != 1:
        return None
    o = like(s.operands[0])
    return (o, o, Want("u32", ()))


@infers("async-start", xla="ShapeVerifier::CheckAsyncOpComputationShapes / HandleAsyncStart")
def async_start(s: Site):
    """((operands), the wrapped computation's root, context...)."""
    if not s.shape.is_tuple or len(s.shape.tuple_shapes) < 2:
        return None
    root = s.callee_root()
    if isinstance(root, str):  # NEEDS_CALLEE
        return NEEDS_CALLEE
    r = like(root) if root is not None else _FREE
    return (tuple(like(o) for o in s.operands), r) + (_FREE,) * (len(s.shape.tuple_shapes) - 2)


@infers("async-update", xla="ShapeVerifier::HandleAsyncUpdate")
def async_update(s: Site):
    return s.operands[0] if len(s.operands) == 1 else None
