"""NumPy names that legacy (HIPS autograd) code uses: ``array``, ``r_``/``c_``, ``ndim``, the
complex-type tests, ``real_if_close``, ``rollaxis``, ``row_stack``, ``dtype``, ``ndarray``.

All are compositions of existing operations (``asarray``, ``concatenate``, ``reshape``,
``transpose``, ``real``), so derivatives come from those: ``array([x, 2 * x])`` and
``r_[x, c, 1:4]`` are differentiable in ``x`` in every mode. design/numpy-surface.md lists
the decisions (``ndarray`` is ``Tensor``, ``dtype`` is ``numpy.dtype``).
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConcretizationError, DTypeError, ShapeError
from ._base import astype, first_tensor, normalize_axis, tensor_of
from .arrange import vstack
from .creation import arange, asarray, linspace, zeros
from .elementwise import imag, not_equal, real
from .elementwise import where as _where
from .searching import concrete_or_none, nonzero
from .shape import concatenate, reshape, transpose

__all__ = [
    "array",
    "c_",
    "dtype",
    "iscomplex",
    "iscomplexobj",
    "isrealobj",
    "ndarray",
    "ndim",
    "r_",
    "real_if_close",
    "rollaxis",
    "row_stack",
    "where",
]

dtype = np.dtype  # tensors' dtypes are numpy.dtype objects: tf.dtype("float32") == tf.float32
ndarray = Tensor  # isinstance(x, tf.ndarray) holds for eager, traced and differentiated tensors

_ORDERS = ("K", "A", "C", "F", None)


def array(object, dtype=None, *, copy: bool | None = True, order: str | None = "K",
          subok: bool = False, ndmin: int = 0, like=None) -> Tensor:
    """NumPy's ``array``: a new tensor (``copy=True``, the default) from a tensor, an array, a
    number, or nested lists mixing tensors and numbers, which are stacked keeping their
    derivatives (``array([x, x ** 2])`` is differentiable in ``x``). ``copy=None`` reuses a
    tensor that needs no conversion, ``copy=False`` raises where a copy is needed (NumPy 2).
    ``ndmin`` prepends size-1 axes. ``order`` is accepted (tensors have no visible memory
    order); ``subok``/``like`` (array subclasses, ``__array_function__`` dispatch) are not."""
    if order not in _ORDERS:
        raise ShapeError(f"array: order must be one of 'K', 'A', 'C', 'F', got {order!r:.20}.")
    if subok or like is not None:
        raise DTypeError("array: subok=True and like= (NumPy's array subclasses and dispatch) "
                         "are not supported; tenferro has one tensor type.")
    nd = int(ndmin)
    if nd < 0:
        raise ShapeError(f"array: ndmin must be >= 0, got {ndmin}.")
    try:
        out = asarray(object, dtype=dtype, copy=copy)
    except (DTypeError, ShapeError) as e:  # asarray's checks, under this function's name
        msg = str(e)
        raise type(e)("array" + msg[len("asarray"):] if msg.startswith("asarray") else msg
                      ) from None
    return _ndmin(out, nd)


def _ndmin(t: Tensor, nd: int) -> Tensor:
    """``t`` with size-1 axes prepended up to ``nd`` axes (NumPy's ``ndmin``)."""
    return t if t.ndim >= nd else reshape(t, (1,) * (nd - t.ndim) + tuple(t.shape))


def ndim(a) -> int:
    """The number of axes of ``a`` (a tensor, an array, a number or nested lists)."""
    if isinstance(a, Tensor):
        return a.ndim
    if first_tensor(a) is not None:
        return tensor_of(a).ndim
    return _host("ndim", a).ndim


def _host(op: str, x) -> np.ndarray:
    """Data that holds no tensor, as NumPy sees it (ragged or non-numeric data raises)."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise DTypeError(f"{op}: cannot read the {type(x).__name__} as an array ({e}); give a "
                         f"tensor, a number or a rectangular array of numbers.") from None
    return arr


def _dtype_of(x) -> np.dtype:
    if isinstance(x, Tensor):
        return x.dtype
    if first_tensor(x) is not None:
        return tensor_of(x).dtype
    return _host("iscomplexobj", x).dtype


def iscomplexobj(x) -> bool:
    """True when ``x``'s dtype is complex (whatever its values), as NumPy's ``iscomplexobj``."""
    return _dtype_of(x).kind == "c"


def isrealobj(x) -> bool:
    """True when ``x``'s dtype is not complex (whatever its values), as NumPy's ``isrealobj``."""
    return not iscomplexobj(x)


def iscomplex(x) -> Tensor:
    """Elementwise: the imaginary part is nonzero (a bool tensor; False for real dtypes), as
    NumPy's ``iscomplex``. No derivative (bool output)."""
    t = tensor_of(x)
    if t.dtype.kind != "c":
        return zeros(t.shape, dtype=np.dtype(bool), device=t.device)
    return not_equal(imag(t), 0)


def real_if_close(a, tol: float = 100) -> Tensor:
    """``real(a)`` when ``a`` is complex and every imaginary part is below ``tol`` machine
    epsilons (``tol > 1``) or below ``tol`` itself (``tol <= 1``), else ``a`` (NumPy's
    ``real_if_close``). The result's dtype depends on the values, so under ``jit`` it raises
    ``ConcretizationError``; the derivative is ``real``'s (or the identity)."""
    t = tensor_of(a)
    if t.dtype.kind != "c":
        return t
    limit = float(tol) * float(np.finfo(t.dtype).eps) if tol > 1 else float(tol)
    v = concrete_or_none(t)
    if v is None:
        raise ConcretizationError(
            "real_if_close: whether the result is real depends on the values, which traced "
            "code (jit, make_graph, vmap) does not have; call tenferro.real(a) to drop the "
            "imaginary part, or keep the complex tensor."
        )
    small = bool(np.all(np.abs(np.imag(np.asarray(v))) < limit))
    return real(t) if small else t


def rollaxis(a, axis: int, start: int = 0) -> Tensor:
    """Roll ``axis`` backwards until it lies before position ``start`` (NumPy's ``rollaxis``;
    ``moveaxis`` is the clearer spelling). Linear."""
    t = tensor_of(a)
    n = t.ndim
    ax = normalize_axis("rollaxis", axis, n)
    if not -n <= start <= n:
        raise ShapeError(f"rollaxis: start={start} is out of range for a tensor of rank {n} "
                         f"(it must lie in [{-n}, {n}]).")
    start = start + n if start < 0 else start
    if ax < start:
        start -= 1
    if ax == start:
        return t
    order = [i for i in range(n) if i != ax]
    order.insert(start, ax)
    return transpose(t, order)


_NO_VALUE = object()  # where's x/y not given


def where(condition, x=_NO_VALUE, y=_NO_VALUE):
    """Elementwise select: ``x`` where ``condition`` else ``y`` (broadcasting). The gradient
    flows to the chosen branch only (zero cotangent to the other, none to ``condition``).

    ``where(condition)`` alone is NumPy's ``nonzero(condition)``: a tuple of int64 index
    tensors, one per axis."""
    if x is _NO_VALUE and y is _NO_VALUE:
        return nonzero(condition)
    if x is _NO_VALUE or y is _NO_VALUE:
        raise ShapeError("where: give both x and y (a selection) or neither "
                         "(where(condition) is nonzero(condition)).")
    return _where(condition, x, y)


def row_stack(tup) -> Tensor:
    """``vstack`` (NumPy's older name)."""
    return vstack(tup)


class _Concatenator:
    """NumPy's ``r_``/``c_``: ``r_[a, b, 1:4, 7]`` concatenates its items along an axis.

    Items: tensors, arrays and nested lists (given at least ``ndmin`` axes), numbers, and
    slices ``start:stop:step`` (``arange``; an imaginary step ``5j`` means ``linspace`` with 5
    points, the end included). A leading string ``"axis"``, ``"axis,ndmin"`` or
    ``"axis,ndmin,trans1d"`` sets the axis, the minimum rank and where the axes of an item
    with fewer go (NumPy's directives); the matrix directives ``"r"``/``"c"`` are refused.
    The pieces are cast to their common dtype; tensors keep their derivatives."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self._name, self._axis, self._ndmin, self._trans1d = name, axis, ndmin, trans1d

    def __repr__(self) -> str:
        return f"tenferro.{self._name}"

    def __getitem__(self, key) -> Tensor:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self._axis, self._ndmin, self._trans1d
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d = self._directive(items[0], ndmin, trans1d)
            items = items[1:]
        pieces, dtypes = [], []
        for item in items:
            if isinstance(item, str):
                raise ShapeError(f"{self._name}[...]: a string directive may only come first, "
                                 f"got {item!r:.20} later.")
            if isinstance(item, slice):
                piece = self._range(item)
                if ndmin > 1:
                    piece = _ndmin(piece, ndmin)
                    if trans1d != -1:
                        piece = _swap_last(piece, trans1d)
                dtypes.append(piece.dtype)
            elif isinstance(item, (bool, int, float, complex, np.generic)):
                piece = _ndmin(asarray(item), max(ndmin, 1))
                dtypes.append(item)  # a weak Python scalar in the promotion (NumPy)
            else:
                t = asarray(item)
                piece = _ndmin(t, max(ndmin, 1))
                if trans1d != -1 and t.ndim < ndmin:
                    piece = _trans(piece, t.ndim, ndmin, trans1d)
                dtypes.append(piece.dtype)
            pieces.append(piece)
        if not pieces:
            raise ShapeError(f"{self._name}[...]: nothing to concatenate.")
        common = np.result_type(*dtypes)
        pieces = [p if p.dtype == common else astype(p, common) for p in pieces]
        return concatenate(pieces, axis=axis)

    def _directive(self, s: str, ndmin: int, trans1d: int):
        if s in ("r", "c"):
            raise ShapeError(f"{self._name}[{s!r}, ...]: NumPy's matrix directives make "
                             f"np.matrix objects, which tenferro does not have; use "
                             f"{self._name}['0,2', ...] for a 2-D result.")
        try:
            vals = [int(p) for p in s.split(",")]
        except ValueError:
            raise ShapeError(f"{self._name}[{s!r}, ...]: a directive is 'axis', 'axis,ndmin' "
                             f"or 'axis,ndmin,trans1d' (integers).") from None
        if not 1 <= len(vals) <= 3:
            raise ShapeError(f"{self._name}[{s!r}, ...]: at most three integers.")
        axis = vals[0]
        if len(vals) > 1:
            ndmin = vals[1]
        if len(vals) > 2:
            trans1d = vals[2]
        return axis, ndmin, trans1d

    def _range(self, s: slice) -> Tensor:
        start = 0 if s.start is None else s.start
        step = 1 if s.step is None else s.step
        if s.stop is None:
            raise ShapeError(f"{self._name}[...]: a slice needs its stop (start:stop:step).")
        if isinstance(step, (complex, np.complexfloating)):
            return linspace(start, s.stop, int(abs(step)))
        return arange(start, s.stop, step)


def _swap_last(t: Tensor, axis: int) -> Tensor:
    order = list(range(t.ndim))
    a = normalize_axis("c_", axis, t.ndim)
    order[-1], order[a] = order[a], order[-1]
    return transpose(t, order)


def _trans(t: Tensor, item_ndim: int, ndmin: int, trans1d: int) -> Tensor:
    """NumPy's placement of an item's own axes after ``ndmin`` prepended ones: they start at
    axis ``trans1d`` (``c_``: 0, so a vector becomes a column)."""
    k2 = ndmin - item_ndim
    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
    axes = list(range(ndmin))
    order = axes[:k1] + axes[k2:] + axes[k1:k2]
    return transpose(t, order)


r_ = _Concatenator("r_", axis=0, ndmin=1, trans1d=-1)
c_ = _Concatenator("c_", axis=-1, ndmin=2, trans1d=0)


class ScalarType:
    """A tenferro dtype (``tenferro.float32``, ``tenferro.int64``, ...): a ``numpy.dtype`` in
    every comparison and conversion, and callable like NumPy's scalar types.

    NumPy has two objects per type: the dtype ``np.dtype("float32")`` (what ``x.dtype`` is)
    and the scalar type ``np.float32`` (callable: ``np.float32(x)`` casts). The array API
    standard has one, a dtype object, so ``tenferro.float32`` stays equal to, and hashes as,
    ``np.dtype("float32")`` (and equal to ``np.float32``), ``np.dtype(tf.float32)`` is that
    dtype, and NumPy functions accept it wherever a dtype goes. Calling it is NumPy's
    scalar-type idiom: ``tf.int64(x)`` casts ``x`` (a tensor, an array, a number, nested
    lists) to a tensor of that dtype, differentiably between float and complex dtypes.
    Attributes (``kind``, ``itemsize``, ``name``, ``type``...) are the dtype's. What does not
    hold: identity with NumPy's objects (``x.dtype is tf.float32``,
    ``x.dtype.type is tf.float32``; compare with ``==``) and ``isinstance(v, tf.float32)``."""

    __slots__ = ("dtype",)

    def __init__(self, name: str):
        object.__setattr__(self, "dtype", np.dtype(name))

    def __call__(self, x=0) -> Tensor:
        t = asarray(x)
        return t if t.dtype == self.dtype else astype(t, self.dtype)

    def __eq__(self, other) -> bool:
        if isinstance(other, ScalarType):
            return self.dtype == other.dtype
        try:
            return bool(self.dtype == other)
        except TypeError:
            return False

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __getattr__(self, name: str):
        return getattr(object.__getattribute__(self, "dtype"), name)

    def __setattr__(self, name, value):
        raise AttributeError(f"tenferro.{self.dtype.name} is read-only.")

    def __repr__(self) -> str:
        return f"tenferro.{_NAMES.get(self.dtype.name, self.dtype.name)}"

    def __str__(self) -> str:
        return str(self.dtype)

    def __reduce__(self):
        return ScalarType, (self.dtype.name,)


_NAMES = {"bool": "bool"}


bool_ = ScalarType("bool")
int8, int16, int32, int64 = (ScalarType(n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (ScalarType(n) for n in ("uint8", "uint16", "uint32", "uint64"))
float32, float64 = ScalarType("float32"), ScalarType("float64")
complex64, complex128 = ScalarType("complex64"), ScalarType("complex128")
