"""A shared collection of small programs, each exercising one primitive (or a pattern).

Used by the primitive rule checks (finite differences, transpose identity) and by the
eager / traced parity suite. Every primitive in ``chainrules.PRIMITIVES`` must appear here
(``test_every_primitive_is_covered`` enforces it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import tenferro as tf
from chainrules import primitives as P
from tenferro._src.core.dispatch import bind

R, C = ("f64",), ("f64", "c128")


@dataclass
class Program:
    name: str
    fn: object
    shapes: tuple  # shapes of the inexact inputs
    dtypes: tuple = C
    domain: str = "any"  # "pos": positive reals; "small": |x| < 1
    extra: tuple = ()  # non-differentiable extra arguments (index arrays...)
    linear: bool = False
    prims: tuple = field(default=())
    # updates a tensor in place: under a transformation that differentiates only some inputs,
    # a constant updated with a differentiated value is a named error (use .at[].set)
    in_place: bool = False

    def args(self, dtype, rng):
        dt = {"f64": np.float64, "c128": np.complex128, "f32": np.float32}[dtype]
        out = []
        for s in self.shapes:
            a = rng.standard_normal(s)
            if np.dtype(dt).kind == "c":
                a = a + 1j * rng.standard_normal(s)
            if self.domain == "pos":
                a = np.abs(a) + 0.5 if np.dtype(dt).kind != "c" else a + 2.0
            elif self.domain == "small":
                a = 0.7 * np.tanh(a)
            out.append(tf.tensor(np.asarray(a, dtype=dt)))
        return tuple(out) + tuple(tf.tensor(e) for e in self.extra)


S = (3, 4)
IDX = np.array([[0, 2], [2, 1], [0, 0]])  # repeated indices accumulate

PROGRAMS = [
    # -- arithmetic
    Program("add", lambda x, y: x + y, (S, S), linear=True),
    Program("sub", lambda x, y: x - y, (S, S), linear=True),
    Program("mul", lambda x, y: x * y, (S, S)),
    Program("div", lambda x, y: x / y, (S, S), domain="pos"),
    Program("neg", lambda x: -x, (S,), linear=True),
    Program("conj", lambda x: tf.conj(x) * (1 + 0.5j if x.dtype.kind == "c" else 1.0), (S,)),
    Program("real", lambda x: tf.real(x) * tf.imag(x) + tf.real(x), (S,), dtypes=("c128",)),
    Program("imag", lambda x: tf.imag(x), (S,), dtypes=("c128",), linear=True),
    Program("abs", lambda x: tf.abs(x), (S,)),
    Program("sign", lambda x: tf.sign(x) * x, (S,)),
    Program("exp", tf.exp, (S,)),
    Program("log", tf.log, (S,), domain="pos"),
    Program("log1p", tf.log1p, (S,), domain="pos"),
    Program("expm1", tf.expm1, (S,)),
    Program("sin", tf.sin, (S,)),
    Program("cos", tf.cos, (S,)),
    Program("tan", tf.tan, (S,), domain="small"),
    Program("tanh", tf.tanh, (S,)),
    Program("sinh", tf.sinh, (S,)),
    Program("cosh", tf.cosh, (S,)),
    Program("arctan", tf.arctan, (S,), domain="small"),
    Program("sqrt", tf.sqrt, (S,), domain="pos"),
    Program("rsqrt", tf.rsqrt, (S,), domain="pos"),
    Program("square", tf.square, (S,)),
    Program("pow", lambda x, y: x**y, (S, S), domain="pos"),
    Program("pow_scalar", lambda x: x**3 + x**-2 + x**0.5, (S,), domain="pos"),
    Program("atan2", lambda y, x: tf.arctan2(y, x), (S, S), dtypes=R),
    Program("maximum", lambda x, y: tf.maximum(x, y), (S, S), dtypes=R),
    Program("minimum", lambda x, y: tf.minimum(x, y), (S, S), dtypes=R),
    Program("clamp", lambda x: tf.clip(x, -0.5, 0.8), (S,), dtypes=R),
    Program("clamp_tensor_bounds", lambda x, lo, hi: tf.clip(x, lo - 1, hi + 1), (S, S, S),
            dtypes=R),
    Program("select", lambda x, y: tf.where(tf.real(x) > 0, x, y), (S, S)),
    Program("compare", lambda x, y: tf.where((tf.real(x) < tf.real(y)) | (tf.real(x) >= 1.5),
                                             x * y, x)
            + tf.where((tf.real(x) <= 0) & (tf.real(y) > 0), y, 0.0)
            + tf.where(tf.logical_and(tf.real(x) > 0, tf.real(y) < 0), x, 0.0)
            + tf.where(tf.logical_not(tf.real(x) != tf.real(y)), x, 0.0)
            + tf.where(tf.isfinite(x) & ~tf.isnan(y), y, 0.0), (S, S)),
    Program("convert", lambda x: _real_part(tf.astype(x, tf.complex128)) * 2
            + tf.astype(x, tf.complex128).imag, (S,), dtypes=R),
    Program("convert_complex_to_real", lambda x: _real_part(x), (S,), dtypes=("c128",)),
    Program("optimization_barrier", lambda x: _barrier(x) * x, (S,)),
    Program("copy_and_stop_gradient",  # the stop_gradient terms cancel in value and in AD
            lambda x: tf.copy(x) * x + tf.stop_gradient(x) * x - tf.stop_gradient(x) * x, (S,)),
    # -- reductions
    Program("reduce_sum", lambda x: tf.sum(x, axis=1), (S,), linear=True),
    Program("reduce_sum_all", lambda x: tf.sum(x * x), (S,)),
    Program("reduce_max", lambda x: tf.max(x, axis=0), (S,), dtypes=R),
    Program("reduce_min", lambda x: tf.min(x, axis=(0, 1)), (S,), dtypes=R),
    Program("reduce_prod", lambda x: tf.prod(x, axis=1), (S,)),
    Program("argmax_argmin", lambda x: tf.take(x, tf.argmax(x, axis=1), axis=1)
            + tf.take(x, tf.argmin(x, axis=1), axis=1), (S,), dtypes=R),
    Program("cumsum", lambda x: tf.cumsum(x, axis=1) + tf.cumsum(x, axis=0, reverse=True), (S,),
            linear=True),
    Program("mean_var_std", lambda x: tf.mean(x, 0) + tf.var(x, 1).sum() + tf.std(x), (S,)),
    Program("var_std_real", lambda x: tf.var(x, 1, ddof=1)[:, None]
            * tf.std(x, (0, 1), keepdims=True) + tf.std(x, 0, correction=1.5)[None]
            + tf.var(x, 0, keepdims=True), (S,), dtypes=R),
    Program("layer_norm", lambda x: tf.nn.functional.layer_norm(x, (4,)) ** 2
            + tf.nn.functional.layer_norm(x, (3, 4), eps=0.1)
            + bind(P.layer_norm_p, x, axes=(0,), eps=0.5)[1], (S,), dtypes=R),
    # the linear primitives of the moments' JVPs: FD-checked in all operands, then transposed
    Program("moment_tangents", lambda x, t: _moment_tangents(x, t), (S, S), dtypes=R),
    Program("moment_tangents_linear", lambda t, x: _moment_tangents(x, t), (S,),
            extra=(np.linspace(-2.0, 1.5, 12).reshape(S),), dtypes=R, linear=True),
    Program("logsumexp_softmax", lambda x: tf.logsumexp(x, 1) + tf.softmax(x, 0).sum(1), (S,),
            dtypes=R),
    Program("softmax_family", lambda x: tf.log_softmax(x, 0) * tf.softmax(x, (1, 0))
            + tf.logsumexp(x, (1, 0), keepdims=True) + tf.logsumexp(x, 0)
            + tf.nn.functional.log_softmax(x, dim=1) ** 2, (S,), dtypes=R),
    # the linear primitives the softmax family's JVPs are: FD-checked in all operands here,
    # transposed (linear in t, x fixed) in the next program
    Program("softmax_tangents", lambda x, t: _softmax_tangents(x, t), (S, S), dtypes=R),
    Program("softmax_tangents_linear", lambda t, x: _softmax_tangents(x, t), (S,),
            extra=(np.linspace(-2.0, 1.5, 12).reshape(S),), dtypes=R, linear=True),
    Program("logaddexp", lambda x, y: tf.logaddexp(x, y) * tf.logaddexp2(y, x) + tf.softplus(x)
            * tf.logaddexp(x, x), (S, S), dtypes=R),
    Program("norm", lambda x: tf.norm(x) + tf.norm(x, 1) + tf.norm(x, axis=0).sum(), (S,)),
    # -- structure
    Program("reshape", lambda x: tf.reshape(x, (2, 6)), (S,), linear=True),
    Program("transpose", lambda x: tf.transpose(x, (2, 0, 1)), ((2, 3, 4),), linear=True),
    Program("broadcast_in_dim", lambda x, y: x + y, ((3, 1), (4,))),
    Program("broadcast_to", lambda x: tf.broadcast_to(x, (2, 3, 4)), ((3, 1),), linear=True),
    Program("slice", lambda x: x[1:, ::2] * 2 + x[:2, 1:3].sum(), (S,)),
    Program("basic_index", lambda x: x[1, ::-2][None] * 2 + x[..., 0:1, 3], (S,)),
    Program("basic_index_transpose", lambda x: tf.lax.basic_index_transpose(
        x, spec=(1, None, (3, None, -2)), shape=(4, 5)), ((1, 2),), linear=True),
    Program("slice_negative_step", lambda x: x[::-1, 3:0:-2], (S,), linear=True),
    Program("pad", lambda x: tf.pad(x, ((1, 2), (0, 3)), constant_values=0.5), (S,)),
    Program("pad_linear", lambda x: tf.pad(x, ((1, 0), (2, 1))), (S,), linear=True),
    Program("concatenate", lambda x, y: tf.concatenate([x, y, x], axis=1), (S, (3, 2)),
            linear=True),
    Program("stack_split", lambda x: tf.stack(tf.split(x, 2, axis=1), axis=0), (S,), linear=True),
    Program("flip", lambda x: tf.flip(x, 1), (S,), linear=True),
    Program("diagonal", lambda x: tf.diagonal(x, 1) + tf.diagonal(x, -1), ((4, 4),),
            linear=True),
    Program("diagonal_batched", lambda x: tf.diagonal(x, 0, 1, 2), ((2, 3, 4),), linear=True),
    Program("diag_embed", lambda x: tf.diag_embed(x, 1) + tf.diag(tf.pad(x, (0, 1))), ((4,),),
            linear=True),
    Program("trace", lambda x: tf.matrix_trace(x) + x.trace(1), ((4, 4),), linear=True),
    Program("tril_triu", lambda x: tf.tril(x) * 2 + tf.triu(x, 1), ((4, 4),), linear=True),
    # -- indexing
    Program("gather", lambda x, i: tf.take(x, i, axis=0), (S,), extra=(IDX,), linear=True),
    Program("scatter_add", lambda x, u, i: tf.scatter_add(x, i, u, axis=1),
            (S, (3, 3, 2)), extra=(IDX,), linear=True),
    Program("getitem_advanced", lambda x: x[[0, 2, 2], 1:] + x[1, [3, 0, 0]][:, None], (S,),
            linear=True),
    Program("getitem_mixed", lambda x: x[0, :, [1, 2]], ((2, 3, 4),), linear=True),
    Program("setitem", lambda x, v: _setitem(x, v), (S, (2,)), in_place=True),
    Program("setitem_advanced", lambda x, v: _setitem_advanced(x, v), (S, (2,)),
            in_place=True),
    Program("basic_index_update", lambda x, v: bind(
        P.basic_index_update_p, x, v, spec=(1, None, (3, None, -2))), ((4, 5), (1, 2)),
        linear=True),
    Program("at_add", lambda x, v: x.at[[0, 0, 2]].add(v), (S, (3, 4)), linear=True),
    # -- products
    Program("dot_general_matmul", lambda x, y: x @ y, (S, (4, 2))),
    Program("dot_general_batched", lambda x, y: tf.matmul(x, y), ((2, 3, 4), (2, 4, 5))),
    Program("dot_general_broadcast_batch", lambda x, y: x @ y, ((2, 1, 3, 4), (3, 4, 2))),
    Program("tensordot", lambda x, y: tf.tensordot(x, y, ((0, 2), (2, 0))),
            ((2, 3, 4), (4, 5, 2))),
    Program("vdot_outer_kron", lambda x, y: tf.vdot(x, y) + tf.outer(x, y).sum()
            + tf.kron(tf.reshape(x, (2, 2)), tf.reshape(y, (2, 2))).sum(), ((4,), (4,))),
    Program("matvec", lambda x, y: x @ y + y @ x.T, ((4, 4), (4,))),
    # -- sliding windows (chainrules/primitives/conv.py) and what nn.functional builds on them
    Program("im2col", lambda x: tf.lax.im2col(x, kernel_size=(2, 3), strides=(1, 2),
                                              padding=((1, 0), (0, 2)), dilation=(2, 1)),
            ((2, 3, 4, 5),), linear=True),
    Program("col2im", lambda p: tf.lax.col2im(p, input_shape=(4, 5), kernel_size=(2, 3),
                                              strides=(1, 2), padding=((1, 0), (0, 2)),
                                              dilation=(2, 1)),
            ((3, 2, 3, 2, 3, 3),), linear=True),
    Program("conv2d", lambda x, w: tf.nn.functional.conv2d(x, w, stride=(2, 1), padding=1,
                                                           groups=2),
            ((2, 4, 5, 4), (6, 2, 3, 2))),
    Program("max_pool2d", lambda x: tf.nn.functional.max_pool2d(x, 2, stride=1, padding=1),
            ((2, 3, 4, 3),), dtypes=R),
    # -- patterns
    Program("fan_out_dag", lambda x: _diamond(x), (S,)),
    Program("complex_mixing", lambda x, y: tf.abs2(x * tf.conj(y)) + tf.angle(x + 0.1)
            if x.dtype.kind == "c" else x * y, (S, S)),
    # -- functions with their own rules (custom_vjp_call, custom_jvp_call)
    Program("custom_vjp", lambda x: _cube(x) + x, (S,)),
    Program("custom_jvp", lambda x: _sin(x) * x, (S,)),
    Program("dtype_promotion", lambda x: x * 2.5 + tf.arange(4) + (tf.real(x) > 0), (S,)),
    # -- NumPy surface: inverse trigonometric/hyperbolic, exp2/log2/log10 (principal branches)
    Program("arcsin_arccos", lambda x: tf.arcsin(x) + tf.arccos(x) * x, (S,), domain="small"),
    Program("arcsinh", tf.arcsinh, (S,)),
    Program("arccosh", lambda x: tf.arccosh(x + 1.0), (S,), domain="pos"),
    Program("arctanh", tf.arctanh, (S,), domain="small"),
    Program("exp2_log2_log10", lambda x: tf.exp2(x) + tf.log2(x) * tf.log10(x), (S,),
            domain="pos"),
    # -- rounding (derivative 0) and remainders (derivative of the piece); y in [0.5, 3.5)
    Program("rounding", lambda x: x * tf.floor(x) + tf.ceil(x) + tf.trunc(2 * x) * x
            + tf.round(x, 1) * x + tf.round(x), (S,), dtypes=R),
    Program("remainder_fmod_floor_divide",
            lambda x, y: (x - 2) % y + tf.fmod(x - 2, y) * 2 + (x - 2) // y * x
            + tf.fmod(2 - x, -y) + tf.remainder(2 - x, -y), (S, S), dtypes=R, domain="pos"),
    # -- bitwise operations (integer results, no derivative) on integers computed from x
    Program("bitwise", lambda x: x * tf.astype(_bits(x), tf.float64), (S,), dtypes=R),
    # -- sorting: the derivative follows the permutation
    Program("sort", lambda x: tf.sort(x, axis=1) * tf.arange(4)
            + tf.sort(x, axis=None)[:4] + tf.partition(x, 1, axis=0)[1], (S,), dtypes=R),
    Program("take_along_axis", lambda x: tf.take_along_axis(
        x, tf.argsort(tf.abs(x), axis=0), axis=0) + tf.take_along_axis(
        x, tf.argsort(tf.real(x))[:, :2], axis=1).sum(1, keepdims=True), (S,)),
    # -- Fourier transforms (linear; real input to fft is promoted to complex)
    Program("fft", lambda x: tf.fft.fft(x, axis=0) + tf.fft.ifft2(x, norm="ortho")
            + tf.fft.fftn(x, norm="forward") + tf.fft.fft(x, n=5)[:, :4], (S,), linear=True),
    Program("rfft", lambda x: tf.fft.rfft(x) + tf.fft.rfft(x, n=5, norm="ortho")
            + tf.fft.rfft(x, n=3, norm="forward")[:, :1], (S,), dtypes=R, linear=True),
    Program("irfft", lambda x: tf.concatenate(
        [tf.fft.irfft(x), tf.fft.irfft(x, n=7, norm="forward"),
         tf.fft.irfft(x, n=5, norm="ortho")], axis=1), (S,), linear=True),
    Program("rfftn_irfftn", lambda x: tf.fft.irfftn(
        tf.fft.rfftn(x, norm="ortho") * tf.arange(3.0), s=(3, 4, 5)) + tf.fft.rfft2(x)[
        ..., :1].real, ((3, 4, 5),), dtypes=R, linear=True),
    Program("fftshift_fftfreq", lambda x: tf.fft.fftshift(x) * tf.fft.fftfreq(4)
            + tf.fft.ifftshift(x, axes=0) * tf.fft.rfftfreq(6, 0.5), (S,), linear=True),
    # -- special functions
    Program("erf_erfc", lambda x: tf.special.erf(x) * tf.special.erfc(0.5 * x), (S,)),
    Program("erfinv", tf.special.erfinv, (S,), dtypes=R, domain="small"),
    Program("gammaln_polygamma", lambda x: tf.special.gammaln(x)
            + tf.special.digamma(x) * tf.special.polygamma(1, x), (S,), dtypes=R, domain="pos"),
    Program("xlogy", lambda x, y: tf.special.xlogy(x, y) + tf.special.xlogy(x * 0, y), (S, S),
            domain="pos"),
    Program("gamma_rgamma", lambda x: tf.special.gamma(x) * tf.special.rgamma(x + 0.5), (S,),
            dtypes=R, domain="pos"),
    Program("erfcinv", lambda x: tf.special.erfcinv(x + 1.0), (S,), dtypes=R, domain="small"),
    Program("beta_betaln", lambda a, b: tf.special.beta(a, b) * tf.special.betaln(a, b + 1.0),
            (S, S), dtypes=R, domain="pos"),
    # the shape parameters are constants (no derivative in them: a named GradientError)
    Program("gammainc_gammaincc", lambda x, a: tf.special.gammainc(a, x)
            + tf.special.gammaincc(a, 2.0 * x), (S,), dtypes=R, domain="pos",
            extra=(np.linspace(0.6, 3.0, 12).reshape(S),)),
    Program("betainc", lambda x, a, b: tf.special.betainc(a, b, 0.5 + 0.5 * x)
            * tf.special.betaincc(b, a, 0.5 - 0.4 * x), (S,),
            dtypes=R, domain="small", extra=(np.linspace(0.6, 3.0, 12).reshape(S),
                                             np.linspace(3.5, 1.2, 12).reshape(S))),
    Program("bessel_jn_yn", lambda x: tf.special.j0(x) + tf.special.j1(x) * tf.special.jn(3, x)
            + tf.special.y0(x) + tf.special.y1(x) * tf.special.yn(2, x), (S,), dtypes=R,
            domain="pos"),
    Program("bessel_iv_ive", lambda x: tf.special.i0(x) + tf.special.i1(x) * tf.special.iv(
        2.5, x) + tf.special.ive(1.5, x) + tf.special.ive(0, -x), (S,), dtypes=R, domain="pos"),
    # -- general eigendecomposition: eigenvalues and the gauge-fixed eigenvectors themselves
    Program("eig", lambda a: _eig_rows(a), ((4, 4),)),
    # -- compositions of the NumPy surface (every mode, every order)
    Program("numpy_elementwise", lambda x, y: tf.logaddexp(x, y) + tf.logaddexp2(y, x)
            + tf.hypot(x, y) + tf.sinc(x) + tf.fmax(x, y) * tf.fmin(x, 2 * y)
            + tf.nan_to_num(x) + tf.deg2rad(x) + tf.rad2deg(y) + tf.fabs(x - 2 * y), (S, S),
            dtypes=R),
    Program("sinc_complex_near_zero", lambda x: tf.sinc(x) + tf.sinc(0.01 * x), (S,)),
    Program("stack_split_tile", lambda x, y: tf.vstack([x, y]).sum(0) + tf.hstack(
        tf.array_split(x, 3, axis=1)) + tf.dstack([x, y])[..., 1] + tf.column_stack(
        [x[:, 0], y[:, 1]]).sum(1, keepdims=True) + tf.tile(x[:1], (3, 1))
        + tf.repeat(x[:, :2], 2, axis=1) + tf.repeat(x[:, :2], [3, 1], axis=1), (S, S)),
    Program("roll_rot_flip_append", lambda x: tf.roll(x, 1, axis=1) + tf.roll(x, (2, -1), (0, 1))
            + tf.rot90(tf.reshape(x, (4, 3))) + tf.rot90(x, 2) + tf.flipud(tf.fliplr(x))
            + tf.append(x[:, :3], x[:, 3:], axis=1) + tf.atleast_3d(x)[..., 0], (S,),
            linear=True),
    Program("pad_modes", lambda x: tf.pad(x, ((1, 2), (3, 0)), "reflect")
            + tf.pad(x, ((2, 1), (0, 3)), "symmetric") + tf.pad(x, ((0, 3), (2, 1)), "wrap")
            + tf.pad(x, ((1, 2), (1, 2)), "edge") + tf.pad(x, ((1, 2), (0, 3)), constant_values=(
                (1.0, 2.0), (3.0, 4.0))), (S,)),
    Program("diff_gradient", lambda x: tf.diff(x, axis=0) * 2
            + tf.diff(x, 2, prepend=0.5, append=x[:, :1])[:2]
            + tf.gradient(x, axis=1)[:2, :2].sum() + tf.gradient(x, 0.5, [0., 1., 3., 4.5],
                                                                 edge_order=2)[1][1:],
            (S,)),
    Program("cross_select", lambda x, y: tf.cross(x[:, :3], y[:, 1:])
            + tf.select([tf.real(x[:, :3]) > 0, tf.real(y[:, :3]) > 0], [x[:, :3], y[:, :3]],
                        0.5) + tf.cross(x[:, :2], y[:, :2])[:, None], (S, S)),
    # -- the array API standard's functions (compositions, and the primitives it added: isinf,
    # signbit, nextafter, reduce_and/reduce_or, searchsorted)
    Program("array_api_elementwise", lambda x, y: tf.copysign(x, y) * x
            + tf.where(tf.isinf(tf.where(x > 0.5, tf.inf, x)) & tf.signbit(-y), x, y)
            + tf.where(tf.nextafter(x, y) > x, y, 0.0)
            + tf.where(tf.any(tf.real(x) > 0, axis=0) | tf.all(y < 1, axis=0), x, -y)
            + tf.astype(tf.searchsorted(tf.sort(y[0]), x[:, 1:]), x.dtype).sum(1, keepdims=True),
            (S, S), dtypes=R),
    Program("array_api_linear_algebra", lambda x, y: tf.vecdot(x, y) + tf.vecdot(x, y[0], axis=-1)
            + tf.linalg.trace(x[:, :3]) + tf.linalg.diagonal(x[:, 1:], offset=1).sum()
            + tf.matrix_transpose(x).sum(0) + tf.linalg.vector_norm(x, axis=(0, 1), ord=3)
            + tf.linalg.vector_norm(y, axis=1) + tf.linalg.matrix_norm(x, ord="nuc")
            + tf.linalg.cross(x[:, :3], y[:, 1:]).sum(1) + tf.trace(x, 1), (S, S)),
    Program("array_api_manipulation", lambda x, y: tf.stack(tf.unstack(x, axis=1), axis=1)
            + tf.broadcast_arrays(x[:, :1], y)[0] * tf.meshgrid(y[0], x[:, 0])[1]
            + tf.cumulative_prod(x, axis=1) + tf.cumulative_sum(y, axis=0, include_initial=True)[1:]
            + tf.cumulative_prod(y, axis=0, include_initial=True)[:3]
            + tf.concat([x, y], axis=None)[:12].reshape(3, 4), (S, S)),
    Program("array_api_statistics", lambda x: tf.std(x, axis=1, correction=1)
            + tf.var(x, axis=1, correction=0.5) + tf.sum(x, axis=1, dtype=x.dtype)
            + tf.prod(x, axis=1, dtype=x.dtype)
            + tf.sort(tf.real(x), axis=1, descending=True)[:, 0] * tf.mean(x, axis=1)
            + tf.linspace(x[0, 0], x[1, 1], 3)
            + tf.clip(tf.real(x), tf.real(x[0]) - 0.5, 0.8).sum(1), (S,)),
    Program("array_api_fft", lambda x: tf.fft.hfft(x, n=6)[:, :4] * 2
            + tf.fft.ihfft(tf.real(x), norm="ortho").real[:, :2].sum(), (S,), linear=True),
    Program("logsumexp_weights", lambda x, w: tf.logsumexp(x, 1, b=w)
            + tf.logsumexp(x, 0, b=-w, return_sign=True)[0].sum(), (S, S),
            dtypes=R, domain="pos"),
    # -- SciPy's structured solves (tenferro.linalg.solvers): sylvester, triangular_solve
    Program("solve_sylvester", lambda a, b, q: tf.linalg.solve_sylvester(
        a + 4 * tf.eye(3), b + 4 * tf.eye(2), q), ((3, 3), (2, 2), (3, 2))),
    Program("solve_triangular_cho_solve", lambda a, b: tf.linalg.solve_triangular(
        a + 4 * tf.eye(3), b, trans=2, lower=True) + tf.linalg.cho_solve(
        (a + 4 * tf.eye(3), False), b), ((3, 3), (3, 2))),
    # -- tenferro.signal: windows (im2col) and spectra (fft), both inputs differentiated
    Program("signal_convolve_correlate", lambda x, y: tf.signal.convolve(x, y, "same", "direct")
            + tf.signal.correlate(x, y, "same", "fft"), (S, (2, 3))),
]


def _moment_tangents(x, t):
    """var_tangent (var and std, both orientations, kept and dropped axes) and
    layer_norm_tangent."""
    kw = {"correction": 1.0}
    y, r = bind(P.layer_norm_p, x, axes=(1,), eps=1e-5)
    out = bind(P.layer_norm_tangent_p, r, y, t, axes=(1,))
    for std in (False, True):
        y1 = bind(P.var_p, x, axes=(1,), keepdims=False, std=std, **kw)
        y0 = bind(P.var_p, x, axes=(0,), keepdims=True, std=std, **kw)
        out = out + bind(P.var_tangent_p, x, y1, t, axes=(1,), keepdims=False, std=std,
                         transpose=False, **kw)[:, None]
        out = out + bind(P.var_tangent_p, x, y1, t[:, 0], axes=(1,), keepdims=False, std=std,
                         transpose=True, **kw)
        out = out + bind(P.var_tangent_p, x, y0, t[:1], axes=(0,), keepdims=True, std=std,
                         transpose=True, **kw)
    return out


def _softmax_tangents(x, t):
    """Each tangent primitive of the softmax family, both orientations, kept and dropped axes."""
    lse1, lse0 = tf.logsumexp(x, 1), tf.logsumexp(x, 0, keepdims=True)
    out = bind(P.softmax_tangent_p, tf.softmax(x, 1), t, axes=(1,))
    out = out + bind(P.log_softmax_tangent_p, x, tf.log_softmax(x, 0), t, axes=(0,),
                     transpose=True)
    out = out + bind(P.log_softmax_tangent_p, x, tf.log_softmax(x, (0, 1)), t, axes=(0, 1),
                     transpose=False)
    out = out + bind(P.logsumexp_tangent_p, x, lse1, t, axes=(1,), keepdims=False,
                     transpose=False)[:, None]
    out = out + bind(P.logsumexp_tangent_p, x, lse1, t[:, 0], axes=(1,), keepdims=False,
                     transpose=True)
    return out + bind(P.logsumexp_tangent_p, x, lse0, t[:1], axes=(0,), keepdims=True,
                      transpose=True)


@tf.custom_vjp
def _cube(x):
    return x * x * x


# the VJP of the holomorphic x^3 is conj(3 x^2) * ct (the adjoint of the JVP 3 x^2 t)
_cube.defvjp(lambda x: (_cube(x), (x,)), lambda res, ct: (tf.conj(3 * res[0] * res[0]) * ct,))


@tf.custom_jvp
def _sin(x):
    return tf.sin(x)


@_sin.defjvp
def _sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _sin(x), tf.cos(x) * t


def _eig_rows(a):
    w, v = tf.linalg.eig(a)
    return tf.concatenate([w[None, :], v], axis=0)


def _real_part(z):
    """``astype(z, float64)``: convert_element_type from complex to real, which keeps the real
    part (and warns, as NumPy: a cast that drops an imaginary part is usually a mistake)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tf.errors.ComplexWarning)
        return tf.astype(z, tf.float64)


def _bits(x):
    """Integers 0..7 from the signs of x, through every bitwise primitive."""
    i = tf.astype(x > 0, tf.int64) + 2 * tf.astype(x > 0.5, tf.int64)
    return ((i & 3) | (i << 1)) ^ (~i >> 1) & 7


def _barrier(x):
    from chainrules.primitives.elementwise import optimization_barrier_p

    return bind(optimization_barrier_p, x)


def _setitem(x, v):
    y = x * 1
    y[1, 1:3] = v
    return y * x


def _setitem_advanced(x, v):
    y = x * 1
    y[[2, 0], 1] = v  # an integer-array index: the general scatter path
    return y * x


def _diamond(x):
    a = tf.sin(x)
    b = a * a
    c = tf.exp(a)
    return b + c * a + x


def by_name(name):
    for p in PROGRAMS:
        if p.name == name:
            return p
    raise KeyError(name)


_ = (P, bind)
