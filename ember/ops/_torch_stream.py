"""PyTorch's CPU samplers on PyTorch's stream: a CPU generator's bit generator is the 32-bit
Mersenne Twister PyTorch's is (ember/random.py), and these turn its words into numbers as
PyTorch's CPU kernels do, so the same seed gives PyTorch's values: uniform (rand, uniform_,
every layer's default initialisation), integers (randint, random_), randperm (samplers,
random_split) and normal (randn, normal_). Each takes the NumPy generator an op draws from;
`stream(rng)` is None for a device's generator, whose ops keep their own ways. Bernoulli
draws (bernoulli, bernoulli_, every dropout's mask) compare these uniforms with p, and
multinomial (WeightedRandomSampler, sampling from a model) races exponentials or searches
the cumulative probabilities, and poisson, log_normal_ and the gamma sampler (Gamma's
draws) run PyTorch's samplers value by value, as its default CPU kernels do.

The normal sampler of 16 or more float32 values is PyTorch's AVX2 kernel: Box-Muller on
pairs of uniforms 8 apart in each block of 16, its logarithm and sine/cosine the Cephes
single-precision polynomials evaluated operation by operation in float32 (so the roundings
are the kernel's); float16 and bfloat16 take the same float32 values, rounded (their last
partial block drawn differently); 16 or more float64 values the same blocks in double;
fewer values, or a non-contiguous tensor, PyTorch's double-precision Box-Muller, whose
second value the generator keeps for its next draw (random.torch_stream_class())."""
import math

import numpy as np

from .._select import select
from ..random import torch_stream_class
from ._fma import fused_multiply_add
from ._libm import libm

_MASK24, _MASK53 = np.uint64((1 << 24) - 1), np.uint64((1 << 53) - 1)
_MASK21 = np.uint64((1 << 21) - 1)  # random64()'s high word's part of a 53-bit draw


def stream(rng):
    """The Mersenne Twister of a CPU generator, else None (a device's)."""
    bits = getattr(rng, "bit_generator", None)
    return bits if isinstance(bits, np.random.MT19937) else None


def words64(bits, count):
    """PyTorch's random64(): two 32-bit words, the first one high."""
    w = bits.random_raw(2 * count).reshape(count, 2)
    return (w[:, 0] << np.uint64(32)) | w[:, 1]


def uniform01(bits, shape, wide):
    """PyTorch's uniform_real_distribution on [0, 1): a word's low 24 bits over 2^24
    (float32), or random64()'s low 53 bits over 2^53 (float64): exact values."""
    n = math.prod(shape)
    if wide:
        u = (words64(bits, n) & _MASK53).astype(np.float64)
        u *= 2.0 ** -53
    else:
        u = (bits.random_raw(n) & _MASK24).astype(np.float32)
        u *= np.float32(2.0 ** -24)
    return u.reshape(shape)


def bernoulli_mask(rng, shape, p):
    """u < p for PyTorch's 53-bit uniforms u (its CPU bernoulli with a scalar p, and so
    dropout), drawn from the generator `rng` (whose stream() is not None), without making them:
    u = m / 2^53 < p exactly when the integer m is below ceil(p 2^53), and m's high 21 bits
    decide that but for one value in 2^21 (a tie, settled by the low word). 1M draws in
    ~12 ms, ~8 of them the words (PyTorch's whole draw: ~10)."""
    n = math.prod(shape)
    limit = math.ceil(min(max(p, 0.0), 1.0) * 2.0 ** 53)
    limit_high, limit_low = np.uint64(limit >> 32), np.uint64(limit & 0xFFFFFFFF)
    keep = np.empty(n, bool)
    for start in range(0, n, _MASK_CHUNK):  # (the words take 16 bytes a value: in parts)
        part = keep[start:start + _MASK_CHUNK]
        words = rng.bit_generator.random_raw(2 * part.size)
        high = words[0::2] & _MASK21
        np.less(high, limit_high, out=part)
        tie = np.flatnonzero(high == limit_high)
        if tie.size:
            part[tie] = words[1::2][tie] < limit_low
    return keep.reshape(shape)


_MASK_CHUNK = 1 << 20


