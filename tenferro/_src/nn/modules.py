"""``tenferro.nn`` modules: ``Parameter``, ``Module`` and PyTorch's common layers.

A module owns named parameters (leaf eager tensors requiring grad), buffers (tensors such as
running statistics) and submodules, registered by attribute assignment as in PyTorch. Two ways
to differentiate a model:

* eager, PyTorch style: ``loss = f(model(x)); loss.backward()`` fills ``p.grad`` for every
  ``p in model.parameters()``; an optimizer from ``tenferro.optim`` updates them in place;
* functional, JAX style: ``functional_call(model, params, args)`` runs the model with the
  tensors of the dict ``params`` (name -> tensor, as ``dict(model.named_parameters())``) in
  place of its own, so ``tenferro.grad``, ``jit``, ``vmap``-style transforms see the parameters
  as an ordinary pytree (a dict) argument::

      params = dict(model.named_parameters())
      loss = lambda p, x, y: F.cross_entropy(nn.functional_call(model, p, (x,)), y)
      grads = tenferro.jit(tenferro.grad(loss))(params, x, y)   # a dict like params

Default dtype is float64 (tenferro's default), initialisation follows PyTorch's rules and draws
from tenferro's generator (``tenferro.manual_seed``).
"""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np

from chainrules.dtypes import float32, float64, int64

from .. import ops
from ..core.eager import PICKLE_KINDS, EagerTensor, no_grad
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from . import functional as F

__all__ = [
    "AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
    "BatchNorm2d", "Conv1d", "Conv2d", "CrossEntropyLoss", "Dropout", "ELU", "Embedding",
    "Flatten", "GELU", "GroupNorm", "HuberLoss", "Identity", "L1Loss", "LayerNorm", "LeakyReLU",
    "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList",
    "NLLLoss", "Parameter", "ReLU", "SiLU", "Sequential", "Sigmoid", "Softmax", "Softplus",
    "Tanh", "functional_call",
]

# ------------------------------------------------------------------------- Parameter
_PARAMETERS: dict[int, weakref.ref] = {}


def _forget(key):
    def cb(_ref):
        _PARAMETERS.pop(key, None)

    return cb


class _ParameterMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        ref = _PARAMETERS.get(id(obj))
        return ref is not None and ref() is obj


class Parameter(metaclass=_ParameterMeta):
    """``Parameter(data, requires_grad=True)``: a leaf eager tensor that a ``Module`` registers
    as a parameter when assigned to one of its attributes.

    It *is* an ``EagerTensor`` (holding a copy of ``data``), marked as a parameter:
    ``isinstance(p, tenferro.nn.Parameter)`` is true for it, as in PyTorch."""

    def __new__(cls, data=None, requires_grad: bool = True) -> EagerTensor:  # type: ignore[misc]
        if data is None:
            data = ops.zeros((0,))
        # a copy of the values (a detached tensor would refuse the in-place updates
        # optimizers make; tenferro tensors share no memory anyway)
        t = data.detach().clone() if isinstance(data, EagerTensor) else ops.tensor(data)
        if not isinstance(t, EagerTensor):
            raise DTypeError(f"Parameter: expected concrete (eager) data, got "
                             f"{type(data).__name__}.")
        if requires_grad:
            t.requires_grad_()
        _mark_parameter(t)
        return t


def _mark_parameter(t) -> None:
    key = id(t)
    _PARAMETERS[key] = weakref.ref(t, _forget(key))


# pickles and copies of a parameter are parameters (``core.eager.PICKLE_KINDS``)
PICKLE_KINDS["parameter"] = (lambda t: isinstance(t, Parameter), _mark_parameter)


# ---------------------------------------------------------------------------- Module
class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list


