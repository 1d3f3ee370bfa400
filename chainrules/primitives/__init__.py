"""Every primitive, with its rules next to it. Import names end in ``_p``."""

from .conv import col2im_p, im2col_p
from .dot import dot_general_p
from .eig import eig_p
from .elementwise import (
    abs_p,
    add_p,
    arccos_p,
    arccosh_p,
    arcsin_p,
    arcsinh_p,
    arctan_p,
    arctanh_p,
    atan2_p,
    ceil_p,
    clamp_p,
    conj_p,
    convert_element_type_p,
    copy_p,
    cos_p,
    cosh_p,
    device_put_p,
    div_p,
    eq_p,
    exp2_p,
    exp_p,
    expm1_p,
    floor_divide_p,
    floor_p,
    fmod_p,
    full_p,
    ge_p,
    gt_p,
    imag_p,
    iota_p,
    isfinite_p,
    isnan_p,
    le_p,
    log1p_p,
    log2_p,
    log10_p,
    log_p,
    logical_and_p,
    logical_not_p,
    logical_or_p,
    lt_p,
    maximum_p,
    minimum_p,
    mul_p,
    ne_p,
    neg_p,
    pow_p,
    pow_scalar_p,
    real_p,
    remainder_p,
    round_p,
    rsqrt_p,
    select_p,
    sign_p,
    sin_p,
    sinh_p,
    sqrt_p,
    square_p,
    stop_gradient_p,
    sub_p,
    tan_p,
    tanh_p,
    trunc_p,
)
from .fft import fft_p, irfft_p, rfft_p
from .indexing import basic_index_p, basic_index_transpose_p, gather_p, scatter_add_p
from .linalg import *  # noqa: F401,F403  (decompositions, solves, expm)
from .reductions import (
    argmax_p,
    argmin_p,
    cumsum_p,
    reduce_max_p,
    reduce_min_p,
    reduce_prod_p,
    reduce_sum_p,
)
from .shape import (
    broadcast_in_dim_p,
    concatenate_p,
    diag_embed_p,
    diagonal_p,
    flip_p,
    pad_p,
    reshape_p,
    slice_p,
    transpose_p,
    tril_p,
    triu_p,
)
from .sorting import argsort_p, sort_p
from .special import erf_p, erfc_p, erfinv_p, gammaln_p, polygamma_p, xlogy_p

__all__ = [n for n in dir() if n.endswith("_p")]

from . import batch_linalg as _batch_linalg  # noqa: E402,F401  (batching rules of linalg)