def multinomial(bits, probs, k, replacement):
    """(rows, k) category indices for the (rows, n) probabilities `probs` (float32 or float64,
    checked), as PyTorch's CPU multinomial draws them. One draw, or draws without replacement:
    exponential races, probs / E with E ~ Exp(1) in probs' dtype (E = -log1p(-u)), the
    largest first. Draws with replacement: per row, the cumulative sums in probs' dtype,
    divided by the total, the last set to 1, then for each draw the first category whose
    cumulative probability reaches u."""
    rows, n = probs.shape
    if not replacement or k == 1:
        u = uniform01(bits, (rows, n), True)
        # (std::log1p's values: in float64 probabilities a last place can reorder the races)
        e = -(libm("log1p", -u) if probs.dtype == np.float64 else np.log1p(-u))
        keys = probs / e.astype(probs.dtype)
        if k == 1:
            return keys.argmax(axis=1)[:, None]
        return np.argsort(-keys, axis=1, kind="stable")[:, :k]
    out = np.empty((rows, k), np.int64)
    for r in range(rows):
        cum = np.cumsum(probs[r])  # (sequential: the kernel's running sum)
        cum /= cum[-1]
        cum[-1] = 1
        out[r] = np.searchsorted(cum.astype(np.float64), uniform01(bits, (k,), True), "left")
    return out


def poisson(bits, rates):
    """PyTorch's CPU poisson, element by element in memory order: under rate 10, the product
    of uniforms against exp(-rate) (Knuth); from 10 on, Hoermann's transformed rejection
    (PTRS), with the C library's log, exp and lgamma (Python's math calls the same ones)."""
    flat = np.ascontiguousarray(rates, dtype=np.float64).reshape(-1)
    out = np.empty(flat.size)
    uniform = _BufferedUniforms(bits)
    try:
        for i, rate in enumerate(flat.tolist()):
            out[i] = _poisson_large(rate, uniform) if rate >= 10 else \
                _poisson_small(rate, uniform) if rate != 0 else 0
    finally:
        uniform.settle()
    return out.reshape(np.shape(rates))


_THIRD32 = float(np.float32(1) / np.float32(3))  # the kernel's 1.0f / 3.0f
_C0331 = float(np.float32(0.0331))


def standard_gamma(rng, alphas, single):
    """Gamma(alpha, 1) draws as PyTorch's CPU sample_gamma makes them, value by value in
    memory order, as float64 before its final cast: Marsaglia and Tsang's method, alpha < 1
    boosted by U^(1/alpha), normals from its cached double Box-Muller. `single`: alpha is
    held in float (the float32 _standard_gamma kernel), whose boost and d = alpha - 1/3 are
    float arithmetic; else in double (_sample_dirichlet's)."""
    flat = np.ascontiguousarray(alphas).reshape(-1).tolist()
    out = np.empty(len(flat))
    uniform = _BufferedUniforms(stream(rng))
    try:
        for i, alpha in enumerate(flat):
            out[i] = _gamma_one(rng, uniform, alpha, single)
    finally:
        uniform.settle()
    return out.reshape(np.shape(alphas))


def _gamma_one(rng, uniform, alpha, single):
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        if single:
            a = np.float32(alpha)
            scale *= (1.0 - uniform()) ** float(np.float32(1) / a)
            d = float((a + np.float32(1)) - np.float32(_THIRD32))
        else:
            scale *= (1.0 - uniform()) ** (1.0 / alpha)
            d = (alpha + 1.0) - _THIRD32
    else:
        d = float(np.float32(alpha) - np.float32(_THIRD32)) if single else alpha - _THIRD32
    c = 1.0 / math.sqrt(9.0 * d) if d > 0 else math.nan  # (C's sqrt gives NaN, not an error)
    while True:
        while True:
            x = _normal_one(rng, uniform)
            y = 1.0 + c * x
            if not y <= 0:  # (a NaN y leaves the loop, as the kernel's do-while)
                break
        v = y * y * y
        u = 1.0 - uniform()
        xx = x * x
        if u < 1.0 - _C0331 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _normal_one(rng, uniform):
    """One normal_distribution<double>(0, 1) draw, with the generator's cached second value
    (as _normal_small), its uniforms from `uniform`."""
    cache = getattr(rng, "normal_cache", None)
    if cache is not None:
        rng.normal_cache = None
        return cache
    u1, u2 = uniform(), uniform()
    radius = math.sqrt(-2.0 * math.log1p(-u2))
    theta = 2.0 * math.pi * u1
    if isinstance(rng, torch_stream_class()):
        rng.normal_cache = radius * math.sin(theta)
    return radius * math.cos(theta)


