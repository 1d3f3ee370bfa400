"""Sizes known only at run time ("symbolic dimensions"); see design/symbolic-sizes.md.

A truncated SVD whose rank is decided by a cutoff has an output size that depends on the
data. In traced graphs such a size is a ``Sym``: an integer polynomial ``sum c * a1^e1 * ...``
whose atoms are run-time *symbols* (each ``1 <= k <= bound``) or the non-polynomial operations
shapes need (``a // b``, ``min(a, b)``, ``max(a, b)``). Sums, differences and products stay
exact and canonical, so ``S[1:]`` has length ``k - 1`` and ``concatenate([S, S[:1]])`` has
length ``k + 1``. ``decide`` settles a comparison when it holds (or fails) for every value the
symbols can take (``k + 1 != k``, ``k >= 1``, ``2*k != 1``, ``min(2, k) <= k``): interval
arithmetic, exact splitting of min/max, and, for small bounds, evaluating every case. A
comparison it cannot settle raises ``ShapeError`` instead of guessing.

Equality has two faces. Code in ``tenferro``/``chainrules`` compares shapes *structurally*
(``(k, 3) == (k, 3)``; different expressions are different shapes, which is what dict keys,
caches and graph rewrites need); ``same_size``/``same_shape`` are the explicit spelling. A
comparison in user code (``if U.shape[1] == 8:`` inside ``jit``) is decided from the ranges or
raises: Python cannot branch on a size that only the run decides.
"""

from __future__ import annotations

import itertools
import numbers
import sys

from .caches import BoundedCache
from .errors import ShapeError

_ids = itertools.count()
_bounds: dict[int, int] = {}
_LIBRARY = ("tenferro", "chainrules")
_STATIC_RANK_HINT = (
    "pass max_rank= (a static rank) instead of a cutoff, or keep the computation on tensors"
)