class Module:
    """Base class of every layer: subclass it, assign parameters, buffers and submodules in
    ``__init__`` (after ``super().__init__()``), and write ``forward``. Calling the module
    calls ``forward``."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------- registration
    def _dicts(self):
        try:
            return self.__dict__["_parameters"], self.__dict__["_buffers"], \
                self.__dict__["_modules"]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__}: call super().__init__() before assigning attributes."
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        params, buffers, modules = self._dicts()
        if isinstance(value, Parameter):
            buffers.pop(name, None)
            modules.pop(name, None)
            self.__dict__.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            buffers.pop(name, None)
            self.__dict__.pop(name, None)
            modules[name] = value
        elif name in params:
            if value is not None:
                raise DTypeError(
                    f"{type(self).__name__}.{name} is a parameter: assign a "
                    f"tenferro.nn.Parameter (or None), got {type(value).__name__}."
                )
            params[name] = None
        elif name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise DTypeError(f"{type(self).__name__}.{name} is a buffer: assign a tensor "
                                 f"(or None), got {type(value).__name__}.")
            buffers[name] = value
        else:
            modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        params, buffers, modules = self._dicts()
        for s in (params, buffers, modules):
            if name in s:
                del s[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param) -> None:
        """Register ``param`` (a ``Parameter`` or None) under ``name``."""
        if param is not None and not isinstance(param, Parameter):
            raise DTypeError(f"register_parameter: {name!r} must be a tenferro.nn.Parameter "
                             f"or None, got {type(param).__name__}.")
        self._dicts()[0][name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (running statistics...).
        Persistent buffers appear in ``state_dict``."""
        self._dicts()[1][name] = tensor
        if not persistent:
            self._non_persistent.add(name)
        else:
            self._non_persistent.discard(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a submodule under ``name``."""
        self._dicts()[2][name] = module

    register_module = add_module

    # ------------------------------------------------------------------ calling
    def forward(self, *args, **kwargs):
        """The computation; every subclass defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define forward().")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---------------------------------------------------------------- traversal
    def named_modules(self, memo=None, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """Every module of the tree (this one first), each once, with its dotted name."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        """Every module of the tree, this one first."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, submodule) for the direct submodules."""
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self) -> Iterator[Module]:
        """The direct submodules."""
        for _, m in self.named_children():
            yield m

    def _named(self, store, prefix, recurse):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mprefix, m in mods:
            for name, t in getattr(m, store).items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                yield (f"{mprefix}.{name}" if mprefix else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True):
        """(dotted name, parameter) pairs, each shared parameter once."""
        yield from self._named("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[EagerTensor]:
        """Every parameter (each shared one once), for an optimizer."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        """(dotted name, buffer) pairs."""
        yield from self._named("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer (running statistics...)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # --------------------------------------------------------------------- state
    def state_dict(self) -> OrderedDict:
        """Name -> detached tensor, for every parameter and persistent buffer. The tensors
        share values with the module's, but the module's later in-place updates rebind its
        tensors, so a state dict is a snapshot (PyTorch's would change with the module)."""
        out = OrderedDict()
        for mprefix, m in self.named_modules():
            for store in ("_parameters", "_buffers"):
                for name, t in getattr(m, store).items():
                    if t is None or (store == "_buffers" and name in m._non_persistent):
                        continue
                    out[f"{mprefix}.{name}" if mprefix else name] = t.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True) -> _IncompatibleKeys:
        """Copy values (tensors, NumPy arrays, anything ``tenferro.asarray`` takes) into the
        parameters and buffers with the same names, in place (identities are kept, so
        optimizers stay attached). With ``strict``, missing or unexpected keys raise."""
        targets = {}
        for mprefix, m in self.named_modules():
            for store in ("_parameters", "_buffers"):
                for name, t in getattr(m, store).items():
                    if t is None or (store == "_buffers" and name in m._non_persistent):
                        continue
                    targets[f"{mprefix}.{name}" if mprefix else name] = t
        missing = [k for k in targets if k not in state_dict]
        unexpected = [k for k in state_dict if k not in targets]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys "
                           f"{unexpected}.")
        with no_grad():
            for k, t in targets.items():
                if k not in state_dict:
                    continue
                v = ops.asarray(np.asarray(state_dict[k]) if not isinstance(
                    state_dict[k], Tensor) else state_dict[k].detach())
                if tuple(v.shape) != tuple(t.shape):
                    raise ShapeError(f"load_state_dict: {k!r} has shape {tuple(v.shape)} in the "
                                     f"state dict but {tuple(t.shape)} in the module.")
                t.copy_(ops.cast(v, t.dtype))
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------- modes
    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout active, batch norm uses batch statistics) for the tree."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Freeze (False) or unfreeze every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (to None, or to zeros)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad = ops.zeros_like(p)

    def apply(self, fn) -> Module:
        """Call ``fn(m)`` on every submodule, then on this one (as PyTorch: e.g. custom
        initialisation). For a functional call with given parameters see
        ``functional_call``."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, dtype=None, device=None) -> Module:
        """Convert parameters and buffers (new parameter objects: create optimizers after)."""
        def conv(t):
            out = t.detach().clone()
            if dtype is not None and out.dtype.kind in "fc":
                out = ops.cast(out, dtype)
            if device is not None:
                out = out.to(device)
            return out

        for m in self.modules():
            for name, p in list(m._parameters.items()):
                if p is not None:
                    m._parameters[name] = Parameter(conv(p), p.requires_grad)
            for name, b in list(m._buffers.items()):
                if b is not None:
                    m._buffers[name] = conv(b)
        return self

    def double(self) -> Module:
        """``to(float64)``."""
        return self.to(float64)

    def float(self) -> Module:
        """``to(float32)``."""
        return self.to(float32)

    # ---------------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The options shown inside ``repr(module)``."""
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): {m!r}".replace("\n", "\n  ") for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def functional_call(module: Module, params_and_buffers: dict, args=(), kwargs=None,
                    *, strict: bool = False):
    """Run ``module(*args, **kwargs)`` with the tensors of ``params_and_buffers`` (dotted
    names, as ``named_parameters``/``named_buffers``) in place of the module's own, then
    restore them. The values may be tracers, so this is how ``grad``/``jit``/``jvp`` see a
    model's parameters as a pytree. Names not given keep the module's tensors (``strict``:
    every parameter and buffer must be given). Pass detached values
    (``{k: p.detach() for k, p in model.named_parameters()}``) for a purely functional use:
    the parameters themselves require grad, so results would also be recorded on the eager
    tape. The swap is visible to other threads using the same module meanwhile."""
    if not isinstance(args, tuple):
        args = (args,)
    slots = {}
    for mprefix, m in module.named_modules():
        for store in ("_parameters", "_buffers"):
            for name in getattr(m, store):
                slots[f"{mprefix}.{name}" if mprefix else name] = (m, store, name)
    unknown = [k for k in params_and_buffers if k not in slots]
    if unknown:
        raise KeyError(f"functional_call: {unknown} are not parameters or buffers of "
                       f"{type(module).__name__} (names: {sorted(slots)}).")
    if strict:
        missing = [k for k in slots if k not in params_and_buffers]
        if missing:
            raise KeyError(f"functional_call: strict=True and {missing} are not given.")
    saved = []
    try:
        for k, v in params_and_buffers.items():
            m, store, name = slots[k]
            d = getattr(m, store)
            saved.append((d, name, d[name]))
            d[name] = v
        return module(*args, **(kwargs or {}))
    finally:
        for d, name, old in reversed(saved):
            d[name] = old


