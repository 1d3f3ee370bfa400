"""Rule builders shared by several primitive families."""

from __future__ import annotations

from ..core import Zero


def scaled_tangent_jvp(p, deriv):
    """The JVP of a pointwise unary primitive ``p``: tangent_out = deriv(b, x, y) * tangent
    (``y = p(x)``, so a derivative that is a function of the output reuses it)."""

    def jvp(b, primals, tangents):
        (x,), (t,) = primals, tangents
        y = b.bind(p, x)
        if type(t) is Zero:
            return y, t
        return y, b.mul(t, deriv(b, x, y))

    return jvp
