"""Run HIPS autograd's own test suite against tenferro through a thin name mapping.

    python benchmarks/autograd_suite.py /path/to/autograd-checkout [--json out.json] [-k expr]

The yardstick for "legacy autograd code ports with renames only" (design/numpy-surface.md,
section "HIPS autograd's suite"). The checkout's ``tests/`` files are collected by pytest with
a fake ``autograd`` package in ``sys.modules``:

* ``autograd.numpy`` is tenferro (``random`` stays NumPy's: the tests draw their data with
  it), ``autograd.numpy.linalg``/``fft`` are ``tenferro.linalg``/``fft``,
  ``autograd.scipy.<mod>`` is ``tenferro.<mod>`` (a name tenferro lacks fails the test that
  uses it, not the whole file);
* ``autograd.grad``/``value_and_grad``/``jacobian``/``hessian``/``elementwise_grad``/``deriv``/
  ``holomorphic_grad``/``make_vjp`` are tenferro's transforms with autograd's ``argnum``;
* ``autograd.test_util.check_grads``/``combo_check`` are rewritten here on tenferro's
  ``vjp``/``jvp``: the same check as autograd's (a random projection of the VJP, and of the
  JVP, against central differences with step 1e-6, tolerance 1e-6 absolute or relative, and
  the same again on the derivative for ``order=2``), in tenferro's complex convention (the
  VJP is the adjoint under the real inner product Re <a, b>, as PyTorch's; autograd's
  conjugates, which its own ``check_grads`` undoes with covectors).

Files that test autograd's internals (its tracer, boxes, vector spaces, container types,
``extend.primitive``, wrapper utilities, performance) are not run. Not a CI requirement: it
needs an autograd checkout (``git clone https://github.com/HIPS/autograd``).
"""

from __future__ import annotations

import argparse
import builtins
import json
import os
import signal
import sys
import tempfile
import types
from collections import Counter
from itertools import product

import numpy as onp

NUMPY_SIDE = (
    "test_numpy.py", "test_systematic.py", "test_linalg.py", "test_fft.py",
    "test_binary_ops.py", "test_scalar_ops.py", "test_complex.py", "test_truediv.py",
    "test_graphs.py", "test_jacobian.py", "test_direct.py", "test_ufunc_dispatch.py",
)  # fmt: skip
SCIPY_SIDE = ("test_scipy.py",)
INTERNALS = {
    "test_core.py": "autograd.core.make_vjp / wrap_util on raw functions",
    "test_vspaces.py": "autograd.core.vspace",
    "test_tests.py": "autograd.extend.defvjp / tracer.primitive",
    "test_misc.py": "autograd.misc.const_graph / flatten, tracer.primitive",
    "test_builtins.py": "autograd.builtins.isinstance",
    "test_dict.py": "autograd.builtins.dict containers",
    "test_list.py": "autograd.builtins.list containers",
    "test_tuple.py": "autograd.builtins.tuple containers",
    "test_logic.py": "autograd.extend.primitive / core.primitive_vjps",
    "test_wrappers.py": "autograd's wrapper utilities (multigrad_dict, checkpoint, isbox)",
    "test_performance.py": "timing, no tests",
    "_test_complexity.py": "timing",
}
PER_TEST_SECONDS = 60


