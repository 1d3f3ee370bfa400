"""The bad-input sweep of ``test_bad_input_sweep`` over the tensor-network families: every
public function of ``tenferro.tn`` (and its submodules) and ``tenferro.symmetric``, called
with arguments drawn from the sweep's pool plus tensor-network values (MPOs, MPSs, site
tensors of the wrong rank, symmetric tensors, legs), returns a value or raises an exception
from ``tenferro.errors``. Then, one argument at a time, the arguments the algorithms share
(bond dimensions, tolerances, budgets, MPO/MPS/PEPS tensors, axes, sector dimensions) are
replaced by bad values in an otherwise valid call: each must be refused by name."""

import inspect
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf
import tenferro.symmetric as S
from tenferro import tn
from tenferro.errors import TenferroError

from .test_bad_input_sweep import POOL

pytestmark = pytest.mark.numpy_only

MODULES = {"tn": tn, "tn.mps": tn.mps, "tn.mpo": tn.mpo, "tn.peps": tn.peps,
           "tn.ipeps": tn.ipeps, "tn.observables": tn.observables,
           "tn.variational": tn.variational, "tn.exact": tn.exact,
           "tn.exact_dynamics": tn.exact_dynamics, "symmetric": S}
SKIP = {"set_progress"}  # a global switch, not an argument-taking function


def _functions():
    """``{"module.name": function}``, each function once (tn re-exports its submodules')."""
    out, seen = {}, set()
    for prefix, mod in MODULES.items():
        for name in mod.__all__:
            obj = getattr(mod, name)
            if name not in SKIP and (inspect.isfunction(obj) or obj is S.Leg) and \
                    id(obj) not in seen:
                seen.add(id(obj))
                out[f"{prefix}.{name}"] = obj
    return out


FUNCTIONS = _functions()


def _tn_values():
    """Tensor-network arguments, good and bad (made per test: tensors belong to the test's
    backend)."""
    leg = S.Leg(S.U1, ((0, 1), (1, 1)))
    z2 = S.Leg(S.Z2, ((0, 1), (1, 1)))
    mpo = tn.mpo.heisenberg_mpo(4)
    return [
        mpo, tn.mps.random_mps(4, 2, seed=0), tn.mps.random_mps(4, 2, d=3, seed=0),
        tn.ising_tensor(0.4), tn.peps.random_c4v_peps(2, seed=0), tf.ones((2, 2, 2)),
        tf.ones((2, 2, 2, 2)), tf.ones((1, 2, 2)), tf.ones((2, 3, 2, 3)), tn.heisenberg_bond(),
        [tf.ones((1, 2, 2)), tf.ones((2, 2, 1))], [mpo[0], tf.ones((5, 5, 2, 3))],
        (tf.ones((2, 2)), tf.ones((2, 2, 2))), [[0, 1], [1, 0]], [[0, 5]], 1e-10, -1e-3, 8,
        S.random([leg, leg.flip()], seed=0), leg, [leg, leg], z2, [z2] * 4, S.U1, {0: -1},
        {7: 1}, S.mpo_from_dense(mpo, [0, 1]),
    ]


def _call(name, args, kwargs=None):
    fn = FUNCTIONS[name]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        tn.set_progress(False)
        try:
            fn(*args, **(kwargs or {}))
        except TenferroError:
            return
        except RecursionError:
            raise
        except Exception as e:
            shown = [type(a).__name__ for a in args] + [f"{k}={v!r:.30}" for k, v in
                                                        (kwargs or {}).items()]
            raise AssertionError(f"{name}({', '.join(shown)}) raised a raw "
                                 f"{type(e).__name__}: {e}") from e
        finally:
            tn.set_progress(True)


def _arity(fn):
    params = list(inspect.signature(fn).parameters.values())
    pos = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    req = sum(1 for p in pos if p.default is p.empty)
    return req, min(len(pos), req + 2)


