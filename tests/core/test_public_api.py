"""The public namespace is exactly the documented API: explicit ``__all__`` lists, pinned
here, and nothing else public by accident (no helper modules, no ``np``, ``bind``...).
Adding a public name means adding it here on purpose."""

import types

import tenferro as tf
import tenferro.autograd
import tenferro.distributed
import tenferro.fft
import tenferro.integrate
import tenferro.linalg
import tenferro.nn
import tenferro.nn.functional
import tenferro.optim
import tenferro.signal
import tenferro.special
import tenferro.stats

TENFERRO = {
    "EagerTensor", "Graph", "ShapeDtype", "Tensor", "TracedTensor", "abs", "abs2", "absolute",
    "caches", "testing", "tn", "interop",
    "add", "amax", "amin", "angle", "arange", "arctan", "arctan2", "argmax", "argmin",
    "asarray", "astype", "atan", "atan2", "atleast_1d", "autograd_grad", "bool", "distributed",
    "broadcast_shapes", "broadcast_to", "checkpoint", "checkpoint_loop", "clamp", "clip",
    "complex128", "complex64", "concat", "concatenate", "conj", "conjugate", "contract_path",
    "copy", "cos", "cosh", "cumsum", "custom_jvp", "custom_vjp", "default_device", "diag",
    "diag_embed", "diagonal", "div", "divide", "dot", "einsum", "enable_grad", "equal",
    "errors", "exp", "expand_dims", "expm1", "eye", "fixed_point", "flip", "float32",
    "float64", "full",
    "full_like", "get_backend", "get_rng_state", "grad", "greater", "greater_equal", "hessian",
    "hvp", "imag", "index_add", "inner", "int32", "int64", "is_grad_enabled", "isfinite",
    "isnan", "jacfwd", "jacrev", "jit", "jvp", "kron", "lax", "less", "less_equal", "linalg",
    "linear_transpose", "linearize", "linspace", "load", "log", "log1p", "log_softmax",
    "logical_and", "logical_not", "logical_or", "logsumexp", "manual_seed", "matmul",
    "matrix_trace", "max", "maximum", "mean", "min", "minimum", "moveaxis", "mul", "multiply",
    "ncon", "neg", "negative", "nn", "no_grad", "norm", "normal", "not_equal", "ones",
    "ones_like", "optim",
    "outer", "pad", "permute", "permute_dims", "pow", "power", "prod", "pytree", "rand",
    "randn", "ravel", "real", "reciprocal", "reshape", "rsqrt", "save", "saved_residuals",
    "scatter_add", "set_cpu_backend", "set_grad_enabled", "set_rng_state", "sigmoid", "sign",
    "sin", "sinh", "softmax", "softplus", "split", "sqrt", "square", "squeeze", "stack", "std",
    "stop_gradient", "sub", "subtract", "sum", "swapaxes", "symmetric", "take", "tan", "tanh",
    "tensor",
    "tensordot", "to_device", "trace", "transpose", "tril", "triu", "true_divide", "uniform",
    "value_and_grad", "var", "vdot", "vjp", "vmap", "where", "zeros", "zeros_like",
    "from_dlpack",  # DLPack import (design/interop.md)
    "integrate", "signal",  # SciPy's odeint and convolve/correlate (design/numpy-surface.md)
}

# The NumPy surface and tenferro.fft / tenferro.special (design/numpy-surface.md)
NUMPY_SURFACE = {
    "acos", "acosh", "allclose", "append", "arccos", "arccosh", "arcsin", "arcsinh", "arctanh",
    "argsort", "isclose",
    "array_split", "asin", "asinh", "atanh", "atleast_2d", "atleast_3d", "ceil", "column_stack",
    "cross", "deg2rad", "degrees", "diff", "dsplit", "dstack", "exp2", "fabs", "fft", "fliplr",
    "flipud", "floor", "floor_divide", "fmax", "fmin", "fmod", "gradient", "hsplit", "hstack",
    "hypot", "log10", "log2", "logaddexp", "logaddexp2", "mod", "nan_to_num", "partition",
    "rad2deg", "radians", "remainder", "repeat", "roll", "rot90", "round", "select", "sinc", "sort",
    "special", "stats", "take_along_axis", "tile", "trunc", "vsplit", "vstack",
    "indices",  # NumPy's index grids (quimb's circuits build gates with it)
    # bitwise operations (array API names, NumPy's and PyTorch's other spellings)
    "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "invert", "left_shift", "right_shift",
    # names legacy (HIPS autograd) code uses (tenferro/_src/ops/numpy_names.py)
    "array", "c_", "dtype", "iscomplex", "iscomplexobj", "isrealobj", "ndarray", "ndim", "r_",
    "real_if_close", "rollaxis", "row_stack",
}

