"""A rough cost model: FLOPs and bytes per equation, for ``Graph.summary()``.

FLOPs count one per output element for elementwise and layout-free work, ``2 M N K`` per
matrix product, and the usual LAPACK estimates for decompositions. Pure layout operations
(reshape, transpose, broadcast, slicing) count zero FLOPs but their bytes."""

from __future__ import annotations

_LAYOUT = {
    "reshape", "transpose", "broadcast_in_dim", "slice", "pad", "concatenate", "flip",
    "diagonal", "diag_embed", "gather", "convert_element_type", "copy", "stop_gradient",
    "device_put", "full", "iota", "tril", "triu",
}


def _size(shape) -> int | None:
    n = 1
    for d in shape:
        if not isinstance(d, int):
            return None
        n *= d
    return n


def eqn_flops(eqn) -> int | None:
    name = eqn.prim.name
    if name in _LAYOUT:
        return 0
    if name == "dot_general":
        (lc, _), _ = eqn.params["dimension_numbers"]
        out = _size(eqn.outputs[0].aval.shape)
        k = _size([eqn.inputs[0].aval.shape[a] for a in lc])
        if out is None or k is None:
            return None
        mult = 4 if eqn.inputs[0].aval.dtype.kind == "c" else 1
        return 2 * out * k * mult
    if name in ("svd", "eigh", "qr", "cholesky", "solve", "slogdet", "expm", "expm_frechet",
                "triangular_solve"):
        a = eqn.inputs[0].aval.shape
        if len(a) < 2 or _size(a) is None:
            return None
        m, n = a[-2], a[-1]
        batch = _size(a[:-2])
        per = {"svd": 4 * m * n * min(m, n) + 8 * min(m, n) ** 3, "eigh": 9 * n**3,
               "qr": 2 * m * n * n, "cholesky": n**3 // 3, "solve": 2 * n**3 // 3,
               "slogdet": 2 * n**3 // 3, "expm": 20 * n**3, "expm_frechet": 40 * n**3,
               "triangular_solve": m * m * n}[name]
        return batch * per
    sizes = [_size(v.aval.shape) for v in eqn.inputs + eqn.outputs]
    if any(s is None for s in sizes):
        return None
    return max(sizes) if sizes else 0


def eqn_bytes(eqn) -> int | None:
    total = 0
    for v in eqn.outputs:
        n = _size(v.aval.shape)
        if n is None:
            return None
        total += n * v.aval.dtype.itemsize
    return total
