"""The optimizer base class: parameter groups, per-parameter state, ``zero_grad``, state dicts.

As in PyTorch, an optimizer holds leaf tensors (``model.parameters()`` or any eager tensors
requiring grad), reads their ``.grad`` after ``loss.backward()``, and updates them in place
(under ``no_grad``, keeping each tensor's identity). Complex parameters follow PyTorch too:
the gradient is dL/dRe z + i dL/dIm z (tenferro's convention), and optimizers whose update is
not complex-linear (Adam's second moment, L-BFGS's curvature pairs) treat a complex entry as
its real and imaginary parts (``torch.view_as_real``).
"""

from __future__ import annotations

import copy
from typing import Any

from .. import ops
from ..core.eager import EagerTensor, enable_grad, no_grad
from ..errors import DTypeError, GradientError, ShapeError
from ..ops._base import as_int, as_real

_REQUIRED = object()


def real_option(**bounds):
    """A hyperparameter that is a real number within ``bounds`` (``as_real``'s keywords)."""
    return lambda op, name, v: as_real(op, name, v, **bounds)


def int_option(least: int, optional: bool = False):
    """A hyperparameter that is an int >= ``least`` (or None, when ``optional``)."""
    def check(op, name, v):
        if v is None and optional:
            return v
        v = as_int(op, name, v)
        if v < least:
            raise ShapeError(f"{op}: {name} must be >= {least}, got {v}.")
        return v

    return check


def bool_option(op, name, v):
    if not isinstance(v, bool):
        raise DTypeError(f"{op}: {name} must be True or False, got {type(v).__name__} "
                         f"{v!r:.40}.")
    return v


class Optimizer:
    """Base class: ``Optimizer(params, defaults)`` with ``params`` an iterable of tensors or
    of dicts (parameter groups: ``{"params": [...], "lr": ...}``, other options from
    ``defaults``). Subclasses implement ``step`` and list their hyperparameters' checks in
    ``options`` (name -> ``check(op, name, value) -> value``): every group's values are
    checked when it is added, so ``SGD(params, lr="a")`` raises a named error at once."""

    options: dict = {"maximize": bool_option}

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = dict(defaults)
        self.state: dict[int, dict] = {}
        self.param_groups: list[dict] = []
        if isinstance(params, EagerTensor):
            raise DTypeError(f"{type(self).__name__}: params must be an iterable of tensors "
                             f"(e.g. model.parameters() or [x]), got a single tensor.")
        try:
            params = list(params)
        except TypeError:
            raise DTypeError(f"{type(self).__name__}: params must be an iterable of tensors or "
                             f"of parameter-group dicts, got {type(params).__name__}.") from None
        if not params:
            raise ShapeError(f"{type(self).__name__}: got an empty parameter list.")
        if not isinstance(params[0], dict):
            params = [{"params": params}]
        for g in params:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (missing ones from defaults)."""
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise DTypeError(f"{type(self).__name__}: a parameter group is a dict with a "
                             f"'params' entry, got {type(param_group).__name__}.")
        g = dict(param_group)
        ps = g["params"]
        ps = [ps] if isinstance(ps, EagerTensor) else list(ps)
        seen = {id(p) for grp in self.param_groups for p in grp["params"]}
        for p in ps:
            if not isinstance(p, EagerTensor):
                raise DTypeError(f"{type(self).__name__}: parameters must be eager tensors, got "
                                 f"{type(p).__name__}.")
            if not p.is_leaf:
                raise GradientError(f"{type(self).__name__}: can only optimize leaf tensors "
                                    f"(a non-leaf tensor of shape {p.shape} was given).")
            if id(p) in seen:
                raise ShapeError(f"{type(self).__name__}: a parameter appears in more than one "
                                 f"group.")
            seen.add(id(p))
        g["params"] = ps
        for k, v in self.defaults.items():
            if v is _REQUIRED and k not in g:
                raise ShapeError(f"{type(self).__name__}: parameter group needs {k!r}.")
            g.setdefault(k, v)
        for k, check in self.options.items():
            if k in g:
                g[k] = check(type(self).__name__, k, g[k])
        self.param_groups.append(g)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad`` (to None, or to zeros)."""
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad = ops.zeros_like(p)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()`` if given
        (evaluated with gradients enabled before the update)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    g = check_grad(self, p)
                    if g is not None:
                        self._update(p, -g if group["maximize"] else g, group)
        return loss

    def _update(self, p, g, group) -> None:  # pragma: no cover - overridden
        """Update parameter ``p`` in place from its gradient ``g`` (already negated when
        maximizing), with the hyperparameters of its ``group``."""
        raise NotImplementedError

    def _state(self, p) -> dict:
        return self.state.setdefault(id(p), {})

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``,
        parameters numbered in group order (as PyTorch); tensors are copied."""
        index, groups, state = 0, [], {}
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                if id(p) in self.state:
                    state[index] = {k: _copy(v) for k, v in self.state[id(p)].items()}
                ids.append(index)
                index += 1
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore options and per-parameter state saved by ``state_dict``."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
            len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)
        ):
            raise ShapeError(f"{type(self).__name__}.load_state_dict: the saved parameter "
                             f"groups do not match this optimizer's.")
        self.state = {}
        for saved, g in zip(groups, self.param_groups):
            for k, v in saved.items():
                if k != "params":
                    g[k] = v
            for i, p in zip(saved["params"], g["params"]):
                if i in state_dict["state"]:
                    self.state[id(p)] = {k: _copy(v) for k, v in state_dict["state"][i].items()}

    # ------------------------------------------------------------ pickling and copying
    def __getstate__(self) -> dict:
        """Pickles and deep copies: the per-parameter state is keyed by ``id(p)``, which means
        nothing in another process or for the copied parameters, so it travels keyed by the
        parameter's position in the groups (as in ``state_dict``). Pickled together with its
        model (``pickle.dumps((model, opt))``), the optimizer gets the model's parameters."""
        state = dict(self.__dict__)
        params = [p for g in self.param_groups for p in g["params"]]
        state["state"] = {i: self.state[id(p)] for i, p in enumerate(params)
                          if id(p) in self.state}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        params = [p for g in self.param_groups for p in g["params"]]
        self.state = {id(params[i]): s for i, s in state["state"].items()}

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.defaults.items())
        return f"{type(self).__name__}({opts})"


def _copy(v: Any) -> Any:
    if isinstance(v, EagerTensor):
        return v.detach().clone()
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return copy.deepcopy(v)


def real_view(x):
    """A complex tensor as real pairs (..., 2), like ``torch.view_as_real``; reals unchanged."""
    if x.dtype.kind == "c":
        return ops.stack([ops.real(x), ops.imag(x)], -1)
    return x


def from_real_view(v, like):
    """Inverse of ``real_view`` for a tensor shaped like ``like``."""
    if like.dtype.kind == "c":
        return ops.cast(v[..., 0], like.dtype) + 1j * v[..., 1]
    return v


def check_grad(opt, p):
    g = p.grad
    if g is not None and g.dtype != p.dtype:  # pragma: no cover - the tape guarantees it
        raise DTypeError(f"{type(opt).__name__}: gradient dtype {g.dtype} differs from the "
                         f"parameter's {p.dtype}.")
    return g

