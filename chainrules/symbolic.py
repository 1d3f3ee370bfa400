"""Sizes known only at run time ("symbolic dimensions").

A truncated SVD whose rank is decided by a cutoff has an output size that depends on the
data. In traced graphs such a size is a ``Sym``: a product ``c * k1^e1 * k2^e2 ...`` of
run-time symbols. Products (reshapes that merge or split axes around a symbolic one) stay exact;
equality is structural, so shapes agree exactly when they carry the same symbols. Sizes are at
least 1, so comparisons with 0 and 1 are decided; anything else (sums, slicing part of a
symbolic axis) is refused with a clear error rather than guessed. Each symbol carries a static
upper ``bound`` used only for cost estimates (e.g. planning contraction orders).
"""

from __future__ import annotations

import itertools

from .errors import ShapeError

_ids = itertools.count()
_bounds: dict[int, int] = {}


class Sym:
    __slots__ = ("coef", "terms")

    def __init__(self, coef: int, terms: tuple):
        self.coef = coef
        self.terms = terms  # sorted ((symbol id, exponent), ...), never empty

    @staticmethod
    def new(bound: int) -> Sym:
        """A fresh run-time size at most ``bound``."""
        i = next(_ids)
        _bounds[i] = int(bound)
        return Sym(1, ((i, 1),))

    @staticmethod
    def make(coef: int, terms: dict):
        terms = tuple(sorted((k, e) for k, e in terms.items() if e))
        return coef if not terms else Sym(coef, terms)

    @property
    def is_symbol(self) -> bool:
        return self.coef == 1 and len(self.terms) == 1 and self.terms[0][1] == 1

    @property
    def symbol(self) -> int:
        return self.terms[0][0]

    def bound(self) -> int:
        n = self.coef
        for k, e in self.terms:
            n *= _bounds.get(k, 1) ** e
        return n

    def evaluate(self, env):
        """The size given ``env`` = {symbol id: size} (sizes may themselves be symbolic)."""
        n = self.coef
        for k, e in self.terms:
            n = n * env[k] ** e
        return n

    def _as_dict(self):
        return dict(self.terms)

    def __mul__(self, other):
        if isinstance(other, int):
            return Sym.make(self.coef * other, self._as_dict()) if other else 0
        if isinstance(other, Sym):
            d = self._as_dict()
            for k, e in other.terms:
                d[k] = d.get(k, 0) + e
            return Sym.make(self.coef * other.coef, d)
        return NotImplemented

    __rmul__ = __mul__

    def __pow__(self, e: int):
        if not isinstance(e, int) or e < 0:
            return NotImplemented
        return Sym.make(self.coef**e, {k: x * e for k, x in self.terms}) if e else 1

    def __floordiv__(self, other):
        if isinstance(other, int) and other and self.coef % other == 0:
            return Sym.make(self.coef // other, self._as_dict())
        if isinstance(other, Sym) and self.coef % other.coef == 0:
            d = self._as_dict()
            for k, e in other.terms:
                if d.get(k, 0) < e:
                    break
                d[k] -= e
            else:
                return Sym.make(self.coef // other.coef, d)
        raise ShapeError(f"cannot divide the run-time size {self} by {other} exactly")

    def __mod__(self, other):
        try:
            self // other
        except ShapeError:
            raise ShapeError(
                f"cannot tell whether {other} divides the run-time size {self}"
            ) from None
        return 0

    def __eq__(self, other):
        if isinstance(other, Sym):
            return self.coef == other.coef and self.terms == other.terms
        return False  # an int: a Sym with no symbols is always normalised to an int

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self.coef, self.terms))

    def _cmp(self, other, op):
        if isinstance(other, Sym) and other == self:
            return op in ("<=", ">=")
        if isinstance(other, int) and other <= self.coef:  # every symbol is >= 1
            return _known(self, other, op)
        raise ShapeError(
            f"the comparison {self} {op} {other} depends on a size only known at run time "
            f"(e.g. an SVD rank chosen by a cutoff)."
        )

    def __lt__(self, other):
        return self._cmp(other, "<")

    def __le__(self, other):
        return self._cmp(other, "<=")

    def __gt__(self, other):
        return self._cmp(other, ">")

    def __ge__(self, other):
        return self._cmp(other, ">=")

    def __index__(self):
        raise ShapeError(
            f"the size {self} is only known at run time (a data-dependent shape); code that "
            f"needs it as a Python int cannot be traced. Use it as a dimension instead."
        )

    def __repr__(self):
        body = "*".join(f"k{k}" + (f"^{e}" if e != 1 else "") for k, e in self.terms)
        return body if self.coef == 1 else f"{self.coef}*{body}"


def _known(s: Sym, n: int, op: str) -> bool:
    """Compare a run-time size (>= its coefficient, since every symbol is >= 1) with n <= coef."""
    if n < s.coef:  # s >= coef > n
        return op in (">", ">=")
    # n == coef: s >= n, but s == n only if every symbol is 1 - unknown for ">"/"<="
    if op == ">=":
        return True
    if op == "<":
        return False
    raise ShapeError(
        f"the comparison {s} {op} {n} depends on a size only known at run time."
    )


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
        return value.evaluate(env) if all(k in env for k, _ in value.terms) else value
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
