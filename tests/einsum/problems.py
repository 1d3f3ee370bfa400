"""Random einsum problems for the property tests, and a helper to run code in traced mode."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import chainrules
from tenferro._src.core.dispatch import bind_list, new_base
from tenferro._src.ir.eval import eval_program
from tenferro._src.ir.program import Program
from tenferro._src.traced.staging import StagingTrace

LETTERS = "abcdefg"


@st.composite
def einsum_problems(draw, max_ops=4, max_rank=4, ellipsis=True, broadcast=True):
    """``(subscripts, shapes)`` valid for ``numpy.einsum``: repeated indices within an
    operand (diagonals, traces), indices shared by several operands (hyper-edges), size-1
    axes that broadcast, '...' with right-aligned broadcasting, implicit or explicit output."""
    n = draw(st.integers(1, max_ops))
    sizes = {c: draw(st.integers(1, 3)) for c in LETTERS}
    ell = None
    if ellipsis and draw(st.integers(0, 3)) == 0:
        ell = draw(st.lists(st.integers(1, 3), max_size=2))
    terms, shapes = [], []
    for _ in range(n):
        labs = draw(st.lists(st.sampled_from(LETTERS), max_size=max_rank))
        shape = [sizes[c] for c in labs]
        if broadcast:
            for i, c in enumerate(labs):
                if labs.count(c) == 1 and draw(st.integers(0, 9)) == 0:
                    shape[i] = 1
        term = "".join(labs)
        if ell is not None and draw(st.booleans()):
            k = draw(st.integers(0, len(ell)))
            e = [1 if broadcast and draw(st.integers(0, 4)) == 0 else d for d in ell[len(ell) - k:]]
            p = draw(st.integers(0, len(labs)))
            term = term[:p] + "..." + term[p:]
            shape = shape[:p] + e + shape[p:]
        terms.append(term)
        shapes.append(tuple(shape))
    if draw(st.booleans()):
        present = sorted(set("".join(terms)) - {"."})
        out = "".join(draw(st.permutations(present))[: draw(st.integers(0, len(present)))])
        if any("..." in t for t in terms):
            p = draw(st.integers(0, len(out)))
            out = out[:p] + "..." + out[p:]
        return ",".join(terms) + "->" + out, shapes
    return ",".join(terms), shapes


def random_arrays(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = rng.standard_normal(s)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.standard_normal(s)
        elif np.dtype(dtype).kind in "iu":
            a = rng.integers(-3, 4, s)
        out.append(np.asarray(a, dtype=dtype))
    return out


def stage(f, *args):
    """Trace ``f`` on abstract versions of ``args`` (traced mode, no values); return the
    program. Only shapes and dtypes are visible while ``f`` runs."""
    st_ = StagingTrace()
    with new_base(st_):
        ins = [st_.new_arg(chainrules.aval_of(a)) for a in args]
        out = f(*ins)
    return Program([i.var for i in ins], st_.eqns, [out.var], st_.consts)


def run_program(prog, *args):
    return eval_program(prog, list(args), bind_list)[0]