# ---------------------------------------------------------------------- containers
class Sequential(Module):
    """Modules applied in order; ``Sequential(a, b)`` or ``Sequential(OrderedDict(...))``.
    Indexing gives a submodule (a slice gives a new ``Sequential``)."""

    def __init__(self, *modules) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(*mods[i])
        return mods[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self._modules)), module)
        return self

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    """A list of registered submodules."""

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, i):
        mods = list(self._modules.values())
        return ModuleList(mods[i]) if isinstance(i, slice) else mods[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleDict(Module):
    """A dict of registered submodules."""

    def __init__(self, modules: dict | None = None) -> None:
        super().__init__()
        for k, m in (modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


# --------------------------------------------------------------------------- layers
def _uniform(shape, bound, dtype):
    return (ops.rand(*shape, dtype=float64) * (2 * bound) - bound).astype(dtype, copy=False)


def _dtype(dtype):
    return np.dtype(float64 if dtype is None else dtype)


class Linear(Module):
    """``y = x W^T + b`` with W (out_features, in_features); PyTorch's initialisation
    U(-1/sqrt(in), 1/sqrt(in)) for W and b."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        dt = _dtype(dtype)
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(_uniform((out_features, in_features), bound, dt).to(
            device=device))
        if bias:
            self.bias = Parameter(_uniform((out_features,), bound, dt).to(device=device))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class _ConvNd(Module):
    _nsp = 2
    _fn = staticmethod(F.conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None) -> None:
        super().__init__()
        if padding_mode != "zeros":
            raise ShapeError(f"{type(self).__name__}: padding_mode {padding_mode!r:.40} "
                             f"is not supported (only 'zeros').")
        if in_channels % groups or out_channels % groups:
            raise ShapeError(f"{type(self).__name__}: in_channels ({in_channels}) and "
                             f"out_channels ({out_channels}) must be divisible by groups "
                             f"({groups}).")
        n = self._nsp
        k = (kernel_size,) * n if isinstance(kernel_size, int) else tuple(kernel_size)
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        dt = _dtype(dtype)
        fan_in = in_channels // groups * math.prod(k)
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        self.weight = Parameter(_uniform((out_channels, in_channels // groups) + k, bound,
                                         dt).to(device=device))
        if bias:
            self.bias = Parameter(_uniform((out_channels,), bound, dt).to(device=device))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        return self._fn(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class Conv1d(_ConvNd):
    """1-D convolution layer over (N, C, L) (``functional.conv1d``); PyTorch's init."""

    _nsp = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution layer over (N, C, H, W) (``functional.conv2d``); PyTorch's init."""

    _nsp = 2
    _fn = staticmethod(F.conv2d)


def _affine_parameters(module, shape, weight: bool, bias: bool, dtype, device) -> None:
    """A normalisation layer's affine ``weight`` (ones) and ``bias`` (zeros), each registered
    as ``None`` when absent (as PyTorch does)."""
    for name, on, fill in (("weight", weight, ops.ones), ("bias", bias, ops.zeros)):
        module.register_parameter(name, Parameter(fill(shape, dtype=dtype, device=device))
                                  if on else None)


class LayerNorm(Module):
    """Normalises the trailing ``normalized_shape`` axes; affine weight 1 and bias 0."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(
            normalized_shape)
        self.normalized_shape, self.eps = ns, eps
        dt = _dtype(dtype)
        _affine_parameters(self, ns, elementwise_affine, elementwise_affine and bias, dt,
                           device)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class GroupNorm(Module):
    """Normalises channel groups of each sample; per-channel affine weight 1 and bias 0."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        dt = _dtype(dtype)
        _affine_parameters(self, (num_channels,), affine, affine, dt, device)

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)


class _BatchNorm(Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.track_running_stats = track_running_stats
        dt = _dtype(dtype)
        _affine_parameters(self, (num_features,), affine, affine, dt, device)
        if track_running_stats:
            self.register_buffer("running_mean", ops.zeros((num_features,), dtype=dt,
                                                          device=device))
            self.register_buffer("running_var", ops.ones((num_features,), dtype=dt,
                                                        device=device))
            self.register_buffer("num_batches_tracked", ops.zeros((), dtype=int64,
                                                                 device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def _check(self, x):
        pass

    def forward(self, x):
        self._check(x)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or self.running_mean is None
        return F.batch_norm(
            x,
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight, self.bias, use_batch, factor, self.eps,
        )

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input (see ``functional.batch_norm``)."""

    def _check(self, x):
        if x.ndim not in (2, 3):
            raise ShapeError(f"BatchNorm1d: expected (N, C) or (N, C, L) input, got {x.shape}.")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input (see ``functional.batch_norm``)."""

    def _check(self, x):
        if x.ndim != 4:
            raise ShapeError(f"BatchNorm2d: expected (N, C, H, W) input, got {x.shape}.")


class Embedding(Module):
    """A lookup table (num_embeddings, embedding_dim) initialised N(0, 1) (the
    ``padding_idx`` row zero and without gradient)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 device=None, dtype=None, _weight=None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        if _weight is None:
            w = ops.randn(num_embeddings, embedding_dim, dtype=_dtype(dtype), device=device)
            if padding_idx is not None:
                w[padding_idx] = 0.0
        else:
            w = ops.asarray(_weight)
        self.weight = Parameter(w)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None) -> Embedding:
        """An embedding holding ``embeddings`` (frozen unless ``freeze=False``)."""
        e = ops.asarray(embeddings)
        m = cls(e.shape[0], e.shape[1], padding_idx, _weight=e)
        m.weight.requires_grad_(not freeze)
        return m

    def forward(self, idx):
        return F.embedding(idx, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Dropout(Module):
    """``functional.dropout`` in training mode, the identity in evaluation mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p, self.inplace = p, inplace

    def forward(self, x):
        return F.dropout(x, self.p, self.training, self.inplace)


class Flatten(Module):
    """Flatten axes ``start_dim..end_dim`` into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        s, e = self.start_dim % x.ndim, self.end_dim % x.ndim
        return ops.reshape(x, tuple(x.shape[:s]) + (-1,) + tuple(x.shape[e + 1:]))


class Identity(Module):
    """Returns its input unchanged (a placeholder layer)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, x):
        return x


def _activation(name, fn, doc, **defaults):
    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        opts = dict(defaults)
        for k, v in zip(defaults, args):
            opts[k] = v
        opts.update(kwargs)
        self._opts = opts

    def forward(self, x):
        return fn(x, **self._opts)

    def extra_repr(self):
        return ", ".join(f"{k}={v}" for k, v in self._opts.items())

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__doc__": doc,
                                  "__module__": __name__})


ReLU = _activation("ReLU", F.relu, "``functional.relu`` as a module.", inplace=False)
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, "``functional.leaky_relu`` as a module.",
                        negative_slope=0.01, inplace=False)