class _BufferedUniforms:
    """PyTorch's 53-bit uniforms for a sampler that takes them one at a time (a Python call
    each): drawn a chunk at a time, and at the end the stream is left where drawing exactly
    the ones taken would leave it (back to its first state, then that many skipped)."""
    CHUNK = 4096

    def __init__(self, bits):
        self.bits, self.start, self.taken, self.buffer = bits, bits.state, 0, []

    def __call__(self):
        if not self.buffer:
            self.buffer = uniform01(self.bits, (self.CHUNK,), True).tolist()[::-1]
        self.taken += 1
        return self.buffer.pop()

    def settle(self):
        self.bits.state = self.start
        self.bits.random_raw(2 * self.taken)


def _poisson_small(rate, uniform):
    limit, count, product = math.exp(-rate), 0, 1.0
    while True:
        product *= uniform()
        if product <= limit:
            return count
        count += 1


def _poisson_large(rate, uniform):
    root, log_rate = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        t = ((2 * a / us if us else math.inf) + b) * u + rate + 0.43  # (C's a / 0 = inf)
        # (an infinite rate: the kernel's floor(inf) cast to int64 is x86's INT64_MIN)
        k = math.floor(t) if math.isfinite(t) else -(1 << 63)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b) <= \
                -rate + k * log_rate - math.lgamma(k + 1.0):
            return k


_FUSE_CHUNK = 1 << 14  # float64 elements: a 128 KiB scratch that stays in cache


def fused_float32(a, scale, shift):
    """a * scale + shift for a float32 array, rounded once, in place (as the fused
    multiply-add of PyTorch's CPU kernels: two float32 roundings differ from it in the last
    bit for about half the values). The product of two float32 numbers is exact in
    float64, so the sum there rounded once to float32 is the fused value; a cache-sized
    chunk at a time, so no float64 copy of a large array is made."""
    scale, shift = float(np.float32(scale)), float(np.float32(shift))
    if not a.flags.c_contiguous:
        a[...] = a * np.float64(scale) + np.float64(shift)
        return a
    flat = a.reshape(-1)
    scratch = np.empty(min(_FUSE_CHUNK, flat.size))
    for start in range(0, flat.size, _FUSE_CHUNK):
        part = flat[start:start + _FUSE_CHUNK]
        wide = scratch[:part.size]
        np.multiply(part, scale, out=wide, dtype=np.float64)
        wide += shift
        part[...] = wide
    return a


def uniform_half(bits, shape, d, low, high):
    """PyTorch's uniform for float16 and bfloat16: the float32 draw scaled to [low, high)
    in float32 (the bounds held in `d`, one rounding), rounded to `d`; a value that rounds
    up to `high` becomes `low`, as PyTorch's kernel wraps it."""
    kind = d.np.type
    low, high = np.float32(kind(low)), np.float32(kind(high))
    u = uniform01(bits, shape, wide=False)
    if (low, high) != (0, 1):
        u = fused_float32(u, high - low, low)
    out = u.astype(d.np)
    out[out == kind(high)] = kind(low)
    return out


def integers(bits, low, high_inclusive, shape):
    """int64 values in [low, high_inclusive] as PyTorch draws them: low + word % span, a
    random64() word where the span needs more than 32 bits (wrapping as its unsigned sum)."""
    span, n = high_inclusive - low + 1, math.prod(shape)
    words = words64(bits, n) if span >= 1 << 32 else bits.random_raw(n)
    if span < 1 << 64:
        words %= np.uint64(span)
    words += np.uint64(low & ((1 << 64) - 1))
    return words.view(np.int64).reshape(shape)


def randperm(bits, n):
    """PyTorch's CPU randperm: a Fisher-Yates shuffle of 0..n-1 taking word % (n - i) at
    step i (below 2^32 / 20; past that, its inside-out form on random64() words)."""
    if n < 0xFFFFFFFF // 20:
        steps = max(n - 1, 0)
        offsets = bits.random_raw(steps) % (np.uint64(n) - np.arange(steps, dtype=np.uint64))
        perm = list(range(n))
        for i, z in enumerate(offsets.tolist()):  # sequential swaps: a Python loop
            j = i + z
            perm[i], perm[j] = perm[j], perm[i]
        return np.array(perm, dtype=np.int64)
    picks = (words64(bits, n) % (np.arange(n, dtype=np.uint64) + np.uint64(1))).tolist()
    perm = [0] * n
    for i, z in enumerate(picks):
        perm[i] = perm[z]
        perm[z] = i
    return np.array(perm, dtype=np.int64)


