"""Validating the planning options of ``einsum`` / ``contract_path``.

Each option is turned into a small hashable value that enters the plan-cache key, and every
bad value raises ``ShapeError`` (a ``ValueError``) naming the option, the value and the fix.
"""

from __future__ import annotations

import math
import numbers
import re

import opt_einsum as oe

from ..caches import BoundedCache
from ..errors import ShapeError

# --------------------------------------------------------------------------- optimize

_NAMES = BoundedCache("validated optimizer names", 256)


def normalize_optimize(op: str, optimize):
    """Validate ``optimize``; return ``(kind, value, cache_key)``.

    kind: "auto" (tenferro's own effort-scaled search), "none" (fold left to right), "name"
    (an opt_einsum optimizer name), "optimizer" (a ``PathOptimizer`` instance, e.g. a cotengra
    ``HyperOptimizer``: not cached, it may be stateful) or "path" (explicit).
    """
    if optimize is False:
        return "none", None, False
    if optimize is True or optimize is None:
        optimize = "auto"
    if isinstance(optimize, str):
        known = _NAMES.get(optimize)
        if known is not None:
            return known
        name = optimize.lower()
        if name == "auto":
            known = ("auto", None, "auto")
        else:
            try:
                oe.paths.get_path_fn(name)
            except KeyError:
                names = set(getattr(oe.paths, "_PATH_OPTIONS", ("greedy", "optimal", "dp")))
                valid = ", ".join(repr(n) for n in sorted(names | {"auto"}))
                raise ShapeError(
                    f"{op}: unknown optimize option {optimize!r}; use one of {valid}, False, "
                    f"or an explicit path such as [(0, 1), (0, 1)]."
                ) from None
            known = ("name", name, name)
        _NAMES.put(optimize, known)
        return known
    if isinstance(optimize, oe.paths.PathOptimizer):
        return "optimizer", optimize, None
    if isinstance(optimize, (list, tuple)):
        steps = list(optimize)
        if steps and steps[0] == "einsum_path":  # numpy.einsum_path's format
            steps = steps[1:]
        path = []
        for s in steps:
            try:
                t = tuple(int(i) for i in s)
            except (TypeError, ValueError):
                raise ShapeError(
                    f"{op}: invalid contraction path {optimize!r}: each step must be a tuple "
                    f"of operand positions, e.g. [(0, 1), (0, 1)]."
                ) from None
            path.append(t)
        path = tuple(path)
        return "path", path, ("path", path)
    raise ShapeError(
        f"{op}: unknown optimize option {optimize!r} ({type(optimize).__name__}); use 'auto', "
        f"'greedy', 'optimal', 'dp', 'random-greedy', ..., False, or an explicit path."
    )


# --------------------------------------------------------------------------- max_memory

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_BYTES = re.compile(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*")
_MEMORY_HELP = ("an int (elements), a string with a byte unit such as '8GB' or '512 MiB', or "
                "'max_input' (the largest operand)")


def normalize_memory(op: str, max_memory, memory_limit):
    """``max_memory`` (or its alias ``memory_limit``) -> ``None``, ``("elements", n)``,
    ``("bytes", n)`` or ``("max_input",)``."""
    if memory_limit is not None:
        if max_memory is not None and max_memory != memory_limit:
            raise ShapeError(
                f"{op}: max_memory={max_memory!r} and memory_limit={memory_limit!r} disagree; "
                f"memory_limit is an alias of max_memory, pass only one."
            )
        max_memory = memory_limit
    if max_memory is None:
        return None
    if isinstance(max_memory, bool):
        raise ShapeError(f"{op}: max_memory must be {_MEMORY_HELP}, got {max_memory!r}.")
    if isinstance(max_memory, str):
        text = max_memory.strip().lower()
        if text == "max_input":
            return ("max_input",)
        m = _BYTES.fullmatch(text)
        if m is None or m.group(2) not in _UNITS:
            raise ShapeError(
                f"{op}: cannot read max_memory={max_memory!r}; use {_MEMORY_HELP}."
            )
        n = float(m.group(1)) * _UNITS[m.group(2)]
        if not n >= 1:
            raise ShapeError(f"{op}: max_memory={max_memory!r} must be at least 1 byte.")
        return ("bytes", int(n))
    try:
        n = float(max_memory)
    except (TypeError, ValueError):
        raise ShapeError(
            f"{op}: max_memory must be {_MEMORY_HELP}, got {type(max_memory).__name__}."
        ) from None
    if not (n >= 1 and math.isfinite(n) and n == int(n)):
        raise ShapeError(
            f"{op}: max_memory={max_memory!r} must be a positive whole number of elements "
            f"(or a string with a byte unit such as '8GB')."
        )
    return ("elements", int(n))


def memory_elements(spec, itemsize: int, input_sizes) -> int | None:
    """The limit in elements for operands of ``itemsize`` bytes."""
    if spec is None:
        return None
    if spec[0] == "elements":
        return spec[1]
    if spec[0] == "bytes":
        return max(1, spec[1] // itemsize)
    return max(input_sizes, default=1)


# --------------------------------------------------------------------------- max_time


def normalize_time(op: str, max_time):
    """``max_time`` in seconds (a positive number) or ``None`` (the default budget)."""
    if max_time is None:
        return None
    if isinstance(max_time, bool) or not isinstance(max_time, numbers.Real):
        raise ShapeError(
            f"{op}: max_time must be a number of seconds (e.g. max_time=30), got "
            f"{type(max_time).__name__} {max_time!r}."
        )
    t = float(max_time)
    if not (t > 0 and math.isfinite(t)):
        raise ShapeError(
            f"{op}: max_time={max_time!r} must be a positive, finite number of seconds."
        )
    return t
