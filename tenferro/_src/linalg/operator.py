"""``LinearOperator``: a linear map given by its action, for the iterative solvers.

``LinearOperator(matvec, shape, dtype, rmatvec=None)`` wraps a tenferro function
``matvec(v) -> A v`` on vectors of shape ``(n,)`` (results of shape ``(m,)``). The function may
close over tensors that are being differentiated (an MPO environment, a transfer matrix built
from a site tensor, a matrix that ``requires_grad``): gradients reach them.

How gradients reach closed-over tensors (closure conversion). At construction the operator
stages ``matvec`` once on an abstract vector (``tenferro.make_graph`` machinery, on a fresh base, so
nothing is computed). Every tensor the function reads that carries a derivative -- a tensor
that requires grad on the eager tape, or a tracer of an enclosing ``grad``/``vjp``/``jvp``/
``jit`` -- becomes an explicit *parameter* of the operator; every other value stays a constant
of the staged program. The solvers then call ``tenferro.custom_vjp`` functions with the
parameters as arguments, so the implicit rules return cotangents for them, computed by
differentiating ``params -> <w, A(params) v>`` (one ``vjp`` of the staged program). An
operator is therefore a pytree of its parameters plus a fixed program. The price: ``matvec``
must be traceable (tenferro operations on ``v``, no Python branching on tensor values); a
function that is not raises a ``GraphError`` naming the problem.

``rmatvec`` (``v -> A^H v``) is optional: when it is not given, the adjoint is the transpose
of the staged ``matvec`` program (``tenferro`` transposes any linear program), which also
checks that ``matvec`` is linear in ``v``.

A tensor (a matrix ``(m, n)``) is accepted wherever an operator is: it becomes a dense
operator whose products are matrix multiplications (``matmat`` uses one GEMM for a block).
"""

from __future__ import annotations

import numpy as np

from chainrules import ShapedArray

from ..core.dispatch import bind_list, new_base
from ..core.eager import EagerTensor
from ..core.tensor import Tensor
from ..core.tracer import Tracer
from ..errors import ConcretizationError, DTypeError, GraphError, NonLinearError, ShapeError
from ..ir.eval import eval_program
from ..ir.program import Program, Var
from ..ir.transpose import transpose_program
from ..ops import conj, imag, matmul, real, reshape, stack, swapaxes, tensor_of
from ..ops._base import astype, to_inexact  # the library's cast (no copy)
from ..traced.staging import StagingTrace

__all__ = ["LinearOperator"]

_SUPPORTED = tuple(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))


def _carries_derivative(x) -> bool:
    """Whether a closed-over value must become an operator parameter."""
    if isinstance(x, Tracer):
        return True
    return isinstance(x, EagerTensor) and x._node is not None


