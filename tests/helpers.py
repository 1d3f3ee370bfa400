"""Helpers every test folder shares: random arrays and closeness with a stated scale."""

from __future__ import annotations

import numpy as np


def rand(rng, shape, dtype):
    """Standard normal entries (real and imaginary parts for a complex ``dtype``)."""
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def max_error(got, want, floor: float = 1e-300) -> float:
    """``max|got - want| / max(floor, max|want|)`` of two arrays (tensors are converted)."""
    got, want = _array(got), _array(want)
    assert got.shape == want.shape, f"shape {got.shape} vs {want.shape}"
    scale = max(floor, float(np.max(np.abs(want), initial=0.0)))
    return float(np.max(np.abs(got - want), initial=0.0)) / scale


def assert_close(got, want, tol: float, *, floor: float = 1e-300, what: str = "") -> None:
    """``max|got - want| <= tol * max(floor, max|want|)``: relative to the largest entry of
    ``want``; ``floor=1`` makes it absolute for small values."""
    err = max_error(got, want, floor)
    assert err <= tol, f"{what}: error {err:.3e} > {tol:.0e} (relative to max(|want|, {floor}))"


def _array(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach()
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)
