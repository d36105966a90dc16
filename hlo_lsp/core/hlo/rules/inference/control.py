"""Shape inference of the calling opcodes: the result is the called computation's root shape. (Their
operands against the callee's parameters are `verifier.called-parameters`.)"""

from __future__ import annotations

from hlo_lsp.core.hlo.rules.inference import NEEDS_CALLEE, Site, differs, infers
from hlo_lsp.core.shapes import Shape


@infers("fusion", "call", "while", xla="ShapeVerifier::HandleFusion / HandleCall / HandleWhile (the body's root)")
def callee_root(s: Site):
    """The root of ``calls=``/``to_apply=``, or of ``body=`` for a while (the line names the condition
    first or the body first; the body is the computation whose root is not pred[])."""
    if s.opcode != "while":
        return s.callee_root(0)
    if s.root is None:
        return NEEDS_CALLEE
    roots = [s.callee_root(k) for k in range(len(s.called))]
    bodies = [r for r in roots if isinstance(r, Shape) and not (r.is_array and r.element_type == "pred" and not r.dims)]
    return bodies[0] if len(bodies) == 1 else None


@infers("conditional", xla="ShapeVerifier::HandleConditional")
def conditional(s: Site):
    """Every branch's root (the first that differs is reported)."""
    if s.root is None:
        return NEEDS_CALLEE
    roots = [s.callee_root(k) for k in range(len(s.called))]
    roots = [r for r in roots if r is not None]
    for r in roots:
        if differs(r, s.shape):
            return r
    return None