# ------------------------------------------------------------------------------ atoms
class _Op:
    """A non-polynomial atom: ``floordiv(a, b)`` (b >= 1), ``min(a, b)``, ``max(a, b)``.
    Arguments are ints or ``Sym``; equality and hashing are structural."""

    __slots__ = ("name", "args", "key", "_hash")

    def __init__(self, name: str, args: tuple):
        self.name, self.args = name, args
        self.key = (2, name, tuple(_vkey(a) for a in args))
        self._hash = hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Op) and self.key == other.key

    def __hash__(self):
        return self._hash

    def range(self):
        rs = [size_range(a) for a in self.args]
        if self.name == "floordiv":
            (al, ah), (bl, bh) = rs
            q = [al // bl, al // bh, ah // bl, ah // bh]  # floor(a/b) is monotone in a and b
            return min(q), max(q)
        (al, ah), (bl, bh) = rs
        if self.name == "min":
            return min(al, bl), min(ah, bh)
        return max(al, bl), max(ah, bh)

    def evaluate(self, env):
        a, b = (_eval(x, env) for x in self.args)
        if self.name == "floordiv":
            return a // b
        return sym_min(a, b) if self.name == "min" else sym_max(a, b)

    def symbols(self) -> set:
        out = set()
        for a in self.args:
            if isinstance(a, Sym):
                out |= a.symbols()
        return out

    def __repr__(self):
        a, b = self.args
        if self.name == "floordiv":
            return f"{_paren(a)}//{_paren(b)}"
        return f"{self.name}({a}, {b})"


def _paren(x):
    return f"({x})" if isinstance(x, Sym) and (len(x._poly) > 1 or x._poly[0][1] != 1) else str(x)


def _akey(atom):
    return (1, atom) if isinstance(atom, int) else atom.key


def _vkey(v):
    return (0, v) if isinstance(v, int) else (3, v._key)


_UNBOUNDED = 1 << 62  # a symbol this process did not create: no upper bound is known


def _symbol_range(k: int):
    b = _bounds.get(k, _UNBOUNDED)
    return (1 if b >= 1 else 0), b


def _atom_range(atom):
    return _symbol_range(atom) if isinstance(atom, int) else atom.range()


def _imul(a, b):
    p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(p), max(p)


# -------------------------------------------------------------------------- expressions
class Sym:
    """A size known only at run time: a canonical integer polynomial over atoms."""

    __slots__ = ("_poly", "_key", "_hash", "_rng")
    __array_ufunc__ = None  # NumPy scalars defer to our reflected operators

    def __init__(self, poly: tuple):
        self._poly = poly  # ((monomial, coef), ...) sorted; monomial: ((atom, exp), ...)
        self._key = tuple((tuple((_akey(a), e) for a, e in m), c) for m, c in poly)
        self._hash = hash(self._key)
        self._rng = None

    # -- construction ---------------------------------------------------------------
    @staticmethod
    def new(bound: int) -> Sym:
        """A fresh run-time size ``k`` with ``1 <= k <= bound``."""
        i = next(_ids)
        _bounds[i] = int(bound)
        return Sym(((((i, 1),), 1),))

    @staticmethod
    def make(coef: int, terms: dict):
        """``coef * prod(symbol^exp)`` (the monomials of graph format version 1)."""
        out = int(coef)
        for k, e in dict(terms).items():
            out = out * Sym(((((int(k), 1),), 1),)) ** int(e)
        return out

    # -- compatibility with monomial consumers (graph format version 1) --------------
    def _monomial(self):
        if len(self._poly) == 1 and all(isinstance(a, int) for a, _ in self._poly[0][0]):
            return self._poly[0]
        raise ShapeError(
            f"the run-time size {self} is not a monomial c*k1^e1*...; encode it with "
            f"chainrules.symbolic.encode_size instead of (coef, terms)."
        )

    @property
    def coef(self) -> int:
        return self._monomial()[1]

    @property
    def terms(self) -> tuple:
        return self._monomial()[0]

    @property
    def is_symbol(self) -> bool:
        return len(self._poly) == 1 and self._poly[0][1] == 1 and len(self._poly[0][0]) == 1 \
            and self._poly[0][0][0][1] == 1 and isinstance(self._poly[0][0][0][0], int)

    @property
    def symbol(self) -> int:
        return self._poly[0][0][0][0]

    def symbols(self) -> set:
        out = set()
        for m, _ in self._poly:
            for a, _ in m:
                out |= {a} if isinstance(a, int) else a.symbols()
        return out

    # -- ranges and evaluation --------------------------------------------------------
    def range(self) -> tuple:
        """``(lo, hi)``: every value the size can take at run time lies in between."""
        if self._rng is None:
            lo = hi = 0
            for m, c in self._poly:
                r = (1, 1)
                for a, e in m:
                    ar = _atom_range(a)
                    for _ in range(e):
                        r = _imul(r, ar)
                r = (c * r[0], c * r[1]) if c > 0 else (c * r[1], c * r[0])
                lo, hi = lo + r[0], hi + r[1]
            self._rng = (lo, hi)
        return self._rng

    def bound(self) -> int:
        return self.range()[1]

    def evaluate(self, env):
        """The size given ``env`` = {symbol id: size} (sizes may themselves be symbolic)."""
        total = 0
        for m, c in self._poly:
            t = c
            for a, e in m:
                t = t * (env[a] if isinstance(a, int) else a.evaluate(env)) ** e
            total = total + t
        return total

    # -- arithmetic -------------------------------------------------------------------
    def __add__(self, other):
        if other.__class__ is int and not other:
            return self
        key = ("+", self._key, other._key if isinstance(other, Sym) else other)
        out = _memo.get(key)
        if out is None:
            o = _poly_or_none(other)
            if o is None:
                return NotImplemented
            d = dict(self._poly)
            for m, c in o.items():
                d[m] = d.get(m, 0) + c
            out = _remember(key, _mk(d))
        return out

    __radd__ = __add__

    def __neg__(self):
        key = ("-", self._key)
        out = _memo.get(key)
        if out is None:
            out = _remember(key, _mk({m: -c for m, c in self._poly}))
        return out

    def __pos__(self):
        return self

    def __sub__(self, other):
        if isinstance(other, numbers.Integral):
            return self + (-int(other))
        return self + (-other) if isinstance(other, Sym) else NotImplemented

    def __rsub__(self, other):
        return NotImplemented if _poly_or_none(other) is None else (-self) + int(other)

    def __mul__(self, other):
        if other.__class__ is int and other == 1:
            return self
        key = ("*", self._key, other._key if isinstance(other, Sym) else other)
        out = _memo.get(key)
        if out is None:
            o = _poly_or_none(other)
            if o is None:
                return NotImplemented
            d: dict = {}
            for m1, c1 in self._poly:
                for m2, c2 in o.items():
                    m = _mono_mul(m1, m2)
                    d[m] = d.get(m, 0) + c1 * c2
            out = _remember(key, _mk(d))
        return out

    __rmul__ = __mul__

    def __pow__(self, e):
        if not isinstance(e, numbers.Integral) or e < 0:
            return NotImplemented
        out = 1
        for _ in range(int(e)):
            out = out * self
        return out

    def __floordiv__(self, other):
        if isinstance(other, numbers.Integral) or isinstance(other, Sym):
            return floordiv(self, other)
        return NotImplemented

    def __rfloordiv__(self, other):
        if isinstance(other, numbers.Integral):
            return floordiv(int(other), self)
        return NotImplemented

    def __mod__(self, other):
        if isinstance(other, numbers.Integral) or isinstance(other, Sym):
            return self - other * floordiv(self, other)
        return NotImplemented

    def __rmod__(self, other):
        if isinstance(other, numbers.Integral):
            return int(other) - self * floordiv(int(other), self)
        return NotImplemented

    # -- comparisons --------------------------------------------------------------------
    def __eq__(self, other):
        if _poly_or_none(other) is None:
            return NotImplemented
        if _from_library(sys._getframe(1)):
            return same_size(self, other)
        return _decided(self, "==", other)

    def __ne__(self, other):
        if _poly_or_none(other) is None:
            return NotImplemented
        if _from_library(sys._getframe(1)):
            return not same_size(self, other)
        return _decided(self, "!=", other)

    def __hash__(self):
        return self._hash

    def __lt__(self, other):
        return _decided(self, "<", other)

    def __le__(self, other):
        return _decided(self, "<=", other)

    def __gt__(self, other):
        return _decided(self, ">", other)

    def __ge__(self, other):
        return _decided(self, ">=", other)

    def __bool__(self):
        return _decided(self, "!=", 0)

    def __index__(self):
        raise ShapeError(
            f"{_asker()}the size {self} is only known at run time (a data-dependent shape, e.g. "
            f"an SVD rank chosen by a cutoff); code that needs it as a Python int cannot be "
            f"traced. Use it as a dimension, or {_STATIC_RANK_HINT}."
        )

    __int__ = __index__

    def __float__(self):
        raise ShapeError(
            f"{_asker()}the size {self} is only known at run time (a data-dependent shape); "
            f"it has no Python float value while tracing. Use it as a dimension (or in a tensor "
            f"expression: x / s.shape[0] works), or {_STATIC_RANK_HINT}."
        )

    def __truediv__(self, other):
        if _poly_or_none(other) is None and not isinstance(other, float):
            return NotImplemented
        raise ShapeError(
            f"{_asker()}true division of the run-time size {self} by {other}: sizes stay "
            f"integers; use // (floor division), or divide a tensor by the size, or "
            f"{_STATIC_RANK_HINT}."
        )

    def __rtruediv__(self, other):
        if _poly_or_none(other) is None and not isinstance(other, float):
            return NotImplemented
        raise ShapeError(
            f"{_asker()}true division of {other} by the run-time size {self}: sizes stay "
            f"integers; use //, or divide a tensor by the size, or {_STATIC_RANK_HINT}."
        )

    def __repr__(self):
        out = ""
        for m, c in reversed(self._poly):  # highest terms first, the constant last
            mag = abs(c)
            alone = len(m) == 1 and m[0][1] == 1 and mag == 1
            body = "*".join(
                (f"k{a}" if isinstance(a, int) else repr(a) if alone or a.name != "floordiv"
                 else f"({a!r})") + (f"^{e}" if e != 1 else "")
                for a, e in m
            )
            term = body if body and mag == 1 else f"{mag}*{body}" if body else str(mag)
            if not out:
                out = term if c > 0 else f"-{term}"
            else:
                out += f" + {term}" if c > 0 else f" - {term}"
        return out


# (op, operand keys) -> result: shapes repeat the same arithmetic a lot
_memo = BoundedCache("symbolic size arithmetic", 50000)


def _remember(key, value):
    return _memo.put(key, value)


def _mono_mul(m1, m2):
    if not m1:
        return m2
    if not m2:
        return m1
    d = dict(m1)
    for a, e in m2:
        d[a] = d.get(a, 0) + e
    return tuple(sorted(d.items(), key=lambda t: _akey(t[0])))


def _poly_or_none(x):
    if isinstance(x, Sym):
        return dict(x._poly)
    if isinstance(x, numbers.Integral):  # ints, NumPy ints and bools
        return {(): int(x)} if x else {}
    return None


def _mk(d: dict):
    """Normalise a polynomial dict: an int when constant (or when its range is one point);
    ``c1*min(x, y) + c2*max(x, y)`` becomes ``c1*(x + y) + (c2 - c1)*max(x, y)``."""
    for m, c in list(d.items()):
        if c and len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], _Op) and \
                m[0][0].name == "min":
            twin = ((_Op("max", m[0][0].args), 1),)
            if d.get(twin):
                x, y = m[0][0].args
                d = dict(d)
                del d[m]
                d[twin] -= c
                return _mk(dict(_add_poly(d, c * (x + y))))
    items = [(m, c) for m, c in d.items() if c]
    if all(not m for m, _ in items):
        return sum(c for _, c in items)
    items.sort(key=lambda t: tuple((_akey(a), e) for a, e in t[0]))
    s = Sym(tuple(items))
    lo, hi = s.range()
    return lo if lo == hi else s


