"""Every name of the array API standard (2024.12) exists in ``tenferro`` (and its ``linalg`` and
``fft`` extensions, the inspection object and the tensor) with the standard's signature,
checked with ``inspect.signature`` by the rules of the conformance suite: the standard's
positional parameters come first, in order, with the same kind (and name unless positional-only);
its keyword-only parameters exist (keyword-only or positional-or-keyword); extra parameters
(NumPy's, PyTorch's) may follow."""

import inspect
import math

import numpy as np
import pytest

import tenferro as tf

from .standard import (
    ARRAY_ATTRIBUTES,
    ARRAY_METHODS,
    CONSTANTS,
    DTYPES,
    FFT,
    FUNCTIONS,
    INFO,
    LINALG,
    VERSION,
)

P = inspect.Parameter

def _stub(text: str) -> inspect.Signature:
    """The standard's signature, parsed by Python from its text."""
    scope = {}
    exec(f"def f{text}: pass", scope)  # noqa: S102  (a fixed table of signatures)
    return inspect.signature(scope["f"])


def check_signature(func, text: str) -> None:
    sig, stub = inspect.signature(func), _stub(text)
    params = list(sig.parameters.values())
    stub_params = list(stub.parameters.values())
    if stub_params and stub_params[0].name == "self":  # a method: compared bound
        stub_params = stub_params[1:]
    positional = [p for p in stub_params if p.kind != P.KEYWORD_ONLY]
    for i, sp in enumerate(positional):
        assert len(params) > i, f"parameter {sp.name!r} is missing"
        p = params[i]
        if sp.kind not in (P.POSITIONAL_ONLY, P.VAR_POSITIONAL, P.VAR_KEYWORD):
            assert p.name == sp.name, f"parameter {i} is {p.name!r}, the standard's {sp.name!r}"
        if sp.kind in (P.POSITIONAL_OR_KEYWORD, P.VAR_POSITIONAL, P.VAR_KEYWORD):
            assert p.kind == sp.kind, f"{p.name!r} is {p.kind}, the standard's {sp.kind}"
        if sp.kind == P.POSITIONAL_ONLY:  # positional-only in the standard: passed by position
            assert p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD, P.VAR_POSITIONAL)
    for sp in stub_params[len(positional):]:
        assert sp.name in sig.parameters, f"keyword {sp.name!r} is missing"
        assert sig.parameters[sp.name].kind in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD)


def _params(table, module):
    return [pytest.param(module, name, text, id=name) for name, text in table.items()]


@pytest.mark.parametrize("module,name,text", _params(FUNCTIONS, "tenferro")
                         + _params(LINALG, "linalg") + _params(FFT, "fft"))
def test_function_exists_with_the_standards_signature(module, name, text):
    ns = tf if module == "tenferro" else getattr(tf, module)
    assert hasattr(ns, name), f"{module}.{name} is missing"
    check_signature(getattr(ns, name), text)


@pytest.mark.parametrize("name,text", [pytest.param(n, t, id=n)
                                       for n, t in ARRAY_METHODS.items()])
def test_tensor_method_exists_with_the_standards_signature(name, text):
    x = tf.ones((3, 3))
    assert hasattr(x, name), f"Tensor.{name} is missing"
    check_signature(getattr(x, name), text)


@pytest.mark.parametrize("name", ARRAY_ATTRIBUTES)
def test_tensor_attributes(name):
    x = tf.ones((2, 3), dtype=tf.float32)
    want = {"T": (3, 2), "mT": (3, 2), "device": "cpu", "dtype": tf.float32, "ndim": 2,
            "shape": (2, 3), "size": 6}[name]
    got = getattr(x, name)
    assert (tuple(got.shape) if name in ("T", "mT") else got) == want


IN_PLACE_AND_REFLECTED = [
    f"__{p}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and",
                               "or", "xor", "lshift", "rshift") for p in ("i", "r")
] + ["__imatmul__", "__rmatmul__"]


@pytest.mark.parametrize("name", IN_PLACE_AND_REFLECTED)
def test_in_place_and_reflected_operators_exist(name):
    assert callable(getattr(tf.Tensor, name, None)), name


def test_namespace_version_and_hooks():
    x = tf.ones((2,))
    assert tf.__array_api_version__ == VERSION
    assert x.__array_namespace__() is tf
    assert x.__array_namespace__(api_version="2024.12") is tf
    assert x.__array_namespace__(api_version="2023.12") is tf
    with pytest.raises(ValueError, match="2099.12"):
        x.__array_namespace__(api_version="2099.12")
    traced = []
    tf.jit(lambda v: traced.append(v.__array_namespace__()) or v)(x)
    assert traced == [tf]  # traced tensors have the same namespace


@pytest.mark.parametrize("name,text", list(INFO.items()), ids=list(INFO))
def test_inspection_functions_have_the_standards_signatures(name, text):
    check_signature(getattr(tf.__array_namespace_info__(), name), text)


def test_constants():
    for name, value in CONSTANTS.items():
        got = getattr(tf, name)
        if value is None:
            assert got is None
        elif math.isnan(value):
            assert isinstance(got, float) and math.isnan(got)
        else:
            assert isinstance(got, float) and got == value
    x = tf.arange(6).reshape(2, 3)
    assert x[:, tf.newaxis].shape == (2, 1, 3)


def test_dtypes_are_the_standards_and_hashable():
    for name in DTYPES:
        d = getattr(tf, name)
        assert d == np.dtype(name) and hash(d) == hash(np.dtype(name))
        assert tf.zeros((1,), dtype=d).dtype == d
    assert len({getattr(tf, n) for n in DTYPES}) == len(DTYPES)
