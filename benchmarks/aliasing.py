"""What the copy at the NumPy boundary costs (design/interop.md, "Aliasing").

``tenferro.asarray(ndarray)`` and NumPy operands of operations (``x * ndarray``) copy the array,
so a later write into it by its owner cannot change a value the tape recorded. This script
prices that copy at typical sizes, in one process, interleaved: the copy itself (``np.array``
with ``copy=True``) against the no-copy conversion it replaced (``np.asarray``), and against
the conversion and the operation a user pays anyway (``tenferro.asarray(a)``; ``x * a``, which
converts ``a`` inside). JAX's ``jnp.asarray`` (which also copies) is timed when installed.

Run: python benchmarks/aliasing.py [--quick]
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads and the core before NumPy loads)

# isort: split

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from _common import interleaved_medians, table, try_import

import tenferro as tf

SIZES = [(), (16,), (64, 64), (256, 256), (1024, 1024)]


def main(quick: bool) -> None:
    jax = try_import("jax")
    jnp = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
    rows = []
    for shape in SIZES:
        a = np.asarray(np.random.default_rng(0).standard_normal(shape))
        x = tf.asarray(a)
        n = max(1, min(2000, int(2e7 // max(a.nbytes, 800))))
        if quick:
            n = max(1, n // 10)

        def loop(f, n=n):
            return lambda: [f() for _ in range(n)]

        fns = {
            "no copy": loop(lambda: np.asarray(a)),
            "copy": loop(lambda: np.array(a, copy=True)),
            "tf.asarray": loop(lambda: tf.asarray(a)),
            "x * a": loop(lambda: x * a),
        }
        if jnp is not None:
            fns["jnp.asarray"] = loop(lambda: jnp.asarray(a).block_until_ready())
        t = interleaved_medians(fns, repeat=5 if quick else 11)
        us = {k: v / n * 1e6 for k, v in t.items()}
        extra = us["copy"] - us["no copy"]
        rows.append([str(shape), f"{a.nbytes / 1e6:.3g}", f"{us['no copy']:.2f}",
                     f"{us['copy']:.2f}", f"{us['tf.asarray']:.2f}",
                     f"{extra / us['tf.asarray']:.0%}", f"{us['x * a']:.2f}",
                     f"{extra / us['x * a']:.0%}",
                     f"{us['jnp.asarray']:.2f}" if "jnp.asarray" in us else "-"])
    print(table(rows, ["shape", "MB", "asarray us", "copy us", "tf.asarray us",
                       "copy/tf.asarray", "x*a us", "copy/(x*a)", "jnp.asarray us"]))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    main(p.parse_args().quick)
