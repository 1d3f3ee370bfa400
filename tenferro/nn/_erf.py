"""The error function as a composition of tenferro operations, with its exact derivative.

Needed by the exact GELU. (When ``tenferro.special.erf`` exists, ``gelu`` should use it.)

Value: |x| < 1: the Taylor series 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)) (19 terms,
Horner in x^2); 1 <= |x| <= 6: erf = sign(x) (1 - exp(-x^2) erfcx(|x|)) with erfcx a
Chebyshev expansion in t = 2 / (2 + |x|) fitted once, at import, to SciPy's ``erfcx``;
|x| > 6: +-1 (erf(6) rounds to 1 in float64). Relative error below 1e-15 against
``scipy.special.erf`` (tested). Every branch is evaluated on clipped inputs, so nothing
overflows in the branch ``where`` discards.

Derivative: a ``custom_jvp`` with d erf / dx = 2/sqrt(pi) exp(-x^2), itself differentiable, so
no derivative ever runs through the series (exact to every order, in every mode).
"""

from __future__ import annotations

import math

from numpy.polynomial import chebyshev as _cheb
from scipy.special import erfcx as _erfcx

import tenferro as tf

from ..autodiff.custom import custom_jvp

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_TAYLOR = [_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(19)]
_X0, _X1 = 1.0, 6.0
_T_LO, _T_HI = 2.0 / (2.0 + _X1), 2.0 / (2.0 + _X0)


def _fit_erfcx(degree: int = 20) -> list:
    def g(u):  # u in [-1, 1] -> t in [T_LO, T_HI] -> x = 2/t - 2
        t = (u + 1) / 2 * (_T_HI - _T_LO) + _T_LO
        return _erfcx(2.0 / t - 2.0)

    return [float(c) for c in _cheb.chebinterpolate(g, degree)]


_CHEB = _fit_erfcx()


def _clenshaw(u, coeffs):
    b1 = b2 = 0.0
    for c in coeffs[:0:-1]:
        b1, b2 = 2 * u * b1 - b2 + c, b1
    return u * b1 - b2 + coeffs[0]


def _erf_value(x):
    small = tf.clip(x, -_X0, _X0)
    z = small * small
    acc = _TAYLOR[-1]
    for c in _TAYLOR[-2::-1]:
        acc = acc * z + c
    taylor = acc * small
    a = tf.clip(tf.abs(x), _X0, _X1)
    t = 2.0 / (2.0 + a)
    u = (t - _T_LO) * (2.0 / (_T_HI - _T_LO)) - 1.0
    tail = 1.0 - tf.exp(-(a * a)) * _clenshaw(u, _CHEB)
    big = tf.where(x < 0, -tail, tail)
    return tf.where(tf.abs(x) < _X0, taylor, big)


@custom_jvp
def erf(x):
    """The error function (real input). Derivative 2/sqrt(pi) exp(-x^2), exact everywhere."""
    return _erf_value(x)


@erf.defjvp
def _erf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return erf(x), _TWO_OVER_SQRT_PI * tf.exp(-(x * x)) * t

