"""The dialect rule (design/numpy-surface.md, "The dialect rule"): top-level functions are
NumPy's; PyTorch's keywords (``dim=``, ``keepdim=``...) select PyTorch's meaning; a call both
libraries accept with different results is either resolved as the table says or raises
``DialectError``.

Two kinds of checks:

* every row of the table, against NumPy and (when installed) against PyTorch;
* a probe over every public name tenferro shares with NumPy and PyTorch (functions, and
  ``Tensor`` methods shared with ``ndarray`` and ``torch.Tensor``): a few generic calls run in
  all three libraries. Where NumPy and PyTorch give different results the name must be a row
  of the table and tenferro must give NumPy's result or raise ``DialectError``; where only one
  library accepts the call, or both agree, tenferro must give that result or raise. So no
  spelling returns a result that silently differs from the library that accepts it, except
  the rows the table names.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DialectError, ShapeError
from tests import skips

R = np.random.default_rng(3)
A = R.uniform(0.1, 0.9, (3, 4))
B = R.uniform(0.1, 0.9, (3, 4))
V = R.uniform(0.1, 0.9, 4)
DOC = Path(__file__).resolve().parents[2] / "design" / "numpy-surface.md"


def arr(x):
    """A result as NumPy data: tensors, tuples/lists of them (a list), numbers; ``"other"`` for
    anything else (dtypes, info objects), which the probe does not compare."""
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return [arr(v) for v in x]
    if hasattr(x, "detach"):
        return np.asarray(x.detach().numpy())
    if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
        return np.asarray(x)
    return "other"


def same(a, b) -> bool:
    """Equal structure, shapes and values (1e-6 relative where either side is float32, as
    PyTorch's default dtype makes some results; 1e-10 otherwise)."""
    if isinstance(a, str) or isinstance(b, str):
        return True
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b)))
    if a.shape != b.shape:
        return False
    if a.dtype.kind not in "biufc" or b.dtype.kind not in "biufc":
        return bool(np.all(a == b))
    rtol = 1e-6 if np.float32 in (a.dtype, b.dtype) else 1e-10
    return bool(np.allclose(a.astype(complex), b.astype(complex), rtol=rtol, atol=rtol * 1e-2,
                            equal_nan=True))


