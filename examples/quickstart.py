"""A first look at tenferro: the same rules give reverse mode, forward mode, second
derivatives and complex gradients, in eager and PyTorch-style tape form.

Prints each result next to its analytic value; there is nothing to plot (no PNG is written).

Run: python examples/quickstart.py
"""

import argparse
import sys

import numpy as np

import tenferro as tf


def parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def main(argv=None) -> int:
    parser().parse_args(argv)
    x0 = np.array([0.3, -1.2, 2.0])

    # functional reverse mode
    def f(x):
        return tf.sum(tf.sin(x) * tf.exp(x))

    g = tf.grad(f)(tf.tensor(x0))
    exact = np.exp(x0) * (np.sin(x0) + np.cos(x0))
    print("grad  sum(sin x e^x):", np.round(g.numpy(), 12))
    print("exact               :", np.round(exact, 12))

    # PyTorch-style tape with a second derivative through backward(create_graph=True)
    x = tf.tensor(x0, requires_grad=True)
    y = f(x)
    y.backward(create_graph=True)
    first = x.grad
    x.grad = None
    first.sum().backward()
    print("d2/dx2 (tape)       :", np.round(x.grad.numpy(), 12))
    print("exact               :", np.round(2 * np.exp(x0) * np.cos(x0), 12))

    # Hessian-vector product, forward-over-reverse
    v = np.array([1.0, 0.0, 0.0])
    hv = tf.hvp(f, (tf.tensor(x0),), (tf.tensor(v),))
    print("hvp                 :", np.round(hv.numpy(), 12))

    # complex gradient convention: grad |z|^2 = 2 z
    z = tf.tensor([1 + 2j, -0.5j])
    print("grad |z|^2 at", z.numpy(), "=", tf.grad(lambda z: tf.sum(tf.abs(z) ** 2))(z).numpy())
    return 0


if __name__ == "__main__":
    sys.exit(main())
