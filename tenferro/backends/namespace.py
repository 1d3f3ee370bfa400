"""Build the namespace objects handed to primitive ``impl`` rules as ``xp``."""

from __future__ import annotations

import types


class Namespace(types.SimpleNamespace):
    """A module-like bag of functions; attribute lookup is a plain dict lookup (fast)."""


def copy_public(ns: Namespace, module) -> None:
    for name in dir(module):
        if not name.startswith("_"):
            setattr(ns, name, getattr(module, name))


def generic_scatter_add(xp, operand, indices, updates, axis):
    """scatter-add with array-API operations only (one-hot contraction)."""
    n = operand.shape[axis]
    flat = xp.reshape(indices, (-1,))
    k = flat.shape[0]
    pre = 1
    for d in operand.shape[:axis]:
        pre *= d
    post = 1
    for d in operand.shape[axis + 1 :]:
        post *= d
    onehot = xp.astype(
        xp.reshape(flat, (k, 1)) == xp.reshape(xp.arange(n, dtype=flat.dtype), (1, n)),
        operand.dtype,
    )
    u = xp.reshape(updates, (pre, k, post))
    added = xp.matmul(xp.matrix_transpose(onehot), u)
    return operand + xp.reshape(added, operand.shape)
