"""A user script with the mistakes tenferro's annotations let a type checker catch; each
line that must be reported ends with ``# E: <mypy error code>`` (tests/typing)."""

import numpy as np

import tenferro as tf

x = tf.tensor(np.ones((3, 3)))
a = tf.sum(x, axes=0)  # E: call-arg
b = tf.grad(lambda t: tf.sum(t), argnum=0)  # E: call-arg
c = tf.zeros((3,), dtype=tf.float64, require_grad=True)  # E: call-arg
d = tf.linalg.svd(x, full_matrices="no")  # E: arg-type
e = tf.linalg.eigh(x, eps="1e-3")  # E: arg-type
n: int = tf.sum(x)  # E: assignment
m = tf.sum(x).nonexistent()  # E: attr-defined
k = x.shape + 1  # E: operator