def _add_poly(d: dict, v) -> dict:
    d = dict(d)
    for m, c in (_poly_or_none(v) or {}).items():
        d[m] = d.get(m, 0) + c
    return d


def _eval(x, env):
    return x.evaluate(env) if isinstance(x, Sym) else x


# ------------------------------------------------------------------ non-polynomial forms
def floordiv(a, b):
    """``a // b`` for sizes (``b`` an int != 0 or a size >= 1): exact parts are divided out,
    the rest becomes a ``floordiv`` atom (evaluated at run time)."""
    if isinstance(b, numbers.Integral):
        b = int(b)
        if b == 0:
            raise ShapeError(f"cannot divide the size {a} by zero.")
        if not isinstance(a, Sym):
            return int(a) // b
        if b < 0:
            return floordiv(-a, -b)
        q, r = {}, {}
        for m, c in a._poly:  # a = b*q + r with 0 <= coefficients of r < b
            q[m], r[m] = c // b, c % b
        rest = _mk(r)
        if isinstance(rest, int):
            return _mk(q) + rest // b
        lo, hi = size_range(rest)
        if 0 <= lo and hi < b:
            return _mk(q)
        return _mk(q) + _atom_sym(_Op("floordiv", (rest, b)))
    if not isinstance(b, Sym):
        raise TypeError(f"floordiv: unsupported divisor {b!r}")
    if b.range()[0] < 1:
        raise ShapeError(f"cannot divide the size {a} by {b}, which may be 0 at run time.")
    exact = _exact_quotient(a, b)
    if exact is not None:
        return exact
    lo, hi = size_range(a)
    if 0 <= lo and hi < b.range()[0]:
        return 0
    return _atom_sym(_Op("floordiv", (a, b)))