# The array API standard's names tenferro gained for it (design/array-api.md); the graph
# tracer is make_graph (tenferro.trace is NumPy's matrix trace)
ARRAY_API = {
    "all", "any", "broadcast_arrays", "can_cast", "copysign", "count_nonzero",
    "cumulative_prod", "cumulative_sum", "e", "empty", "empty_like", "finfo", "iinfo", "inf",
    "int16", "int8", "isdtype", "isinf", "logical_xor", "make_graph", "matrix_transpose",
    "meshgrid", "nan", "newaxis", "nextafter", "nonzero", "pi", "positive", "result_type",
    "searchsorted", "signbit", "uint16", "uint32", "uint64", "uint8", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "unstack", "vecdot",
}
LINALG_ARRAY_API = {
    "cross", "diagonal", "matmul", "matrix_norm", "matrix_transpose", "outer", "tensordot",
    "trace", "vecdot", "vector_norm",
}

# PyTorch's spellings (tenferro/ops/torch_spellings.py, design/numpy-surface.md)
TORCH_SURFACE = {
    "autograd", "bmm", "cat", "complex", "flatten", "from_numpy", "gather", "index_select",
    "is_complex",
    "masked_fill", "numel", "randint", "randperm", "relu", "topk",
    "cdist", "chunk", "logdet", "rand_like", "randn_like", "scatter",
}

LINALG = {
    "EighResult", "LQResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky",
    "default_eps", "det", "eigh", "eigvalsh", "expm", "inv", "lq", "matrix_rank", "norm",
    "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "truncation_rank",
    "EigResult", "eig", "eigvals", "matrix_power",  # general eigenproblem, matrix powers
    "funm", "logm", "powm", "sqrtm",  # functions of Hermitian matrices, exact at degeneracies
    "SingularMatrixError",  # also in tenferro.errors: raised by inv, solve, cholesky
    "LinearOperator", "eigs", "eigsh", "expm_multiply", "linsolve", "randomized_svd", "svds",
    "check_gauge_invariance", "tie_gauge",  # gauge dependence at exact degeneracies
    # SciPy's structured solves and PyTorch's cholesky_solve (design/numpy-surface.md)
    "cho_factor", "cho_solve", "cholesky_solve", "solve_banded", "solve_sylvester",
    "solve_triangular",
}

NN = {
    "AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d",
    "Conv1d", "Conv2d", "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "Flatten", "GELU",
    "GroupNorm", "HuberLoss", "Identity", "L1Loss", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "NLLLoss",
    "Parameter", "ReLU", "Sequential", "SiLU", "Sigmoid", "Softmax", "Softplus", "Tanh",
    "functional", "functional_call", "utils"
}

NN_FUNCTIONAL = {
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "batch_norm",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv1d", "conv2d",
    "cross_entropy", "dropout", "elu", "embedding", "gelu", "group_norm", "huber_loss", "kl_div",
    "l1_loss", "layer_norm", "leaky_relu", "linear", "log_softmax", "logsigmoid", "max_pool1d",
    "max_pool2d", "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus",
    "tanh"
}

OPTIM = {
    "Adam", "AdamW", "LBFGS", "Optimizer", "SGD", "lr_scheduler"
}

LR_SCHEDULER = {
    "CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "MultiStepLR",
    "OneCycleLR", "ReduceLROnPlateau", "StepLR",
}
NN_UTILS = {"clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
            "vector_to_parameters"}

SYMMETRIC = {
    "Leg", "ProductSymmetry", "SymmetricEighResult", "SymmetricQRResult", "SymmetricSVDResult",
    "SymmetricTensor", "Symmetry", "U1", "Z2", "Zn", "diagonal", "dmrg", "eigh", "einsum",
    "from_dense", "from_vector", "fuse_legs", "inner", "leg_from_charges", "mpo_from_dense",
    "ncon", "norm", "product", "qr",
    "random", "split_legs", "svd", "tensordot", "to_dense", "to_vector", "zeros",
}
DISTRIBUTED = {"value_and_grad"}

