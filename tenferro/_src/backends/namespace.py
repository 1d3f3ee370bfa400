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
    if k and bool(xp.any((flat < -n) | (flat >= n))):  # NumPy's np.add.at raises too:
        bad = int(xp.max(xp.where(flat >= n, flat, xp.min(flat))))  # a one-hot would drop it
        bad = bad if bad >= n else int(xp.min(flat))
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    flat = xp.where(flat < 0, flat + n, flat)  # negative indices count from the end
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
