"""Implementations of tn's algorithms for other tensor types (the block-sparse symmetric ones),
registered by the package that defines the type and looked up by tn's entry points. Dispatch
goes one way: tn never imports those packages, they import tn."""

from __future__ import annotations

from collections.abc import Callable

_IMPLEMENTATIONS: dict[tuple[str, type], Callable] = {}


def register(algorithm: str, tensor_type: type, implementation: Callable) -> None:
    """Run ``implementation`` when ``tenferro.tn.<algorithm>`` is given ``tensor_type``s."""
    _IMPLEMENTATIONS[algorithm, tensor_type] = implementation


def implementation(algorithm: str, *values) -> Callable | None:
    """The implementation registered for the type of the first of ``values`` that has one
    (its class or a base class), or None: the dense algorithm applies."""
    if not _IMPLEMENTATIONS:
        return None
    for v in values:
        for cls in type(v).__mro__:
            impl = _IMPLEMENTATIONS.get((algorithm, cls))
            if impl is not None:
                return impl
    return None
