"""The public namespace is exactly the documented API: explicit ``__all__`` lists, pinned
here, and nothing else public by accident (no helper modules, no ``np``, ``bind``...).
Adding a public name means adding it here on purpose."""

import types

import tenferro as tf
import tenferro.linalg

TENFERRO = {
    "EagerTensor", "Graph", "ShapeDtype", "Tensor", "TracedTensor", "abs", "abs2", "absolute",
    "acos", "acosh", "add", "amax", "amin", "angle", "append", "arange", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax", "argmin", "argsort",
    "array_split", "asarray", "asin", "asinh", "astype", "atan", "atan2", "atanh", "atleast_1d",
    "atleast_2d", "atleast_3d", "autograd_grad", "bool", "broadcast_shapes", "broadcast_to", "ceil",
    "checkpoint", "checkpoint_loop", "clamp", "clip", "column_stack", "complex128", "complex64",
    "concat", "concatenate", "conj", "conjugate", "contract_path", "copy", "cos", "cosh", "cross",
    "cumsum", "custom_jvp", "custom_vjp", "default_device", "deg2rad", "degrees", "diag",
    "diag_embed", "diagonal", "diff", "div", "divide", "dot", "dsplit", "dstack", "einsum",
    "enable_grad", "equal", "errors", "exp", "exp2", "expand_dims", "expm1", "eye", "fabs", "fft",
    "flip", "fliplr", "flipud", "float32", "float64", "floor", "floor_divide", "fmax", "fmin",
    "fmod", "full", "full_like", "get_backend", "get_rng_state", "grad", "gradient", "greater",
    "greater_equal", "hessian", "hsplit", "hstack", "hvp", "hypot", "imag", "index_add", "inner",
    "int32", "int64", "is_grad_enabled", "isfinite", "isnan", "jacfwd", "jacrev", "jit", "jvp",
    "kron", "lax", "less", "less_equal", "linalg", "linear_transpose", "linearize", "linspace",
    "load", "log", "log10", "log1p", "log2", "log_softmax", "logaddexp", "logaddexp2",
    "logical_and", "logical_not", "logical_or", "logsumexp", "manual_seed", "matmul",
    "matrix_trace", "max", "maximum", "mean", "min", "minimum", "mod", "moveaxis", "mul",
    "multiply", "nan_to_num", "ncon", "neg", "negative", "no_grad", "norm", "normal", "not_equal",
    "ones", "ones_like", "outer", "pad", "partition", "permute", "permute_dims", "pow", "power",
    "prod", "pytree", "rad2deg", "radians", "rand", "randn", "ravel", "real", "reciprocal",
    "remainder", "repeat", "reshape", "roll", "rot90", "round", "rsqrt", "saved_residuals",
    "scatter_add", "select", "set_cpu_backend", "set_grad_enabled", "set_rng_state", "sigmoid",
    "sign", "sin", "sinc", "sinh", "softmax", "softplus", "sort", "special", "split", "sqrt",
    "square", "squeeze", "stack", "std", "stop_gradient", "sub", "subtract", "sum", "swapaxes",
    "take", "take_along_axis", "tan", "tanh", "tensor", "tensordot", "tile", "to_device", "trace",
    "transpose", "tril", "triu", "true_divide", "trunc", "uniform", "value_and_grad", "var", "vdot",
    "vjp", "vsplit", "vstack", "where", "zeros", "zeros_like",
}

LINALG = {
    "EigResult", "EighResult", "LQResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky",
    "default_eps", "det", "eig", "eigh", "eigvals", "eigvalsh", "expm", "inv", "lq", "matrix_power",
    "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "truncation_rank",
}


def _public(module):
    """Public attributes that are not subpackages/submodules of ``module`` itself (those are
    set by Python's import system, e.g. ``tenferro.core``)."""
    out = set()
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType) and value.__name__.startswith(module.__name__ + "."):
            if name not in getattr(module, "__all__", ()):
                continue
        out.add(name)
    return out


def test_tenferro_exports_exactly_the_api():
    assert set(tf.__all__) == TENFERRO
    assert _public(tf) == TENFERRO


def test_linalg_exports_exactly_the_api():
    assert set(tenferro.linalg.__all__) == LINALG
    assert _public(tenferro.linalg) == LINALG