def run(f):
    """``("ok", result)``, ``("dialect", message)`` or ``("error", type name)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", arr(f())
    except DialectError as e:
        return "dialect", str(e)
    except Exception as e:  # the probe asks whether a library accepts the call at all
        return "error", type(e).__name__


# ------------------------------------------------------------------ the rows
def check(got, want, what=""):
    assert same(arr(got), arr(want)), what


def row_max_min(torch):
    x, t = tf.tensor(A), None
    for name in ("max", "min"):
        f = getattr(tf, name)
        check(f(x, 1), getattr(np, name)(A, 1), "positional: NumPy's values")
        check(getattr(x, name)(1), getattr(A, name)(1))
        check(f(x, axis=0, keepdims=True), getattr(np, name)(A, axis=0, keepdims=True))
        with pytest.raises(DialectError, match="maximum" if name == "max" else "minimum"):
            f(x, tf.tensor(B))
        with pytest.raises(DialectError):
            getattr(x, name)(tf.tensor(B))
        if torch is not None:
            t = torch.tensor(A)
            check(f(x, dim=1), getattr(torch, name)(t, dim=1), "dim=: (values, indices)")
            check(getattr(x, name)(dim=0, keepdim=True), getattr(t, name)(dim=0, keepdim=True))
            check(f(x, dim=1).indices, getattr(torch, name)(t, dim=1).indices)
            check(getattr(tf, name + "imum")(x, tf.tensor(B)),
                  getattr(torch, name)(t, torch.tensor(B)), "torch.max(a, b) = maximum")


def row_sort(torch):
    x = tf.tensor(A)
    check(tf.sort(x, 0), np.sort(A, 0))
    check(tf.sort(x), np.sort(A))
    if torch is not None:
        t = torch.tensor(A)
        check(tf.sort(x, dim=0), torch.sort(t, dim=0))
        check(tf.sort(x, dim=1, descending=True), torch.sort(t, dim=1, descending=True))


def row_sort_method(torch):
    a, x = A.copy(), tf.tensor(A)
    assert x.sort() is None and a.sort() is None  # NumPy's: in place, returns None
    check(x, a)
    if torch is not None:
        t, x = torch.tensor(A), tf.tensor(A)
        check(x.sort(dim=0), t.sort(dim=0))
        check(x.sort(descending=True), t.sort(descending=True))
        check(x, A)  # PyTorch's sort leaves the tensor unchanged


def row_std_var(torch):
    x = tf.tensor(A)
    for name in ("std", "var"):
        f = getattr(tf, name)
        check(f(x), getattr(np, name)(A))
        check(f(x, 1), getattr(np, name)(A, 1))
        check(f(x, 0, 1), getattr(np, name)(A, 0, ddof=1))
        check(getattr(x, name)(), getattr(A, name)())
        check(getattr(x, name)(0, ddof=1, keepdims=True),
              getattr(A, name)(0, ddof=1, keepdims=True))
        if torch is not None:
            t = torch.tensor(A)
            check(f(x, dim=0), getattr(torch, name)(t, dim=0), "dim=: correction 1")
            check(f(x, dim=1, unbiased=False), getattr(torch, name)(t, dim=1, unbiased=False))
            check(f(x, keepdim=True), getattr(torch, name)(t, keepdim=True))
            check(getattr(x, name)(dim=1), getattr(t, name)(dim=1))
            check(getattr(x, name)(unbiased=True), getattr(t, name)())


def row_split(torch):
    x6, a6 = tf.tensor(np.arange(12.0).reshape(6, 2)), np.arange(12.0).reshape(6, 2)
    with pytest.raises(DialectError, match="axis=0.*dim=0"):
        tf.split(x6, 2)  # NumPy: 2 pieces of 3; PyTorch: 3 pieces of 2
    with pytest.raises(DialectError):
        tf.split(x6, [2, 4])  # NumPy: cuts at 2 (3 pieces); PyTorch: sizes 2 and 4
    check(tf.split(x6, 2, axis=0), np.split(a6, 2, axis=0))
    check(tf.split(x6, [1, 4], axis=0), np.split(a6, [1, 4], axis=0))
    check(tf.split(x6, [1, 4]), np.split(a6, [1, 4]))  # sizes 1 + 4 != 6: only NumPy's
    check(np.split(x6, 3), np.split(a6, 3))  # NumPy's own split of a tensor: axis=0 passed
    check(tf.split(tf.arange(4.0), 2), np.split(np.arange(4.0), 2))  # k * k == n: both agree
    if torch is not None:
        t6 = torch.tensor(a6)
        check(tf.split(x6, 4), torch.split(t6, 4))  # 6 % 4: only PyTorch's
        check(tf.split(x6, 2, dim=0), torch.split(t6, 2, dim=0))
        check(tf.split(x6, [2, 4], dim=0), torch.split(t6, [2, 4], dim=0))
        check(x6.split(4), t6.split(4))  # the method is PyTorch's (ndarray has none)
        assert len(np.split(a6, 2)) != len(torch.split(t6, 2))  # the ambiguity is real


def row_transpose(torch):
    x = tf.tensor(A)
    check(tf.transpose(x), np.transpose(A))
    check(tf.transpose(x, (1, 0)), np.transpose(A, (1, 0)))
    with pytest.raises(DialectError):
        x.transpose(0, 1)  # NumPy: identity; PyTorch: swap
    check(x.transpose(1, 0), A.transpose(1, 0))
    if torch is not None:
        x3, a3 = tf.tensor(A.reshape(3, 2, 2)), A.reshape(3, 2, 2)
        check(tf.transpose(x3, 0, 2), torch.transpose(torch.tensor(a3), 0, 2))
        check(x3.transpose(0, 1), torch.tensor(a3).transpose(0, 1))


def row_norm(torch):
    x = tf.tensor(A)
    check(tf.norm(x, 1), np.linalg.norm(A, 1), "positional: NumPy's matrix 1-norm")
    check(tf.norm(x, 2, 0), np.linalg.norm(A, 2, 0))
    check(tf.norm(x), np.linalg.norm(A))
    if torch is not None:
        t = torch.tensor(A)
        check(tf.norm(x, p=1), torch.norm(t, p=1), "p=: the vector norm of all entries")
        check(tf.norm(x, p=3, dim=1, keepdim=True), torch.norm(t, p=3, dim=1, keepdim=True))
        check(x.norm(p=float("inf")), t.norm(p=float("inf")))
        assert not same(arr(torch.norm(t, 1)), arr(np.linalg.norm(A, 1)))


def row_squeeze(torch):
    x, a = tf.tensor(A.reshape(3, 1, 4)), A.reshape(3, 1, 4)
    check(tf.squeeze(x, 1), np.squeeze(a, 1))
    with pytest.raises(ShapeError):
        tf.squeeze(x, 0)  # NumPy refuses an axis of length 3
    if torch is not None:
        t = torch.tensor(a)
        check(tf.squeeze(x, dim=0), torch.squeeze(t, dim=0))  # PyTorch keeps it
        check(tf.squeeze(x, dim=(0, 1)), torch.squeeze(t, dim=(0, 1)))
        check(x.squeeze(dim=0), t.squeeze(dim=0))


def row_equal(torch):
    x, y = tf.tensor(A), tf.tensor(B)
    check(tf.equal(x, y), np.equal(A, B))
    if torch is not None:
        assert bool(tf.all(x == x)) == torch.equal(torch.tensor(A), torch.tensor(A))


def row_nonzero(torch):
    m = (A > 0.5).astype(float)
    check(tf.nonzero(tf.tensor(m)), np.nonzero(m))
    if torch is not None:
        check(tf.stack(tf.nonzero(tf.tensor(m)), -1), torch.nonzero(torch.tensor(m)))


def row_meshgrid(torch):
    check(tf.meshgrid(tf.tensor(V), tf.tensor(V[:3])), np.meshgrid(V, V[:3]))
    if torch is not None:
        check(tf.meshgrid(tf.tensor(V), tf.tensor(V[:3]), indexing="ij"),
              torch.meshgrid(torch.tensor(V), torch.tensor(V[:3]), indexing="ij"))


def row_cross(torch):
    a, b = R.standard_normal((3, 3)), R.standard_normal((3, 3))
    check(tf.cross(tf.tensor(a), tf.tensor(b)), np.cross(a, b))
    if torch is not None:
        check(tf.cross(tf.tensor(a), tf.tensor(b)),
              torch.linalg.cross(torch.tensor(a), torch.tensor(b)))
        check(tf.cross(tf.tensor(a), tf.tensor(b), axis=0),
              torch.cross(torch.tensor(a), torch.tensor(b), dim=0))


def row_creation(torch):
    for name in ("zeros", "ones", "empty"):
        f = getattr(tf, name)
        assert f((2, 3)).shape == getattr(np, name)((2, 3)).shape
        assert f((2, 3), tf.float32).dtype == getattr(np, name)((2, 3), np.float32).dtype
        assert f(2, 3).shape == (2, 3)  # NumPy refuses 3 as a dtype: PyTorch's sizes
        if name != "empty":
            check(f(2, 3), getattr(np, name)((2, 3)))
        if torch is not None:
            assert f(2, 3, dtype=tf.float32).shape == tuple(getattr(torch, name)(2, 3).shape)
    x = tf.zeros(2, 3, requires_grad=True)
    assert x.requires_grad and x.is_leaf


def row_index_scatter_add(torch):
    x = tf.tensor(A)
    want = A.copy()
    want[0, 1] += 5.0
    check(tf.index_add(x, (0, 1), 5.0), want)  # tenferro's (x, idx, value): x.at[idx].add
    check(tf.scatter_add(x, [0, 0], tf.tensor(B[:2]), 0),
          A + np.concatenate([B[:2].sum(0, keepdims=True), np.zeros((2, 4))]))
    if torch is not None:
        t = torch.tensor(A)
        i = np.array([2, 0, 2, 1])
        check(tf.index_add(x, 1, tf.tensor(i), tf.tensor(B)),
              torch.index_add(t, 1, torch.tensor(i), torch.tensor(B)))
        j = np.array([[0, 2, 2, 1], [1, 1, 0, 0]])
        check(tf.scatter_add(x, 0, tf.tensor(j), tf.tensor(B)),
              torch.scatter_add(t, 0, torch.tensor(j), torch.tensor(B)))
        k = np.array([[0, 2], [1, 3]])  # one write per position (PyTorch leaves repeats open)
        check(tf.scatter(x, 1, tf.tensor(k), tf.tensor(B)),
              torch.scatter(t, 1, torch.tensor(k), torch.tensor(B)))


def row_repeat(torch):
    x = tf.tensor(A)
    check(x.repeat(2), A.repeat(2))
    check(x.repeat(2, 1), A.repeat(2, 1))
    with pytest.raises(TypeError, match="tile"):
        x.repeat(2, 1, 1)
    if torch is not None:
        check(x.tile(2, 1), torch.tensor(A).repeat(2, 1))


def row_size(torch):
    x = tf.tensor(A)
    assert x.size == A.size
    if torch is not None:
        assert x.size() == tuple(torch.tensor(A).size()) and x.size(1) == 4


def row_view(torch):
    x = tf.tensor(A)
    with pytest.raises(tf.errors.DTypeError, match="astype"):
        x.view(np.float32)  # NumPy's reinterpretation of the bytes: not supported
    if torch is not None:
        check(x.view(4, 3), torch.tensor(A).view(4, 3))


def row_flatten(torch):
    x3, a3 = tf.tensor(A.reshape(3, 2, 2)), A.reshape(3, 2, 2)
    check(x3.flatten(), a3.flatten())
    if torch is not None:
        check(x3.flatten(1), torch.tensor(a3).flatten(1))


ROWS = {
    "max": row_max_min, "min": row_max_min, "sort": row_sort, "x.sort": row_sort_method,
    "std": row_std_var, "var": row_std_var, "split": row_split, "transpose": row_transpose,
    "norm": row_norm, "squeeze": row_squeeze, "equal": row_equal, "nonzero": row_nonzero,
    "meshgrid": row_meshgrid, "cross": row_cross, "zeros": row_creation,
    "ones": row_creation, "empty": row_creation, "index_add": row_index_scatter_add,
    "scatter_add": row_index_scatter_add, "x.repeat": row_repeat, "x.size": row_size,
    "x.view": row_view, "x.flatten": row_flatten,
}


def _doc_section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def _table_names(section: str, header: str) -> set:
    lines = section.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(header))
    names = set()
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        names |= set(re.findall(r"`([\w.]+)`", line.split("|")[1]))
    return names


def test_the_table_lists_exactly_the_checked_rows():
    assert _table_names(_doc_section("The dialect rule"), "| name |") == set(ROWS)


@pytest.mark.numpy_only
@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_against_numpy(name):
    ROWS[name](None)


@pytest.mark.numpy_only
@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_against_numpy_and_torch(name):
    ROWS[name](skips.torch())


# ------------------------------------------------------------ the probe over every name
PROBES = {
    "(A)": lambda c: (c(A),),
    "(A, B)": lambda c: (c(A), c(B)),
    "(A, 1)": lambda c: (c(A), 1),
    "(A, 2)": lambda c: (c(A), 2),
    "(A, 0, 1)": lambda c: (c(A), 0, 1),
    "(A, 1, 0)": lambda c: (c(A), 1, 0),
    "(V, V)": lambda c: (c(V), c(V[:3])),
    "(2, 3)": lambda c: (2, 3),
}
METHOD_PROBES = {"()": (), "(1)": (1,), "(0)": (0,), "(0, 1)": (0, 1), "(1, 0)": (1, 0)}
NOT_PROBED = {
    "load": "reads a file",
    "from_dlpack": "imports a foreign buffer",
    "empty": "values unspecified (row_creation checks shapes)",
    "empty_like": "values unspecified",
}


def _verdict(name, label, np_res, torch_res, tf_res) -> str | None:
    """What is wrong with tenferro's answer to one probe, or None."""
    accepted = [r for r in (np_res, torch_res) if r[0] == "ok"]
    if len(accepted) == 2 and not same(np_res[1], torch_res[1]):
        if name not in ROWS:
            return f"{name}{label}: NumPy and PyTorch disagree but the table has no row"
        if tf_res[0] == "dialect" or (tf_res[0] == "ok" and same(tf_res[1], np_res[1])):
            return None
        return f"{name}{label}: the row resolves to NumPy's result or DialectError, got {tf_res}"
    if accepted and tf_res[0] == "ok" and not same(tf_res[1], accepted[0][1]):
        return f"{name}{label}: silently differs from the library that accepts the call"
    return None


