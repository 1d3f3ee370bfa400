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
    """Hessian-vector product ``H(primals) @ tangents`` of a real scalar function.

    Computed forward-over-reverse, ``jvp(grad(f))``: one forward-mode pass through the
    reverse pass, at a few times the cost of one gradient, never forming the Hessian (what
    Newton-Krylov and trust-region optimisers need).

    Parameters
    ----------
    f : callable
        A function of the primals returning a real one-element tensor (as for ``grad``).
    primals : tuple
        The point (a tuple or list of tensors or pytrees); every argument is differentiated.
    tangents : tuple
        The vector, with the structure, shapes and dtypes of ``primals``.

    Returns
    -------
    Tensor or tuple
        ``H @ tangents``: for one primal a tensor (pytree) shaped like it, else a tuple with
        one entry per primal (the blocks of the full Hessian applied to all tangents).

    Raises
    ------
    tenferro.errors.GradientError, tenferro.errors.DTypeError
        As ``grad`` (non-scalar or complex output, integer primal) and as ``jvp``
        (``primals``/``tangents`` not tuples, mismatched structure).

    Notes
    -----
    For complex primals the product is the derivative of the conjugate-convention gradient
    (``grad``) along ``tangents``: the real Hessian of ``f`` over (Re z, Im z) applied to
    the tangent, written back as a complex number.

    Examples
    --------
    >>> import tenferro as tf
    >>> f = lambda x: tf.sum(x ** 3)
    >>> tf.hvp(f, (tf.tensor([1.0, 2.0]),), (tf.tensor([1.0, 1.0]),))
    tensor([ 6., 12.])
    """
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
    """Make a function returning the Jacobian of ``f`` by forward mode.

    One ``jvp`` per input element, all batched by ``vmap`` into one pass (the primal runs
    once): efficient when the inputs are fewer than the outputs (else use ``jacrev``).

    Parameters
    ----------
    f : callable
        The function; its output may be a tensor or a pytree of tensors.
    argnums : int or tuple of int, optional
        The positional argument(s) to differentiate (default 0); a tuple gives a tuple of
        Jacobians.

    Returns
    -------
    callable
        ``jacfwd(f)(*args)``: for each output leaf ``o`` and argument ``x`` a tensor of shape
        ``o.shape + x.shape`` with entries ``d o[i] / d x[j]`` (the output's pytree kept).

    Raises
    ------
    tenferro.errors.GradientError
        ``f`` is not callable, or ``argnums`` is malformed or out of range.
    tenferro.errors.DTypeError
        A differentiated argument is an integer or boolean.

    Notes
    -----
    For complex inputs the basis directions are the real unit tangents, so the Jacobian is
    ``d o / d Re x``: the complex derivative for a holomorphic ``f``. Non-differentiable
    points follow each primitive's convention. ``jacfwd`` and ``jacrev`` agree for real
    functions.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.jacfwd(lambda x: x ** 2)(tf.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    >>> tf.jacfwd(lambda x: tf.stack([x[0] * x[1], x[0]]))(tf.tensor([2.0, 3.0]))
    tensor([[3., 2.],
            [1., 0.]])
    """
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
    """Make a function returning the Jacobian of ``f`` by reverse mode.

    One forward pass, then one ``vjp`` per output element, batched by ``vmap`` and reusing
    the forward's saved values: efficient when the outputs are fewer than the inputs (else
    use ``jacfwd``).

    Parameters
    ----------
    f : callable
        The function; its output may be a tensor or a pytree of tensors.
    argnums : int or tuple of int, optional
        The positional argument(s) to differentiate (default 0); a tuple gives a tuple of
        Jacobians.

    Returns
    -------
    callable
        ``jacrev(f)(*args)``: for each output leaf ``o`` and argument ``x`` a tensor of shape
        ``o.shape + x.shape`` (the same layout as ``jacfwd``).

    Raises
    ------
    tenferro.errors.GradientError
        ``f`` is not callable, or ``argnums`` is malformed or out of range.
    tenferro.errors.DTypeError
        A differentiated argument is an integer or boolean.

    Notes
    -----
    For complex inputs each row is the conjugate-convention gradient (``grad``) of one real
    output element, ``dRe o/dRe x + i dRe o/dIm x``; for complex outputs the rows are the
    pullbacks of the real unit cotangents. Non-differentiable points follow each primitive's
    convention.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.jacrev(lambda x: x ** 2)(tf.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    >>> tf.jacrev(lambda x: tf.sum(x) * x)(tf.tensor([1.0, 2.0]))
    tensor([[4., 1.],
            [2., 5.]])
    """
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
    """Make a function returning the dense Hessian of the real scalar function ``f``.

    Forward-over-reverse, ``jacfwd(jacrev(f))``: one gradient, then its Jacobian by batched
    forward mode. For a Hessian you only apply to vectors, ``hvp`` is cheaper.

    Parameters
    ----------
    f : callable
        A function returning a real one-element tensor.
    argnums : int or tuple of int, optional
        The argument(s) to differentiate (default 0). With a tuple, block ``[i][j]`` is the
        second derivative with respect to arguments ``argnums[i]`` and ``argnums[j]``.

    Returns
    -------
    callable
        ``hessian(f)(*args)``: for one argument ``x`` and a 0-d output, a tensor of shape
        ``x.shape + x.shape`` (in general ``out.shape + x.shape + x.shape``).

    Raises
    ------
    tenferro.errors.GradientError, tenferro.errors.DTypeError
        As ``jacrev`` and ``jacfwd``.

    Notes
    -----
    Second derivatives at non-differentiable points follow the primitives' conventions
    (e.g. ``abs''`` is 0 everywhere, no delta at 0).

    Examples
    --------
    >>> import tenferro as tf
    >>> f = lambda x: x[0] ** 2 * x[1]
    >>> tf.hessian(f)(tf.tensor([1.0, 2.0]))
    tensor([[4., 2.],
            [2., 0.]])
    """
    return jacfwd(jacrev(f, argnums), argnums)
