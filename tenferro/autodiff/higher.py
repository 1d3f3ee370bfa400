"""Derivatives built from ``jvp`` and ``vjp``: ``hvp``, ``jacfwd``, ``jacrev``, ``hessian``."""

from __future__ import annotations

from ..core.dispatch import dispatch
from ..ops import reshape, stack
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .forward import jvp
from .reverse import grad, vjp


def hvp(f, primals, tangents):
    """Hessian-vector product by forward-over-reverse: ``jvp(grad(f))``. One forward-mode pass
    through the reverse pass; never forms the Hessian. Returns H @ tangents (same structure
    as the primals)."""
    primals, tangents = tuple(primals), tuple(tangents)
    nums = tuple(range(len(primals)))
    g = grad(f, argnums=nums)
    _, hv = jvp(lambda *xs: g(*xs), primals, tangents)
    return hv[0] if len(primals) == 1 else hv


def _basis(x):
    """Unit tangents for every element of ``x`` (real directions)."""
    n = x.size
    eye = dispatch.eye_like(x, n, x.dtype) if n else None
    return [reshape(eye[i], x.shape) for i in range(n)]


def jacfwd(f, argnums=0):
    """Jacobian by forward mode: one ``jvp`` per input element. The result has shape
    ``out.shape + in.shape``. Complex inputs are treated as holomorphic directions."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def jac(*args):
        args = [tensor_of(a) for a in args]
        res = []
        for n in nums:
            x = args[n]

            def fn(xi, n=n):
                full = list(args)
                full[n] = xi
                return f(*full)

            cols = [jvp(fn, (x,), (e,))[1] for e in _basis(x)]
            out_flat, otree = tree_flatten(cols[0]) if cols else tree_flatten(fn(x))
            per_out = []
            for k in range(len(out_flat)):
                ck = [tree_flatten(c)[0][k] for c in cols]
                o = out_flat[k]
                if not ck:
                    per_out.append(dispatch.full(tuple(o.shape) + tuple(x.shape), 0, o.dtype))
                    continue
                j = stack(ck, axis=-1)
                per_out.append(reshape(j, tuple(o.shape) + tuple(x.shape)))
            res.append(tree_unflatten(otree, per_out))
        return res[0] if single else tuple(res)

    return jac


def jacrev(f, argnums=0):
    """Jacobian by reverse mode: one ``vjp`` per output element (shape ``out + in``).
    For complex inputs rows are the conjugate-convention gradients of each real output."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def jac(*args):
        args = [tensor_of(a) for a in args]

        def fn(*diff):
            full = list(args)
            for n, d in zip(nums, diff):
                full[n] = d
            return f(*full)

        out, pull = vjp(fn, *[args[n] for n in nums])
        oflat, otree = tree_flatten(out)
        per_in = [[] for _ in nums]
        for k, o in enumerate(oflat):
            rows = [[] for _ in nums]
            for e in _basis(o):
                cts = [dispatch.zeros_like(x) for x in oflat]
                cts[k] = e
                gs = pull(tree_unflatten(otree, cts))
                for i, g in enumerate(gs):
                    rows[i].append(g)
            for i, n in enumerate(nums):
                x = args[n]
                if rows[i]:
                    j = reshape(stack(rows[i], 0), tuple(o.shape) + tuple(x.shape))
                else:
                    j = dispatch.full(tuple(o.shape) + tuple(x.shape), 0, x.dtype)
                per_in[i].append(j)
        res = [tree_unflatten(otree, p) for p in per_in]
        return res[0] if single else tuple(res)

    return jac


def hessian(f, argnums=0):
    """Dense Hessian, forward-over-reverse: ``jacfwd(jacrev(f))``."""
    return jacfwd(jacrev(f, argnums), argnums)
