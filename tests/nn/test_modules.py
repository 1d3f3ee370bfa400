"""tenferro.nn modules: registration, traversal, state dicts, modes, the functional call under
grad/jit, and layers against PyTorch's (same weights, values and gradients at 1e-12)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import tenferro as tf
import tenferro.nn.functional as F
from tenferro import nn
from tenferro.errors import DTypeError, ShapeError
from tests import skips
from tests.nn._util import assert_close


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.norm = nn.BatchNorm2d(3)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(3 * 2 * 2, 4), nn.GELU())
        self.scale = nn.Parameter(tf.tensor(0.5))
        self.register_buffer("offset", tf.tensor([1.0, 2.0, 3.0, 4.0]))
        self.not_a_parameter = tf.ones(2)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.norm(self.conv(x))), 2)
        return self.head(h) * self.scale + self.offset


def test_registration_and_traversal():
    tf.manual_seed(0)
    m = Block()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["scale", "conv.weight", "conv.bias", "norm.weight", "norm.bias",
                     "head.1.weight", "head.1.bias"]
    assert [n for n, _ in m.named_buffers()] == [
        "offset", "norm.running_mean", "norm.running_var", "norm.num_batches_tracked"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in m.parameters())
    assert not isinstance(m.not_a_parameter, nn.Parameter)
    assert not isinstance(tf.ones(2), nn.Parameter)
    assert [type(c).__name__ for c in m.children()] == ["Conv2d", "BatchNorm2d", "Sequential"]
    assert len(list(m.modules())) == 7
    assert isinstance(m.head[1], nn.Linear) and len(m.head) == 3
    # reassigning a parameter name needs a Parameter; shared modules are listed once
    with pytest.raises(DTypeError, match="Parameter"):
        m.scale = tf.tensor(1.0)
    shared = nn.Linear(2, 2)
    twice = nn.Sequential(shared, shared)
    assert len(list(twice.parameters())) == 2
    del m.scale
    assert "scale" not in dict(m.named_parameters())


def test_module_without_super_init_is_a_clear_error():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tf.ones(2))

    with pytest.raises(AttributeError, match="super"):
        Bad()


def test_state_dict_round_trip_keeps_identities():
    tf.manual_seed(1)
    a, b = Block(), Block()
    sd = a.state_dict()
    assert list(sd) == ["scale", "offset", "conv.weight", "conv.bias", "norm.weight",
                        "norm.bias", "norm.running_mean", "norm.running_var",
                        "norm.num_batches_tracked", "head.1.weight", "head.1.bias"]
    before = list(b.parameters())
    b.load_state_dict(sd)
    assert all(p is q for p, q in zip(before, b.parameters()))
    for k, v in b.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy())
    # NumPy values load too; strictness
    b.load_state_dict({k: v.numpy() for k, v in sd.items()})
    with pytest.raises(KeyError, match="missing"):
        b.load_state_dict({"scale": 1.0})
    res = b.load_state_dict({"scale": np.array(2.0), "extra": 1}, strict=False)
    assert res.unexpected_keys == ["extra"] and "conv.weight" in res.missing_keys
    assert b.scale.item() == 2.0
    with pytest.raises(ShapeError, match="conv.weight"):
        b.load_state_dict({**sd, "conv.weight": np.ones((1, 1))})


def test_train_eval_zero_grad_and_apply():
    tf.manual_seed(2)
    m = Block()
    m.eval()
    assert not m.training and not m.head[1].training
    m.train()
    assert m.norm.training
    x = tf.randn(2, 2, 4, 4)
    tf.sum(m(x)).backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen[-1] == "Block" and "Linear" in seen
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_functional_call_is_grad_and_jit_ready():
    """The same gradients from the tape, from grad(functional_call) and from
    jit(grad(functional_call)); the module's own tensors are untouched afterwards."""
    tf.manual_seed(3)
    m = Block().eval()
    x = tf.randn(3, 2, 4, 4)
    y = tf.tensor([0, 3, 1])

    def loss(params, x):
        return F.cross_entropy(nn.functional_call(m, params, (x,)), y)

    params = {k: p.detach() for k, p in m.named_parameters()}
    g = tf.grad(loss)(params, x)
    gj = tf.jit(tf.grad(loss))(params, x)
    F.cross_entropy(m(x), y).backward()
    for k, p in m.named_parameters():
        assert_close(g[k].numpy(), p.grad.numpy(), k, rtol=1e-14)
        assert_close(gj[k].numpy(), p.grad.numpy(), k, rtol=1e-13)
    assert all(isinstance(p, nn.Parameter) for p in m.parameters())
    # buffers can be replaced too; unknown names are an error
    out = nn.functional_call(m, {"offset": tf.zeros(4)}, x)
    assert_close(out.detach().numpy(), (m(x) - m.offset).detach().numpy(), rtol=1e-14)
    with pytest.raises(KeyError, match="not parameters"):
        nn.functional_call(m, {"nope": tf.zeros(1)}, x)
    with pytest.raises(KeyError, match="strict"):
        nn.functional_call(m, {"scale": tf.zeros(())}, x, strict=True)