def _sweep(name, data):
    pool = list(POOL) + _tn_values()
    lo, hi = _arity(FUNCTIONS[name])
    n = data.draw(st.integers(lo, hi))
    idx = data.draw(st.lists(st.integers(0, len(pool) - 1), min_size=n, max_size=n))
    _call(name, [pool[i] for i in idx])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(max_examples=4, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_bad_arguments_give_a_value_or_a_tenferro_error(name, data):
    _sweep(name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_bad_arguments_give_a_value_or_a_tenferro_error_long(name, data):
    _sweep(name, data)


# ------------------------------------------------------------ one bad argument at a time
SIZES = [0, -1, 2.5, None, "8", True, 10**30, [1, 2], np.nan]
TOLS = [-1e-3, np.nan, np.inf, "1e-8", [1e-8], 1j]


def _valid_calls():
    """(function, args, kwargs, {argument: bad values}) for the algorithms' shared families;
    the valid call itself is cheap."""
    mpo = tn.mpo.heisenberg_mpo(4)
    mps = tn.mps.random_mps(4, 2, seed=0)
    T, a = tn.ising_tensor(0.4), tn.ising_tensor(0.4)
    A = tn.peps.random_c4v_peps(2, seed=0)
    leg = S.Leg(S.U1, ((0, 2), (1, 1)))
    x = S.random([leg, leg.flip()], seed=0)
    chains = [mps[:2], [tf.ones((1, 2, 2))] * 4, tn.mps.random_mps(4, 2, d=3, seed=0), "mps",
              tf.ones((1, 2, 1)), mpo]
    return [
        (tn.trg, (T, 4, 2), {}, {1: SIZES, 2: [-1, 2.5, "2"], 0: [tf.ones((2, 2, 2)), "T"]}),
        (tn.hotrg, (T, 4, 2), {}, {1: SIZES, 0: [tf.ones((2, 3, 2, 2)), None]}),
        (tn.dmrg, (mpo, 4), dict(max_sweeps=2), {1: SIZES + [mps], "tol": TOLS,
                                                   "max_sweeps": SIZES, "mps0": chains,
                                                   "cutoff": TOLS, "schedule": [[0], 3]}),
        (S.dmrg, (S.mpo_from_dense(mpo, [0, 1]), 4), dict(max_sweeps=2),
         {1: SIZES, "tol": TOLS, "max_sweeps": SIZES}),
        (tn.vumps, (tn.heisenberg_bond(), 2), dict(maxiter=2),
         {1: SIZES, "tol": TOLS, "maxiter": SIZES, 0: [tf.ones((2, 2, 2)), "h"]}),
        (tn.ctmrg, (a, 4), dict(max_iter=2), {1: SIZES, "tol": TOLS[:-1], "max_iter": SIZES,
                                                0: [tf.ones((2, 2, 2)), tf.ones((2, 3, 2, 3))]}),
        (tn.ctmrg_directional, ([a], [[0]], 4), dict(max_iter=2),
         {2: SIZES, "tol": TOLS[:-1], 1: [[[0, 1]], [[-1]], "p"], 0: [[tf.ones((2, 2))]]}),
        (tn.tdvp, (mps, mpo, 0.1, 1), {}, {0: chains, 1: chains[:-1], 3: [-1, 2.5],
                                             2: [np.nan, "t"], "tol": TOLS}),
        (tn.tebd, (mps, tn.tfim_bond_terms(4), 0.1, 1), {},
         {0: chains, 1: [[tf.ones(3)] * 3, "h"], "max_rank": SIZES[:3]}),
        (tn.variational_ground_state, (mpo, 2), dict(max_iterations=2, jit=False),
         {1: SIZES, "tol": TOLS, "mps0": chains}),
        (tn.peps.heisenberg_energy, (A, 4), dict(max_iter=2),
         {1: SIZES, 0: [tf.ones((2, 2, 2, 2)), tf.ones((2, 2, 3, 2, 2))], "tol": TOLS[:-1]}),
        (tn.mps.mpo_expectation, (mps, mpo), {}, {0: chains, 1: chains[:-1]}),
        (tn.mps.random_mps, (4, 2), {}, {0: SIZES, 1: SIZES, "d": SIZES}),
        (S.tensordot, (x, x, ([1], [0])), {},
         {2: [([5], [0]), ([0], [-3]), 3, "ij", ([0], [0, 1])], 0: [tf.ones((3, 3)), None]}),
        (S.fuse_legs, (x, [0, 1]), {}, {1: [[0, 5], [[0, 5]], "01", [1, 0]]}),
        (S.svd, (x, 1), {}, {"sector_ranks": [{0: -1}, {7: 1}, {0: 0}, [1]],
                                       "max_rank": SIZES, 1: [5, [0, 5], "r"]}),
        (S.Leg, (S.U1, ((0, 2),)), {}, {1: [((0, 2.5),), ((0, "2"),), ((0,),), 5],
                                                  0: ["U1", None]}),
    ]


def test_the_sweep_covers_the_families():
    assert len(FUNCTIONS) > 90
    covered = {id(f) for f in FUNCTIONS.values()}
    for fn in (tn.trg, tn.hotrg, tn.dmrg, tn.vumps, tn.ctmrg, tn.tdvp, tn.ctmrg_directional,
               tn.peps.heisenberg_energy, tn.peps.j1j2_energy, S.dmrg, S.tensordot, S.fuse_legs,
               S.svd, S.Leg, S.norm, S.to_vector, S.random):
        assert id(fn) in covered


def test_each_shared_argument_is_refused_by_name():
    names = {id(f): n for n, f in FUNCTIONS.items()}
    for fn, args, kwargs, bad in _valid_calls():
        name = names[id(fn)]
        _call(name, args, kwargs)  # the valid call runs
        for where, values in bad.items():
            label = where if isinstance(where, str) else \
                list(inspect.signature(fn).parameters)[where]
            for v in values:
                a, k = list(args), dict(kwargs)
                if isinstance(where, int):
                    a[where] = v
                else:
                    k[where] = v
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tn.set_progress(False)
                    try:
                        fn(*a, **k)
                    except TenferroError as e:
                        # the message names the function (or the one it passes options to)
                        owners = _OWNERS.get(fn.__name__, (fn.__name__,))
                        assert any(o in str(e) for o in owners), (name, e)
                        continue
                    except Exception as e:
                        raise AssertionError(f"{name} with {label}={v!r:.40} raised a raw "
                                             f"{type(e).__name__}: {e}") from e
                    finally:
                        tn.set_progress(True)
                # accepted: only values that are valid for that argument
                assert (label, v) in _ACCEPTED, f"{name} accepted {label}={v!r:.60}"


# functions whose errors may come from the function they pass options to
_OWNERS = {"heisenberg_energy": ("heisenberg_energy", "ctmrg")}
# values that are valid where the table above tries them (the call then runs)
_ACCEPTED = {("max_rank", None)}
