"""Ten PyTorch eager-autograd programs, written once against PyTorch's names.

Each ``program(lib, nn, F, optim, fcall, data)`` is plain PyTorch code in which the modules are
parameters: run with ``(torch, torch.nn, torch.nn.functional, torch.optim,
torch.func.functional_call)`` it is the PyTorch original; with ``(tenferro, tenferro.nn,
tenferro.nn.functional, tenferro.optim, tenferro.nn.functional_call)`` it is the port, every
name resolved in tenferro. There is one body per program and no workaround: every spelling is
PyTorch's (``x.size(0)``, ``x.flatten(1)``, ``keepdim=``, ``x.pow``, ``lib.cat``, ``x.t()``,
``x.transpose(-2, -1)``, ``masked_fill``, ``gather``, ``index_select``, ``topk``, ``bmm``,
``expand``, ``clamp_`` and ``mul_`` on non-leaves, ``p.data``, ``lib.autograd.grad``,
``lib.autograd.Function``).

A program returns ``(outputs, objective, params)``: ``outputs`` maps names to tensors (losses,
parameters, gradients) compared between the libraries; ``objective(params) -> loss`` is the
differentiable function whose gradient the program's last step used and ``params`` its inputs
there (a dict), which the finite-difference checks use.
"""

from __future__ import annotations

import zlib

import numpy as np

# ----------------------------------------------------------------------------- data


def make_data(name: str) -> dict:
    """Deterministic inputs and initial weights (NumPy) shared by both libraries."""
    r = np.random.default_rng(zlib.crc32(name.encode()))
    n = r.standard_normal
    d: dict = {}
    if name == "mlp_sgd":
        d["x"], d["y"] = n((32, 4)), r.integers(0, 3, 32)
        d["init"] = {"0.weight": n((16, 4)) * 0.5, "0.bias": n(16) * 0.1,
                     "2.weight": n((3, 16)) * 0.3, "2.bias": n(3) * 0.1}
    elif name == "embedding_classifier":
        tokens = r.integers(1, 20, (12, 6))
        tokens[:, 4:][r.random((12, 2)) < 0.5] = 0  # padding
        d["tokens"], d["y"] = tokens, r.integers(0, 4, 12)
        d["y"][2] = -1  # ignored example
        d["init"] = {"emb.weight": n((20, 8)), "fc.weight": n((4, 8)) * 0.3, "fc.bias": n(4) * 0.1}
        d["init"]["emb.weight"][0] = 0.0
    elif name == "activations_norms":
        d["x"], d["w"], d["g"], d["b"] = n((4, 6, 3, 3)), n((6,)), n((6,)) + 1, n((6,))
    elif name == "cnn":
        d["x"], d["y"] = n((6, 2, 8, 8)), r.integers(0, 5, 6)
        d["init"] = {"conv1.weight": n((4, 2, 3, 3)) * 0.3,
                     "bn.weight": 1 + 0.1 * n(4), "bn.bias": 0.1 * n(4),
                     "bn.running_mean": np.zeros(4), "bn.running_var": np.ones(4),
                     "bn.num_batches_tracked": np.array(0),
                     "conv2.weight": n((8, 2, 3, 3)) * 0.3, "conv2.bias": n(8) * 0.1,
                     "fc.weight": n((5, 8)) * 0.3, "fc.bias": n(5) * 0.1}
    elif name == "causal_attention":
        e = 8
        d["x"], d["y"] = n((3, 5, e)), r.integers(0, 6, (3, 5))
        d["init"] = {"qkv.weight": n((3 * e, e)) * 0.3,
                     "proj.weight": n((e, e)) * 0.3, "proj.bias": n(e) * 0.1,
                     "norm.weight": 1 + 0.1 * n(e), "norm.bias": 0.1 * n(e),
                     "head.weight": n((6, e)) * 0.3, "head.bias": n(6) * 0.1}
    elif name == "broadcasting":
        d["a"], d["b"], d["c"], d["s"] = n((3, 1, 4)), n((5, 1)), n((4,)), n(())
        d["m"], d["idx"] = n((3, 4, 2)), r.integers(0, 5, (3, 2, 4))
    elif name == "tape_semantics":
        d["x"], d["w"] = n((3, 4)), n((4,))
    elif name == "in_place":
        d["x"], d["w"], d["v"] = n((4, 3)), n((3, 3)), n((2,))
    elif name == "long_training":
        d["x"] = n((64, 3))
        d["y"] = np.sin(d["x"] @ np.array([1.0, -2.0, 0.5]))[:, None]
        d["init"] = {"0.weight": n((12, 3)) * 0.5, "0.bias": n(12) * 0.1,
                     "2.weight": n((1, 12)) * 0.3, "2.bias": n(1) * 0.1}
    elif name == "custom_function":
        d["x"], d["w"] = n((5, 3)), n((3, 3))
    else:  # pragma: no cover
        raise KeyError(name)
    return d


