"""Per-argument activity for ``grad``/``value_and_grad``/``vjp`` (Enzyme's annotations).

An activity spec has one entry per positional argument:

``"active"``
    differentiated: its gradient (cotangent) is returned (Enzyme's ``Active``; with
    ``accumulate_into=`` a caller's buffer receives it, Enzyme's ``Duplicated``);
``"const"``
    not differentiated by this transformation, not even internally: it is never watched by
    the tape, so no operation is recorded for it and the backward pass computes nothing for it
    (Enzyme's ``Const``; JAX's "not in argnums"). Enclosing transformations still see it.

JAX's ``argnums`` remains the default spelling: ``argnums=(0, 2)`` is the spec with entries
0 and 2 active and the rest const. See design/vmap.md (activity) for the full mapping.
"""

from __future__ import annotations

from ..errors import GradientError, ShapeError
from ..pytree import tree_flatten, tree_unflatten

ACTIVE, CONST = "active", "const"
_KINDS = (ACTIVE, CONST)


def check_spec(activity, n_args: int, what: str) -> tuple:
    """The spec as a tuple of ``"active"``/``"const"``, one per argument (clear errors)."""
    spec = tuple(activity)
    bad = [a for a in spec if a not in _KINDS]
    if bad:
        raise GradientError(
            f"{what}: activity entries must be 'active' or 'const', got {bad[0]!r}."
        )
    if len(spec) != n_args:
        raise GradientError(
            f"{what}: the activity spec has {len(spec)} entries for {n_args} positional "
            f"arguments; give one ('active' or 'const') per argument."
        )
    return spec


def active_argnums(activity, argnums, n_args: int, what: str) -> tuple:
    """The differentiated argument positions from ``activity`` (when given) or ``argnums``."""
    if activity is None:
        return (argnums,) if isinstance(argnums, int) else tuple(argnums)
    spec = check_spec(activity, n_args, what)
    nums = tuple(i for i, a in enumerate(spec) if a == ACTIVE)
    if not nums:
        raise GradientError(f"{what}: the activity spec marks no argument 'active'.")
    return nums


def accumulate(buffers, grads: tuple, what: str) -> tuple:
    """Add each gradient into its caller-owned buffer in place (``None`` entries: no buffer)
    and return the gradients with the buffers in their place (Enzyme's ``Duplicated``)."""
    if len(grads) == 1:  # one differentiated argument: the buffer itself (or a pytree)
        buffers = (buffers,)
    if not isinstance(buffers, (tuple, list)) or len(buffers) != len(grads):
        raise GradientError(
            f"{what}: accumulate_into needs a tuple with one buffer (or None) for each of the "
            f"{len(grads)} differentiated arguments."
        )
    out = []
    for buf, g in zip(buffers, grads):
        if buf is None:
            out.append(g)
            continue
        bl, bt = tree_flatten(buf)
        gl, gt = tree_flatten(g)
        if bt != gt:
            raise ShapeError(f"{what}: accumulate_into buffer structure {bt} differs from the "
                             f"gradient's {gt}.")
        for b, x in zip(bl, gl):
            if tuple(b.shape) != tuple(x.shape):
                raise ShapeError(
                    f"{what}: accumulate_into buffer of shape {tuple(b.shape)} cannot hold a "
                    f"gradient of shape {tuple(x.shape)}.")
            b += x
        out.append(tree_unflatten(bt, bl))
    return tuple(out)
