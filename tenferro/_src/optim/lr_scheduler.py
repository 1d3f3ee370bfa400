"""Learning-rate schedules: PyTorch's ``torch.optim.lr_scheduler`` for tenferro's optimizers.

A scheduler rewrites ``group["lr"]`` of its optimizer's parameter groups (plain floats) once per
``step()``, so ported training loops (``opt.step(); sched.step()``) run unchanged. The update
rules are PyTorch's *chainable* forms (each step multiplies or shifts the current rate), so the
rates agree with PyTorch's to the last bit, including when another scheduler or the user
changes ``group["lr"]`` in between. ``state_dict()`` holds plain Python values (picklable);
``load_state_dict`` restores them into a scheduler built on the same optimizer.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import DTypeError, ShapeError
from .optimizer import Optimizer

_EPOCH_WARNING = (
    "The epoch argument of scheduler.step(epoch) is deprecated (as in PyTorch): call "
    "scheduler.step() once per epoch instead."
)


def _check_optimizer(op: str, optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise DTypeError(f"{op}: expected a tenferro.optim optimizer, got "
                         f"{type(optimizer).__name__}.")


def _per_group(op: str, name: str, optimizer, value) -> list:
    """``value`` repeated for every parameter group, or a list/tuple with one per group."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ShapeError(f"{op}: expected {n} values of {name} (one per parameter group), "
                             f"got {len(value)}.")
        return list(value)
    return [value] * n


