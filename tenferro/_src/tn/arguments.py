"""What the arguments of the tensor-network functions must be, said once.

Every public function of ``tenferro.tn`` (and the entry points of ``tenferro.symmetric``)
declares the kind of each argument with ``@checked(name=rule, ...)``; a rule turns the value
into the normalised one (``chi=8.0`` -> 8, an array -> a tensor) or raises a named error that
says which function, which argument, what it must be and what it got:

* ``DTypeError`` (also a ``TypeError``) for a wrong kind of object (a list where a bond
  dimension goes, a string where a tolerance goes);
* ``ShapeError`` (also a ``ValueError``) for a wrong value (``chi=0``, ``tol=-1``, NaN, a site
  tensor with three legs, an MPO whose physical legs do not match the MPS).

Rules run on entry only: arguments the caller leaves at their defaults are not checked, and
the algorithms' inner loops call the undecorated pieces. Cross-argument checks (an MPS and an
MPO of the same chain) are functions here too (``same_chain``).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from .. import ops
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError

__all__ = []  # internal: the rules are used by the public functions' decorators

#: the largest size a rule accepts (an index must fit in int64)
_MAX_SIZE = 2**63 - 1


# --------------------------------------------------------------------------- describing
def describe(value) -> str:
    """A short description of a value for a message: its type and, where it helps, its shape
    or length (never the whole value)."""
    if isinstance(value, Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    if isinstance(value, np.ndarray):
        return f"a NumPy array of shape {tuple(value.shape)}"
    if hasattr(value, "legs") and hasattr(value, "shape"):  # a SymmetricTensor (a tuple)
        return f"a {type(value).__name__} of dense shape {tuple(value.shape)}"
    if isinstance(value, (list, tuple)):
        kinds = sorted({type(v).__name__ for v in value})
        inner = f" of {', '.join(kinds[:3])}" if kinds else ""
        return f"a {type(value).__name__} of {len(value)} item(s){inner}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def whole_number(value) -> int | None:
    """``value`` as an int if it is a whole real number (not a bool), else None."""
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isfinite(v) and v == int(v):
            return int(v)
    return None


# ------------------------------------------------------------------------------ numbers
def size(op: str, name: str, value, *, minimum: int = 1, none: bool = False,
         hint: str = "") -> int | None:
    """A whole number >= ``minimum`` (a bond dimension, a number of sweeps or steps).
    ``hint`` is added when the value is of the wrong kind (an argument in the wrong place)."""
    if value is None and none:
        return None
    n = whole_number(value)
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if none:
        what += " (or None)"
    if n is None:
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
            raise ShapeError(f"{op}: {name} must be {what}, got {value!r}.")
        raise DTypeError(f"{op}: {name} must be {what}, got {describe(value)}.{hint}")
    if n < minimum or n > _MAX_SIZE:
        raise ShapeError(f"{op}: {name} must be {what}, got {value!r}.")
    return n


def number(op: str, name: str, value, *, minimum: float | None = None,
           finite: bool = True, none: bool = False, positive: bool = False) -> float | None:
    """A real number (a coupling, a time step), finite unless ``finite=False``, at least
    ``minimum`` if given, > 0 with ``positive``."""
    if value is None and none:
        return None
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "fiu":
        value = float(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise DTypeError(f"{op}: {name} must be a real number, got {describe(value)}.")
    v = float(value)
    if math.isnan(v) or (finite and math.isinf(v)) or (minimum is not None and v < minimum) or (
            positive and v <= 0):
        need = "a finite real number" if finite else "a real number (not NaN)"
        if minimum is not None:
            need += f" >= {minimum:g}"
        if positive:
            need += " > 0"
        raise ShapeError(f"{op}: {name} must be {need}, got {value!r}.")
    return v


def tolerance(op: str, name: str, value, *, none: bool = False) -> float | None:
    """A convergence tolerance or cutoff: a finite real number >= 0 (``None`` where the
    function takes it to mean 'no test')."""
    if value is None and none:
        return None
    try:
        return number(op, name, value, minimum=0.0)
    except ShapeError:
        raise ShapeError(f"{op}: {name} must be a finite number >= 0"
                         f"{' (or None)' if none else ''}, got {value!r}.") from None


def real_values(op: str, name: str, value) -> np.ndarray:
    """A finite real number or a 1-d array of them (times, wave numbers), as a 1-d NumPy
    array."""
    try:
        v = np.asarray(ops.stop_gradient(value) if isinstance(value, Tensor) else value)
        ok = v.dtype.kind in "biuf" and v.ndim <= 1
        v = np.atleast_1d(v.astype(float)) if ok else None
    except (TypeError, ValueError):
        v = None
    if v is None or not np.all(np.isfinite(v)):
        raise ShapeError(f"{op}: {name} must be a finite real number or a 1-d array of them, "
                         f"got {describe(value)}.")
    return v


def scalar(op: str, name: str, value):
    """A real number or a 0-d real tensor (a differentiable parameter such as beta)."""
    if isinstance(value, Tensor):
        if value.ndim != 0 or value.dtype.kind not in "fiu":
            raise ShapeError(f"{op}: {name} must be a real scalar, got a tensor of shape "
                             f"{tuple(value.shape)} and dtype {value.dtype}.")
        return value
    return number(op, name, value)


def choice(op: str, name: str, value, options: Sequence):
    """One of ``options`` (strings, or whole numbers such as an order 2 or 4)."""
    if all(isinstance(o, str) for o in options):
        ok = isinstance(value, str) and value in options
    else:
        n = whole_number(value)
        ok = n is not None and n in options
        value = n if ok else value
    if not ok:
        raise ShapeError(f"{op}: {name} must be one of {tuple(options)!r}, got "
                         f"{describe(value)}.")
    return value


def flag(op: str, name: str, value):
    """A yes/no option: a bool (or None where the function reads None as 'the default')."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return value if value is None else bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise DTypeError(f"{op}: {name} must be True, False or None, got {describe(value)}.")


