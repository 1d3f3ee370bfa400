"""A small CNN trained on a synthetic MNIST-like data set, written as PyTorch code on tenferro.

The data set is generated here, deterministically: the ten digits drawn from a 3x5 pixel font,
scaled x2, placed at a random offset on a 14x14 canvas, with random stroke intensity and Gaussian
noise. The model (conv-relu-pool twice, then a linear
layer; tenferro.nn), the loss (cross entropy with label smoothing) and the optimizer (Adam) are
PyTorch's, spelled with tenferro names: model(x), loss.backward(), opt.step().

Prints the loss per epoch (with a progress bar over the batches) and the test accuracy, checks
the final accuracy against --target (default 95%) and writes a plot of the learning curves.
With the defaults (6 epochs) the test accuracy first passes 95% at epoch 4 and ends at 96%;
the run takes about 10 s on one core (8 s of training; measured 7.8 s).

Run:  python examples/mnist_like.py
      python examples/mnist_like.py --epochs 5 --train 6000 --noise 0.6
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tenferro as tf
import tenferro.nn.functional as F
from tenferro import nn, optim

FONT = [  # 3x5 pixel digits 0-9, rows top to bottom
    ["111", "101", "101", "101", "111"], ["010", "110", "010", "010", "111"],
    ["111", "001", "111", "100", "111"], ["111", "001", "111", "001", "111"],
    ["101", "101", "111", "001", "001"], ["111", "100", "111", "001", "111"],
    ["111", "100", "111", "101", "111"], ["111", "001", "010", "010", "010"],
    ["111", "101", "111", "101", "111"], ["111", "101", "111", "001", "111"],
]
SIZE = 14


def make_digits(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` noisy rendered digits (n, 1, 14, 14) in float64 and their labels."""
    rng = np.random.default_rng(seed)
    glyphs = np.array([[[c == "1" for c in row] for row in g] for g in FONT], dtype=float)
    glyphs = glyphs.repeat(2, axis=1).repeat(2, axis=2)  # (10, 10, 6)
    labels = rng.integers(0, 10, n)
    images = np.zeros((n, SIZE, SIZE))
    gh, gw = glyphs.shape[1:]
    for i, y in enumerate(labels):
        g = glyphs[y] * rng.uniform(0.6, 1.2)
        dy, dx = rng.integers(0, SIZE - gh + 1), rng.integers(0, SIZE - gw + 1)
        images[i, dy:dy + gh, dx:dx + gw] = g
    images += noise * rng.standard_normal(images.shape)
    return images[:, None], labels