class LRScheduler:
    """Base class: ``LRScheduler(optimizer, last_epoch=-1)``. Subclasses give ``get_lr()``
    (the rates for the step ``self.last_epoch``, computed from the current ``group["lr"]``)
    and, where a closed form exists, ``_get_closed_form_lr()`` (used by the deprecated
    ``step(epoch)``). On construction each group's ``initial_lr`` is recorded (or, resuming
    with ``last_epoch >= 0``, required) and one step is taken, as in PyTorch, so
    ``get_last_lr()`` is the rate of epoch 0."""

    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        name = type(self).__name__
        _check_optimizer(name, optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"{name}: param_groups[{i}] has no 'initial_lr' while resuming with "
                        f"last_epoch={last_epoch}; load the optimizer's state_dict first, or "
                        f"start with last_epoch=-1.")
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:  # pragma: no cover - overridden
        """The rates of step ``self.last_epoch`` (subclasses)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The rates set by the last ``step()``, one per parameter group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and write the new rates into the optimizer. Call it after
        ``optimizer.step()``. ``epoch`` (deprecated, as in PyTorch) jumps to that epoch using
        the closed form where the schedule has one."""
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(_EPOCH_WARNING, UserWarning, stacklevel=2)
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (plain values: picklable)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict()`` returned."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``; ``lr_lambda`` is one function or a list with
    one per parameter group. ``state_dict`` stores the attributes of callable objects, not
    functions or lambdas (they do not pickle), as PyTorch."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _check_optimizer("LambdaLR", optimizer)
        if isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = _per_group("LambdaLR", "lr_lambda", optimizer, lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        for f in self.lr_lambdas:
            if not callable(f):
                raise DTypeError(f"LambdaLR: lr_lambda must be callable, got "
                                 f"{type(f).__name__}.")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs,
                                                        strict=True)]

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [None if isinstance(f, types.FunctionType) else dict(f.__dict__)
                             for f in self.lr_lambdas]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for f, attrs in zip(self.lr_lambdas, saved, strict=True):
            if attrs is not None:
                f.__dict__.update(attrs)


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size < 1:
            raise ShapeError(f"StepLR: step_size must be an int >= 1, got {step_size!r}.")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each epoch in ``milestones`` (a milestone listed
    twice multiplies twice)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        k = self.milestones.get(self.last_epoch, 0)
        if not k:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma ** k for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [b * self.gamma ** passed for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from ``initial_lr`` to ``eta_min`` over ``T_max`` epochs, then back up
    (period ``2 T_max``; SGDR without restarts). The chainable update keeps rates set by other
    code between steps, as PyTorch's does."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if isinstance(T_max, bool) or not isinstance(T_max, int) or T_max < 1:
            raise ShapeError(f"CosineAnnealingLR: T_max must be an int >= 1, got {T_max!r}.")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups, t, T, lo = self.optimizer.param_groups, self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and t > 0:  # resumed: the closed form
            return [lo + (b - lo) * (1 + math.cos(t * math.pi / T)) / 2 for b in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:  # the bottom of the cosine: restart the climb
            return [g["lr"] + (b - lo) * (1 - math.cos(math.pi / T)) / 2
                    for b, g in zip(self.base_lrs, groups, strict=True)]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self) -> list[float]:
        lo, t, T = self.eta_min, self.last_epoch, self.T_max
        return [lo + (b - lo) * (1 + math.cos(math.pi * t / T)) / 2 for b in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): the rate climbs from ``max_lr / div_factor`` to
    ``max_lr`` over ``pct_start`` of ``total_steps`` (or ``epochs * steps_per_epoch``), then
    anneals to ``initial_lr / final_div_factor`` (``three_phase``: back to the initial rate
    first). With ``cycle_momentum`` the momentum (SGD) or ``betas[0]`` (Adam) moves the other
    way between ``max_momentum`` and ``base_momentum``. Step once per batch."""

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        op = "OneCycleLR"
        _check_optimizer(op, optimizer)

        def positive_int(name, v):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ShapeError(f"{op}: {name} must be a positive int, got {v!r}.")
            return v

        if total_steps is not None:
            self.total_steps = positive_int("total_steps", total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = (positive_int("epochs", epochs)
                                * positive_int("steps_per_epoch", steps_per_epoch))
        else:
            raise ShapeError(f"{op}: give total_steps, or epochs and steps_per_epoch.")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ShapeError(f"{op}: pct_start must be a float in [0, 1], got {pct_start!r}.")
        if anneal_strategy not in ("cos", "linear"):
            raise ShapeError(f"{op}: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}.")
        self._anneal_func_type = anneal_strategy
        n = self.total_steps
        up = float(pct_start * n) - 1
        if three_phase:
            self._schedule_phases = [
                dict(end_step=up, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=float(2 * pct_start * n) - 2, start_lr="max_lr",
                     end_lr="initial_lr", start_momentum="base_momentum",
                     end_momentum="max_momentum"),
                dict(end_step=n - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum")]
        else:
            self._schedule_phases = [
                dict(end_step=up, start_lr="initial_lr", end_lr="max_lr",
                     start_momentum="max_momentum", end_momentum="base_momentum"),
                dict(end_step=n - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum")]
        max_lrs = _per_group(op, "max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups, strict=True):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ShapeError(f"{op}: cycle_momentum=True needs an optimizer with momentum "
                                 f"(SGD) or betas (Adam); pass cycle_momentum=False.")
            self.use_beta1 = "betas" in optimizer.defaults
            highs = _per_group(op, "max_momentum", optimizer, max_momentum)
            lows = _per_group(op, "base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for hi, lo, group in zip(highs, lows, optimizer.param_groups, strict=True):
                    self._set_momentum(group, hi)
                    group["max_momentum"] = hi
                    group["base_momentum"] = lo
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, m: float) -> None:
        if self.use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        t = self.last_epoch
        if t > self.total_steps:
            raise ShapeError(f"OneCycleLR: stepped {t} times, but total_steps is "
                             f"{self.total_steps}.")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if t <= end or i == last:
                    pct = (t - start) / (end - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]],
                                            pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
                    break
                start = end
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` when the metric passed to ``step(metrics)`` has not
    improved (by ``threshold``, relative or absolute) for more than ``patience`` epochs, then
    wait ``cooldown`` epochs; never below ``min_lr``, and changes smaller than ``eps`` are
    skipped."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0, eps: float = 1e-8) -> None:
        op = "ReduceLROnPlateau"
        if factor >= 1.0:
            raise ShapeError(f"{op}: factor must be < 1.0, got {factor}.")
        _check_optimizer(op, optimizer)
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            self.min_lrs = _per_group(op, "min_lr", optimizer, min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]
        self._init_is_better(mode, threshold, threshold_mode)
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ShapeError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}.")
        if threshold_mode not in ("rel", "abs"):
            raise ShapeError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}.")
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf

    def _is_better(self, a: float, best: float) -> bool:
        th = self.threshold
        if self.mode == "min":
            return a < (best * (1.0 - th) if self.threshold_mode == "rel" else best - th)
        return a > (best * (th + 1.0) if self.threshold_mode == "rel" else best + th)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics, epoch: int | None = None) -> None:
        """Record this epoch's ``metrics`` (a number or a 0-d tensor) and reduce the rate if
        it has stalled."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise ShapeError(
                    f"ReduceLROnPlateau: the optimizer has {len(groups)} parameter groups but "
                    f"{len(self.min_lrs)} min_lrs were given; update scheduler.min_lrs.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, lo in zip(groups, self.min_lrs, strict=True):
            old = float(group["lr"])
            new = max(old * self.factor, lo)
            if old - new > self.eps:
                group["lr"] = new

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "MultiStepLR",
           "OneCycleLR", "ReduceLROnPlateau", "StepLR"]