def instance(op: str, name: str, value, *, kind: type, what: str):
    """An instance of ``kind`` (``what`` says what it is in the message)."""
    if not isinstance(value, kind):
        raise DTypeError(f"{op}: {name} must be {what}, got {describe(value)}.")
    return value


def function(op: str, name: str, value):
    """A callable, or None."""
    if value is not None and not callable(value):
        raise DTypeError(f"{op}: {name} must be a function (or None), got {describe(value)}.")
    return value


def seed(op: str, name: str, value):
    """What ``numpy.random.default_rng`` takes as a seed: None, an int >= 0, a
    ``SeedSequence`` or a ``Generator``."""
    if value is None or isinstance(value, (np.random.SeedSequence, np.random.Generator)):
        return value
    n = whole_number(value)
    if n is None or n < 0:
        raise DTypeError(f"{op}: {name} must be None, an integer >= 0 or a "
                         f"numpy.random.Generator, got {describe(value)}.")
    return n


def float_dtype(op: str, name: str, value):
    """A floating or complex dtype (or None: the function's default)."""
    if value is None:
        return None
    try:
        dt = np.dtype(value)
    except (TypeError, ValueError):
        dt = None
    if dt is None or dt.kind not in "fc":
        raise DTypeError(f"{op}: {name} must be a floating or complex dtype (e.g. float64, "
                         f"complex128), got {describe(value)}.")
    return dt


# ------------------------------------------------------------------------------ tensors
def as_tensor(op: str, name: str, value) -> Tensor:
    """A tensor from a tensor or array-like of numbers; anything else is a ``DTypeError``."""
    if isinstance(value, Tensor):
        t = value
    else:
        if not isinstance(value, (np.ndarray, numbers.Number, list, tuple)):
            raise DTypeError(f"{op}: {name} must be a tensor (or an array of numbers), got "
                             f"{describe(value)}.")
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as e:
            raise DTypeError(f"{op}: {name} must be a tensor (or an array of numbers), got "
                             f"{describe(value)} ({e}).") from None
        if arr.dtype.kind not in "biufc":
            raise DTypeError(f"{op}: {name} must hold numbers, got an array of dtype "
                             f"{arr.dtype}.")
        t = ops.asarray(arr)
    if t.dtype.kind not in "biufc":
        raise DTypeError(f"{op}: {name} must hold numbers, got dtype {t.dtype}.")
    return t