class SmallCNN(nn.Module):
    """conv(1->c) relu pool, conv(c->2c) relu pool, linear(2c*3*3 -> 10)."""

    def __init__(self, channels: int = 8):
        super().__init__()
        self.conv1 = nn.Conv2d(1, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, 2 * channels, 3, padding=1)
        self.fc = nn.Linear(2 * channels * 3 * 3, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # 14 -> 7
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # 7 -> 3
        return self.fc(x.reshape(x.shape[0], -1))


def progress_bar(epoch, done, total, loss, stream, width=30):
    filled = int(width * done / total)
    stream.write(f"\repoch {epoch}  [{'#' * filled}{'.' * (width - filled)}] "
                 f"{done}/{total}  loss {loss:.4f}")
    if done == total:
        stream.write("\r" + " " * (width + 40) + "\r")
    stream.flush()


def accuracy(model, x, y) -> float:
    model.eval()
    with tf.no_grad():
        pred = tf.argmax(model(x), 1).numpy()
    model.train()
    return float((pred == y).mean())


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--train", type=int, default=3000, help="training images")
    p.add_argument("--test", type=int, default=1000, help="test images")
    p.add_argument("--epochs", type=int, default=6, help="passes over the training set")
    p.add_argument("--batch", type=int, default=50, help="batch size")
    p.add_argument("--lr", type=float, default=5e-3, help="Adam learning rate")
    p.add_argument("--channels", type=int, default=16, help="channels of the first conv")
    p.add_argument("--noise", type=float, default=0.3, help="pixel noise std (stroke ~ 0.9)")
    p.add_argument("--target", type=float, default=0.95, help="test accuracy to reach")
    p.add_argument("--seed", type=int, default=0, help="seed of the data set and the model")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (it is drawn only on a terminal anyway)")
    p.add_argument("--plot", default="mnist_like.png",
                   help="PNG file for the loss and test accuracy per epoch")
    p.add_argument("--no-plot", action="store_true", help="skip the plot")
    return p


def main(argv=None) -> dict:
    p = parser()
    args = p.parse_args(argv)
    if args.epochs < 0 or min(args.train, args.test, args.batch, args.channels) < 1:
        p.error("--epochs must be >= 0 and --train, --test, --batch, --channels >= 1")
    if args.batch > args.train:
        p.error(f"--batch {args.batch} is larger than the training set (--train {args.train})")

    t0 = time.perf_counter()
    xtr, ytr = make_digits(args.train, args.noise, args.seed)
    xte, yte = make_digits(args.test, args.noise, args.seed + 1)
    x_test = tf.tensor(xte)
    tf.manual_seed(args.seed)
    model = SmallCNN(args.channels)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed + 2)
    n_batches = args.train // args.batch
    print(f"{args.train} training / {args.test} test images of {SIZE}x{SIZE}, "
          f"{sum(p.size for p in model.parameters())} parameters, {args.epochs} epochs")
    history = []
    show_bar = not args.quiet and sys.stderr.isatty()  # a redrawn bar only on a terminal
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(args.train)
        total = 0.0
        for b in range(n_batches):
            idx = order[b * args.batch:(b + 1) * args.batch]
            x, y = tf.tensor(xtr[idx]), tf.tensor(ytr[idx])
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y, label_smoothing=0.05)
            loss.backward()
            opt.step()
            total += loss.item()
            if show_bar:
                progress_bar(epoch, b + 1, n_batches, total / (b + 1), sys.stderr)
        acc = accuracy(model, x_test, yte)
        history.append((total / n_batches, acc))
        print(f"epoch {epoch}: mean loss {total / n_batches:.4f}  test accuracy {acc:.3f}  "
              f"({time.perf_counter() - t0:.1f} s)")
    acc = history[-1][1] if history else accuracy(model, x_test, yte)  # untrained: chance
    ok = acc >= args.target
    first = next((k for k, (_, a) in enumerate(history, 1) if a >= args.target), None)
    print(f"test accuracy {acc:.3f} {'>=' if ok else '<'} target {args.target:.3f}: "
          f"{'reached' if ok else 'NOT reached'}"
          + (f" (first at epoch {first})" if first is not None else ""))
    if not args.no_plot and history:
        plot(history, args)
    return {"history": history, "accuracy": acc, "reached": ok,
            "seconds": time.perf_counter() - t0}


def plot(history: list, args) -> None:
    """Learning curves: the mean training loss and the test accuracy after each epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = np.arange(1, len(history) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax1.plot(epochs, [loss for loss, _ in history], "o-")
    ax1.set_ylabel("mean training loss (cross entropy, label smoothing 0.05)")
    ax2.plot(epochs, [acc for _, acc in history], "o-", label="test accuracy")
    ax2.axhline(args.target, color="gray", ls="--", lw=1, label=f"target {args.target:g}")
    ax2.axhline(0.1, color="gray", ls=":", lw=1, label="chance 0.1")
    ax2.set_ylim(0, 1.02)
    ax2.set_ylabel("test accuracy")
    ax2.legend(fontsize=8)
    for ax in (ax1, ax2):
        ax.set_xlabel("epoch")
        ax.set_xticks(epochs)
    fig.suptitle(f"small CNN on {args.train} generated digits (noise {args.noise:g}), Adam "
                 f"lr={args.lr:g}, batch {args.batch}", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"plot written to {args.plot}")


if __name__ == "__main__":
    sys.exit(0 if main()["reached"] else 1)
