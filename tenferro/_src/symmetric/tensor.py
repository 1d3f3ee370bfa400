"""``SymmetricTensor``: a dictionary of dense blocks keyed by charge tuples.

Each block is an ordinary tenferro tensor, so every operation here is a composition of
existing tenferro operations: eager tapes, traced graphs, ``grad``/``jit``/``vmap`` and every
derivative rule apply block by block with nothing new to verify.

Pytree: every structure class is registered with ``tenferro.pytree.register_pytree_node``;
a ``SymmetricTensor`` flattens to its blocks (a dict, keys sorted) and its class (legs and
charge) is the static part of the tree, so ``grad``, ``jit``, ``vmap``, ``custom_vjp`` and
``checkpoint`` accept it as argument and result. A traced truncation across sectors gives legs
whose sector dimensions are run-time sizes; when such a tensor comes back from ``jit`` with
concrete blocks, unflattening evaluates the sizes from the blocks' shapes and drops empty
sectors, which is exactly the eager result. A saved graph stores a symmetric tensor as the
tuple ``(blocks,)``: pass ``tuple(x)`` to a loaded graph and rebuild results with
``x.with_blocks(out[0])``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from chainrules.symbolic import Sym

from .. import linalg, ops
from ..caches import BoundedCache
from ..core.tensor import Tensor
from ..errors import ConcretizationError, DTypeError, ShapeError
from ..pytree import register_pytree_node
from ..tn import arguments as arg
from . import arguments as sarg
from ._blockops import ops_of
from .legs import Leg, resolve_leg

__all__ = ["SymmetricTensor", "from_dense", "from_vector", "random", "to_dense", "to_vector",
           "zeros"]


# ----------------------------------------------------------------- structures
_ALLOWED = BoundedCache("symmetric allowed sectors", 4096)


def allowed_keys(legs: tuple, charge) -> tuple:
    """Every sector combination whose effective charges fuse to ``charge`` (cached). The
    last leg's charge is solved for, not searched."""
    key = (legs, charge)
    hit = _ALLOWED.get(key)
    if hit is None:
        sym = legs[0].symmetry
        last = legs[-1]
        out = []
        for combo in itertools.product(*[l.charges for l in legs[:-1]]):
            rest = sym.fuse_all(l.effective(q) for l, q in zip(legs, combo))
            need = sym.fuse(charge, sym.dual(rest))  # the last leg's effective charge
            q = sym.dual(need) if last.dual else need
            if last.has(q):
                out.append(combo + (q,))
        hit = tuple(sorted(out))
        _ALLOWED.put(key, hit)
    return hit


_CLASSES: dict = {}


def _structure_class(legs: tuple, charge) -> type:
    key = (legs, charge)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = type("SymmetricTensor", (SymmetricTensor,),
                   {"legs": legs, "charge": charge, "__slots__": (),
                    "_static": all(l.is_static for l in legs)})
        _CLASSES[key] = cls
        register_pytree_node(cls, _flatten, _unflatten)
    return cls


def _flatten(x):
    return (x.blocks,), type(x)


def _unflatten(cls, children):
    """Rebuild from (possibly traced, batched or cotangent) blocks. Legs with run-time sizes
    are evaluated once the blocks are concrete (a ``jit`` result)."""
    (blocks,) = children
    if cls._static or not isinstance(blocks, dict):
        return cls._trusted(blocks)
    return _resolve(cls, blocks)


def _resolve(cls, blocks: dict):
    known: list = []
    for k, b in blocks.items():
        shape = getattr(b, "shape", None)
        if shape is None or any(isinstance(d, Sym) for d in shape):
            return cls._trusted(blocks)  # still traced
        for leg, q, n in zip(cls.legs, k, shape):
            d = leg.sector_dim(q)
            if isinstance(d, Sym):
                known.append((d, int(n)))
    env = _solve_sizes(known)
    legs = tuple(resolve_leg(l, env) for l in cls.legs)
    kept = {k: b for k, b in blocks.items() if all(l.has(q) for l, q in zip(legs, k))}
    return _structure_class(legs, cls.charge)._trusted(kept)