# tenferro.tn.peps (C4v iPEPS; also re-exported by tenferro.tn). The bond operator and spin
# matrices it uses are tn.mpo's (one definition for chains and PEPS).
TN_PEPS = {
    "D2_REFERENCE_ENERGY", "J1J2_D2_REFERENCE_ENERGY", "J1J2_D3_REFERENCE_ENERGY",
    "QMC_ENERGY", "bond_energy", "diagonal_rdm", "double_layer", "heisenberg_energy",
    "j1j2_energy", "neel_peps", "one_site_rdm", "random_c4v_peps", "staggered_magnetization",
    "symmetrize_c4v", "two_site_rdm",
}


def _public(module):
    """Public attributes that are not subpackages/submodules of ``module`` itself (those are
    set by Python's import system, e.g. ``tenferro._src.core``)."""
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


def _public_modules():
    """Every module of the public API: each file of the tenferro package outside ``_src``."""
    import importlib
    from pathlib import Path

    root = Path(tf.__file__).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if "_src" in parts:
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return [importlib.import_module(n) for n in names]


def test_every_public_module_shows_exactly_its_api():
    """``dir()`` of every public module is its ``__all__`` (plus dunder names): no helper
    modules, no ``np``, no ``annotations``, nothing internal, and every listed name exists."""
    mods = _public_modules()
    assert {m.__name__ for m in mods} >= {
        "tenferro", "tenferro.linalg", "tenferro.tn", "tenferro.symmetric", "tenferro.nn",
        "tenferro.nn.functional", "tenferro.optim", "tenferro.fft", "tenferro.special",
        "tenferro.lax", "tenferro.errors", "tenferro.pytree", "tenferro.caches",
        "tenferro.testing", "tenferro.autograd", "tenferro.distributed", "tenferro.signal",
        "tenferro.integrate", "tenferro.stats", *(f"tenferro.stats.{d}" for d in STATS)}
    for m in mods:
        shown = {n for n in dir(m) if not n.startswith("_")}
        assert shown == set(m.__all__), (m.__name__, shown ^ set(m.__all__))
        assert len(m.__all__) == len(set(m.__all__)), m.__name__
        for name in m.__all__:
            assert hasattr(m, name), f"{m.__name__}.{name}"
            value = getattr(m, name)
            if isinstance(value, types.ModuleType):  # a public submodule is a public module
                assert value.__name__ == f"{m.__name__}.{name}", (m.__name__, name)


def test_tenferro_exports_exactly_the_api():
    api = TENFERRO | NUMPY_SURFACE | TORCH_SURFACE | ARRAY_API
    assert set(tf.__all__) == api
    assert _public(tf) == api


def test_linalg_exports_exactly_the_api():
    assert set(tenferro._src.linalg.__all__) == LINALG | LINALG_ARRAY_API
    assert _public(tenferro.linalg) == LINALG | LINALG_ARRAY_API


def _doc(value) -> str:
    if isinstance(value, property):
        value = value.fget
    return (getattr(value, "__doc__", None) or "").strip()


def test_every_public_function_is_documented():
    """Every public callable of every public namespace has a docstring of its own."""
    modules = (tf, tenferro.linalg, tenferro.nn, tenferro.nn.functional, tenferro.optim,
               tenferro.fft, tenferro.special, tenferro.autograd, tenferro.signal,
               tenferro.integrate, *(getattr(tenferro.stats, d) for d in STATS))
    missing = []
    for module in modules:
        for name in sorted(module.__all__):
            value = getattr(module, name)
            if isinstance(value, types.ModuleType) or isinstance(value, type(tf.float64)):
                continue
            if callable(value) and not _doc(value):
                missing.append(f"{module.__name__}.{name}")
    assert not missing, missing


def test_tensor_methods_are_documented():
    """The ``Tensor`` surface shared by eager and traced tensors: every public method and
    property says what it is (and, for PyTorch spellings, how it relates to NumPy's)."""
    for cls in (tf.Tensor, tf.EagerTensor):
        missing = [n for n, v in vars(cls).items()
                   if not n.startswith("_") and callable(getattr(v, "fget", v)) and not _doc(v)]
        assert not missing, (cls.__name__, missing)


