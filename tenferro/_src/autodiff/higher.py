"""Derivatives built from ``jvp`` and ``vjp``: ``hvp``, ``jacfwd``, ``jacrev``, ``hessian``
(the Jacobians batch their basis directions with ``vmap``)."""

from __future__ import annotations

from ..batching import vmap
from ..core.dispatch import dispatch
from ..errors import check_callable
from ..ops import moveaxis, reshape
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .arguments import argument_tuple, check_argnums, resolve_argnums
from .forward import jvp
from .reverse import check_inexact_args, grad, vjp


def hvp(f, primals, tangents):
    """Hessian-vector product by forward-over-reverse: ``jvp(grad(f))``. One forward-mode pass
    through the reverse pass; never forms the Hessian. Returns H @ tangents (same structure
    as the primals)."""
    check_callable("hvp", f)
    primals = argument_tuple("hvp", "primals", primals)
    tangents = argument_tuple("hvp", "tangents", tangents)
    nums = tuple(range(len(primals)))
    g = grad(f, argnums=nums)
    _, hv = jvp(lambda *xs: g(*xs), primals, tangents)
    return hv[0] if len(primals) == 1 else hv


def _basis(x):
    """Unit tangents for every element of ``x`` (real directions), stacked on a leading axis:
    shape ``(x.size,) + x.shape``."""
    n = x.size
    return reshape(dispatch.eye_like(x, n, x.dtype), (n,) + tuple(x.shape))


def _checked_nums(name, f, argnums) -> tuple:
    check_callable(name, f)
    return check_argnums(name, argnums)


def _checked_args(name, args, nums) -> list:
    """The arguments as tensors; differentiated ones must exist and be float or complex (an
    integer input's derivative would silently be zero)."""
    resolve_argnums(name, nums, len(args))
    args = [tensor_of(a) for a in args]
    check_inexact_args(name, [args[n] for n in nums], nums)
    return args


def _batch_last(j, out_shape, in_shape):
    """A Jacobian with its basis axis first, ``(in.size,) + out``, as ``out + in``."""
    k = len(out_shape)
    j = moveaxis(j, 0, k) if k else j
    return reshape(j, tuple(out_shape) + tuple(in_shape))


def jacfwd(f, argnums=0):
    """Jacobian by forward mode: one ``jvp`` mapped (``vmap``) over the basis of tangents, so
    the primal computation runs once and every tangent direction in one batched pass. The
    result has shape ``out.shape + in.shape``. Complex inputs are treated as holomorphic
    directions."""
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    nums = _checked_nums("jacfwd", f, argnums)

    def jac(*args):
        args = _checked_args("jacfwd", args, nums)
        res = []
        for n in nums:
            x = args[n]

            def fn(xi, n=n):
                full = list(args)
                full[n] = xi
                return f(*full)

            if x.size == 0:
                out_flat, otree = tree_flatten(fn(x))
                per_out = [dispatch.full(tuple(o.shape) + tuple(x.shape), 0, o.dtype)
                           for o in out_flat]
            else:
                cols = vmap(lambda e, fn=fn, x=x: jvp(fn, (x,), (e,))[1])(_basis(x))
                out_flat, otree = tree_flatten(cols)
                per_out = [_batch_last(c, tuple(c.shape[1:]), x.shape) for c in out_flat]
            res.append(tree_unflatten(otree, per_out))
        return res[0] if single else tuple(res)

    return jac


def jacrev(f, argnums=0):
    """Jacobian by reverse mode: one forward pass, then one ``vjp`` mapped (``vmap``) over the
    basis of cotangents of each output, reusing the forward's saved values (shape
    ``out + in``). For complex inputs rows are the conjugate-convention gradients of each real
    output."""
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    nums = _checked_nums("jacrev", f, argnums)

    def jac(*args):
        args = _checked_args("jacrev", args, nums)

        def fn(*diff):
            full = list(args)
            for n, d in zip(nums, diff):
                full[n] = d
            return f(*full)

        out, pull = vjp(fn, *[args[n] for n in nums])
        oflat, otree = tree_flatten(out)
        per_in = [[] for _ in nums]
        for k, o in enumerate(oflat):
            if o.size == 0:
                rows = [dispatch.full((0,) + tuple(args[n].shape), 0, args[n].dtype)
                        for n in nums]
            else:
                zeros = [dispatch.zeros_like(x) for x in oflat]

                def pull_k(e, k=k, zeros=zeros):
                    cts = list(zeros)
                    cts[k] = e
                    return tuple(pull(tree_unflatten(otree, cts)))

                rows = vmap(pull_k)(_basis(o))
            for i, n in enumerate(nums):
                per_in[i].append(reshape(rows[i], tuple(o.shape) + tuple(args[n].shape)))
        res = [tree_unflatten(otree, p) for p in per_in]
        return res[0] if single else tuple(res)

    return jac


def hessian(f, argnums=0):
    """Dense Hessian, forward-over-reverse: ``jacfwd(jacrev(f))``."""
    return jacfwd(jacrev(f, argnums), argnums)