def tensor(op: str, name: str, value, *, legs: str | None = None) -> Tensor:
    """A tensor; with ``legs`` (e.g. ``"T[l, u, r, d]"``) of that many legs."""
    t = as_tensor(op, name, value)
    if legs is not None:
        n = legs.count(",") + 1
        if t.ndim != n:
            raise ShapeError(f"{op}: {name} must be {legs} ({n} legs), got shape "
                             f"{tuple(t.shape)}.")
    return t


def square_lattice_site(op: str, name: str, value) -> Tensor:
    """``T[l, u, r, d]`` of a translation-invariant square lattice: its left leg contracts
    with a neighbour's right leg and its up leg with one's down leg, so l, r and u, d have
    equal dimensions."""
    t = tensor(op, name, value, legs="T[l, u, r, d]")
    L, U, R, D = t.shape
    if L != R or U != D:
        raise ShapeError(f"{op}: {name} T[l, u, r, d] must have dim l = dim r and dim u = "
                         f"dim d (neighbours contract l with r and u with d), got shape "
                         f"{tuple(t.shape)}.")
    return t


def _sequence(op: str, name: str, value, what: str) -> list:
    if isinstance(value, Tensor) or not isinstance(value, Sequence) or isinstance(value, str):
        raise DTypeError(f"{op}: {name} must be {what}, got {describe(value)}.")
    return list(value)


def _site(op: str, name: str, value, legs: str) -> Tensor:
    """One tensor of a chain: a tensor, or a NumPy array (made a tensor)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return as_tensor(op, name, value)
    raise DTypeError(f"{op}: {name} must be a tensor {legs}, got {describe(value)}.")


def mps(op: str, name: str, value) -> list:
    """An open-chain MPS: a non-empty list of tensors ``A[left, phys, right]`` whose bonds
    match, with boundary bonds of dimension 1."""
    what = "an MPS (a list of tensors A[left, phys, right], see tenferro.tn.mps)"
    sites = _sequence(op, name, value, what)
    if not sites:
        raise ShapeError(f"{op}: {name} is empty; {what[3:]} of at least one site is needed.")
    out = []
    for i, a in enumerate(sites):
        a = _site(op, f"{name}[{i}]", a, "A[left, phys, right]")
        if a.ndim != 3:
            raise ShapeError(f"{op}: {name}[{i}] has shape {tuple(a.shape)}; MPS tensors are "
                             f"A[left, phys, right] (3 legs).")
        out.append(a)
    _open_chain(op, name, out, right=2)
    return out


def _open_chain(op: str, name: str, sites: list, right: int) -> None:
    """Neighbouring sites share their bond (leg ``right`` of one is leg 0 of the next) and
    the chain is open: its two boundary bonds have dimension 1."""
    for i in range(len(sites) - 1):
        if sites[i].shape[right] != sites[i + 1].shape[0]:
            raise ShapeError(f"{op}: {name} bond {i + 1} does not match: site {i} has shape "
                             f"{tuple(sites[i].shape)}, site {i + 1} "
                             f"{tuple(sites[i + 1].shape)}.")
    if sites[0].shape[0] != 1 or sites[-1].shape[right] != 1:
        raise ShapeError(f"{op}: {name} is an open chain: its boundary bonds must have "
                         f"dimension 1, got first site {tuple(sites[0].shape)} and last "
                         f"{tuple(sites[-1].shape)}.")


def mpo(op: str, name: str, value, *, min_sites: int = 1) -> list:
    """An MPO: a list of at least ``min_sites`` tensors ``W[left, right, phys_out, phys_in]``
    with phys_out = phys_in, matching bonds and boundary bonds of dimension 1."""
    what = ("an MPO (a list of tensors W[left, right, phys_out, phys_in], see "
            "tenferro.tn.mpo)")
    ws = _sequence(op, name, value, what)
    if len(ws) < min_sites:
        raise ShapeError(f"{op}: {name} has {len(ws)} site(s); {what[3:]} of at least "
                         f"{min_sites} is needed.")
    for i, w in enumerate(ws):
        w = ws[i] = _site(op, f"{name}[{i}]", w, "W[left, right, phys_out, phys_in]")
        if w.ndim != 4 or w.shape[2] != w.shape[3]:
            raise ShapeError(f"{op}: {name}[{i}] must be W[left, right, phys_out, phys_in] "
                             f"with phys_out = phys_in; got shape {tuple(w.shape)}.")
    _open_chain(op, name, ws, right=1)
    return ws


def same_chain(op: str, mpo_: list, state: list, name: str = "mps") -> None:
    """The MPS ``state`` lives on the MPO's chain: as many sites, and each site's local
    (physical) dimension is the MPO's there."""
    if len(state) != len(mpo_):
        raise ShapeError(f"{op}: an MPO of {len(mpo_)} sites for an MPS ({name}) of "
                         f"{len(state)} sites.")
    for i, (a, w) in enumerate(zip(state, mpo_)):
        if a.shape[1] != w.shape[3]:
            raise ShapeError(f"{op}: {name}[{i}] has local dimension {a.shape[1]} (shape "
                             f"{tuple(a.shape)}), the MPO acts on local dimension {w.shape[3]} "
                             f"there (shape {tuple(w.shape)}).")


