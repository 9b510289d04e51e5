#!/usr/bin/env python3
"""Exports the HLO corpus in test/Hlo/corpus/ from jax (XLA:CPU).

For every case below, jax lowers a real function to HLO text and XLA:CPU runs
it on fixed inputs. Each case directory gets:

  module.hlo     the HLO jax hands to XLA (as `lowered.as_text("hlo")`)
  optimized.hlo  the module after XLA:CPU's passes (fusions, metadata, ...)
  inputN.npy     the inputs, outputN.npy XLA:CPU's results

and MANIFEST.txt lists the cases with the tolerance tessel's evaluator must
meet: `name rtol atol` (0 0 means bit-exact). Run it from anywhere:

  scripts/export-hlo-corpus.py          # installs requirements-jax.txt into .venv
  scripts/export-hlo-corpus.py NAME...  # only these cases (MANIFEST lists all)

The outputs are deterministic for a given jax/jaxlib version (pinned in
requirements-jax.txt); the test suite only reads the committed files.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")


def ensure_jax():
    try:
        import jax  # noqa: F401
        return
    except ImportError:
        pass
    if os.path.abspath(sys.executable) != os.path.abspath(VENV_PYTHON):
        if not os.path.exists(VENV_PYTHON):
            subprocess.check_call([os.path.join(ROOT, "scripts", "bootstrap.sh")])
        os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)
    print("export-hlo-corpus: installing requirements-jax.txt into .venv")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q",
                           "--disable-pip-version-check", "-r",
                           os.path.join(ROOT, "requirements-jax.txt")])


ensure_jax()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_platforms", "cpu")

F32, BF16 = np.float32, ml_dtypes.bfloat16
OUT = os.path.join(ROOT, "test", "Hlo", "corpus")


def rand(seed, shape, dtype, scale=1.0):
    x = np.random.RandomState(seed).standard_normal(shape) * scale
    return x.astype(dtype)


# --- the functions -----------------------------------------------------------

def gelu_tanh(x):
    return jax.nn.gelu(x, approximate=True)


def gelu_erf(x):
    return jax.nn.gelu(x, approximate=False)


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def layer_norm(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * gamma + beta


def attention_scores(q, k):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1]).astype(q.dtype)
    return jax.nn.softmax(s, axis=-1)


def matmul_bias_relu(x, w, b):
    return jnp.maximum(jnp.dot(x, w) + b, 0)


def transpose_2d(x):
    return x.T


def transpose_3d(x):
    return jnp.transpose(x, (2, 0, 1))


def transpose_4d(x):
    return jnp.transpose(x, (0, 2, 3, 1)) * 2


def row_reduce(x):
    return jnp.sum(x, axis=1), jnp.max(x, axis=1)


def column_reduce(x):
    return jnp.sum(x, axis=0), jnp.min(x, axis=0)


def sums_by_size(a, b, c, m):
    # One reduced dim of 33, 1000 and 2049 elements (one and two levels of
    # XLA:CPU's windows of 32, sizes off the vector width), rows and columns.
    return jnp.sum(a), jnp.sum(b), jnp.sum(c), jnp.sum(m, axis=1), jnp.sum(m, axis=0)


def multiply_adds(a, b, c):
    # XLA:CPU contracts each into one fused multiply-add.
    return a * b + c, c - a * b, a / 3 + c


def vector_dots(v, w, m, n, p, q):
    # The dots XLA:CPU computes itself: vector . vector (multiply, then a
    # tree sum), matrix . vector, vector . matrix and a tiny matrix product.
    return jnp.dot(v, w), m @ v[:37, None], v[None, :37] @ n, p @ q


def reduce_3d(x):
    return jnp.sum(x, axis=(0, 2))


def argmax_rows(x):
    return jnp.argmax(x, axis=1).astype(jnp.int32)


def pad_slice_concat(x):
    a = lax.pad(x, np.array(-1, x.dtype), [(1, 2, 1), (-1, 3, 0)])
    b = x[1:5:2, ::3]
    c = jnp.concatenate([x[:, :2], jnp.flip(x, axis=0)[:, 1:4], a[:6, :3]], axis=1)
    return a, b, c


def dynamic_slices(x, i, j):
    s = lax.dynamic_slice(x, (i, j), (3, 4))
    u = lax.dynamic_update_slice(x, jnp.full((2, 5), 7, x.dtype), (j, i))
    return s, u


def pooling(x):
    mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    avg = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9
    return mx, avg


def unary_math(x):
    pos = jnp.abs(x) + 0.5
    return (jnp.exp(x), jnp.log(pos), jnp.sqrt(pos), lax.rsqrt(pos), jnp.tanh(x),
            jnp.sin(x), jnp.cos(x), jax.nn.sigmoid(x), jnp.expm1(x), jnp.log1p(pos),
            jnp.cbrt(x), jnp.floor(x * 3), jnp.ceil(x * 3),
            lax.round(x * 3, lax.RoundingMethod.AWAY_FROM_ZERO),
            lax.round(x * 3, lax.RoundingMethod.TO_NEAREST_EVEN),
            jnp.sign(x), jnp.isfinite(x / (x - x[0, 0])))


def binary_math(x, y):
    return (x + y, x - y, x * y, x / y, lax.rem(x, y), jnp.power(jnp.abs(x), y),
            jnp.maximum(x, y), jnp.minimum(x, y), jnp.arctan2(x, y),
            lax.clamp(np.float32(-0.5), x, np.float32(0.5)), jnp.where(x > y, x, y))


def nan_min_max(x, y):
    return jnp.maximum(x, y), jnp.minimum(x, y), x == y, x != y, x < y, x >= y


def integer_ops(a, b):
    return (a + b, a - b, a * b, lax.div(a, b), lax.rem(a, b), lax.max(a, b),
            lax.min(a, b), a & b, a | b, a ^ b, ~a,
            lax.shift_left(a, b), lax.shift_right_logical(a, b),
            lax.shift_right_arithmetic(a, b), lax.population_count(a), lax.clz(a),
            jnp.abs(a), -a, jnp.sign(a), lax.clamp(np.int32(-100), a, np.int32(100)),
            (a < b).astype(jnp.int32))


def integer_u8(a, b):
    return (a + b, a * b, lax.div(a, b), lax.rem(a, b), lax.shift_right_arithmetic(a, b),
            lax.shift_left(a, b), a > b, lax.population_count(a))


def converts(x):
    big = x * 1e10
    return (big.astype(jnp.int32), x.astype(jnp.bfloat16), x.astype(jnp.float16),
            (x * 100).astype(jnp.uint8), (x * 300).astype(jnp.float8_e4m3fn),
            (x * 1000).astype(jnp.float8_e5m2), (x * 3).astype(jnp.int8),
            x.astype(jnp.bool_))


def iota_broadcast(x):
    r = jnp.arange(12, dtype=jnp.int32).reshape(3, 4)
    f = lax.broadcasted_iota(jnp.float32, (3, 4, 5), 2)
    return r * 2 + x, f + x[:, :, None], lax.rev(x, (0, 1))


def nested_call(x):
    inner = jax.jit(lambda v: jnp.tanh(v) * 2)
    return inner(x) + inner(x * 3)


def bitcast_convert(x):
    return lax.bitcast_convert_type(x, jnp.int32), lax.bitcast_convert_type(x, jnp.uint16)


def mixed_bf16_dot(x, w):
    return jnp.dot(x, w, preferred_element_type=jnp.float32)


def while_loops(x):
    def body(i, acc):
        return acc * 0.5 + jnp.sin(acc) * i.astype(acc.dtype)
    a = lax.fori_loop(0, 5, body, x)
    def step(carry, row):
        carry = carry + row
        return carry, carry * 2
    last, ys = lax.scan(step, jnp.zeros(x.shape[1:], x.dtype), x)
    n = lax.while_loop(lambda c: c[1] < 100.0, lambda c: (c[0] + 1, c[1] * 2.0 + 1.0),
                       (jnp.int32(0), jnp.abs(x[0, 0]) + 0.1))
    return a, last, ys, n[0]


def conditionals(x, k):
    a = lax.cond(k > 1, lambda v: jnp.tanh(v), lambda v: v * 3.0, x)
    b = lax.switch(k, [lambda v: v + 1.0, lambda v: v - 1.0, lambda v: jnp.exp(v)], x)
    c = lax.cond(k < 1, lambda v: lax.fori_loop(0, 3, lambda i, w: w * 2.0, v),
                 lambda v: v, x)
    return a, b, c


def random_numbers(seed):
    key = jax.random.key(seed)
    k1, k2 = jax.random.split(key)
    return (jax.random.uniform(k1, (4, 8)), jax.random.normal(k2, (16,)),
            jax.random.randint(k1, (10,), 0, 100), jax.random.bits(k2, (3, 5)))


def rng_bit_generators(key):
    outs = []
    for algorithm in (lax.RandomAlgorithm.RNG_DEFAULT, lax.RandomAlgorithm.RNG_THREE_FRY,
                      lax.RandomAlgorithm.RNG_PHILOX):
        state, bits = lax.rng_bit_generator(key, (5, 7), dtype=jnp.uint32,
                                            algorithm=algorithm)
        state2, bits3 = lax.rng_bit_generator(state, (3,), dtype=jnp.uint32,
                                              algorithm=algorithm)
        state3, even = lax.rng_bit_generator(state2, (3, 4, 6), dtype=jnp.uint32,
                                             algorithm=algorithm)
        _, scalar = lax.rng_bit_generator(state3, (), dtype=jnp.uint32,
                                          algorithm=algorithm)
        outs += [state, bits, bits3, even, scalar]
    return tuple(outs)


def gathers(x, idx, rows):
    return (x[idx], jnp.take(x, idx, axis=1, mode="clip"), x[idx, 1:3],
            jnp.take(x, idx - 3, axis=0, mode="fill", fill_value=-1.0),
            jax.vmap(lambda r, i: r[i])(x[:4], rows), x[rows[:, None], idx[None, :3]])


def scatters(x, idx, v):
    return (x.at[idx].add(v), x.at[idx].set(v), x.at[idx].max(v),
            x.at[idx - 2].add(v, mode="drop"), x.at[:, idx[:3]].multiply(2.0),
            jax.vmap(lambda r, i, w: r.at[i].add(w))(x[:3], idx[:3], v[:3, 0]))


def _variadic_scatter_primitive():
    """A primitive that lowers to one stablehlo.scatter of two operands and
    two updates (jax's own scatters take one operand): a row scatter whose
    combiner keeps, per element, the pair whose first value is larger (an
    argmax), as XLA writes variadic scatters."""
    from jax.extend.core import Primitive
    from jax.interpreters import mlir
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import hlo

    p = Primitive("argmax_scatter")
    p.multiple_results = True
    p.def_abstract_eval(lambda x, k, idx, v, j: [jax.core.ShapedArray(x.shape, x.dtype),
                                                 jax.core.ShapedArray(k.shape, k.dtype)])

    def lower(ctx, x, k, idx, v, j):
        types = [mlir.aval_to_ir_type(ctx.module_context, a) for a in ctx.avals_out]
        numbers = hlo.ScatterDimensionNumbers.get(
            update_window_dims=[1], inserted_window_dims=[0], input_batching_dims=[],
            scatter_indices_batching_dims=[], scattered_dims_to_operand_dims=[0],
            index_vector_dim=1)
        op = hlo.ScatterOp(types, [x, k], idx, [v, j], numbers,
                           indices_are_sorted=ir.BoolAttr.get(False),
                           unique_indices=ir.BoolAttr.get(False))
        scalars = [mlir.aval_to_ir_type(ctx.module_context,
                                        jax.core.ShapedArray((), a.dtype))
                   for a in ctx.avals_out]
        block = op.update_computation.blocks.append(*scalars, *scalars)
        with ir.InsertionPoint(block):
            x0, k0, x1, k1 = block.arguments
            greater = hlo.compare(x1, x0, hlo.ComparisonDirectionAttr.get("GT"))
            hlo.return_([hlo.select(greater, x1, x0), hlo.select(greater, k1, k0)])
        return op.results

    mlir.register_lowering(p, lower)
    return p


def variadic_scatters(x, idx, v):
    """Rows of `v` (with their row numbers) scattered into `x` (with -1):
    each element keeps the larger value and where it came from; one row
    index out of range, two rows colliding."""
    argmax_scatter = _variadic_scatter_primitive()
    k = jnp.full(x.shape, -1, jnp.int32)
    j = jnp.broadcast_to(jnp.arange(v.shape[0], dtype=jnp.int32)[:, None], v.shape)
    values, rows = argmax_scatter.bind(x, k, idx[:, None], v, j)
    return values, rows


def sorts(x, k):
    return (jnp.sort(x, axis=1), jnp.argsort(x, axis=0, stable=True).astype(jnp.int32),
            jnp.sort(k), jnp.argsort(-k, descending=True).astype(jnp.int32),
            *lax.sort((x[:, 0], x[:, 1]), num_keys=1), *lax.top_k(x, 3))


def convolutions(x, w, g, d):
    dn = ("NHWC", "HWIO", "NHWC")
    a = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
    b = lax.conv_general_dilated(x, w, (2, 1), ((1, 2), (0, 1)), lhs_dilation=(1, 2),
                                 rhs_dilation=(2, 1), dimension_numbers=dn)
    c = lax.conv_general_dilated(x, g, (1, 1), "VALID", dimension_numbers=dn,
                                 feature_group_count=3)
    e = lax.conv_general_dilated(jnp.transpose(x, (0, 3, 1, 2)), d, (1, 1), "VALID",
                                 dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                 batch_group_count=2)
    return a, b, c, e


def complex_math(x, y):
    z = lax.complex(x, y)
    w = lax.complex(y, x * 0.5)
    return (jnp.real(z * w), jnp.imag(z / w), jnp.abs(z), jnp.real(jnp.exp(z)),
            jnp.imag(jnp.sqrt(z)), jnp.real(jnp.log(z) + z - w), jnp.imag(jnp.conj(z) * 2),
            z * w + z)


def reduce_precisions(x):
    return (lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
            lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7),
            lax.reduce_precision(x * 1e5, exponent_bits=4, mantissa_bits=3))


def cumulative(x):
    return jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0), lax.cummax(x, axis=1)


ints = lambda seed, shape, lo, hi, dt: (  # noqa: E731
    np.random.RandomState(seed).randint(lo, hi, size=shape).astype(dt))

# name, function, inputs, rtol, atol (0 0: bit-exact)
CASES = [
    ("gelu_tanh_f32", gelu_tanh, [rand(1, (8, 128), F32, 2)], 2e-6, 1e-6),
    ("gelu_tanh_bf16", gelu_tanh, [rand(2, (8, 128), BF16, 2)], 1.6e-2, 1e-3),
    ("gelu_erf_f32", gelu_erf, [rand(3, (4, 64), F32, 2)], 2e-6, 1e-7),
    ("softmax_f32", softmax, [rand(4, (16, 64), F32, 3)], 2e-6, 1e-8),
    ("softmax_bf16", softmax, [rand(5, (16, 64), BF16, 3)], 1.6e-2, 1e-4),
    ("layer_norm_f32", layer_norm,
     [rand(6, (8, 64), F32, 2), rand(7, (64,), F32), rand(8, (64,), F32)], 1e-5, 1e-5),
    ("layer_norm_bf16", layer_norm,
     [rand(9, (8, 64), BF16, 2), rand(10, (64,), BF16), rand(11, (64,), BF16)], 3e-2, 3e-2),
    ("attention_scores_f32", attention_scores,
     [rand(12, (2, 4, 8, 16), F32), rand(13, (2, 4, 8, 16), F32)], 1e-5, 1e-7),
    ("attention_scores_bf16", attention_scores,
     [rand(14, (2, 2, 8, 16), BF16), rand(15, (2, 2, 8, 16), BF16)], 3e-2, 1e-3),
    ("matmul_bias_relu_f32", matmul_bias_relu,
     [rand(16, (16, 32), F32), rand(17, (32, 8), F32), rand(18, (8,), F32)], 1e-5, 1e-5),
    ("mixed_bf16_dot", mixed_bf16_dot,
     [rand(19, (8, 32), BF16), rand(20, (32, 16), BF16)], 1e-6, 1e-6),
    ("transpose_2d_f32", transpose_2d, [rand(21, (32, 48), F32)], 0, 0),
    ("transpose_3d_bf16", transpose_3d, [rand(22, (4, 6, 8), BF16)], 0, 0),
    ("transpose_4d_f32", transpose_4d, [rand(23, (2, 3, 4, 5), F32)], 0, 0),
    ("row_reduce_f32", row_reduce, [rand(24, (16, 128), F32)], 1e-5, 1e-5),
    ("column_reduce_f32", column_reduce, [rand(25, (128, 16), F32)], 1e-5, 1e-5),
    ("row_reduce_bf16", row_reduce, [rand(26, (8, 64), BF16)], 1.6e-2, 2e-2),
    ("reduce_3d_f32", reduce_3d, [rand(27, (4, 5, 6), F32)], 1e-5, 1e-5),
    ("sums_by_size_f32", sums_by_size,
     [rand(59, (33,), F32), rand(60, (1000,), F32), rand(61, (2049,), F32),
      rand(62, (7, 300), F32)], 1e-5, 1e-4),
    ("multiply_adds_f32", multiply_adds,
     [rand(63, (5, 13), F32), rand(64, (5, 13), F32), rand(65, (5, 13), F32)], 1e-6, 1e-6),
    ("vector_dots_f32", vector_dots,
     [rand(66, (200,), F32), rand(67, (200,), F32), rand(68, (5, 37), F32),
      rand(69, (37, 6), F32), rand(70, (2, 3), F32), rand(71, (3, 2), F32)], 1e-5, 1e-5),
    ("argmax_rows_f32", argmax_rows, [rand(28, (8, 33), F32)], 0, 0),
    ("pad_slice_concat_f32", pad_slice_concat, [rand(29, (6, 7), F32)], 0, 0),
    ("pad_slice_concat_bf16", pad_slice_concat, [rand(30, (6, 7), BF16)], 0, 0),
    ("dynamic_slices_s32", dynamic_slices,
     [ints(31, (6, 9), -50, 50, np.int32), np.int32(2), np.int32(7)], 0, 0),
    ("pooling_f32", pooling, [rand(32, (2, 8, 8, 3), F32)], 1e-6, 1e-6),
    ("unary_math_f32", unary_math, [rand(33, (8, 16), F32, 2)], 4e-6, 1e-6),
    ("binary_math_f32", binary_math,
     [rand(34, (8, 16), F32, 2), rand(35, (8, 16), F32, 2)], 4e-6, 1e-6),
    ("nan_min_max_f32", nan_min_max,
     [np.array([[np.nan, 1, -0.0, np.inf], [2, np.nan, 0.0, -np.inf]], F32),
      np.array([[1, np.nan, 0.0, 3], [np.nan, np.nan, -0.0, 5]], F32)], 0, 0),
    ("integer_ops_s32", integer_ops,
     [np.concatenate([ints(36, (60,), -2**31, 2**31 - 1, np.int32),
                      np.array([-2**31, -2**31, 7, -7], np.int32)]),
      np.concatenate([ints(37, (60,), -40, 40, np.int32),
                      np.array([-1, 0, 0, 33], np.int32)])], 0, 0),
    ("integer_ops_u8", integer_u8,
     [ints(38, (64,), 0, 256, np.uint8), ints(39, (64,), 0, 12, np.uint8)], 0, 0),
    ("converts_f32", converts,
     [np.concatenate([rand(40, (60,), F32, 2),
                      np.array([np.nan, np.inf, -np.inf, 0.0], F32)])], 0, 0),
    ("iota_broadcast_f32", iota_broadcast, [rand(41, (3, 4), F32)], 0, 0),
    ("nested_call_f32", nested_call, [rand(42, (4, 8), F32)], 4e-6, 1e-6),
    ("bitcast_convert_f32", bitcast_convert, [rand(43, (4, 8), F32)], 0, 0),
    ("while_loops_f32", while_loops, [rand(44, (6, 5), F32)], 4e-6, 1e-6),
    ("conditionals_f32", conditionals, [rand(45, (3, 4), F32), np.int32(2)], 4e-6, 1e-6),
    ("random_u32", random_numbers, [np.uint32(42)], 0, 0),
    ("rng_bit_generator_u32", rng_bit_generators,
     [np.array([1, 2, 3, 4], np.uint32)], 0, 0),
    ("gather_f32", gathers,
     [rand(46, (7, 5), F32), np.array([4, 0, 6, 2, 9, -1], np.int32),
      np.array([3, 0, 4, 1], np.int32)], 0, 0),
    ("scatter_f32", scatters,
     [rand(47, (6, 5), F32), np.array([1, 3, 1, 5, 8, 0], np.int32),
      rand(48, (6, 5), F32)], 0, 0),
    ("scatter_variadic_f32", variadic_scatters,
     [rand(59, (6, 5), F32), np.array([1, 3, 1, 5, 8, 0], np.int32),
      rand(60, (6, 5), F32)], 0, 0),
    ("sort_f32", sorts,
     [np.concatenate([rand(49, (6, 7), F32),
                      np.array([[np.nan, -0.0, 0.0, 1, 1, -np.inf, np.inf]], F32)]),
      ints(50, (20,), -5, 5, np.int32)], 0, 0),
    ("convolution_f32", convolutions,
     [rand(51, (2, 6, 5, 3), F32), rand(52, (3, 2, 3, 4), F32), rand(53, (2, 2, 1, 6), F32),
      rand(54, (4, 3, 2, 2), F32)], 1e-5, 1e-5),
    ("complex_c64", complex_math, [rand(55, (4, 6), F32), rand(56, (4, 6), F32)], 1e-5, 1e-6),
    ("reduce_precision_f32", reduce_precisions,
     [np.concatenate([rand(57, (60,), F32, 100),
                      np.array([np.nan, np.inf, 1e-30, 65520.0], F32)])], 0, 0),
    ("cumulative_f32", cumulative, [rand(58, (5, 9), F32)], 1e-5, 1e-6),
]


def save(path, array):
    array = np.asarray(array)
    if array.dtype.type.__module__.split(".")[0] == "ml_dtypes" or array.dtype.kind == "V":
        # bf16 and f8 arrays: numpy's own readers only know them as raw bytes.
        array = array.view(np.dtype("V%d" % array.dtype.itemsize))
    np.save(path, array, allow_pickle=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = ["# name rtol atol (0 0: bit-exact); written by scripts/export-hlo-corpus.py",
             "# jax %s, jaxlib %s, XLA:CPU" % (jax.__version__, jax.lib.__version__)]
    only = set(sys.argv[1:])
    for name, fn, inputs, rtol, atol in CASES:
        lines.append("%s %g %g" % (name, rtol, atol))
        if only and name not in only:
            continue
        case = os.path.join(OUT, name)
        os.makedirs(case, exist_ok=True)
        for old in os.listdir(case):
            os.remove(os.path.join(case, old))
        lowered = jax.jit(fn).lower(*inputs)
        compiled = lowered.compile()
        with open(os.path.join(case, "module.hlo"), "w") as f:
            f.write(lowered.as_text(dialect="hlo"))
        with open(os.path.join(case, "optimized.hlo"), "w") as f:
            f.write(compiled.as_text())
        outputs = compiled(*inputs)
        if not isinstance(outputs, (tuple, list)):
            outputs = [outputs]
        for i, x in enumerate(inputs):
            save(os.path.join(case, "input%d.npy" % i), x)
        for i, y in enumerate(outputs):
            save(os.path.join(case, "output%d.npy" % i), y)
        print("export-hlo-corpus: %s (%d inputs, %d outputs)" % (name, len(inputs), len(outputs)))
    with open(os.path.join(OUT, "MANIFEST.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