class LinearOperator:
    """A linear map ``A: C^n -> C^m`` given by ``matvec(v) -> A v`` (see the module docstring).

    ``shape = (m, n)``, ``dtype`` the dtype of ``A`` (vectors of a real operator may be
    complex: the solvers then work in the complex dtype). ``rmatvec(w) -> A^H w`` is optional.
    ``A.params`` are the closed-over tensors that carry derivatives (found automatically).
    """

    def __init__(self, matvec, shape, dtype, rmatvec=None):
        if not callable(matvec):
            raise TypeError(f"LinearOperator: matvec must be a function v -> A v, got "
                            f"{type(matvec).__name__}.")
        shape = tuple(int(s) for s in shape)
        if len(shape) != 2 or min(shape) < 1:
            raise ShapeError(f"LinearOperator: shape must be a pair (m, n) of positive sizes, "
                             f"got {shape}.")
        dtype = np.dtype(dtype)
        if dtype not in _SUPPORTED:
            raise DTypeError(f"LinearOperator: dtype {dtype} is not supported; use float32, "
                             f"float64, complex64 or complex128.")
        self.shape, self.dtype = shape, dtype
        self._dense = None
        self._user = (matvec, rmatvec)
        m, n = shape
        mv, h_mv = _stage(matvec, (n,), (m,), dtype, "matvec")
        hoisted = list(h_mv)
        rmv = None
        if rmatvec is not None:
            rmv, h_rmv = _stage(rmatvec, (m,), (n,), dtype, "rmatvec")
            ids = {id(h) for h in hoisted}
            hoisted += [h for h in h_rmv if id(h) not in ids]
            rmv = _with_params(rmv, h_rmv, hoisted)
        self.params = hoisted
        self._mv_program = _with_params(mv, h_mv, hoisted)
        self._rmv_program = rmv
        self._device = _device_of(list(mv.consts.values()) + hoisted)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_dense(cls, a) -> LinearOperator:
        """The operator of a matrix ``a`` (m, n): products are matrix multiplications."""
        a = to_inexact(tensor_of(a))
        if a.ndim != 2:
            raise ShapeError(f"LinearOperator: a dense operator must be a matrix (m, n), got "
                             f"shape {tuple(a.shape)}.")
        if np.dtype(a.dtype) not in _SUPPORTED:
            raise DTypeError(f"LinearOperator: dtype {a.dtype} is not supported; use float32, "
                             f"float64, complex64 or complex128.")
        op = cls.__new__(cls)
        op.shape, op.dtype = tuple(int(s) for s in a.shape), np.dtype(a.dtype)
        op._dense, op.params = a, [a]
        op._user = (None, None)
        op._mv_program = op._rmv_program = None
        op._device = a.device
        return op

    # ----------------------------------------------------------------- properties
    @property
    def is_dense(self) -> bool:
        return self._dense is not None

    @property
    def device(self):
        return self._device

    def __repr__(self):
        kind = "dense" if self.is_dense else f"{len(self.params)} parameter(s)"
        return f"LinearOperator(shape={self.shape}, dtype={self.dtype}, {kind})"

    # --------------------------------------------------------------- application
    def bind(self, params=None) -> BoundOperator:
        """The operator with its parameters replaced by ``params`` (the lowered values a
        ``custom_vjp`` rule receives); ``None`` uses its own."""
        return BoundOperator(self, list(self.params if params is None else params))

    def matvec(self, v) -> Tensor:
        return self.bind().matvec(v)

    def rmatvec(self, w) -> Tensor:
        return self.bind().rmatvec(w)

    def matmat(self, x) -> Tensor:
        return self.bind().matmat(x)

    def __matmul__(self, v):
        v = tensor_of(v)
        return self.matvec(v) if v.ndim == 1 else self.matmat(v)


class BoundOperator:
    """An operator with concrete parameter values: what the algorithms call."""

    __slots__ = ("op", "params", "_rmv_cache")

    def __init__(self, op: LinearOperator, params: list):
        self.op, self.params = op, params
        self._rmv_cache = None

    shape = property(lambda self: self.op.shape)
    dtype = property(lambda self: self.op.dtype)

    @property
    def hermitian_ok(self) -> bool:
        return self.op.shape[0] == self.op.shape[1]

    def matvec(self, v) -> Tensor:
        if self.op._dense is not None:
            return matmul(self.params[0], v)
        return _run(self.op._mv_program, v, self.params)

    def rmatvec(self, w) -> Tensor:
        if self.op._dense is not None:
            return matmul(conj(swapaxes(self.params[0], -1, -2)), w)
        if self.op._rmv_program is None:
            self.op._rmv_program = _transposed(self.op)
        return _run(self.op._rmv_program, w, self.params)

    def matmat(self, x) -> Tensor:
        """``A @ X`` for a block ``X`` of shape (n, k): one GEMM for a dense operator,
        otherwise one matvec per column."""
        if self.op._dense is not None:
            return matmul(self.params[0], x)
        return stack([self.matvec(x[:, j]) for j in range(x.shape[1])], axis=1)

    def rmatmat(self, x) -> Tensor:
        if self.op._dense is not None:
            return matmul(conj(swapaxes(self.params[0], -1, -2)), x)
        return stack([self.rmatvec(x[:, j]) for j in range(x.shape[1])], axis=1)


def _run(program: Program, v, params) -> Tensor:
    v = tensor_of(v)
    if v.dtype != program.inputs[0].aval.dtype:
        # a real operator applied to a complex vector: by linearity, real and imaginary parts

        if v.dtype.kind == "c" and program.inputs[0].aval.dtype.kind == "f":
            re = eval_program(program, [real(v)] + list(params), bind_list)[0]
            im = eval_program(program, [imag(v)] + list(params), bind_list)[0]
            return re + 1j * im

        v = astype(v, program.inputs[0].aval.dtype)
    return eval_program(program, [v] + list(params), bind_list)[0]