def _solve_sizes(pairs) -> dict:
    """{symbol: int} from (size expression, observed int) pairs, solving those linear in one
    unknown symbol until nothing changes (truncation sizes are ``k - 1`` or sums of them)."""
    env: dict = {}
    changed = True
    while changed:
        changed = False
        for e, v in pairs:
            unknown = e.symbols() - env.keys() if isinstance(e, Sym) else set()
            if len(unknown) != 1:
                continue
            (k,) = unknown
            c0 = e.evaluate({**env, k: 0})
            c1 = e.evaluate({**env, k: 1}) - c0
            if c1 != 0 and (v - c0) % c1 == 0 and e.evaluate({**env, k: (v - c0) // c1}) == v:
                env[k] = (v - c0) // c1
                changed = True
    return env


class SymmetricTensor(tuple):
    """A tensor invariant under an abelian symmetry: ``legs`` (a tuple of ``Leg``), total
    ``charge``, and ``blocks``: ``{(q_1, ..., q_n): tensor of shape (dim q_1, ..., dim q_n)}``
    for sector combinations whose effective charges fuse to ``charge``. Missing blocks are
    zero. Build one with ``SymmetricTensor.build(blocks, legs, charge)``, ``from_dense``,
    ``random`` or ``zeros``."""

    __slots__ = ()
    _fields = ("blocks",)
    legs: tuple = ()
    charge = None
    _static = True  # every leg's sector dimensions are ints (no run-time sizes)

    def __new__(cls, blocks):
        if cls is SymmetricTensor:
            raise TypeError("SymmetricTensor: use SymmetricTensor.build(blocks, legs, charge), "
                            "from_dense, random or zeros.")
        blocks = dict(blocks)
        legs, sym = cls.legs, cls.legs[0].symmetry
        for k, b in blocks.items():
            if (len(k) != len(legs) or not all(l.has(q) for l, q in zip(legs, k))
                    or sym.fuse_all(l.effective(q) for l, q in zip(legs, k)) != cls.charge):
                allowed = allowed_keys(legs, cls.charge)
                raise ShapeError(
                    f"SymmetricTensor: block {k!r} violates charge conservation (total charge "
                    f"{cls.charge!r}) on legs {list(cls.legs)}; allowed blocks: "
                    f"{sorted(allowed)[:8]}{'...' if len(allowed) > 8 else ''}.")
            want = tuple(l.sector_dim(q) for l, q in zip(cls.legs, k))
            shape = getattr(b, "shape", None)
            if shape is not None and tuple(shape) != want:
                raise ShapeError(f"SymmetricTensor: block {k!r} has shape {tuple(shape)}, the "
                                 f"legs' sectors give {want}.")
        return tuple.__new__(cls, (blocks,))

    @staticmethod
    def build(blocks: dict, legs: Sequence[Leg], charge=None) -> SymmetricTensor:
        """A symmetric tensor from its blocks (tensors or arrays); ``charge`` defaults to the
        symmetry's identity. Conservation and block shapes are checked."""
        legs = legs_rule("SymmetricTensor.build", "legs", legs)
        sym = legs[0].symmetry
        charge = sym.identity if charge is None else sym.validate(charge, "SymmetricTensor")
        if not isinstance(blocks, dict):
            raise DTypeError(f"SymmetricTensor.build: blocks must be a dict {{charge tuple: "
                             f"block}}, got {arg.describe(blocks)}.")
        blocks = {_block_key(k): arg.tensor("SymmetricTensor.build", f"block {k!r}", b)
                  for k, b in blocks.items()}
        return _structure_class(legs, charge)(blocks)

    @staticmethod
    def stack(tensors: Sequence[SymmetricTensor]) -> SymmetricTensor:
        """A batch for ``tenferro.vmap``: tensors with the same legs and charge, each block
        stacked along a new leading axis (a block missing in some members is zeros there).
        The result has the members' structure and batched blocks: it is meant as ``vmap``'s
        argument (``in_axes=0``), which hands ``f`` one member at a time; ``vmap`` returns
        symmetric results in the same form. Not a tensor to compute with directly."""
        tensors = list(tensors)
        if not tensors or not all(isinstance(t, SymmetricTensor) for t in tensors):
            raise ShapeError("SymmetricTensor.stack: expected a non-empty sequence of "
                             "SymmetricTensors.")
        first = tensors[0]
        for t in tensors[1:]:
            if t.legs != first.legs or t.charge != first.charge:
                raise ShapeError(f"SymmetricTensor.stack: members differ in legs/charge "
                                 f"({list(first.legs)} charge {first.charge!r} vs "
                                 f"{list(t.legs)} charge {t.charge!r}); vmap needs one block "
                                 f"structure.")
        keys = sorted({k for t in tensors for k in t.blocks})
        out = {}
        for k in keys:
            like = next(t.blocks[k] for t in tensors if k in t.blocks)
            out[k] = ops.stack([t.blocks[k] if k in t.blocks else ops.zeros_like(like)
                               for t in tensors])
        return _structure_class(first.legs, first.charge)._trusted(out)

    @classmethod
    def _trusted(cls, blocks: dict) -> SymmetricTensor:
        """Internal: blocks already known to be allowed and of the right shapes."""
        return tuple.__new__(cls, (blocks,))

    def with_blocks(self, blocks) -> SymmetricTensor:
        """A tensor with this one's legs and charge and other blocks (e.g. a loaded graph's
        result ``out[0]``)."""
        if isinstance(blocks, tuple) and len(blocks) == 1 and isinstance(blocks[0], dict):
            blocks = blocks[0]
        return type(self)(blocks)

    # --------------------------------------------------------------- basics
    @property
    def blocks(self) -> dict:
        return tuple.__getitem__(self, 0)

    @property
    def symmetry(self):
        return self.legs[0].symmetry

    @property
    def ndim(self) -> int:
        return len(self.legs)

    @property
    def shape(self) -> tuple:
        """The dense shape."""
        return tuple(l.dim for l in self.legs)

    @property
    def dtype(self):
        bs = list(self.blocks.values())
        return np.result_type(*[b.dtype for b in bs]) if bs else np.dtype(np.float64)

    @property
    def device(self):
        for b in self.blocks.values():
            return b.device
        return None

    def keys(self):
        return self.blocks.keys()

    def __repr__(self):
        return (f"SymmetricTensor(legs={list(self.legs)}, charge={self.charge!r}, "
                f"{len(self.blocks)} blocks, dtype={self.dtype})")

    __str__ = __repr__
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    def __len__(self):  # a tuple underneath (for pytrees); not a sequence of blocks to users
        return 1

    def __getitem__(self, key):
        if isinstance(key, int):
            return tuple.__getitem__(self, key)
        return self.blocks[key]

    def __bool__(self):
        raise TypeError("SymmetricTensor: truth value is ambiguous.")

    # --------------------------------------------------------------- arithmetic
    def _map(self, f, legs=None, charge=None) -> SymmetricTensor:
        cls = type(self) if legs is None else _structure_class(
            tuple(legs), self.charge if charge is None else charge)
        return cls._trusted({k: f(b) for k, b in self.blocks.items()})

    def __mul__(self, s):
        _scalar("mul", s)
        return self._map(lambda b: b * s)

    __rmul__ = __mul__

    def __truediv__(self, s):
        _scalar("div", s)
        return self._map(lambda b: b / s)

    def __neg__(self):
        return self._map(lambda b: -b)

    def __pos__(self):
        return self

    def __add__(self, other):
        return _combine("add", self, other, lambda a, b: a + b, lambda b: b)

    def __sub__(self, other):
        return _combine("sub", self, other, lambda a, b: a - b, lambda b: -b)

    def conj(self) -> SymmetricTensor:
        """Complex conjugate: blocks conjugated, every leg flipped, charge dualised."""
        return self._map(ops_of(self.blocks).conj, [l.flip() for l in self.legs],
                         self.symmetry.dual(self.charge))

    def transpose(self, *perm) -> SymmetricTensor:
        if len(perm) == 1 and not isinstance(perm[0], int):
            perm = tuple(perm[0])
        if not perm:
            perm = tuple(range(self.ndim))[::-1]
        perm = sarg.axes("transpose", "the permutation", perm, self.ndim)
        if len(perm) != self.ndim:
            raise ShapeError(f"transpose: {perm} is not a permutation of {self.ndim} axes.")
        cls = _structure_class(tuple(self.legs[p] for p in perm), self.charge)
        tr = ops_of(self.blocks).transpose
        return cls._trusted({tuple(k[p] for p in perm): tr(b, perm)
                             for k, b in self.blocks.items()})

    def astype(self, dtype) -> SymmetricTensor:
        return self._map(lambda b: b.astype(dtype, copy=False))

    def detach(self) -> SymmetricTensor:
        return self._map(ops.stop_gradient)

    def norm(self):
        return norm(self)

    def to_dense(self):
        return to_dense(self)

    def numpy(self) -> np.ndarray:
        return to_dense(self).numpy()


# ---------------------------------------------------------------- argument rules
def symmetric_rule(op: str, name: str, value):
    """A ``SymmetricTensor`` (a dense tensor is not one: ``from_dense`` makes one)."""
    if not isinstance(value, SymmetricTensor):
        hint = " (from_dense makes one from a dense tensor)" if hasattr(value, "shape") else ""
        raise DTypeError(f"{op}: {name} must be a SymmetricTensor, got {arg.describe(value)}"
                         f"{hint}.")
    return value


def legs_rule(op: str, name: str, value) -> tuple:
    """A non-empty sequence of ``Leg``s of one symmetry."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) == 0:
        raise DTypeError(f"{op}: {name} must be a non-empty sequence of Leg, got "
                         f"{arg.describe(value)}.")
    for i, leg in enumerate(value):
        if not isinstance(leg, Leg):
            raise DTypeError(f"{op}: {name}[{i}] must be a Leg, got {arg.describe(leg)}.")
    if any(leg.symmetry != value[0].symmetry for leg in value):
        raise ShapeError(f"{op}: {name} mixes symmetries "
                         f"{[leg.symmetry for leg in value]}.")
    return tuple(value)


def _block_key(k) -> tuple:
    if isinstance(k, (str, bytes)) or not isinstance(k, (tuple, list)):
        raise ShapeError(f"SymmetricTensor.build: block keys must be tuples of charges (one per "
                         f"leg), got {arg.describe(k)}.")
    return tuple(k)


def _scalar(op, s):
    if isinstance(s, SymmetricTensor):
        raise ShapeError(f"SymmetricTensor {op}: both operands are symmetric tensors; use "
                         f"tensordot/einsum to contract them.")
    if isinstance(s, Tensor) and s.ndim != 0:
        raise ShapeError(f"SymmetricTensor {op}: only scalars (0-d tensors or numbers) scale a "
                         f"symmetric tensor, got shape {tuple(s.shape)}.")


def _combine(op, x, y, both, only_y):
    if not isinstance(y, SymmetricTensor):
        raise ShapeError(f"SymmetricTensor {op}: the other operand must be a SymmetricTensor "
                         f"with the same legs and charge, got {type(y).__name__}.")
    if x.legs != y.legs or x.charge != y.charge:
        raise ShapeError(f"SymmetricTensor {op}: legs/charges differ: {list(x.legs)} charge "
                         f"{x.charge!r} vs {list(y.legs)} charge {y.charge!r}.")
    out = {}
    for k, b in x.blocks.items():
        out[k] = both(b, y.blocks[k]) if k in y.blocks else b
    for k, b in y.blocks.items():
        if k not in x.blocks:
            out[k] = only_y(b)
    return type(x)(out)


# ---------------------------------------------------------------- construction
@arg.checked(where="symmetric.zeros", legs=legs_rule, dtype=arg.DTYPE)
def zeros(legs: Sequence[Leg], charge=None, dtype=np.float64, device=None) -> SymmetricTensor:
    """Every allowed block, filled with zeros."""
    charge = _charge("symmetric.zeros", legs, charge)
    blocks = {k: ops.zeros(tuple(l.sector_dim(q) for l, q in zip(legs, k)), dtype=dtype,
                          device=device) for k in allowed_keys(legs, charge)}
    return SymmetricTensor.build(blocks, legs, charge)


@arg.checked(where="symmetric.random", legs=legs_rule, dtype=arg.DTYPE, seed=arg.SEED)
def random(legs: Sequence[Leg], charge=None, dtype=np.float64, seed=None,
           device=None) -> SymmetricTensor:
    """Every allowed block with standard normal entries (complex: real and imaginary parts
    each standard normal), from ``numpy.random.default_rng(seed)``."""
    charge = _charge("symmetric.random", legs, charge)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    dt = np.dtype(dtype)
    blocks = {}
    for k in allowed_keys(legs, charge):
        shape = tuple(l.sector_dim(q) for l, q in zip(legs, k))
        x = rng.standard_normal(shape)
        if dt.kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        blocks[k] = ops.asarray(x.astype(dt), device=device)
    return SymmetricTensor.build(blocks, legs, charge)


def _charge(op, legs, charge):
    """The total charge (default: the identity), checked against the legs' symmetry."""
    sym = legs[0].symmetry
    return sym.identity if charge is None else sym.validate(charge, op)


def _concrete(x):
    try:
        return np.asarray(ops.stop_gradient(x).numpy())
    except ConcretizationError:
        return None


@arg.checked(where="from_dense", dense=arg.tensor, legs=legs_rule, check=arg.FLAG, atol=arg.TOL)
def from_dense(dense, legs: Sequence[Leg], charge=None, *, check: bool = True,
               atol: float = 1e-12) -> SymmetricTensor:
    """The symmetric tensor whose ``to_dense`` is ``dense``: every allowed block is sliced out
    (differentiably). With ``check`` (default) the weight outside the allowed blocks must be at
    most ``atol * max(1, ||dense||)``, else ``ShapeError``: the dense tensor does not respect
    the symmetry. (In a traced graph the values are unknown and the check is skipped.)"""
    charge = _charge("from_dense", legs, charge)
    if tuple(dense.shape) != tuple(l.dim for l in legs):
        raise ShapeError(f"from_dense: dense shape {tuple(dense.shape)} does not match the legs' "
                         f"dimensions {tuple(l.dim for l in legs)}.")
    keys = allowed_keys(legs, charge)
    blocks = {k: dense[tuple(l.sector_slice(q) for l, q in zip(legs, k))] for k in keys}
    if check:
        v = _concrete(dense)
        if v is not None:
            mask = np.ones(v.shape, dtype=bool)
            for k in keys:
                mask[tuple(l.sector_slice(q) for l, q in zip(legs, k))] = False
            outside = float(np.linalg.norm(v[mask])) if mask.any() else 0.0
            total = float(np.linalg.norm(v))
            if outside > atol * max(1.0, total):
                raise ShapeError(
                    f"from_dense: the tensor does not respect the symmetry: norm {outside:.3e} "
                    f"(of {total:.3e}) lies outside the blocks allowed by charge {charge!r} on "
                    f"legs {list(legs)}. Check the legs' charges, directions and the total "
                    f"charge, or pass check=False to project.")
    return SymmetricTensor.build(blocks, legs, charge)


@arg.checked(x=symmetric_rule)
def to_dense(x: SymmetricTensor):
    """The dense tensor (zeros outside the blocks); differentiable (blocks are padded into
    place and summed)."""
    shape = x.shape
    out = None
    for k, b in x.blocks.items():
        pads = []
        for l, q in zip(x.legs, k):
            s = l.sector_slice(q)
            pads.append((s.start, l.dim - s.stop))
        p = ops.pad(b, pads)  # widths may be run-time sizes (a traced truncation)
        out = p if out is None else out + p
    if out is None:
        return ops.zeros(shape, dtype=x.dtype)
    return out


@arg.checked(where="symmetric.norm", x=symmetric_rule)
def norm(x: SymmetricTensor):
    """The Frobenius norm (of the dense tensor), with ``tenferro.linalg.norm``'s derivative."""
    if not x.blocks:
        return ops.zeros((), dtype=np.float64)
    flat = [ops.reshape(b, (-1,)) for b in x.blocks.values()]
    return linalg.norm(flat[0] if len(flat) == 1 else ops.concatenate(flat))


@arg.checked(x=symmetric_rule)
def to_vector(x: SymmetricTensor):
    """The blocks of ``x`` as one flat tensor (every allowed block, in key order; missing
    blocks as zeros), differentiably: the vector space a Krylov solver
    (``tenferro.linalg.eigsh``/``linsolve`` on a ``LinearOperator``) works in. Inverse:
    ``from_vector``."""
    parts = []
    for k in allowed_keys(x.legs, x.charge):
        b = x.blocks.get(k)
        if b is None:
            n = math.prod(l.sector_dim(q) for l, q in zip(x.legs, k))
            b = ops.zeros((n,), dtype=x.dtype, device=x.device)
        parts.append(ops.reshape(b, (-1,)))
    if not parts:
        return ops.zeros((0,), dtype=x.dtype)
    return parts[0] if len(parts) == 1 else ops.concatenate(parts)


@arg.checked(v=arg.tensor, like=symmetric_rule)
def from_vector(v, like: SymmetricTensor) -> SymmetricTensor:
    """The symmetric tensor with ``like``'s legs and charge whose ``to_vector`` is ``v``."""
    keys = allowed_keys(like.legs, like.charge)
    shapes = [tuple(l.sector_dim(q) for l, q in zip(like.legs, k)) for k in keys]
    n = sum(math.prod(s) for s in shapes)
    if tuple(v.shape) != (n,):
        raise ShapeError(f"from_vector: expected a vector of length {n} for legs "
                         f"{list(like.legs)}, got shape {tuple(v.shape)}.")
    out, off = {}, 0
    for k, s in zip(keys, shapes):
        m = math.prod(s)
        out[k] = ops.reshape(v[off:off + m], s)
        off += m
    return type(like)._trusted(out)
