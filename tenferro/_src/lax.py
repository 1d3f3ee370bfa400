"""Implementation of ``tenferro.lax`` (its docstring is the user documentation)."""

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


_FUNCTIONS: dict = {}


def primitive_function(name: str):
    """The ``tenferro.lax`` function applying the primitive ``name`` (made once, then reused)."""
    fn = _FUNCTIONS.get(name)
    if fn is None:
        prim = chainrules.PRIMITIVES.get(name)
        if prim is None:
            raise AttributeError(f"tenferro.lax has no primitive {name!r}")
        fn = _FUNCTIONS[name] = _wrap(prim)
    return fn


def primitive_names() -> list[str]:
    """Every primitive's name: the public API of ``tenferro.lax``."""
    return sorted(chainrules.PRIMITIVES)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return primitive_function(name)