def _exact_quotient(a, b: Sym):
    """``a / b`` when it is a polynomial with a single term (e.g. (3k - 3)/(k - 1) = 3)."""
    if isinstance(a, int) or not a._poly:
        return None
    (ma, ca), (mb, cb) = a._poly[-1], b._poly[-1]  # leading terms
    if ca % cb:
        return None
    da, db = dict(ma), dict(mb)
    if any(da.get(x, 0) < e for x, e in db.items()):
        return None
    qm = {x: e - db.get(x, 0) for x, e in da.items()}
    q = _mk({tuple(sorted(((x, e) for x, e in qm.items() if e),
                          key=lambda t: _akey(t[0]))): ca // cb})
    return q if same_size(q * b, a) else None


def _atom_sym(op: _Op):
    s = Sym(((((op, 1),), 1),))
    lo, hi = s.range()
    return lo if lo == hi else s


def sym_min(a, b):
    """``min(a, b)`` for sizes: decided from the ranges when possible, else a ``min`` atom."""
    return _minmax("min", a, b)


def sym_max(a, b):
    """``max(a, b)`` for sizes: decided from the ranges when possible, else a ``max`` atom."""
    return _minmax("max", a, b)


def _minmax(name, a, b):
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return min(int(a), int(b)) if name == "min" else max(int(a), int(b))
    if _nonneg(b - a):
        return a if name == "min" else b
    if _nonneg(a - b):
        return b if name == "min" else a
    # canonical form: constants pulled out, so shifted copies are one atom
    # (max(0, n - 1) = max(1, n) - 1 and min(1, n) = 1 + min(0, n - 1) share their arguments)
    p, q = sorted((a, b), key=lambda v: _vkey(v - _const(v)))
    t = _const(p)
    return t + _atom_sym(_Op(name, (p - t, q - t)))


def _const(v) -> int:
    if not isinstance(v, Sym):
        return int(v)
    return next((c for m, c in v._poly if not m), 0)


# ------------------------------------------------------------------------ decisions
def size_range(d) -> tuple:
    """``(lo, hi)`` of a size (an int is its own range)."""
    return d.range() if isinstance(d, Sym) else (int(d), int(d))


def decide(a, op: str, b):
    """``a op b`` (``op`` one of == != < <= > >=) when it holds, or fails, for every value the
    run could produce; ``None`` when that depends on the run."""
    if a.__class__ is int and b.__class__ is int:
        return _INT_OPS[op](a, b)
    d = a - b
    if op == ">=" and isinstance(d, Sym) and d.range()[0] >= 0:  # the common question
        return True
    if op in ("==", "!="):
        if not isinstance(d, Sym):
            r = d == 0
        elif _nonneg(d - 1) or _nonneg(-d - 1) or _for_all(d, "!=0"):
            r = False
        else:
            return None
        return r if op == "==" else not r
    yes, no = {"<": (-d - 1, d), "<=": (-d, d - 1), ">": (d - 1, -d), ">=": (d, -d - 1)}[op]
    return True if _nonneg(yes) else False if _nonneg(no) else None


_ENUM_LIMIT = 4096  # at most this many combinations of symbol values are tried exhaustively
_enum_cache = BoundedCache("symbolic size proofs", 10000)


def _nonneg(e, depth: int = 6) -> bool:
    """Whether ``e >= 0`` for every run: by ``_prove_nonneg``, else, when the symbols' ranges
    hold at most ``_ENUM_LIMIT`` combinations, by evaluating all of them (exact)."""
    if not isinstance(e, Sym):
        return e >= 0
    return _prove_nonneg(e, depth) or _for_all(e, ">=0")


def _for_all(e: Sym, test: str) -> bool:
    """Whether ``e >= 0`` (``test=">=0"``) or ``e != 0`` (``"!=0"``) at every combination of
    its symbols' values; False when there are more than ``_ENUM_LIMIT`` of them."""
    key = (e._key, test)
    r = _enum_cache.get(key)
    if r is None:
        syms = sorted(e.symbols())
        ranges = [range(lo, hi + 1) for lo, hi in map(_symbol_range, syms)]
        n = 1
        for rg in ranges:
            n *= len(rg)
        ok = (lambda v: v >= 0) if test == ">=0" else (lambda v: v != 0)
        r = n <= _ENUM_LIMIT and all(
            ok(e.evaluate(dict(zip(syms, vals)))) for vals in itertools.product(*ranges))
        _enum_cache.put(key, r)
    return r


def _prove_nonneg(e, depth: int = 6) -> bool:
    """Whether ``e >= 0`` for every run (sound, not complete). Interval arithmetic first; then
    a ``min``/``max`` atom that occurs linearly is split exactly: ``c*min(x, y) + r >= 0`` with
    ``c > 0`` iff both ``c*x + r`` and ``c*y + r`` are >= 0, and with ``c < 0`` iff either is
    (``max`` the other way round). This keeps e.g. ``min(2, k) <= k`` decidable. A linear
    ``x // q`` (static ``q``) is bounded by ``x - q + 1 <= q * (x // q) <= x``."""
    if not isinstance(e, Sym):
        return e >= 0
    if e.range()[0] >= 0:
        return True
    if depth == 0:
        return False
    for m, c in e._poly:
        if not (len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], _Op)):
            continue
        op = m[0][0]
        rest = _mk({mm: cc for mm, cc in e._poly if mm != m})
        if op.name == "floordiv":
            x, q = op.args
            if not isinstance(q, int):
                continue
            # x - q + 1 <= q * (x // q) <= x: bound c * (x // q) from below, times q > 0
            low = c * x if c < 0 else c * (x - q + 1)
            return _prove_nonneg(low + q * rest + q - 1, depth - 1)  # e is an int
        x, y = (c * v + rest for v in op.args)
        if (op.name == "min") == (c > 0):
            return _prove_nonneg(x, depth - 1) and _prove_nonneg(y, depth - 1)
        return _prove_nonneg(x, depth - 1) or _prove_nonneg(y, depth - 1)
    return False


