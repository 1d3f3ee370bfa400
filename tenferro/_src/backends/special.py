"""Special functions for the backend namespaces (``xp.special``), read by the primitives of
``chainrules.primitives.special``.

* NumPy backend: ``scipy.special`` itself, imported on first use.
* CuPy: ``cupyx.scipy.special``.
* ``array_api_strict``: the array API standard has no special functions, so this backend
  computes them **on the host**, explicitly: the operand is copied to NumPy
  (``xp.to_numpy``), SciPy evaluates it, and the result is copied back to the operand's device
  with the operand's dtype. This is the declared implementation on this backend (tested
  against SciPy like every other), not a silent fallback: nothing else in tenferro leaves the
  array API here.
"""

from __future__ import annotations

import numpy as np

FUNCTIONS = (
    "erf", "erfc", "erfinv", "erfcinv", "gammaln", "gamma", "rgamma", "psi", "polygamma", "beta",
    "betaln", "betainc", "betaincc", "gammainc", "gammaincc", "j0", "j1", "jv", "y0", "y1", "yn",
    "i0", "i1", "iv", "ive",
)


class ScipySpecial:
    """``scipy.special``, imported on first attribute access (SciPy is slow to import)."""

    def __getattr__(self, name):
        import scipy.special as sp

        f = getattr(sp, name)
        setattr(self, name, f)
        return f


class HostSpecial:
    """SciPy's special functions on the host, for a namespace without any (``ns`` converts
    with ``to_numpy`` and ``asarray``). Integer leading arguments (``polygamma``'s order) pass
    through unchanged; array arguments go to the host and the result comes back."""

    def __init__(self, ns):
        self._ns = ns
        for name in FUNCTIONS:
            setattr(self, name, self._host(name))

    def _host(self, name):
        ns = self._ns

        def f(*args):
            import scipy.special as sp

            arrays = [a for a in args if ns.is_native(a)]
            dtype = ns.np_dtype(arrays[-1].dtype)
            host = [ns.to_numpy(a) if ns.is_native(a) else a for a in args]
            out = np.asarray(getattr(sp, name)(*host)).astype(dtype, copy=False)
            return ns.asarray(out)

        f.__name__ = name
        return f


def cupy_special():  # pragma: no cover - needs a GPU
    import cupyx.scipy.special as csp

    return csp
