"""tenferro's implementation. Nothing here is public API: the public modules (``tenferro``,
``tenferro.linalg``, ``tenferro.tn``, ...) re-export what users may rely on (JAX's ``jax._src``
pattern)."""