_INT_OPS = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__,
            ">": int.__gt__, ">=": int.__ge__}


def _decided(a, op, b):
    if _poly_or_none(b) is None:
        return NotImplemented
    r = decide(a, op, b)
    if r is None:
        lo, hi = size_range(a)
        raise ShapeError(
            f"{_asker()}the comparison {a} {op} {b} depends on a size known only at run time "
            f"({a} lies in [{lo}, {hi}]; e.g. an SVD rank chosen by a cutoff), so traced code "
            f"cannot branch on it. Use tenferro.where for data-dependent choices, or "
            f"{_STATIC_RANK_HINT}."
        )
    return r


def same_size(a, b) -> bool:
    """Structural equality (never raises): the same int, or the same expression."""
    if isinstance(a, Sym) or isinstance(b, Sym):
        return isinstance(a, Sym) and isinstance(b, Sym) and a._key == b._key
    return a == b


def same_shape(s1, s2) -> bool:
    """Structural equality of two shapes (never raises). Plain tuple equality: comparisons
    made from library code are structural (see ``Sym.__eq__``), and this keeps ints fast."""
    return tuple(s1) == tuple(s2)


def is_one(d) -> bool:
    """Whether a size is statically 1 (a run-time size never is, structurally)."""
    return not isinstance(d, Sym) and d == 1