# --------------------------------------------------------------------------- the mapping
def _build_modules(tf):
    """The fake ``autograd`` package: module objects forwarding to tenferro."""

    class Forward(types.ModuleType):
        def __init__(self, name, target, extra=None):
            super().__init__(name)
            self._target, self._extra = target, dict(extra or {})

        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            if attr in self._extra:
                return self._extra[attr]
            if self._target is not None and hasattr(self._target, attr):
                return getattr(self._target, attr)
            if attr == "rvs" and self.__name__.startswith("autograd.scipy.stats."):
                # autograd's samplers are SciPy's own (no derivative): so are these
                import scipy.stats

                return getattr(scipy.stats, self.__name__.rsplit(".", 1)[1]).rvs
            return _Missing(f"{self.__name__}.{attr}")

    class _Missing:
        """A name tenferro lacks: fails the test that uses it, not the whole file."""

        def __init__(self, name):
            self._name = name

        def __call__(self, *a, **k):
            raise AttributeError(f"tenferro has no {self._name}")

        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            return _Missing(f"{self._name}.{attr}")

    def optional(modname):
        try:
            return __import__(modname, fromlist=["_"])
        except ImportError:
            return None

    np_mod = Forward("autograd.numpy", tf, {"random": onp.random})
    np_mod.linalg = Forward("autograd.numpy.linalg", tf.linalg)
    np_mod.fft = Forward("autograd.numpy.fft", tf.fft)
    sp = types.ModuleType("autograd.scipy")
    mods = {"autograd.numpy": np_mod, "autograd.numpy.random": onp.random,
            "autograd.numpy.linalg": np_mod.linalg, "autograd.numpy.fft": np_mod.fft,
            "autograd.scipy": sp}  # fmt: skip
    for sub in ("linalg", "special", "signal", "integrate", "stats", "misc"):
        target = optional(f"tenferro.{sub}")
        if sub == "misc":
            target = tf.special  # autograd.scipy.misc.logsumexp
        mod = Forward(f"autograd.scipy.{sub}", target)
        setattr(sp, sub, mod)
        mods[f"autograd.scipy.{sub}"] = mod
    stats = mods["autograd.scipy.stats"]
    for dist in ("multivariate_normal", "norm", "t", "gamma", "beta", "chi2", "poisson",
                 "dirichlet"):  # fmt: skip
        target = getattr(stats._target, dist, None) if stats._target is not None else None
        stats._extra[dist] = mods[f"autograd.scipy.stats.{dist}"] = Forward(
            f"autograd.scipy.stats.{dist}", target
        )

    def _argnum(fun_transform):
        def transform(fun, argnum=0, **kw):
            return fun_transform(fun, argnums=argnum, **kw)

        return transform

    def elementwise_grad(fun, argnum=0):
        def wrapped(*args, **kwargs):
            def f(x):
                a = list(args)
                a[argnum] = x
                return fun(*a, **kwargs)

            y, back = tf.vjp(f, args[argnum])
            return back(tf.ones_like(y))[0]

        return wrapped

    def holomorphic_grad(fun, argnum=0):
        # tenferro's VJP of 1 is conj(f'(z)) (PyTorch's convention); autograd's is f'(z)
        g = elementwise_grad(fun, argnum)
        return lambda *a, **k: tf.conj(g(*a, **k))

    def make_vjp(fun, argnum=0):
        def wrapped(*args):
            def f(x):
                a = list(args)
                a[argnum] = x
                return fun(*a)

            y, back = tf.vjp(f, args[argnum])
            return (lambda ct: back(ct)[0]), y

        return wrapped

    ag = types.ModuleType("autograd")
    ag.__path__ = []
    ag.numpy, ag.scipy = np_mod, sp
    ag.grad = _argnum(tf.grad)
    ag.value_and_grad = _argnum(tf.value_and_grad)
    ag.jacobian = _argnum(tf.jacrev)
    ag.hessian = _argnum(tf.hessian)
    ag.elementwise_grad = ag.deriv = elementwise_grad
    ag.holomorphic_grad = holomorphic_grad
    ag.make_vjp = make_vjp
    ag.tuple, ag.list, ag.dict, ag.isinstance = (
        builtins.tuple,
        builtins.list,
        builtins.dict,
        builtins.isinstance,
    )
    tu = types.ModuleType("autograd.test_util")
    tu.check_grads, tu.combo_check, tu.scalar_close = _make_check_grads(tf)
    ag.test_util = tu
    mods["autograd"], mods["autograd.test_util"] = ag, tu
    return mods