ELU = _activation("ELU", F.elu, "``functional.elu`` as a module.", alpha=1.0, inplace=False)
GELU = _activation("GELU", F.gelu, "``functional.gelu`` as a module.", approximate="none")
SiLU = _activation("SiLU", F.silu, "``functional.silu`` as a module.", inplace=False)
Sigmoid = _activation("Sigmoid", F.sigmoid, "``functional.sigmoid`` as a module.")
Tanh = _activation("Tanh", F.tanh, "``functional.tanh`` as a module.")
Softplus = _activation("Softplus", F.softplus, "``functional.softplus`` as a module.",
                       beta=1.0, threshold=20.0)
Softmax = _activation("Softmax", F.softmax, "``functional.softmax`` as a module.", dim=None)
LogSoftmax = _activation("LogSoftmax", F.log_softmax, "``functional.log_softmax`` as a module.",
                         dim=None)
MaxPool2d = _activation("MaxPool2d", F.max_pool2d, "``functional.max_pool2d`` as a module.",
                        kernel_size=None, stride=None, padding=0, dilation=1, ceil_mode=False)
AvgPool2d = _activation("AvgPool2d", F.avg_pool2d, "``functional.avg_pool2d`` as a module.",
                        kernel_size=None, stride=None, padding=0, ceil_mode=False,
                        count_include_pad=True, divisor_override=None)