def _from_library(frame) -> bool:
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    return name.split(".", 1)[0] in _LIBRARY


def _asker() -> str:
    """``"fn: "`` naming the library function the user called that needed a decision about a
    run-time size ('' when the user's own code asked)."""
    f = sys._getframe(1)
    while f is not None and f.f_globals.get("__name__") == __name__:
        f = f.f_back
    outer = None
    while f is not None and _from_library(f):
        outer, f = f, f.f_back
    if outer is None:
        return ""
    name = outer.f_code.co_name
    return f"{ {'__getitem__': 'indexing'}.get(name, name)}: "


def size_of(shape):
    """Number of elements: an int, or a ``Sym`` when some dimension is symbolic."""
    n = 1
    for d in shape:
        n = n * d
    return n


def bound_of(d) -> int:
    """A static upper bound of a size (itself when static)."""
    return d.bound() if isinstance(d, Sym) else int(d)


def resolve(value, env):
    """Replace every ``Sym`` inside ``value`` (nested tuples/lists/dicts) by its size."""
    if isinstance(value, Sym):
        # symbols not bound yet (the size an equation is about to produce) stay symbolic
        return value.evaluate(env) if value.symbols() <= env.keys() else value
    if isinstance(value, tuple):
        return tuple(resolve(v, env) for v in value)
    if isinstance(value, list):
        return [resolve(v, env) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, env) for k, v in value.items()}
    return value


def contains_sym(value) -> bool:
    if isinstance(value, Sym):
        return True
    if isinstance(value, (tuple, list)):
        return any(contains_sym(v) for v in value)
    if isinstance(value, dict):
        return any(contains_sym(v) for v in value.values())
    return False


# ---------------------------------------------------------------------------- JSON
def encode_size(d):
    """A size as JSON: an int; ``{"sym": [coef, [[symbol, exp], ...]]}`` for a monomial
    (graph format version 1); else ``{"symexpr": [[coef, [[atom, exp], ...]], ...]}`` with an
    atom a symbol id or ``{"op": "floordiv"|"min"|"max", "args": [size, size]}``."""
    if not isinstance(d, Sym):
        return int(d)
    try:
        coef, terms = d.coef, d.terms
    except ShapeError:
        return {"symexpr": [[c, [[_enc_atom(a), e] for a, e in m]] for m, c in d._poly]}
    return {"sym": [coef, [[k, e] for k, e in terms]]}


def _enc_atom(a):
    return a if isinstance(a, int) else {"op": a.name, "args": [encode_size(x) for x in a.args]}


def decode_size(obj, symbol):
    """Inverse of ``encode_size``; ``symbol(id)`` returns the ``Sym`` a stored symbol id
    stands for (a loader makes fresh symbols with the stored bounds)."""
    if isinstance(obj, bool) or not isinstance(obj, (int, dict)):
        raise ValueError(f"not an encoded size: {obj!r}")
    if isinstance(obj, int):
        return obj
    if "sym" in obj:
        coef, terms = obj["sym"]
        out = int(coef)
        for k, e in terms:
            out = out * symbol(int(k)) ** int(e)
        return out
    if "symexpr" in obj:
        total = 0
        for coef, mono in obj["symexpr"]:
            t = int(coef)
            for a, e in mono:
                t = t * _dec_atom(a, symbol) ** int(e)
            total = total + t
        return total
    raise ValueError(f"not an encoded size: {obj!r}")


def _dec_atom(a, symbol):
    if isinstance(a, int):
        return symbol(a)
    x, y = (decode_size(v, symbol) for v in a["args"])
    ops = {"floordiv": floordiv, "min": sym_min, "max": sym_max}
    if a.get("op") not in ops:
        raise ValueError(f"unknown size operation {a!r}")
    return ops[a["op"]](x, y)