def tensor_list(op: str, name: str, value, *, legs: str | None = None,
                min_items: int = 1) -> list:
    """A list of at least ``min_items`` tensors, each of the form ``legs`` if given (e.g.
    the distinct tensors of a unit cell)."""
    what = f"a list of tensors{' ' + legs if legs else ''}"
    items = _sequence(op, name, value, what)
    if len(items) < min_items:
        raise ShapeError(f"{op}: {name} has {len(items)} item(s); give at least {min_items} "
                         f"(a list of tensors{' ' + legs if legs else ''}).")
    return [tensor(op, f"{name}[{i}]", t, legs=legs) for i, t in enumerate(items)]


def size_list(op: str, name: str, value, *, none: bool = False) -> list | None:
    """A non-empty list of positive integers (a bond-dimension schedule)."""
    if value is None and none:
        return None
    items = _sequence(op, name, value, "a list of positive integers")
    if not items:
        raise ShapeError(f"{op}: {name} is empty; give at least one positive integer.")
    return [size(op, f"{name}[{i}]", v) for i, v in enumerate(items)]


# ---------------------------------------------------------------------------- decorator
def rule(check: Callable, **options) -> Callable:
    """``check`` with its keyword options fixed, as a rule for ``checked``."""
    return functools.partial(check, **options) if options else check


def unchecked(fn: Callable) -> Callable:
    """The function under a ``checked`` decorator: what an algorithm's own loop calls, its
    arguments being known good."""
    return getattr(fn, "__wrapped__", fn)


def optional(check: Callable) -> Callable:
    """``check``, or None accepted as it is (an optional argument)."""

    def check_or_none(op, name, value):
        return None if value is None else check(op, name, value)

    return check_or_none


def checked(*, where: str | None = None, **rules: Callable) -> Callable:
    """Decorate a public function: each argument named in ``rules`` (passed positionally or
    by keyword) goes through its rule ``rule(op, name, value) -> value`` before the call.
    Arguments left at their defaults are not checked. ``where`` names the function in
    messages (default: its ``__name__``)."""

    def wrap(fn):
        name = where or fn.__name__
        params = list(inspect.signature(fn).parameters.values())
        unknown = set(rules) - {p.name for p in params}
        if unknown:
            raise TypeError(f"checked: {fn.__name__} has no parameters {sorted(unknown)}")
        positional = [(i, p.name, rules[p.name]) for i, p in enumerate(params)
                      if p.name in rules and p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
        by_keyword = [(p.name, rules[p.name]) for p in params
                      if p.name in rules and p.kind is not p.POSITIONAL_ONLY]

        @functools.wraps(fn)
        def call(*args, **kwargs):
            if positional and args:
                args = list(args)
                for i, pname, check in positional:
                    if i < len(args):
                        args[i] = check(name, pname, args[i])
            for pname, check in by_keyword:
                if pname in kwargs:
                    kwargs[pname] = check(name, pname, kwargs[pname])
            return fn(*args, **kwargs)

        return call

    return wrap


# rules that most functions share
SIZE = size
OPTIONAL_SIZE = rule(size, none=True)
COUNT = rule(size, minimum=0)
TOL = tolerance
OPTIONAL_TOL = rule(tolerance, none=True)
NUMBER = number
FLAG = flag
FUNCTION = function
SEED = seed
DTYPE = float_dtype
TENSOR = tensor
OPTIONAL_TENSOR = optional(tensor)
MPS = mps
MPO = mpo