NON_SMOOTH = (
    "abs", "amax", "amin", "argsort", "ceil", "clamp", "clip", "fabs", "floor", "fmax", "fmin",
    "max", "min", "mod", "nan_to_num", "norm", "relu", "remainder", "round", "sign", "sort",
    "topk", "trunc", "maximum", "minimum", "where",
)


def test_non_smooth_functions_state_their_convention():
    """Functions with points where no derivative exists say what tenferro returns there."""
    words = ("derivative", "gradient", "subgradient", "tie", "cotangent")
    vague = [n for n in NON_SMOOTH if not any(w in _doc(getattr(tf, n)).lower() for w in words)]
    assert not vague, vague


TORCH_NON_SMOOTH = ("relu", "leaky_relu", "elu", "l1_loss", "huber_loss", "smooth_l1_loss",
                    "max_pool2d", "max_pool1d")


def test_nn_non_smooth_functions_state_their_convention():
    import tenferro.nn.functional as F

    words = ("derivative", "gradient", "subgradient", "tie", "sign(0)")
    names = [n for n in TORCH_NON_SMOOTH if hasattr(F, n)]
    vague = [n for n in names if not any(w in _doc(getattr(F, n)).lower() for w in words)]
    assert not vague, vague


FFT = {
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "ifft", "ifft2", "ifftn", "ifftshift", "irfft",
    "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
    "hfft", "ihfft",  # the array API's fft extension
}
SPECIAL = {
    "digamma", "erf", "erfc", "erfinv", "expit", "gammaln", "logit", "logsumexp", "polygamma",
    "xlogy",
    # the gamma and beta families, incomplete functions, Bessel functions (design/numpy-surface.md)
    "beta", "betainc", "betaincc", "betaln", "erfcinv", "gamma", "gammainc", "gammaincc",
    "gammasgn", "i0", "i1", "iv", "ive", "j0", "j1", "jn", "multigammaln", "psi", "rgamma",
    "xlog1py", "y0", "y1", "yn",
}
_CONT = {"logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"}
_DISC = {"logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"}
# tenferro.stats: one public module per distribution, SciPy's function names
STATS = {
    "norm": _CONT | {"ppf", "isf"}, "t": _CONT, "gamma": _CONT, "chi2": _CONT, "beta": _CONT,
    "expon": _CONT | {"ppf", "isf"}, "laplace": _CONT | {"ppf", "isf"},
    "logistic": _CONT | {"ppf", "isf"}, "uniform": _CONT | {"ppf", "isf"},
    "cauchy": _CONT | {"ppf", "isf"}, "poisson": _DISC, "binom": _DISC,
    "bernoulli": _DISC | {"ppf"}, "multivariate_normal": {"logpdf", "pdf"},
    "dirichlet": {"logpdf", "pdf"},
}


SIGNAL = {"convolve", "correlate"}
INTEGRATE = {"odeint"}


def test_fft_special_signal_and_integrate_export_exactly_the_api():
    for module, names in ((tenferro.fft, FFT), (tenferro.special, SPECIAL),
                          (tenferro.signal, SIGNAL), (tenferro.integrate, INTEGRATE)):
        assert set(module.__all__) == names
        for n in names:
            assert getattr(module, n).__doc__, f"{module.__name__}.{n} has no docstring"


def test_stats_exports_exactly_the_distributions():
    assert set(tenferro.stats.__all__) == set(STATS)
    for name, fns in STATS.items():
        module = getattr(tenferro.stats, name)
        assert module.__name__ == f"tenferro.stats.{name}"
        assert set(module.__all__) == fns, name
        assert _public(module) == fns, name


def test_nn_and_optim_export_exactly_the_api():
    assert set(tenferro.nn.__all__) == NN
    assert _public(tenferro.nn) == NN
    assert set(tenferro.nn.functional.__all__) == NN_FUNCTIONAL
    assert _public(tenferro.nn.functional) == NN_FUNCTIONAL
    assert set(tenferro._src.optim.__all__) == OPTIM
    assert _public(tenferro.optim) == OPTIM
    assert _public(tenferro.optim.lr_scheduler) == LR_SCHEDULER
    assert _public(tenferro.nn.utils) == NN_UTILS


def test_every_nn_and_optim_name_is_documented():
    for module, names in ((tenferro.nn, NN), (tenferro.nn.functional, NN_FUNCTIONAL),
                          (tenferro.optim, OPTIM), (tenferro.optim.lr_scheduler, LR_SCHEDULER),
                          (tenferro.nn.utils, NN_UTILS)):
        for name in names:
            doc = getattr(module, name).__doc__
            assert doc and len(doc.strip()) > 20, f"{module.__name__}.{name} has no docstring"