def _make_check_grads(tf):
    """autograd's ``check_grads``/``combo_check`` written on tenferro's vjp/jvp."""
    tol, rtol, eps = 1e-6, 1e-6, 1e-6
    rng = onp.random.RandomState(0)

    def scalar_close(a, b):
        return abs(a - b) < tol or abs(a - b) / abs(a + b) < rtol

    def leaves(x):
        if isinstance(x, (tuple, list)):
            return [leaf for item in x for leaf in leaves(item)]
        if isinstance(x, dict):
            return [leaf for k in sorted(x) for leaf in leaves(x[k])]
        return [x]

    def rebuild(like, flat):
        it = iter(flat)

        def go(x):
            if isinstance(x, (tuple, list)):
                items = [go(i) for i in x]
                return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
            if isinstance(x, dict):
                return {k: go(x[k]) for k in sorted(x)}
            return next(it)

        return go(like)

    def as_np(x):
        return onp.asarray(onp.asarray(x) if isinstance(x, tf.Tensor) else x)

    def randn_like(x):
        leaves_ = [as_np(v) for v in leaves(x)]
        out = []
        for v in leaves_:
            r = rng.randn(*v.shape)
            if onp.iscomplexobj(v):
                r = r + 1j * rng.randn(*v.shape)
            out.append(r if v.shape else (complex(r) if onp.iscomplexobj(v) else float(r)))
        return rebuild(x, out)

    def inner(a, b):
        return sum(
            float(onp.real(onp.vdot(as_np(u), as_np(v))))
            for u, v in zip(leaves(a), leaves(b), strict=True)
        )

    def axpy(alpha, v, x):
        return rebuild(
            x, [as_np(xi) + alpha * as_np(vi) for xi, vi in zip(leaves(x), leaves(v), strict=True)]
        )

    def numeric_jvp(f, x, v):
        plus, minus = f(axpy(eps / 2, v, x)), f(axpy(-eps / 2, v, x))
        return rebuild(
            plus,
            [(as_np(p) - as_np(m)) / eps for p, m in zip(leaves(plus), leaves(minus), strict=True)],
        )

    def check_vjp(f, x):
        y, back = tf.vjp(f, x)
        xv, yv = randn_like(x), randn_like(y)
        exact = inner(xv, back(yv)[0])
        numeric = inner(yv, numeric_jvp(f, x, xv))
        assert scalar_close(numeric, exact), (
            f"VJP check failed: analytic {exact}, numeric {numeric}"
        )

    def check_jvp(f, x):
        xv = randn_like(x)
        _, t = tf.jvp(f, (x,), (xv,))
        n = numeric_jvp(f, x, xv)
        w = randn_like(n)
        assert scalar_close(inner(t, w), inner(n, w)), "JVP check failed"

    def check_grads_unary(f, x, modes, order):
        if "fwd" in modes:
            check_jvp(f, x)
            if order > 1:
                v = randn_like(x)
                check_grads_nary(lambda x, v: tf.jvp(f, (x,), (v,))[1], (0, 1), modes, order - 1)(
                    x, v
                )
        if "rev" in modes:
            check_vjp(f, x)
            if order > 1:
                v = randn_like(f(x))
                check_grads_nary(lambda x, v: tf.vjp(f, x)[1](v)[0], (0, 1), modes, order - 1)(x, v)

    def check_grads_nary(fun, argnum=0, modes=None, order=2):
        modes = ["fwd", "rev"] if modes is None else modes

        def run(*args, **kwargs):
            nums = argnum if isinstance(argnum, (tuple, list)) else (argnum,)

            def f(x):
                a = list(args)
                for i, xi in zip(
                    nums, x if isinstance(argnum, (tuple, list)) else (x,), strict=True
                ):
                    a[i] = xi
                return fun(*a, **kwargs)

            x = tuple(args[i] for i in nums) if isinstance(argnum, (tuple, list)) else args[argnum]
            check_grads_unary(f, x, modes, order)

        return run

    def check_grads(fun, argnum=0, modes=None, order=2):
        return check_grads_nary(fun, argnum, modes, order)

    def combo_check(fun, *args, **kwargs):
        def run(*arg_lists, **kwarg_lists):
            kv = [[(k, v) for v in vs] for k, vs in kwarg_lists.items()]
            for a in product(*arg_lists):
                for k in product(*kv):
                    check_grads(fun, *args, **kwargs)(*a, **dict(k))

        return run

    return check_grads, combo_check, scalar_close