def _shared_functions(torch):
    return sorted(n for n in tf.__all__ if n not in NOT_PROBED and hasattr(np, n)
                  and hasattr(torch, n) and callable(getattr(tf, n))
                  and not isinstance(getattr(tf, n), type))


@pytest.mark.numpy_only
def test_probe_every_shared_function():
    torch = skips.torch()
    names = _shared_functions(torch)
    assert len(names) > 150  # the probe really runs over the shared surface
    bad, disagreements = [], set()
    for name in names:
        for label, make in PROBES.items():
            res = [run(lambda lib=lib, c=c: getattr(lib, name)(*make(c)))
                   for lib, c in ((np, np.asarray), (torch, torch.tensor), (tf, tf.tensor))]
            if res[0][0] == res[1][0] == "ok" and not same(res[0][1], res[1][1]):
                disagreements.add(name)
            why = _verdict(name, label, *res)
            if why:
                bad.append(why)
    assert not bad, "\n".join(bad)
    # the probe finds the clashes the table is about
    assert {"max", "min", "sort", "std", "var", "split", "equal", "nonzero"} <= disagreements


@pytest.mark.numpy_only
def test_probe_every_shared_method():
    torch = skips.torch()
    names = sorted(n for n in dir(tf.Tensor) if not n.startswith("_")
                   and hasattr(np.ndarray, n) and hasattr(torch.Tensor, n)
                   and callable(getattr(A, n)))
    assert len(names) > 20
    bad, disagreements = [], set()
    for name in names:
        for label, args in METHOD_PROBES.items():
            objs = (A.copy(), torch.tensor(A), tf.tensor(A))
            res = [run(lambda o=o: getattr(o, name)(*args)) for o in objs]
            if res[0][0] == res[1][0] == "ok" and not same(res[0][1], res[1][1]):
                disagreements.add(name)
            key = "x." + name
            why = _verdict(key if key in ROWS else name, label, *res)
            if why:
                bad.append(why)
            if res[2][0] == "ok" and res[0][0] == "ok":  # in-place methods change the same way
                assert same(arr(objs[2]), objs[0]), f"x.{name}{label} changed x differently"
    assert not bad, "\n".join(bad)
    assert {"max", "min", "sort", "std", "var"} <= disagreements
