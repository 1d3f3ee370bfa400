"""Checking what the transformations are handed: ``argnums``, ``has_aux`` outputs, and the
tuples of primals and tangents. A mistake here raises a ``GradientError`` naming the
transformation and the fix, at decoration time where it can be seen then, rather than an
unpacking or indexing error from inside the transformation."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..errors import GradientError


def _kind(x) -> str:
    if isinstance(x, Tensor):
        return f"a tensor of shape {tuple(x.shape)}"
    if isinstance(x, (tuple, list)):
        return f"a {len(x)}-{type(x).__name__}"
    return f"a {type(x).__name__}"


def check_argnums(name: str, argnums) -> tuple:
    """``argnums`` as a tuple of ints (an int, or a tuple/list of ints; bools are not ints)."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return (argnums,)
    try:
        nums = tuple(argnums)
        if any(isinstance(n, bool) or not isinstance(n, int) for n in nums):
            raise TypeError
    except TypeError:
        raise GradientError(f"{name}: argnums must be an int or a tuple of ints, got "
                            f"{argnums!r:.40}.") from None
    if not nums:
        raise GradientError(f"{name}: argnums is empty; name at least one argument to "
                            f"differentiate.")
    return nums


def resolve_argnums(name: str, nums: tuple, n_args: int) -> tuple:
    """``nums`` as positions ``0..n_args-1``: negative ones count from the end (as JAX);
    out-of-range ones raise."""
    out = []
    for n in nums:
        if not -n_args <= n < n_args:
            raise GradientError(
                f"{name}: argnums {n} is out of range for a call with {n_args} positional "
                f"argument{'s' if n_args != 1 else ''} (valid: {-n_args}..{n_args - 1}).")
        out.append(n % n_args)
    return tuple(out)


def split_aux(name: str, out) -> tuple:
    """``(output, aux)`` from what a ``has_aux=True`` function returned: exactly a pair."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise GradientError(
            f"{name}: with has_aux=True the function must return a pair (output, aux), got "
            f"{_kind(out)}. Return (output, aux), putting several auxiliary values in one tuple or "
            f"dict, or drop has_aux.")
    return out[0], out[1]


def argument_tuple(name: str, what: str, xs) -> tuple:
    """The ``primals``/``tangents`` argument of ``jvp``/``hvp``: a tuple (or list) holding one
    entry per argument of the function."""
    if not isinstance(xs, (tuple, list)):
        raise GradientError(
            f"{name}: {what} must be a tuple (or list) with one entry per argument of the "
            f"function, got {_kind(xs)}; write {name}(f, (x,), (t,)) for one "
            f"argument.")
    return tuple(xs)