# --------------------------------------------------------------------------- running
class _Collector:
    def __init__(self):
        self.results = {}

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            prev = self.results.get(report.nodeid)
            if prev and prev[0] == "failed":
                return
            reason = ""
            if report.outcome == "failed":
                reason = _reason(report)
            elif report.outcome == "skipped":
                reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
            self.results[report.nodeid] = (report.outcome, reason)

    def pytest_collectreport(self, report):
        if report.outcome == "failed":  # the file's every test fails
            path = str(report.fspath)
            with open(path) as fh:
                names = [
                    ln.split("(")[0].split()[-1] for ln in fh if ln.lstrip().startswith("def test_")
                ]
            why = "collection: " + _reason(report)
            for name in names:
                self.results[f"{os.path.basename(path)}::{name}"] = ("failed", why)

    def pytest_runtest_call(self, item):
        signal.alarm(PER_TEST_SECONDS)

    def pytest_runtest_teardown(self, item):
        signal.alarm(0)


def _reason(report):
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None:
        return crash.message.splitlines()[0][:200]
    return str(report.longrepr).strip().splitlines()[-1][:200]


def _alarm(signum, frame):
    raise TimeoutError(f"over {PER_TEST_SECONDS} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "checkout", help="path of a HIPS/autograd checkout (its tests/ folder is run)"
    )
    parser.add_argument("--json", help="write every test's outcome and failure reason here")
    parser.add_argument("-k", default=None, help="pytest -k expression")
    parser.add_argument("--files", nargs="*", default=None, help="test files (default: both sides)")
    parser.add_argument(
        "--failures", action="store_true", help="print every failure with its reason"
    )
    args = parser.parse_args(argv)

    import pytest

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import tenferro as tf  # the checkout this script lives in

    tests = os.path.join(os.path.abspath(args.checkout), "tests")
    if not os.path.isdir(tests):
        parser.error(f"{tests} is not a folder: give the root of an autograd checkout")
    sys.modules.update(_build_modules(tf))
    sys.path.insert(0, tests)
    signal.signal(signal.SIGALRM, _alarm)
    files = args.files or list(NUMPY_SIDE + SCIPY_SIDE)
    collector = _Collector()
    with tempfile.TemporaryDirectory() as tmp:
        ini = os.path.join(tmp, "pytest.ini")
        with open(ini, "w") as fh:
            fh.write("[pytest]\n")
        pytest_args = ["-q", "-p", "no:cacheprovider", "-c", ini, "--rootdir", tests,
                       "-W", "ignore", "--no-header", "--tb=no", "-rN",
                       "--continue-on-collection-errors"]  # fmt: skip
        if args.k:
            pytest_args += ["-k", args.k]
        pytest.main(pytest_args + [os.path.join(tests, f) for f in files], plugins=[collector])

    print(f"\ntenferro {tf.__file__}")
    sides = {"NumPy side": NUMPY_SIDE, "SciPy side": SCIPY_SIDE}
    for side, side_files in sides.items():
        total = Counter()
        for f in side_files:
            c = Counter(o for nid, (o, _) in collector.results.items() if nid.split("::")[0] == f)
            if not c:
                continue
            total += c
            n = c["passed"] + c["failed"]
            print(
                f"  {f:28s} {c['passed']:4d} / {n:4d} passed"
                + (f"  ({c['skipped']} skipped)" if c["skipped"] else "")
            )
        n = total["passed"] + total["failed"]
        if n:
            print(f"{side}: {total['passed']} / {n} = {100 * total['passed'] / n:.1f}%\n")
    if args.failures:
        for nid, (o, why) in sorted(collector.results.items()):
            if o == "failed":
                print(f"FAIL {nid}: {why}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(collector.results, fh, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
