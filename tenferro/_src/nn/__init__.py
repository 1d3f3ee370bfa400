"""Implementation of ``tenferro.nn`` (its docstring is the user documentation)."""

# ruff: noqa: F405  (the names of __all__ come from the star imports below)

from . import functional, utils
from .modules import *  # noqa: F403

# a literal list, the form type checkers read (tests/core/test_public_api.py checks it)
__all__ = [
    "functional", "utils", "AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss",
    "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d", "CrossEntropyLoss", "Dropout", "ELU",
    "Embedding", "Flatten", "GELU", "GroupNorm", "HuberLoss", "Identity", "L1Loss",
    "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module",
    "ModuleDict", "ModuleList", "NLLLoss", "Parameter", "ReLU", "Sequential", "SiLU",
    "Sigmoid", "Softmax", "Softplus", "Tanh", "functional_call"
]