AdaptiveAvgPool2d = _activation("AdaptiveAvgPool2d", F.adaptive_avg_pool2d,
                                "``functional.adaptive_avg_pool2d`` as a module.",
                                output_size=None)


def _loss(name, fn, doc, **defaults):
    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        opts = dict(defaults)
        for k, v in zip(defaults, args):
            opts[k] = v
        opts.update(kwargs)
        for k, v in opts.items():
            if isinstance(v, Tensor):
                self.register_buffer(k, v)
        self._opts = {k: v for k, v in opts.items() if not isinstance(v, Tensor)}

    def forward(self, input, target):
        return fn(input, target, **self._opts, **dict(self._buffers))

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "__doc__": doc,
                                  "__module__": __name__})


MSELoss = _loss("MSELoss", F.mse_loss, "``functional.mse_loss`` as a module.",
                reduction="mean")
L1Loss = _loss("L1Loss", F.l1_loss, "``functional.l1_loss`` as a module.", reduction="mean")
HuberLoss = _loss("HuberLoss", F.huber_loss, "``functional.huber_loss`` as a module.",
                  reduction="mean", delta=1.0)
NLLLoss = _loss("NLLLoss", F.nll_loss, "``functional.nll_loss`` as a module.", weight=None,
                ignore_index=-100, reduction="mean")
CrossEntropyLoss = _loss("CrossEntropyLoss", F.cross_entropy,
                         "``functional.cross_entropy`` as a module.", weight=None,
                         ignore_index=-100, reduction="mean", label_smoothing=0.0)
BCELoss = _loss("BCELoss", F.binary_cross_entropy,
                "``functional.binary_cross_entropy`` as a module.", weight=None,
                reduction="mean")
BCEWithLogitsLoss = _loss("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits,
                          "``functional.binary_cross_entropy_with_logits`` as a module.",
                          weight=None, reduction="mean", pos_weight=None)
