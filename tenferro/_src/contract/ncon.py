"""``ncon``: the tensor-network physicists' contraction convention (Pfeifer et al., 2014).

Each tensor gets a list of integer labels, one per axis:

* a **positive** label is a contracted bond and appears exactly twice (on two tensors, or twice
  on one tensor: a partial trace);
* a **negative** label is an open leg and appears once; the result's axes are ordered
  -1, -2, -3, ... (or as ``forder`` says).

Bonds are contracted in increasing label order unless ``order`` lists them: at each step the
two tensors carrying the next uncontracted label are contracted over *all* the bonds they
share. Disconnected pieces are joined by outer products at the end. ``order`` may also be an
optimizer name (``"auto"``, ``"greedy"``, ...) to let opt_einsum choose instead.

The ordering is turned into an explicit path for ``einsum``'s planner, so ncon shares its
lowering (BLAS-friendly ``dot_general`` steps), its plan cache and its derivatives.
"""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError, named_argument_errors
from .api import get_plan
from .execute import promote, run


def _labels(index_lists):
    out = []
    for k, lst in enumerate(index_lists):
        if isinstance(lst, (str, bytes)) or not isinstance(lst, (list, tuple, np.ndarray)):
            raise ShapeError(
                f"ncon: index list {k} must be a list of nonzero integers, got {lst!r}."
            )
        labs = []
        for lab in lst:
            if isinstance(lab, (bool, np.bool_)) or not isinstance(lab, (int, np.integer)):
                raise ShapeError(
                    f"ncon: labels must be nonzero integers; index list {k} contains {lab!r}."
                )
            if lab == 0:
                raise ShapeError(
                    f"ncon: label 0 in index list {k} is not allowed (positive labels are "
                    f"contracted, negative ones are open legs)."
                )
            labs.append(int(lab))
        out.append(tuple(labs))
    return out


def _check(labels, order, forder):
    counts = Counter(lab for t in labels for lab in t)
    for lab, c in counts.items():
        if lab > 0 and c != 2:
            raise ShapeError(
                f"ncon: contracted label {lab} appears {c} time(s); a positive label must "
                f"appear exactly twice (use a negative label for an open leg)."
            )
        if lab < 0 and c != 1:
            raise ShapeError(
                f"ncon: open label {lab} appears {c} times; a negative label must appear once."
            )
    positive = sorted(lab for lab in counts if lab > 0)
    negative = sorted((lab for lab in counts if lab < 0), reverse=True)
    if order is None or isinstance(order, str):
        order_t = tuple(positive)
    else:
        order_t = tuple(int(x) for x in order)
        if sorted(order_t) != positive:
            raise ShapeError(
                f"ncon: order {list(order)} must list every contracted (positive) label once; "
                f"the labels are {positive}."
            )
    if forder is None:
        out = tuple(negative)
    else:
        out = tuple(int(x) for x in forder)
        if sorted(out, reverse=True) != negative:
            raise ShapeError(
                f"ncon: forder {list(forder)} must list every open (negative) label once; the "
                f"open labels are {negative}."
            )
    return order_t, out


def _path(labels, order):
    """The opt_einsum-format path that contracts bonds in ``order`` (ncon's rule)."""
    nodes = [frozenset(t) for t in labels]
    slots = list(range(len(nodes)))
    path = []
    for lab in order:
        holders = [p for p, node in enumerate(slots) if lab in nodes[node]]
        if len(holders) < 2:  # a trace, or already contracted with an earlier bond
            continue
        i, j = holders
        path.append((i, j))
        nodes.append(nodes[slots[i]] | nodes[slots[j]])
        del slots[j], slots[i]
        slots.append(len(nodes) - 1)
    while len(slots) > 1:  # disconnected pieces: outer products
        path.append((0, 1))
        slots = slots[2:] + [len(nodes)]
        nodes.append(frozenset())
    if not path:  # a single tensor: traces and a transpose only
        path.append((0,))
    return path


@functools.lru_cache(maxsize=1024)
def _plan(labels, order, forder):
    """(output labels, optimize argument for einsum), cached: repeated ncon calls on the same
    network only look the plan up."""
    order_t, out = _check(labels, order, forder)
    return out, (order if isinstance(order, str) else tuple(_path(labels, order_t)))


@named_argument_errors("ncon")
def ncon(tensors, index_lists, order=None, forder=None) -> Tensor:
    """Contract a tensor network given in the ncon convention (Pfeifer et al., 2014).

    Each tensor gets a list of integer labels, one per axis: a **positive** label is a
    contracted bond and appears exactly twice (on two tensors, or twice on one tensor: a
    partial trace); a **negative** label is an open leg and appears once, and the result's
    axes are ordered -1, -2, -3, ... The ordering is turned into an explicit path for
    ``einsum``'s planner, so ncon shares its lowering, plan cache and derivatives.

    Parameters
    ----------
    tensors : sequence of Tensor
        The tensors of the network (tensors, arrays or numbers).
    index_lists : sequence of sequence of int
        One list of nonzero integer labels per tensor, one label per axis.
    order : sequence of int or str, optional
        The order in which positive labels are contracted (default: increasing). At each step
        the two tensors carrying the next uncontracted label are contracted over *all* the
        bonds they share; disconnected pieces are joined by outer products at the end. An
        optimizer name (``"auto"``, ``"greedy"``...) lets the planner choose instead.
    forder : sequence of int, optional
        The order of the open (negative) labels in the result (default -1, -2, ...).

    Returns
    -------
    Tensor
        The contracted network (0-d when no label is open).

    Raises
    ------
    tenferro.errors.ShapeError
        Not one index list per tensor; a label that is 0 or not an integer; a positive label
        not appearing exactly twice or a negative one not once; a list's length different
        from its tensor's rank; a bond whose two axes have different sizes; ``order`` or
        ``forder`` not a permutation of the labels they name.

    Notes
    -----
    Differentiable in every mode (as ``einsum``, which it calls). Complex tensors are not
    conjugated: write ``conj(A)`` for a bra.

    Examples
    --------
    With an MPS tensor ``A[left, phys, right]`` and an operator ``O[phys', phys]``,
    ``<A|O|A>`` and the left density matrix:

    >>> import tenferro as tf
    >>> A = tf.reshape(tf.arange(8.0), (2, 2, 2))
    >>> O = tf.tensor([[1.0, 0.0], [0.0, -1.0]])
    >>> tf.ncon([A, O, tf.conj(A)], [[1, 2, 3], [4, 2], [1, 4, 3]])
    tensor(-56.)
    >>> tf.ncon([A, tf.conj(A)], [[-1, 1, 2], [-2, 1, 2]])
    tensor([[ 14.,  38.],
            [ 38., 126.]])
    """
    tensors = list(tensors)
    index_lists = list(index_lists)
    if len(tensors) != len(index_lists):
        raise ShapeError(
            f"ncon: {len(tensors)} tensors but {len(index_lists)} index lists; give one list "
            f"of labels per tensor."
        )
    if not tensors:
        raise ShapeError("ncon: needs at least one tensor.")
    labels = tuple(_labels(index_lists))
    order_key = order if order is None or isinstance(order, str) else tuple(order)
    out, optimize = _plan(labels, order_key, None if forder is None else tuple(forder))
    args = []
    for t, lab in zip(tensors, labels, strict=True):
        args += [t, list(lab)]
    args.append(list(out))
    plan, operands, grad = get_plan("ncon", tuple(args), optimize)
    return run(plan.lowered(grad), promote(operands), grad)