def test_symmetric_exports_exactly_the_api():
    import tenferro.symmetric

    assert set(tenferro._src.symmetric.__all__) == SYMMETRIC
    assert _public(tenferro.symmetric) == SYMMETRIC
    for name in SYMMETRIC:
        value = getattr(tenferro.symmetric, name)
        if callable(value):
            doc = value.__doc__
            assert doc and len(doc.strip()) > 20, f"tenferro.symmetric.{name} has no docstring"


def test_distributed_exports_exactly_the_api():
    # importable without Dask installed: Dask is imported only when a client is needed
    assert set(tenferro._src.distributed.__all__) == DISTRIBUTED
    assert _public(tenferro.distributed) == DISTRIBUTED
    for name in DISTRIBUTED:
        doc = getattr(tenferro.distributed, name).__doc__
        assert doc and len(doc.strip()) > 20, f"tenferro.distributed.{name} has no docstring"


def test_tn_peps_exports_exactly_the_api():
    import tenferro.tn
    import tenferro.tn.peps

    assert set(tenferro.tn.peps.__all__) == TN_PEPS
    # one bond operator for chains and PEPS; tn exports every name once
    assert tenferro._src.tn.peps.heisenberg_bond is tenferro.tn.heisenberg_bond
    assert len(tenferro.tn.__all__) == len(set(tenferro.tn.__all__))
    for name in TN_PEPS:
        assert getattr(tenferro.tn, name) is getattr(tenferro.tn.peps, name)
        value = getattr(tenferro.tn.peps, name)
        if callable(value):
            doc = value.__doc__
            assert doc and len(doc.strip()) > 20, f"tenferro.tn.peps.{name} has no docstring"


TN_UNITCELL = {
    # tenferro._src.tn.ctmrg_directional, tenferro._src.tn.ctmrg_gauge
    "DirectionalEnv", "ctm_directional_gauge_fix", "ctm_directional_init",
    "ctm_directional_lnz", "ctm_directional_step", "ctmrg_directional", "rotate_cell",
    # tenferro.tn.ipeps
    "bond_rdms", "random_unitcell_peps", "tile_unitcell", "unitcell_double_layers",
    "unitcell_energy", "IPEPSResult", "optimize",
}


def test_tn_unitcell_ipeps_exports_exactly_the_api():
    import sys

    import tenferro.tn

    modules = [sys.modules[f"tenferro._src.tn.{m}"] for m in ("ctmrg_directional", "ctmrg_gauge",
                                                               "ctmrg_moves", "ipeps")]
    assert set().union(*[m.__all__ for m in modules]) == TN_UNITCELL
    assert TN_UNITCELL <= set(tenferro.tn.__all__) and "ipeps" in tenferro.tn.__all__
    for name in TN_UNITCELL:
        doc = getattr(tenferro.tn, name).__doc__
        assert doc and len(doc.strip()) > 20, f"tenferro.tn.{name} has no docstring"


def test_literal_all_lists_are_the_union_of_their_modules():
    """Packages that gather their modules' names by star imports list them again, literally,
    in ``__all__`` (the form type checkers read, tests/typing): that list is exactly the union
    of the star-imported modules' ``__all__`` plus the public submodules it names."""
    import ast
    import importlib
    from pathlib import Path

    root = Path(tf.__file__).parent / "_src"
    checked = 0
    for init in sorted(root.rglob("__init__.py")):
        pkg = ".".join(init.relative_to(root.parents[1]).parent.parts)
        tree = ast.parse(init.read_text())
        starred = [n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1
                   and n.module and any(a.name == "*" for a in n.names)]
        if not starred:
            continue
        module = importlib.import_module(pkg)
        union = set().union(*(importlib.import_module(f"{pkg}.{m}").__all__ for m in starred))
        submodules = {n for n in module.__all__
                      if isinstance(getattr(module, n), types.ModuleType)}
        assert set(module.__all__) == union | submodules, (pkg, set(module.__all__) ^ union)
        assert isinstance(ast.literal_eval(next(
            n.value for n in tree.body if isinstance(n, ast.Assign)
            and any(getattr(t, "id", None) == "__all__" for t in n.targets))), list), pkg
        checked += 1
    assert checked >= 3
