"""``tenferro.vmap``: map a function over an axis of its arguments."""

from __future__ import annotations

import functools

from chainrules.primitives._batching import move_axis

from ..core.dispatch import dispatch, new_trace
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .trace import BatchTrace, BatchTracer


def _axes_for(axes, tree, what: str) -> list:
    """One axis (an int or ``None``) per leaf of ``tree``: ``axes`` is an int/``None`` for the
    whole tree, or a tuple/list/dict prefix of it (JAX's convention)."""
    if axes is None or isinstance(axes, int):
        return [axes] * len(tree_flatten(tree)[0])
    if isinstance(axes, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(axes) != len(tree):
            raise ShapeError(
                f"vmap: {what} has {len(axes)} entries for {len(tree)} values; give one per "
                f"value, or a single int/None for all."
            )
        return [a for sub_axes, sub in zip(axes, tree) for a in _axes_for(sub_axes, sub, what)]
    if isinstance(axes, dict) and isinstance(tree, dict):
        if set(axes) != set(tree):
            raise ShapeError(f"vmap: {what} keys {sorted(axes)} differ from {sorted(tree)}.")
        return [a for k in sorted(tree) for a in _axes_for(axes[k], tree[k], what)]
    raise ShapeError(
        f"vmap: {what} {axes!r} does not match the structure of the values "
        f"({type(tree).__name__}); use an int, None, or a tuple/list/dict prefix."
    )


def _normalize(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ShapeError(f"vmap: {what} axis {axis} is out of range for a value of rank {ndim}.")
    return axis % ndim


def vmap(f, in_axes=0, out_axes=0, axis_size: int | None = None):
    """Vectorise ``f`` over an axis of its arguments (as ``jax.vmap``/``torch.func.vmap``).

    ``vmap(f)(xs)`` equals stacking ``f(x)`` for every ``x`` along axis 0 of ``xs``, but is
    computed in one batched pass: every primitive has a batching rule, so ``f`` is written
    for one member and runs for all at once.

    Parameters
    ----------
    f : callable
        The function for one batch member; returns a tensor or a pytree of tensors.
    in_axes : int, None, or tuple/list/dict, optional
        The mapped axis of each positional argument: an int (negative counts from the end),
        ``None`` for an argument shared by every member, or a tuple/list/dict prefix of the
        arguments' pytree giving one of those per leaf. Default 0. Keyword arguments are
        mapped over axis 0 (as in JAX).
    out_axes : int, None, or tuple/list/dict, optional
        Where the batch axis goes in each output (same forms; ``None`` requires an output
        that is the same for every member). Default 0.
    axis_size : int, optional
        The batch size, needed only when no argument is mapped.

    Returns
    -------
    callable
        The batched function, taking the same arguments as ``f`` with the extra axes.

    Raises
    ------
    tenferro.errors.ShapeError
        Mapped axes of different sizes, an axis out of range, an ``in_axes``/``out_axes``
        prefix that does not match the arguments, no mapped argument and no ``axis_size``,
        or ``out_axes=None`` for an output that differs between members.
    tenferro.errors.ConcretizationError
        ``f`` needs one member's value (``if x > 0``, ``float(x)``, an SVD truncated by a
        cutoff): write it with ``tenferro.where`` or move the decision out.

    Notes
    -----
    Works in eager and traced mode and nests with ``grad``/``jvp``/``jit`` and itself in any
    order; ``custom_vjp``/``custom_jvp`` rules and checkpoints are batched, not dropped.
    Random numbers drawn inside ``f`` (``tenferro.randn``...) are drawn once and shared by
    all members: pass a batch of draws in for independent ones. Derivatives through ``vmap``
    are those of the batched primitives, with their conventions at non-differentiable points
    and for complex inputs unchanged (design/vmap.md).

    Examples
    --------
    >>> import tenferro as tf
    >>> xs = tf.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> tf.vmap(lambda v: tf.dot(v, v))(xs)
    tensor([ 5., 25., 61.])

    A shared argument, and per-example gradients:

    >>> w = tf.tensor([1.0, -1.0])
    >>> tf.vmap(lambda x, w: tf.dot(x, w), in_axes=(0, None))(xs, w)
    tensor([-1., -1., -1.])
    >>> tf.vmap(tf.grad(lambda x: tf.sum(x ** 2)))(xs)
    tensor([[ 2.,  4.],
            [ 6.,  8.],
            [10., 12.]])
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        flat, tree = tree_flatten((args, kwargs))
        axes = _axes_for(in_axes, args, "in_axes") + [0] * len(tree_flatten(kwargs)[0])
        ins, size = [], axis_size
        for x, ax in zip(flat, axes):
            if ax is None:
                ins.append(x)
                continue
            x = tensor_of(x)
            ax = _normalize(ax, x.ndim, "in_axes")
            n = x.shape[ax]
            if size is None:
                size = n
            elif n != size:
                raise ShapeError(
                    f"vmap: mapped axes have different sizes ({size} and {n}, in_axes {axes}); "
                    f"every mapped argument needs the same batch size."
                )
            ins.append((x, ax))
        if size is None:
            raise ShapeError("vmap: no argument is mapped (all in_axes are None); give "
                             "axis_size to say how many members the batch has.")
        with new_trace(lambda level: BatchTrace(level, size)) as tr:
            boxed = [BatchTracer(tr, v[0], v[1]) if isinstance(v, tuple) else v for v in ins]
            a, kw = tree_unflatten(tree, boxed)
            out = f(*a, **kw)
            oflat, otree = tree_flatten(out)
            outs = [tr.full_raise(tensor_of(o)) for o in oflat]
        oaxes = _axes_for(out_axes, out, "out_axes")
        res = [_place(o, ax, size) for o, ax in zip(outs, oaxes)]
        return tree_unflatten(otree, res)

    wrapped.__name__ = f"vmap({getattr(f, '__name__', 'f')})"
    return wrapped


def _place(o: BatchTracer, ax, size: int) -> Tensor:
    """An output with its batch axis at ``ax`` (shared outputs are broadcast)."""
    if ax is None:
        if o.bdim is not None:
            raise ShapeError(
                f"vmap: out_axes None for an output {o.shape} that differs per batch member; "
                f"give it an out axis."
            )
        return o.val
    v, d = o.val, o.bdim
    if d is None:
        shape = (size,) + tuple(v.shape)
        v, d = dispatch.broadcast_in_dim(v, shape, tuple(range(1, len(shape)))), 0
    return move_axis(dispatch, v, d, _normalize(ax, v.ndim, "out_axes"))