def test_batchnorm_module_running_stats_and_modes_match_torch():
    torch = skips.torch()
    rng = np.random.default_rng(4)
    ours, ref = nn.BatchNorm2d(3, momentum=None), torch.nn.BatchNorm2d(3, momentum=None).double()
    for _ in range(3):
        x = rng.standard_normal((4, 3, 2, 2))
        assert_close(ours(tf.tensor(x)), ref(torch.tensor(x)))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        assert_close(getattr(ours, name).numpy(), getattr(ref, name).numpy(), name)
    ours.eval()
    ref.eval()
    x = rng.standard_normal((2, 3, 2, 2))
    assert_close(ours(tf.tensor(x)), ref(torch.tensor(x)))


LAYERS = [
    ("Linear", lambda nn: nn.Linear(5, 3), (2, 5)),
    ("Conv1d", lambda nn: nn.Conv1d(2, 4, 3, stride=2, padding=1), (2, 2, 7)),
    ("Conv2d", lambda nn: nn.Conv2d(4, 6, (3, 2), padding="same", groups=2, dilation=2),
     (2, 4, 6, 5)),
    ("LayerNorm", lambda nn: nn.LayerNorm(4), (3, 2, 4)),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(4), (5, 4)),
    ("Sequential", lambda nn: nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Dropout(0.0),
                                            nn.Linear(6, 2), nn.LogSoftmax(dim=1)), (3, 4)),
    ("Pooling", lambda nn: nn.Sequential(nn.MaxPool2d(2), nn.AvgPool2d(2, stride=1),
                                         nn.AdaptiveAvgPool2d((2, 1)), nn.Flatten(),
                                         nn.SiLU(), nn.ELU(), nn.Softplus(), nn.Sigmoid()),
     (2, 3, 8, 6)),
    ("Activations", lambda nn: nn.Sequential(nn.LeakyReLU(0.1), nn.ReLU(), nn.Identity(),
                                             nn.Softmax(dim=-1)), (3, 4)),
]


@pytest.mark.parametrize("name,make,shape", LAYERS, ids=[c[0] for c in LAYERS])
def test_layers_match_torch_with_the_same_weights(name, make, shape):
    torch = skips.torch()
    ref = make(torch.nn).double()
    ours = make(nn)
    ours.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    x = np.random.default_rng(5).standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    want = ref(tx)
    ct = np.random.default_rng(6).standard_normal(tuple(want.shape))
    (want * torch.tensor(ct)).sum().backward()
    ox = tf.tensor(x, requires_grad=True)
    got = ours(ox)
    tf.sum(got * tf.tensor(ct)).backward()
    assert_close(got.detach().numpy(), want.detach().numpy(), "value")
    assert_close(ox.grad.numpy(), tx.grad.numpy(), "input gradient")
    grads = {k: p.grad for k, p in ref.named_parameters()}
    for k, p in ours.named_parameters():
        assert_close(p.grad.numpy(), grads[k].numpy(), k)


def test_loss_modules_and_embedding_match_functional():
    rng = np.random.default_rng(7)
    x = tf.tensor(rng.standard_normal((4, 3)))
    t = tf.tensor([0, 2, 1, 1])
    w = tf.tensor([1.0, 2.0, 0.5])
    assert_close(nn.CrossEntropyLoss(weight=w, label_smoothing=0.1)(x, t).numpy(),
                 F.cross_entropy(x, t, w, label_smoothing=0.1).numpy(), rtol=0)
    assert_close(nn.MSELoss(reduction="sum")(x, x * 2).numpy(),
                 F.mse_loss(x, x * 2, "sum").numpy(), rtol=0)
    p = tf.sigmoid(x)
    for mod, fn in ((nn.BCELoss(), F.binary_cross_entropy),
                    (nn.BCEWithLogitsLoss(), F.binary_cross_entropy_with_logits)):
        assert_close(mod(p, p * 0.5).numpy(), fn(p, p * 0.5).numpy(), rtol=0)
    for mod, fn in ((nn.L1Loss(), F.l1_loss), (nn.HuberLoss(), F.huber_loss)):
        assert_close(mod(x, p).numpy(), fn(x, p).numpy(), rtol=0)
    assert_close(nn.NLLLoss()(F.log_softmax(x, 1), t).numpy(),
                 F.nll_loss(F.log_softmax(x, 1), t).numpy(), rtol=0)
    tf.manual_seed(8)
    e = nn.Embedding(6, 3, padding_idx=0)
    np.testing.assert_array_equal(e.weight.numpy()[0] if not e.weight.requires_grad
                                  else e.weight.detach().numpy()[0], 0.0)
    frozen = nn.Embedding.from_pretrained(e.weight.detach())
    assert not frozen.weight.requires_grad
    assert_close(frozen(t).numpy(), e(t).detach().numpy(), rtol=0)


def test_module_to_dtype_and_containers():
    m = nn.Sequential(OrderedDict([("a", nn.Linear(2, 2)), ("b", nn.ReLU())]))
    assert isinstance(m.a, nn.Linear)
    m.to(tf.float32)
    assert m.a.weight.dtype == np.float32 and isinstance(m.a.weight, nn.Parameter)
    assert m(tf.ones((1, 2), dtype=tf.float32)).dtype == np.float32
    ml = nn.ModuleList([nn.Linear(1, 1)]).append(nn.Linear(1, 2))
    assert len(ml) == 2 and len(list(ml.parameters())) == 4
    md = nn.ModuleDict({"x": nn.Linear(1, 1)})
    md["y"] = nn.Tanh()
    assert list(md.keys()) == ["x", "y"] and len(md) == 2
    assert "Linear(in_features=2, out_features=2, bias=True)" in repr(m)
