"""Checks that need ``SCIPY_ARRAY_API=1`` set before SciPy (and scikit-learn, which needs it
too) is first imported, so tests/interop/test_consumers.py runs each in a fresh process:
``python -m tests.interop.fresh_process_checks <name>`` prints "ok" or fails."""

from __future__ import annotations

import sys

import numpy as np

import tenferro as tf


def _fd(f, x, d, h=1e-6):
    return (f(tf.tensor(x + h * d)).item() - f(tf.tensor(x - h * d)).item()) / (2 * h)


def scipy_stats() -> None:
    """scipy.stats' array-API functions return tenferro tensors equal to their NumPy values,
    with gradients equal to central finite differences."""
    import scipy.stats as st

    rng = np.random.default_rng(0)
    x = rng.standard_normal(20)
    d = rng.standard_normal(20)
    fns = {"zscore": lambda t: st.zscore(t) ** 3, "skew": st.skew, "kurtosis": st.kurtosis,
           "gmean": lambda t: st.gmean(tf.abs(t) if isinstance(t, tf.Tensor) else abs(t)),
           "variation": st.variation, "moment": lambda t: st.moment(t, order=3)}
    for name, f in fns.items():
        got = f(tf.tensor(x))
        assert isinstance(got, tf.Tensor), name
        np.testing.assert_allclose(got.numpy(), f(x), rtol=1e-13, err_msg=name)

        def loss(t, f=f):
            return tf.sum(f(t))

        g = tf.grad(loss)(tf.tensor(x)).numpy()
        fd = _fd(loss, x, d)
        assert abs(g @ d - fd) < 1e-7 * max(1.0, abs(fd)), (name, g @ d, fd)


def sklearn() -> None:
    """scikit-learn with array_api_dispatch: PCA and LDA fit/transform/predict on tenferro
    tensors give the NumPy run's values; PCA differentiates under ``tenferro.grad``; LDA
    (whose fit writes class means into a zeros array in place) through the PyTorch-style
    tape (``requires_grad`` + ``backward``)."""
    import sklearn as sk
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4)) * np.array([3.0, 2.0, 1.0, 0.5])
    y = np.arange(30) % 3
    d = rng.standard_normal(X.shape)
    want_pca = PCA(n_components=2, svd_solver="full").fit(X)
    want_lda = LDA().fit(X, y)
    with sk.config_context(array_api_dispatch=True):
        pca = PCA(n_components=2, svd_solver="full").fit(tf.tensor(X))
        assert isinstance(pca.components_, tf.Tensor)
        np.testing.assert_allclose(pca.transform(tf.tensor(X)).numpy(), want_pca.transform(X),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(pca.explained_variance_.numpy(),
                                   want_pca.explained_variance_, rtol=1e-13)

        def pca_loss(t):
            return tf.sum(PCA(n_components=2, svd_solver="full").fit_transform(t) ** 2)

        g = tf.grad(pca_loss)(tf.tensor(X)).numpy()
        fd = _fd(pca_loss, X, d)
        assert abs(np.sum(g * d) - fd) < 1e-7 * abs(fd), (np.sum(g * d), fd)

        lda = LDA().fit(tf.tensor(X), tf.tensor(y))
        got, want = lda.transform(tf.tensor(X)).numpy(), want_lda.transform(X)
        # each discriminant direction is an SVD vector, so its sign is the SVD's gauge
        # (tenferro's convention, not LAPACK's): align signs, then compare
        got = got * np.sign(np.sum(got * want, axis=0))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(lda.predict(tf.tensor(X)).numpy(), want_lda.predict(X))

        def lda_loss(t):
            return tf.sum(LDA().fit(t, tf.tensor(y)).transform(t) ** 2)

        xt = tf.tensor(X, requires_grad=True)
        lda_loss(xt).backward()
        fd = _fd(lda_loss, X, d)
        assert abs(np.sum(xt.grad.numpy() * d) - fd) < 1e-7 * abs(fd)


if __name__ == "__main__":
    globals()[sys.argv[1]]()
    print("ok")
