"""Direct access to every primitive: ``tenferro.lax.<name>(*operands, **params)``.

The NumPy-style functions of ``tenferro`` broadcast, promote and pick parameters for you; these
wrappers apply one primitive exactly as defined in ``chainrules`` (no broadcasting, no
promotion; parameters by keyword), like ``jax.lax``. They work in every mode and are validated
by the primitive's ``abstract_eval``, e.g.::

    tenferro.lax.dot_general(x, y, dimension_numbers=(((1,), (0,)), ((), ())))
    tenferro.lax.slice(x, start_indices=(0, 1), limit_indices=(2, 4), strides=(1, 2))
    tenferro.lax.pad(x, tenferro.tensor(0.0), padding_config=((1, 0, 0), (0, 2, 1)))
"""

from __future__ import annotations

import chainrules

from .core.dispatch import bind
from .core.eager import EagerTensor, check_eager
from .ops._base import tensor_of


def _wrap(prim):
    def apply(*operands, **params):
        xs = [tensor_of(x) for x in operands]
        if xs and all(type(x) is EagerTensor for x in xs):
            # eager mode may skip abstract_eval for primitives whose operands the NumPy-style
            # layer prepared (validate_eager=False); here nobody did, so validate every call
            check_eager(prim, xs, params)
        return bind(prim, *xs, **params)

    apply.__name__ = prim.name
    apply.__qualname__ = prim.name
    doc = prim.__doc__ if prim.__doc__ and prim.__doc__ != type(prim).__doc__ else ""
    conv = f"\n\nConvention: {prim.convention}" if prim.convention else ""
    apply.__doc__ = f"The ``{prim.name}`` primitive. {doc}{conv}".strip()
    return apply


def __getattr__(name):
    prim = chainrules.PRIMITIVES.get(name)
    if prim is None:
        raise AttributeError(f"tenferro.lax has no primitive {name!r}")
    fn = _wrap(prim)
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(chainrules.PRIMITIVES)
