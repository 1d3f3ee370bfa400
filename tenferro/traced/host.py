"""The host (NumPy) namespace: graphs store their constants as NumPy arrays, fold constants
with NumPy, and move constants to the execution device once per device."""

from __future__ import annotations

import functools

import numpy as np


@functools.cache
def host_xp():
    from ..backends.numpy_backend import make_backend

    return make_backend().xp


def to_host(value) -> np.ndarray:
    """A NumPy copy of an eager tensor or raw array of any backend."""
    from ..core.eager import EagerTensor

    if isinstance(value, EagerTensor):
        return np.asarray(value._backend.to_numpy(value._value))
    return np.asarray(value)
