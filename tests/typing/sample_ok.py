"""A user script that type-checks cleanly against tenferro's annotations (tests/typing)."""

import numpy as np

import tenferro as tf

x = tf.tensor(np.ones((3, 3)), requires_grad=True)
y = tf.sum(tf.sin(x) * 2.0)
u, s, vh = tf.linalg.svd(x)
q, r = tf.linalg.qr(x)
z: tf.Tensor = tf.einsum("ij,jk->ik", x, x)
g = tf.grad(lambda a: tf.sum(a**2))(x)
loss: float = float(y)
n: int = x.shape[0] + 1
f = tf.jit(lambda a: a + 1)
w = tf.fft.fft(x)
e = tf.special.erf(x)
layer = tf.nn.Linear(3, 2)
opt = tf.optim.Adam(layer.parameters(), lr=1e-3)
env = tf.tn.ctmrg
print(f"{loss:.3f}", n, x.dtype, tf.errors.ShapeError, env, tf.interop.quimb.register)