# ------------------------------------------------------------------ closure conversion
def _stage(fn, in_shape, out_shape, dtype, what):
    """Stage ``fn`` on an abstract vector; return (program over [v] + hoisted, hoisted): the
    closed-over values that carry derivatives become trailing inputs."""
    st = StagingTrace(level=0)
    st.record_source = False
    try:
        with new_base(st):
            v = st.new_arg(ShapedArray(in_shape, dtype))
            out = tensor_of(fn(v))
            out_var = st.to_var(out)
    except ConcretizationError as e:
        raise GraphError(
            f"LinearOperator: {what} could not be traced ({e}). It must be a tenferro function "
            f"of its vector argument without Python branching on tensor values (the operator "
            f"traces it once to find the tensors it closes over, so that gradients reach them)."
        ) from None
    if tuple(out_var.aval.shape) != tuple(out_shape):
        raise ShapeError(
            f"LinearOperator: {what} maps a vector of shape {in_shape} to shape "
            f"{tuple(out_var.aval.shape)}, but the operator's shape requires {out_shape}."
        )
    hoisted, extra, consts = [], [], {}
    for var, c in st.consts.items():
        if _carries_derivative(c):
            hoisted.append(c)
            extra.append(var)
        else:
            consts[var] = c
    if np.dtype(out_var.aval.dtype) != dtype:
        raise DTypeError(
            f"LinearOperator: {what} returns {out_var.aval.dtype} for a {dtype} vector; the "
            f"operator's dtype must be the dtype of its results (declare "
            f"dtype={out_var.aval.dtype})."
        )
    program = Program([v.var] + extra, st.eqns, [out_var], consts)
    return program, hoisted


def _with_params(program: Program, own, hoisted) -> Program:
    """``program`` over [v] + own -> over [v] + hoisted (unused parameters are ignored)."""
    own_vars = dict(zip((id(h) for h in own), program.inputs[1:]))
    ins = [program.inputs[0]] + [own_vars.get(id(h)) or Var(ShapedArray(h.shape, h.dtype))
                                 for h in hoisted]
    return Program(ins, program.eqns, program.outputs, program.consts)


def _transposed(op: LinearOperator) -> Program:
    """The adjoint ``w -> A^H w`` as the transpose of the staged matvec (linear in v)."""
    prog = op._mv_program
    try:
        t = transpose_program(prog, [True] + [False] * (len(prog.inputs) - 1))
    except NonLinearError as e:
        raise NonLinearError(
            f"LinearOperator: matvec is not linear in its vector ({e}); the iterative solvers "
            f"need a linear map (or pass rmatvec explicitly)."
        ) from None
    if t.outputs[0] is None:
        raise ShapeError("LinearOperator: matvec does not depend on its vector (A = 0).")
    return t


def _device_of(values):
    for c in values:
        d = getattr(c, "device", None)
        if d is not None:
            return d
    return None


def as_operator(a, op: str) -> LinearOperator:
    """A ``LinearOperator`` from an operator or a matrix (named errors otherwise)."""
    if isinstance(a, LinearOperator):
        return a
    if isinstance(a, (Tensor, np.ndarray, list, tuple)):
        t = tensor_of(a)
        if t.ndim != 2:
            raise ShapeError(f"{op}: expected a LinearOperator or a matrix (m, n), got a tensor "
                             f"of shape {tuple(t.shape)}.")
        return LinearOperator.from_dense(t)
    raise TypeError(f"{op}: expected a LinearOperator or a matrix, got {type(a).__name__}.")


def flat_vector(x, n: int, dtype, op: str, what: str) -> Tensor:
    """``x`` as a vector of length n (any shape with n elements is flattened)."""
    x = tensor_of(x)
    size = int(np.prod(x.shape)) if x.ndim else 1
    if size != n:
        raise ShapeError(f"{op}: {what} has shape {tuple(x.shape)} ({size} elements), but the "
                         f"operator needs vectors of length {n}.")
    return reshape(x, (n,)) if x.ndim != 1 else x
