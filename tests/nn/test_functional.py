"""tenferro.nn.functional against torch.nn.functional (values and gradients at 1e-12, float64)
and against finite differences; conventions at non-differentiable points; errors."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro.nn.functional as F
from tests import skips
from tests.nn._util import (
    Const,
    assert_finite_differences,
    assert_matches_torch,
)

R = np.random.default_rng(2024)


def _a(*shape, scale=1.0):
    return R.standard_normal(shape) * scale


def _p(*shape):
    return R.random(shape) * 0.9 + 0.05


def _idx(high, *shape, ignore=None):
    t = R.integers(0, high, shape)
    if ignore is not None:
        t.flat[1] = ignore
    return t


def _probs(*shape):
    p = R.random(shape)
    return p / p.sum(1, keepdims=True)


X4 = _a(2, 3, 7, 6)
W4 = _a(4, 3, 3, 2)
WG = _a(6, 1, 3, 3)
LOGITS = _a(5, 7, scale=2.0)

# (name, fn(F, *inputs), inputs): fn is written once and run with tenferro's and PyTorch's F
CASES = [
    ("linear", lambda F, x, w, b: F.linear(x, w, b), [_a(2, 3, 5), _a(4, 5), _a(4)]),
    ("relu", lambda F, x: F.relu(x), [_a(4, 6)]),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2), [_a(4, 6)]),
    ("elu", lambda F, x: F.elu(x, 1.3), [_a(4, 6)]),
    ("gelu", lambda F, x: F.gelu(x), [_a(4, 6, scale=2.0)]),
    ("gelu_tanh", lambda F, x: F.gelu(x, approximate="tanh"), [_a(4, 6, scale=2.0)]),
    ("silu", lambda F, x: F.silu(x), [_a(4, 6)]),
    ("softplus", lambda F, x: F.softplus(x, beta=2.0, threshold=3.0), [_a(4, 6, scale=2.0)]),
    ("sigmoid_tanh", lambda F, x: F.sigmoid(x) * F.tanh(x), [_a(4, 6)]),
    ("logsigmoid", lambda F, x: F.logsigmoid(x), [_a(4, 6, scale=3.0)]),
    ("softmax", lambda F, x: F.softmax(x, dim=1), [_a(4, 6)]),
    ("log_softmax", lambda F, x: F.log_softmax(x, dim=0), [_a(4, 6)]),
    ("normalize", lambda F, x: F.normalize(x, dim=1), [_a(3, 4, 2)]),
    ("embedding", lambda F, w, i: F.embedding(i, w), [_a(7, 3), _idx(7, 3, 4)]),
    ("embedding_padding", lambda F, w, i: F.embedding(i, w, padding_idx=2),
     [_a(7, 3), np.array([[2, 1, 2], [0, 2, 6]])]),
    ("mse_loss", lambda F, x, y: F.mse_loss(x, y), [_a(5, 3), _a(5, 3)]),
    ("l1_loss", lambda F, x, y: F.l1_loss(x, y, reduction="sum"), [_a(5, 3), _a(5, 3)]),
    ("huber_loss", lambda F, x, y: F.huber_loss(x, y, reduction="none", delta=0.7),
     [_a(5, 3), _a(5, 3)]),
    ("smooth_l1_loss", lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.5), [_a(5, 3), _a(5, 3)]),
    ("nll_loss", lambda F, x, t, w: F.nll_loss(F.log_softmax(x, 1), t, weight=w),
     [LOGITS, _idx(7, 5, ignore=-100), Const(R.random(7))]),
    ("cross_entropy", lambda F, x, t: F.cross_entropy(x, t), [LOGITS, _idx(7, 5)]),
    ("cross_entropy_ignore_smooth",
     lambda F, x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=3, label_smoothing=0.2),
     [LOGITS, _idx(7, 5, ignore=3), Const(R.random(7))]),
    ("cross_entropy_sum_smooth",
     lambda F, x, t: F.cross_entropy(x, t, reduction="sum", label_smoothing=0.1),
     [LOGITS, _idx(7, 5)]),
    ("cross_entropy_none_spatial",
     lambda F, x, t: F.cross_entropy(x, t, reduction="none", label_smoothing=0.3),
     [_a(2, 5, 3, 4), _idx(5, 2, 3, 4)]),
    ("cross_entropy_probs",
     lambda F, x, p, w: F.cross_entropy(x, p, weight=w, label_smoothing=0.1),
     [LOGITS, _probs(5, 7), Const(R.random(7))]),
    ("binary_cross_entropy", lambda F, x, y, w: F.binary_cross_entropy(x, y, weight=w),
     [_p(4, 3), R.random((4, 3)), Const(R.random((4, 3)))]),
    ("bce_with_logits",
     lambda F, x, y, pw: F.binary_cross_entropy_with_logits(x, y, pos_weight=pw),
     [_a(4, 3, scale=3.0), R.random((4, 3)), Const(R.random(3) + 0.5)]),
    ("kl_div", lambda F, x, p: F.kl_div(F.log_softmax(x, 1), p, reduction="batchmean"),
     [LOGITS, _probs(5, 7)]),
    ("layer_norm", lambda F, x, w, b: F.layer_norm(x, (3, 4), w, b),
     [_a(2, 5, 3, 4), _a(3, 4), _a(3, 4)]),
    ("group_norm", lambda F, x, w, b: F.group_norm(x, 2, w, b),
     [_a(2, 4, 3, 3), _a(4), _a(4)]),
    ("batch_norm_train", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     [_a(3, 4, 2, 2), _a(4), _a(4)]),
    ("batch_norm_eval", lambda F, x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
     [_a(3, 4, 2, 2), Const(_a(4)), Const(R.random(4) + 0.5), _a(4), _a(4)]),
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, padding="same", dilation=2),
     [_a(2, 3, 9), _a(2, 3, 4), _a(2)]),
    ("conv2d", lambda F, x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2)),
     [X4, W4, _a(4)]),
    ("conv2d_groups", lambda F, x, w: F.conv2d(x, w, groups=3, padding="same"), [X4, WG]),
    ("conv2d_unbatched", lambda F, x, w: F.conv2d(x, w, stride=2), [X4[0], W4]),
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 2), [X4]),
    ("max_pool2d_pad_ceil",
     lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), [X4]),
    ("max_pool2d_dilation", lambda F, x: F.max_pool2d(x, (2, 3), stride=1, dilation=2), [X4]),
    ("max_pool1d", lambda F, x: F.max_pool1d(x, 3, stride=2, padding=1), [_a(2, 3, 9)]),
    ("avg_pool2d", lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1), [X4]),
    ("avg_pool2d_exclude_pad_ceil",
     lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                               count_include_pad=False), [X4]),
    ("avg_pool1d", lambda F, x: F.avg_pool1d(x, 2), [_a(2, 3, 9)]),
    ("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)), [X4]),
    ("adaptive_avg_pool2d_keep", lambda F, x: F.adaptive_avg_pool2d(x, (5, None)), [X4]),
    ("adaptive_avg_pool1d", lambda F, x: F.adaptive_avg_pool1d(x, 4), [_a(2, 3, 9)]),
    ("pad", lambda F, x: F.pad(x, (1, 2, 0, 1), value=0.5), [_a(2, 3, 4)]),
    ("pad_crop", lambda F, x: F.pad(x, (-1, 2, 1, -1)), [_a(2, 3, 4)]),
    ("kl_div_log_target", lambda F, x, q: F.kl_div(F.log_softmax(x, 1), F.log_softmax(q, 1),
                                                   reduction="sum", log_target=True),
     [LOGITS, _a(5, 7)]),
    ("cross_entropy_unbatched", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.2),
     [_a(7), np.array(3)]),
    ("sdpa", lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v),
     [_a(2, 3, 5, 4), _a(2, 3, 6, 4), _a(2, 3, 6, 2)]),
    ("sdpa_causal", lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     [_a(2, 5, 4), _a(2, 5, 4), _a(2, 5, 3)]),
    ("sdpa_bool_mask",
     lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
     [_a(2, 5, 4), _a(2, 6, 4), _a(2, 6, 3),
      np.concatenate([np.ones((5, 1), bool), R.random((5, 5)) > 0.4], 1)]),
    ("sdpa_float_mask_scale",
     lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3),
     [_a(2, 5, 4), _a(2, 6, 4), _a(2, 6, 3), _a(5, 6)]),
]
IDS = [c[0] for c in CASES]
FD_ORDER2 = {"gelu", "softplus", "layer_norm", "conv2d", "sdpa_causal", "cross_entropy",
             "batch_norm_train"}


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=IDS)
def test_matches_torch(name, fn, arrays):
    TF = skips.torch("torch.nn.functional")  # noqa: N806
    assert_matches_torch(lambda *xs: fn(F, *xs), lambda *xs: fn(TF, *xs), arrays)


# the padding row of an embedding gets no gradient by convention (finite differences see its
# true derivative): tested separately below
FD_CASES = [c for c in CASES if c[0] != "embedding_padding"]


@pytest.mark.parametrize("name,fn,arrays", FD_CASES, ids=[c[0] for c in FD_CASES])
def test_finite_differences(name, fn, arrays):
    assert_finite_differences(lambda *xs: fn(F, *xs), arrays,
                              order=2 if name in FD_ORDER2 else 1)