def _grads(model):
    return {f"grad:{k}": p.grad for k, p in model.named_parameters()}


def _params(model):
    return {f"param:{k}": p for k, p in model.named_parameters()}


def _detached(model):
    return {k: p.detach() for k, p in model.named_parameters()}


def _train(lib, model, opt, loss_of, inputs, steps):
    """``steps`` optimizer steps on ``loss_of(model(*inputs))``, then the gradient at the final
    parameters left in ``.grad``: (losses per step, the final loss) as PyTorch programs do."""
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_of(model(*inputs))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    opt.zero_grad()
    loss_of(model(*inputs)).backward()
    return lib.tensor(losses)


# ---------------------------------------------------------------------- 1. MLP + SGD
def mlp_sgd(lib, nn, F, optim, fcall, d):
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3)).double()
    model.load_state_dict({k: lib.tensor(v) for k, v in d["init"].items()})
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    x, y = lib.tensor(d["x"]), lib.tensor(d["y"])
    losses = _train(lib, model, opt, lambda out: F.cross_entropy(out, y), (x,), 15)
    out = {"losses": losses, **_params(model), **_grads(model)}
    return out, lambda p: F.cross_entropy(fcall(model, p, (x,)), y), _detached(model)


# -------------------------------------------------------------- 2. embedding classifier
class _BagOfEmbeddings:
    @staticmethod
    def build(nn, F):
        class Bag(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(20, 8, padding_idx=0)
                self.fc = nn.Linear(8, 4)

            def forward(self, tokens):
                e = self.emb(tokens)  # (B, T, E)
                mask = (tokens != 0).unsqueeze(-1)
                pooled = (e * mask).sum(1) / mask.sum(1)
                return self.fc(F.gelu(pooled))

        return Bag()


def embedding_classifier(lib, nn, F, optim, fcall, d):
    model = _BagOfEmbeddings.build(nn, F).double()
    model.load_state_dict({k: lib.tensor(v) for k, v in d["init"].items()})
    opt = optim.Adam(model.parameters(), lr=0.05)
    tokens, y = lib.tensor(d["tokens"]), lib.tensor(d["y"])

    def loss_of(logits):
        return F.cross_entropy(logits, y, ignore_index=-1, label_smoothing=0.1)

    losses = _train(lib, model, opt, loss_of, (tokens,), 10)
    out = {"losses": losses, **_params(model), **_grads(model)}
    return out, lambda p: loss_of(fcall(model, p, (tokens,))), _detached(model)


# ----------------------------------------------------------- 3. activations and norms
def activations_norms(lib, nn, F, optim, fcall, d):
    x = lib.tensor(d["x"], requires_grad=True)
    w = lib.tensor(d["w"], requires_grad=True)
    g = lib.tensor(d["g"], requires_grad=True)
    b = lib.tensor(d["b"], requires_grad=True)

    def f(p):
        x, w, g, b = p["x"], p["w"], p["g"], p["b"]
        h = F.gelu(x) + F.silu(x * 0.5) - F.elu(x, 0.7) + F.leaky_relu(x, 0.05)
        h = h + F.softplus(x, beta=2.0) * F.sigmoid(x) + F.tanh(x) * F.gelu(x, approximate="tanh")
        h = F.batch_norm(h, None, None, g, b, training=True)
        h = F.group_norm(h, 3, w, b) + F.layer_norm(h, h.shape[1:])
        h = F.log_softmax(h.flatten(1), dim=1)
        return -(h * x.flatten(1).softmax(1)).sum(dim=1).mean()

    loss = f({"x": x, "w": w, "g": g, "b": b})
    loss.backward()
    out = {"loss": loss, "grad:x": x.grad, "grad:w": w.grad, "grad:g": g.grad, "grad:b": b.grad}
    params = {k: v.detach() for k, v in (("x", x), ("w", w), ("g", g), ("b", b))}
    return out, f, params


# --------------------------------------------------------------------------- 4. CNN
def cnn(lib, nn, F, optim, fcall, d):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            # no bias before a batch norm: its gradient is exactly zero (rounding noise that
            # Adam would amplify into a random walk)
            self.conv1 = nn.Conv2d(2, 4, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
            x = F.adaptive_avg_pool2d(F.silu(self.conv2(x)), 1)
            return self.fc(x.reshape(x.size(0), -1))

    model = Net().double()
    model.load_state_dict({k: lib.tensor(v) for k, v in d["init"].items()})
    opt = optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.05)
    x, y = lib.tensor(d["x"]), lib.tensor(d["y"])
    losses = _train(lib, model, opt, lambda out: F.cross_entropy(out, y), (x,), 6)
    model.eval()
    with lib.no_grad():
        eval_logits = model(x)
    model.train()
    out = {"losses": losses, "eval_logits": eval_logits, **_params(model),
           **_grads(model), "running_mean": model.bn.running_mean,
           "running_var": model.bn.running_var}
    return out, lambda p: F.cross_entropy(fcall(model, p, (x,)), y), _detached(model)


# --------------------------------------------------------------- 5. causal attention
def causal_attention(lib, nn, F, optim, fcall, d):
    class Block(nn.Module):
        def __init__(self, e=8, heads=2):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(e, 3 * e, bias=False)  # a key bias has zero gradient
            self.proj = nn.Linear(e, e)
            self.norm = nn.LayerNorm(e)
            self.head = nn.Linear(e, 6)

        def forward(self, x):
            b, t, e = x.shape
            q, k, v = self.qkv(self.norm(x)).reshape(b, t, 3, self.heads, e // self.heads) \
                .permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.permute(0, 2, 1, 3).reshape(b, t, e))
            return self.head(x)

    model = Block().double()
    model.load_state_dict({k: lib.tensor(v) for k, v in d["init"].items()})
    opt = optim.AdamW(model.parameters(), lr=0.01)
    x, y = lib.tensor(d["x"]), lib.tensor(d["y"])

    def loss_of(logits):
        return F.cross_entropy(logits.reshape(-1, 6), y.reshape(-1))

    losses = _train(lib, model, opt, loss_of, (x,), 8)
    out = {"losses": losses, **_params(model), **_grads(model)}
    return out, lambda p: loss_of(fcall(model, p, (x,))), _detached(model)


# ------------------------------------------------------------------- 6. broadcasting
def broadcasting(lib, nn, F, optim, fcall, d):
    ps = {k: lib.tensor(d[k], requires_grad=True) for k in ("a", "b", "c", "s", "m")}
    idx = lib.tensor(d["idx"])

    def f(p):
        a, b, c, s, m = p["a"], p["b"], p["c"], p["s"], p["m"]
        x = a * b + c  # (3, 5, 4)
        y = x - x.mean(dim=1, keepdim=True) + s * c[None, None, :]
        z = (y / (1 + y.abs().sum(-1, keepdim=True))).unsqueeze(0) * b
        loss = z.pow(2).sum() + lib.where(x > 0, x, s).sum() + (a @ c[:, None]).sum()
        # PyTorch's shape and indexing spellings
        w = lib.bmm(x, m) + x.transpose(-2, -1)[:, :2, :].transpose(1, 2).sigmoid()  # (3, 5, 2)
        w = lib.cat([w, b.expand(3, -1, 2)], dim=2)  # (3, 5, 4)
        w = w.masked_fill(x < -1.0, 0.25).gather(1, idx)  # (3, 2, 4)
        top = w.flatten(1).topk(3, dim=1).values.relu()
        sel = x.index_select(1, lib.tensor([4, 0, 0]))  # (3, 3, 4)
        return (loss + (top * w.size(0)).sum() + sel.pow(3).mean()
                + m[0].t().sum(0).max(dim=0).values * x.dim())

    loss = f(ps)
    loss.backward()
    out = {"loss": loss, **{f"grad:{k}": v.grad for k, v in ps.items()}}
    return out, f, {k: v.detach() for k, v in ps.items()}


# ------------------------------------------------------------------ 7. tape semantics
def tape_semantics(lib, nn, F, optim, fcall, d):
    x = lib.tensor(d["x"], requires_grad=True)
    w = lib.tensor(d["w"], requires_grad=True)
    out = {}

    def f(p):
        return lib.tanh(p["x"] @ p["w"]).pow(2).sum()

    # retain_graph: two backward passes through one graph accumulate into .grad
    h = lib.tanh(x @ w)
    loss = (h**2).sum()
    loss.backward(retain_graph=True)
    out["grad:x"], out["grad:w"] = x.grad.clone(), w.grad.clone()
    loss.backward()
    out["grad_twice"] = x.grad.clone()
    # reset, and a backward with an explicit cotangent on a non-scalar output
    x.grad = None
    w.grad = None
    h = lib.tanh(x @ w)
    h.backward(lib.ones_like(h) * 0.5)
    out["grad_ct"] = x.grad.clone()
    # nothing recorded under no_grad; detach cuts the graph
    with lib.no_grad():
        y = x * 2
    out["no_grad_requires_grad"] = lib.tensor(float(y.requires_grad))
    z = (x.detach() * w).sum()
    out["detach_requires_grad"] = lib.tensor(float(z.requires_grad))
    # the gradient of an intermediate
    h = x @ w
    loss = (lib.exp(h) * h).sum()
    out["grad_of_intermediate"] = lib.autograd.grad(loss, [h])[0]
    # create_graph: differentiate the gradient again (a Hessian-vector product)
    x.grad = None
    w.grad = None
    loss = f({"x": x, "w": w})
    loss.backward(create_graph=True)
    gw = w.grad
    w.grad = None
    x.grad = None
    (gw * lib.tensor(d["w"])).sum().backward()
    out["hvp_w"] = w.grad
    out["hvp_x"] = x.grad
    return out, f, {"x": x.detach(), "w": w.detach()}


# ------------------------------------------------------------------ 8. in-place updates
def in_place(lib, nn, F, optim, fcall, d):
    w = lib.tensor(d["w"], requires_grad=True)

    def f(p):
        h = lib.tensor(d["x"]) @ p["w"]  # a non-leaf, modified in place below
        h *= 2.0
        h += 1.0
        h[1:3, 0] = lib.tensor(d["v"])
        h.clamp_(-2.0, 2.0)  # in place on a non-leaf that its own backward needs
        h.mul_(p["w"][0])  # ... and whose old value the multiplication's gradient needs
        h.add_(h.mean(), alpha=0.5)
        return (lib.sin(h) * h).sum()

    losses = []
    for step in range(6):  # hand-written SGD: the classic in-place parameter updates
        loss = f({"w": w})
        loss.backward()
        if step % 2:
            with lib.no_grad():
                w -= 0.05 * w.grad
        else:
            w.data.sub_(0.05 * w.grad)  # the older idiom, through .data
        w.grad.zero_()
        losses.append(loss.item())
    # a saved tensor modified in place: both libraries refuse to give a wrong gradient
    a = lib.tensor(d["x"], requires_grad=True)
    b = a * 1.0
    c = (b * b).sum()
    b.mul_(3.0)
    try:
        c.backward()
        caught = 0.0
    except RuntimeError:
        caught = 1.0
    loss = f({"w": w})
    loss.backward()
    out = {"losses": lib.tensor(losses), "w": w, "grad:w": w.grad,
           "version_error": lib.tensor(caught)}
    return out, f, {"w": w.detach()}


# -------------------------------------------------------------- 9. long training loop
def long_training(lib, nn, F, optim, fcall, d):
    model = nn.Sequential(nn.Linear(3, 12), nn.Tanh(), nn.Linear(12, 1)).double()
    model.load_state_dict({k: lib.tensor(v) for k, v in d["init"].items()})
    opt = optim.Adam(model.parameters(), lr=0.01)
    x, y = lib.tensor(d["x"]), lib.tensor(d["y"])
    losses = []
    for step in range(300):
        for g in opt.param_groups:  # a hand-written cosine learning-rate schedule
            g["lr"] = 0.005 * (1 + np.cos(np.pi * step / 300))
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    opt.zero_grad()
    F.mse_loss(model(x), y).backward()
    out = {"losses": lib.tensor(losses), **_params(model), **_grads(model)}
    return out, lambda p: F.mse_loss(fcall(model, p, (x,)), y), _detached(model)


# ----------------------------------------------------------------- 10. custom function
def custom_function(lib, nn, F, optim, fcall, d):
    class SafeLogNorm(lib.autograd.Function):
        """log ||x||_row with a hand-written backward (x / ||x||^2 times the cotangent)."""

        @staticmethod
        def forward(ctx, x):
            n2 = (x * x).sum(-1)
            ctx.save_for_backward(x, n2)
            return lib.log(lib.sqrt(n2))

        @staticmethod
        def backward(ctx, ct):
            x, n2 = ctx.saved_tensors
            return x / n2[:, None] * ct[:, None]

    return _custom_program(lib, SafeLogNorm.apply, d)


def _custom_program(lib, fn, d):
    x = lib.tensor(d["x"], requires_grad=True)
    w = lib.tensor(d["w"], requires_grad=True)

    def f(p):
        h = lib.tanh(p["x"] @ p["w"])
        return (fn(h) * lib.arange(1, 6).to(h.dtype)).sum()

    loss = f({"x": x, "w": w})
    loss.backward()
    out = {"loss": loss, "grad:x": x.grad, "grad:w": w.grad}
    return out, f, {"x": x.detach(), "w": w.detach()}


PROGRAMS = {name: globals()[name] for name in (
    "mlp_sgd", "embedding_classifier", "activations_norms", "cnn", "causal_attention",
    "broadcasting", "tape_semantics", "in_place", "long_training", "custom_function",
)}
"""name -> the program (one body, run by both libraries)."""