# ---- normal ---------------------------------------------------------------------------------
def normal(rng, shape, d, mean=0.0, std=1.0, per_value=False):
    """PyTorch's CPU normal_ of a contiguous tensor of dtype `d` (a real floating dtype), or
    None where this does not reproduce it. `per_value`: its path for a non-contiguous tensor
    (the small-draw Box-Muller for every value, any dtype)."""
    bits, n = stream(rng), math.prod(shape)
    half = d.name in ("float16", "bfloat16")
    if n < 16 or per_value:
        out = _normal_small(rng, bits, n, mean, std)
        # (a double goes to a half type through float, as c10 converts it)
        return (out.astype(np.float32) if half else out).astype(d.np).reshape(shape)
    if d.name == "float32":
        return _normal_fill32(bits, n, mean, std).reshape(shape)
    if d.name == "float64":
        return _normal_fill64(bits, n, mean, std).reshape(shape)
    if half:
        return _normal_fill_half(bits, n, mean, std).astype(d.np).reshape(shape)
    return None


def _normal_small(rng, bits, n, mean, std):
    """PyTorch's normal_distribution<double> for each of n values (under 16 values, a
    non-contiguous tensor, log_normal_): `_normal_one` n times, computed at once. A value
    cached by the last draw comes first; then one Box-Muller pair per two values, from two
    uniforms each in the stream's order, the pair's second value kept in the generator when
    n leaves it over. The C library's log1p, sin and cos, as PyTorch's scalar kernel."""
    out = np.empty(n, np.float64)
    cache = getattr(rng, "normal_cache", None)
    first = 0
    if cache is not None and n:
        rng.normal_cache = None
        out[0], first = cache, 1
    pairs = (n - first + 1) // 2
    if pairs:
        u = uniform01(bits, (pairs, 2), True)
        radius = np.sqrt(-2.0 * libm("log1p", -u[:, 1]))
        theta = (2.0 * math.pi) * u[:, 0]
        cos, sin = radius * libm("cos", theta), radius * libm("sin", theta)
        out[first::2] = cos
        out[first + 1::2] = sin[:(n - first) // 2]
        if (n - first) % 2 and isinstance(rng, torch_stream_class()):
            rng.normal_cache = float(sin[-1])
    return fused_multiply_add(out, np.float64(std), mean)  # (fused, as PyTorch's kernel)


def log_normal(rng, shape, mean, std):
    """PyTorch's CPU log_normal_: exp of a normal_distribution<double> draw per value (the
    small-draw Box-Muller, its cached second value included), with the C library's exp."""
    n = math.prod(shape)
    return libm("exp", _normal_small(rng, stream(rng), n, mean, std)).reshape(shape)


# blocks of 16 transformed at a time: 4096 (64K values) keep the transforms' ~40 passes and
# their float64 temporaries in a core's cache
_BLOCKS_AT_ONCE = 4096


def _fill_blocks(bits, n, wide, transform):
    """PyTorch's normal_fill: n uniforms, each block of 16 turned into normals by
    `transform` (on (blocks, 2, 8) views), then, if n is not a multiple of 16, the last 16
    places drawn afresh and transformed again."""
    data = uniform01(bits, (n,), wide)
    full = n - n % 16
    blocks = data[:full].reshape(-1, 2, 8)
    for start in range(0, len(blocks), _BLOCKS_AT_ONCE):  # each part's passes stay in cache
        transform(blocks[start:start + _BLOCKS_AT_ONCE])
    if n % 16:
        data[n - 16:] = uniform01(bits, (16,), wide)
        transform(data[n - 16:].reshape(1, 2, 8))
    return data


def _normal_fill64(bits, n, mean, std):
    def transform(blocks):
        u1 = 1.0 - blocks[:, 0]
        radius = np.sqrt(-2.0 * libm("log", u1))  # (std::log's values)
        theta = (2.0 * math.pi) * blocks[:, 1]
        # (radius cos(theta)) std + mean with one rounding: PyTorch's kernel fuses it
        blocks[:, 0] = fused_multiply_add(radius * np.cos(theta), np.float64(std), mean)
        blocks[:, 1] = fused_multiply_add(radius * np.sin(theta), np.float64(std), mean)
    return _fill_blocks(bits, n, True, transform)


def _normal_fill_half(bits, n, mean, std):
    """PyTorch 2.13's normal_ of 16 or more contiguous float16 or bfloat16 values (found by
    experiment, bit for bit: all n, means and stds tried, and the stream's position after),
    as float32 values to round to the dtype once: the float32 kernel's values, mean and std
    taken as float32, on the whole blocks of 16 (one float32 uniform, 24 bits, per value:
    the tensor's own dtype plays no part in the drawing); then, if n is not a multiple of
    16, 16 more uniforms transformed and written over the last 16 places. Unlike float32,
    which draws n uniforms first, the places past the whole blocks take no uniforms of
    their own: n + 16 - n % 16 words in all, not n + 16."""
    whole = n - n % 16
    out = np.empty(n, np.float32)
    out[:whole] = _normal_fill32(bits, whole, mean, std)
    if n % 16:
        out[n - 16:] = _normal_fill32(bits, 16, mean, std)
    return out


def _normal_fill32(bits, n, mean, std):
    def transform(blocks):
        f = np.float32
        u1 = f(1.0) - blocks[:, 0]
        radius = np.sqrt(f(-2.0) * _logf(u1))
        sin, cos = _sincosf(f(2.0 * math.pi) * blocks[:, 1])
        for k, value in ((0, radius * cos), (1, radius * sin)):
            blocks[:, k] = fused_float32(value, std, mean)  # the kernel's fmadd
    return _fill_blocks(bits, n, False, transform)


# Cephes' single-precision logarithm and sine/cosine as PyTorch's AVX2 kernel evaluates them:
# constants rounded to float32, each operation a float32 one in the kernel's order, and a
# fused multiply-add (`_fma`) wherever its compiler fused a product into the addition that
# uses it (checked bit for bit against PyTorch's randn on 800K values).
_f32 = np.float32
_LOG_P = tuple(_f32(c) for c in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_LOG_Q1, _LOG_Q2, _SQRTHF = _f32(-2.12194440e-4), _f32(0.693359375), _f32(0.707106781186547524)
_DP = (_f32(-0.78515625), _f32(-2.4187564849853515625e-4), _f32(-3.77489497744594108e-8))
_SIN_P = (_f32(-1.9515295891e-4), _f32(8.3321608736e-3), _f32(-1.6666654611e-1))
_COS_P = (_f32(2.443315711809948e-5), _f32(-1.388731625493765e-3), _f32(4.166664568298827e-2))
_FOUR_OVER_PI = _f32(1.27323954473516)


def _fma(a, b, c):
    """a * b + c of float32 operands with one rounding (the product is exact in float64)."""
    wide = np.multiply(a, b, dtype=np.float64)
    wide += c
    return wide.astype(np.float32)


def _horner(x, coefficients):
    y = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        y = _fma(y, x, c)
    return y


def _logf(x):
    """log of a float32 array (positive: PyTorch's u1 is in (0, 1])."""
    x = np.maximum(x, _f32(1.17549435e-38))  # no subnormals
    raw = x.view(np.int32)
    e = ((raw >> 23) - 127).astype(np.float32) + _f32(1.0)
    m = ((raw & ~0x7F800000) | 0x3F000000).view(np.float32)  # the mantissa in [0.5, 1)
    low = m < _SQRTHF
    kept = m * low  # (m where low, else 0: products with a mask, not `where`, see _select)
    m = m - _f32(1.0)
    e = e - low
    m = m + kept
    z = m * m
    y = _horner(m, _LOG_P) * m
    y = _fma(y, z, e * _LOG_Q1)
    y = _fma(z, _f32(-0.5), y)
    return _fma(e, _LOG_Q2, m + y)


def _sincosf(x):
    """(sin, cos) of a float32 array of non-negative angles."""
    j = (x * _FOUR_OVER_PI).astype(np.int32)  # truncation
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    sin_negative = (j & 4) != 0
    cos_negative = (~(j - 2) & 4) != 0
    sine_poly = (j & 2) == 0
    for dp in _DP:  # x - j pi/4 in three parts
        x = _fma(y, dp, x)
    z = x * x
    yc = _horner(z, _COS_P) * z
    yc = _fma(yc, z, -(z * _f32(0.5))) + _f32(1.0)
    ys = _fma(_horner(z, _SIN_P) * z, x, x)
    sin = select(sine_poly, ys, yc)
    cos = select(sine_poly, yc, ys)
    return select(sin_negative, -sin, sin), select(cos_negative, -cos, cos)
