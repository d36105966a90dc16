"""XLA's shape inference, one function per opcode family, and the comparison with a written result shape.

``HloVerifier``'s ``ShapeVerifier`` recomputes every instruction's shape from its operands and attributes
(``ShapeInference::Infer*Shape``, or an explicit check in ``ShapeVerifier::Handle*``) and rejects the module
when the written shape differs. Each function here follows one of those and says which; the registry maps an
opcode to it (`REGISTRY`, filled by the ``@infers`` decorator in the family modules).

An inference function takes a `Site` (the written result, the operands' shapes as their definitions give
them, the attribute text, and the called computations' root shapes when the caller can give them) and returns
what XLA infers: a `Want` (an array whose element type or dimensions may be left free), a tuple of those, a
`Shape` copied from an operand, or a string (the reason XLA rejects the instruction outright). None means
nothing to check (an attribute absent or unreadable, an operand form the function does not know).
`NEEDS_CALLEE` means the answer needs a called computation's root, which the caller did not give.

`mismatch` compares as the laxest ``ShapeVerifier::CheckShape`` does (not layout-sensitive, mixed precision
allowed: ``ShapeUtil::CompatibleIgnoringFpPrecision``): layouts, tiles and memory spaces are never compared,
floating-point types are one class, and an instruction with a dynamic dimension anywhere is left alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple, Union

from hlo_lsp.core.shapes import Shape, shape_text

_log = logging.getLogger(__name__)
FLOATS = frozenset(
    "f16 bf16 f32 f64 f8e5m2 f8e4m3fn f8e4m3b11fnuz f8e5m2fnuz f8e4m3fnuz f8e4m3 f8e3m4 f8e8m0fnu f4e2m1fn".split()
)


class Want(NamedTuple):
    """An array XLA infers: ``etype`` None leaves the element type free, ``dims`` None the dimensions, and a
    None among ``dims`` that one dimension."""

    etype: str | None
    dims: tuple[int | None, ...] | None


Expected = Union[Want, Shape, tuple, str, None]  # noqa: UP007 - a runtime alias: `X | None` needs 3.10's types.UnionType of classes only
NEEDS_CALLEE = "<needs the called computation>"


class Site(NamedTuple):
    """What an inference function reads of one instruction."""

    opcode: str
    shape: Shape  # as written
    operands: tuple[Shape, ...]  # each operand's definition's shape
    attrs: str  # the attribute text (`attrs.attr_text`)
    called: tuple[str, ...] = ()  # called computations, in the order the line names them
    root: Callable[[str], Shape | None] | None = None  # computation name -> its root's shape (None: unknown)

    def callee_root(self, k: int = 0) -> Shape | str | None:
        """The root shape of the k-th called computation; `NEEDS_CALLEE` when the caller gave no lookup,
        None when unknown."""
        if self.root is None:
            return NEEDS_CALLEE
        return self.root(self.called[k]) if k < len(self.called) else None


class Rule(NamedTuple):
    fn: Callable[[Site], Expected]
    xla: str  # the XLA function the rule follows
    dynamic: bool  # reads bounded dynamic dimensions at their bound (else a dynamic instruction is skipped)


REGISTRY: dict[str, Rule] = {}


def infers(*opcodes: str, xla: str, dynamic: bool = False):
    """Register the decorated function as the shape inference of ``opcodes``, following XLA's ``xla``
    (``dynamic``: it reads bounded dynamic dimensions at their bound)."""

    def deco(fn):
        for op in opcodes:
            REGISTRY[op] = Rule(fn, xla, dynamic)
        return fn

    return deco


def like(s: Shape, etype: bool = True) -> Want | tuple:
    """A `Want` of exactly ``s`` (tuples element by element); ``etype`` False leaves element types free."""
    if s.is_tuple:
        return tuple(like(t, etype) for t in s.tuple_shapes)
    return Want(s.element_type if etype else None, s.dims)


def _fp(t: str) -> str:
    return "<float>" if t in FLOATS else t


def differs(want: Expected, got: Shape) -> bool:
    """True when ``got`` is not what ``want`` allows (iterative over tuples)."""
    work = [(want, got)]
    while work:
        w, g = work.pop()
        if isinstance(w, Shape):
            w = like(w)
        if isinstance(w, tuple) and not isinstance(w, Want):
            if not g.is_tuple or len(g.tuple_shapes) != len(w):
                return True
            work.extend(zip(w, g.tuple_shapes))
            continue
        if g.is_tuple:
            return True
        if not isinstance(w, Want):  # a message or None: no rule result reaches here as one
            continue
        if w.etype is not None and _fp(w.etype) != _fp(g.element_type):
            return True
        if w.dims is not None:
            if len(w.dims) != len(g.dims):
                return True
            if any(a is not None and a != b for a, b in zip(w.dims, g.dims)):
                return True
    return False


def want_text(w: Expected) -> str:
    """``f32[4,?]`` / ``(f32[4], s32[4])`` / ``any[4]`` for messages (``?``: any size)."""
    if isinstance(w, Shape):
        return shape_text(w, with_layout=False)
    if isinstance(w, tuple) and not isinstance(w, Want):
        return "(" + ", ".join(want_text(x) for x in w) + ")"
    if not isinstance(w, Want):  # a message or None: no rule result reaches here as one
        return "<shape>"
    t = w.etype or "<type>"
    if w.dims is None:
        return f"{t}[...]"
    return f"{t}[{','.join('?' if d is None else str(d) for d in w.dims)}]"


def _dynamic(s: Shape, bounded_ok: bool = False) -> bool:
    """A dynamic dimension anywhere in ``s`` (``bounded_ok``: only an unbounded ``?`` counts)."""
    work = [s]
    while work:
        x = work.pop()
        if x.is_tuple:
            work.extend(x.tuple_shapes)
        elif (any(x.dynamic) and not bounded_ok) or any(d < 0 for d in x.dims):
            return True
    return False


def mismatch(site: Site) -> tuple[str, str] | None:
    """(message, XLA function) when XLA's verifier rejects ``site``'s written shape; None when it accepts it,
    when the opcode has no rule, or when the rule cannot decide. `NEEDS_CALLEE` is returned as the message
    when the answer needs a callee root the site does not give."""
    rule = REGISTRY.get(site.opcode)
    if rule is None or _dynamic(site.shape, rule.dynamic) or any(_dynamic(o, rule.dynamic) for o in site.operands):
        return None
    try:
        want = rule.fn(site)
    except Exception:  # operands or attributes of a form the rule does not know: nothing to say (logged)
        _log.debug("shape inference of %s failed", site.opcode, exc_info=True)
        return None
    if want is None:
        return None
    if isinstance(want, str):
        return want, rule.xla
    if not differs(want, site.shape):
        return None
    return (
        f"XLA infers {want_text(want)} for this {site.opcode}, but it is written "
        f"{shape_text(site.shape, with_layout=False)}",
        rule.xla,
    )


from hlo_lsp.core.hlo.rules.inference import (  # noqa: E402,F401  (the families register themselves)
    arrays,
    collectives,
    contractions,
    control,
)
