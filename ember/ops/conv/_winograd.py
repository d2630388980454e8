"""Winograd F(2x2, 3x3): 3x3, stride-1, groups-1 2-d convolutions with 2.25x fewer multiplies
than im2col (NumPy only: the CPU path).

The padded input is cut into 4x4 tiles overlapping by 2 (one per 2x2 block of outputs). In the
transformed domain V = B^T d B (of each input tile) and U = G g G^T (of the kernel), a
convolution is 16 independent channel products M[i, j] = V[i, j] @ U[i, j], one long BLAS
product each, and the outputs are A^T M A per tile. The transforms are sums and differences of
whole planes of tiles (a few NumPy passes, no per-tile work), taken separably: rows, then
columns.

The same transforms give the weight gradient: the convolution is linear in the kernel, so
d<gy, y>/dg = G^T [sum over tiles of V ⊙ (A gy A^T)] G, 16 products whose inner dimension is
the number of tiles. When both gradients are wanted, the input gradient is the forward's exact
adjoint from the same Z = A gy A^T: products Z[i, j]^T @ U[i, j], then B's adjoint (sums of
shifted planes) and the split's (`winograd_backward`). Alone, it is a convolution of gy with
the flipped kernel: the forward routine.

Layout: the padded input is split by row and column parity into (a, r, N, b, s, C) (pixel
(2r + a, 2s + b)), channels last, so that a plane of tiles is a slice with long contiguous runs
(a plane of an (N, C, H, W) array read with stride 2 is walked ten times slower). Columns are
transformed first (runs of tw * C numbers), then rows, whose planes are then whole contiguous
blocks; V[i, j] (th, N, tw, C) is the (tiles, C) matrix its product needs. The products come
out tiles-first, M[i, j] = V[i, j] @ U[i, j]^T (th, N, tw, O), so the output transform runs
over contiguous planes too and lands in y by four parity copies. A weight gradient's output
gradient enters a channel-first tile order (O, th, N, tw) by four parity copies.
"""
import math

import numpy as np

from ..._parallel import even_cuts, intra_threads, map_parts, one_product
from ._im2col import scratch

# G of F(2x2, 3x3) (the kernel transform); B^T and A^T are written out as sums below.
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])


def tiles(size):
    """Tiles along one dim for `size` outputs (the last one may reach past the end)."""
    return (size + 1) // 2


def _parity_range(size, lo, places, parity):
    """Which places q < `places` of one parity (padded index 2*q + parity) hold input, given
    `lo` padding before `size` inputs: (first, stop, first input index)."""
    first = max(0, -((parity - lo) // 2))
    stop = max(first, min(places, (size + lo - parity + 1) // 2))
    return first, stop, 2 * first + parity - lo


# The split and the copies into and out of (N, C, H, W) arrays move channels innermost or
# back, so each step of their inner loop touches C planes, H * W * itemsize bytes apart. When
# that stride is a multiple of 4096 bytes (32x32 float32 planes) every plane's line falls in
# the same set of the 8-way, 64-set L1 cache, and lines are evicted before their next use:
# 2-4x slower copies (32-128 channels of 32x32 or 64x64, 1 MB: 1.0-2.4 ms -> 0.25-0.7 ms).
# There, the planes go through a staging buffer whose planes are a line longer (a plain copy,
# its inner runs whole planes).
_L1_SETS, _L1_WAYS, _LINE = 64, 8, 64


def _planes_collide(xp, plane_bytes, planes):
    """Whether a copy walking `planes` planes `plane_bytes` apart overfills the L1 sets they
    share (the host only: a device's copies are kernels of their own)."""
    if xp is not np or plane_bytes % _LINE:
        return False
    sets = _L1_SETS // math.gcd(plane_bytes // _LINE, _L1_SETS)
    return planes > _L1_WAYS * sets


def _staged(xp, shape, dtype, slot):
    """An (N, C, H, W) array in scratch memory whose planes are a cache line apart more than
    H * W numbers (see _planes_collide)."""
    n, c, h, w = shape
    pad = _LINE // np.dtype(dtype).itemsize
    return scratch(xp, slot, (n, c, h * w + pad), dtype)[:, :, :h * w].reshape(shape)


def _split(xp, x, lo, th, tw, slot):
    """x (N, C, H, W), zero-padded by `lo` before and to 2*th + 2 rows, 2*tw + 2 columns (or
    cropped to them), as an (a, r, N, b, s, C) array of shape (2, th + 1, N, 2, tw + 1, C):
    padded pixel (2*r + a, 2*s + b) at [a, r, :, b, s]. One copy per parity pair."""
    n, c, h, w = x.shape
    if _planes_collide(xp, x.strides[1], c):
        staged = _staged(xp, x.shape, x.dtype, "wino_stage")
        staged[...] = x
        x = staged
    out = scratch(xp, slot, (2, th + 1, n, 2, tw + 1, c), x.dtype)
    for a in range(2):
        r0, r1, i0 = _parity_range(h, lo[0], th + 1, a)
        out[a, :r0] = 0
        out[a, r1:] = 0
        for b in range(2):
            s0, s1, j0 = _parity_range(w, lo[1], tw + 1, b)
            out[a, r0:r1, :, b, :s0] = 0
            out[a, r0:r1, :, b, s1:] = 0
            out[a, r0:r1, :, b, s0:s1] = x[:, :, i0:i0 + 2 * (r1 - r0) - 1:2,
                                           j0:j0 + 2 * (s1 - s0) - 1:2].transpose(2, 0, 3, 1)
    return out


def _input_1d(xp, d0, d1, d2, d3, out):
    """B^T of planes d0..d3: (d0 - d2, d1 + d2, d2 - d1, d1 - d3) into out[0..3]."""
    xp.subtract(d0, d2, out=out[0])
    xp.add(d1, d2, out=out[1])
    xp.subtract(d2, d1, out=out[2])
    xp.subtract(d1, d3, out=out[3])


def input_transform(xp, d, th, tw, keep=False):
    """V (4, 4, th, N, tw, C) = B^T d B per tile of a split padded input d (see _split), in
    scratch memory or (`keep`) a fresh array. Columns first: their planes are runs of tw * C
    numbers; the row planes of the result are then whole contiguous blocks."""
    n, c = d.shape[2], d.shape[-1]
    cols = scratch(xp, "wino_cols", (4, 2, th + 1, n, tw, c), d.dtype)
    _input_1d(xp, *(d[:, :, :, k % 2, k // 2:k // 2 + tw] for k in range(4)), cols)
    shape = (4, 4, th, n, tw, c)
    v = xp.empty(shape, d.dtype) if keep else scratch(xp, "wino_v", shape, d.dtype)
    # all four column planes j in each call (each NumPy call costs microseconds of setup)
    _input_1d(xp, *(cols[:, k % 2, k // 2:k // 2 + th] for k in range(4)), v)
    return v


def _output_1d(xp, m, out0, out1):
    """A^T along the first axis of m (4, ...): m0 + m1 + m2 and m1 - m2 - m3."""
    xp.add(m[0], m[1], out=out0)
    out0 += m[2]
    xp.subtract(m[1], m[2], out=out1)
    out1 -= m[3]


def output_transform(xp, m, out):
    """out (N, O, ho, wo) = A^T M A of the products M (4, 4, th, N, tw, O)."""
    th, n, tw, o = m.shape[2:]
    s = scratch(xp, "wino_s", (2, 4, th, n, tw, o), m.dtype)
    _output_1d(xp, m, s[0], s[1])
    full = scratch(xp, "wino_y", (2, 2, th, n, tw, o), m.dtype)  # y[2t + a, 2s + b] at [a, b]
    _output_1d(xp, s.swapaxes(0, 1), full[:, 0], full[:, 1])  # both row parities a at once
    into = _staged(xp, out.shape, out.dtype, "wino_stage") \
        if _planes_collide(xp, out.strides[1], o) else out
    for a in range(2):  # (odd sizes: the last tiles' outputs past the end are dropped)
        for b in range(2):
            part = into[:, :, a::2, b::2]
            part[...] = full[a, b, :part.shape[2], :, :part.shape[3]].transpose(1, 3, 0, 2)
    if into is not out:
        out[...] = into


# U[i, j] = sum over (k, l) of G[i, k] G[j, l] g[k, l]: the 16x9 matrix kron(G, G) takes a
# kernel's 9 numbers to its 16 in one product (the products of G's entries, 0, +-1/2 and 1,
# are exact), 2x faster than the two products G g and (G g) G^T with their transposes.
_GG = np.kron(_G, _G)
_GG_OF = {np.dtype(t): _GG.astype(t) for t in (np.float32, np.float64)}


def kernel_transform(w):
    """U (4, 4, O, C) = G g G^T of w (O, C, 3, 3), laid out for the (C, O) products: one
    product (16, 9) @ (9, O * C) that writes U in its final order (measured at 64 channels
    0.18 -> 0.1 ms beside a product in w's order and a transposing copy)."""
    o, c = w.shape[:2]
    return (_GG_OF[w.dtype] @ w.reshape(o * c, 9).T).reshape(4, 4, o, c)


def kernel_transform_adjoint(q):
    """The adjoint of kernel_transform: Q (4, 4, O, C), as the weight gradient's products
    give it, to (O, C, 3, 3) by one product (O * C, 16) @ (16, 9) in w's order."""
    o, c = q.shape[2:]
    return (q.reshape(16, o * c).T @ _GG_OF[q.dtype]).reshape(o, c, 3, 3)


# The transforms stream through arrays several times the size of the input: a batch is taken
# in chunks whose transformed tiles take about this many bytes, so that each pass reads what
# the one before wrote from cache rather than from memory. Each chunk also costs ~50 NumPy
# calls of setup: measured at 1 thread (CIFAR ResNet's layers, forward and weight gradient),
# 2 MB chunks beat 1 MB ones by 8-15% (16 channels on 32x32: 10.1 -> 8.6 ms) and 4 MB ones
# by 5-10%; ResNet-18's layers are even within noise.
CHUNK_BYTES = 2 << 20
# The weight gradient adds each chunk's 16 (O, C) products into one sum: a pass over 16 O C
# numbers a chunk, which at ResNet-18's 256 channels (4 MB) outweighed the cache gain of
# 2 MB chunks. So a chunk takes at least this many times the sum's bytes of tiles: measured
# fwd+bwd at 1 thread against 2 MB chunks (`/work/notes/s17/wino_chunk1t.py`), 256 channels
# on 14x14 0.77x the time, 128 on 28x28 0.94x, 64 channels even (4x their 1 MB sum is 2 MB).
SUM_PER_CHUNK = 4


# Threads pay on a batch of chunks whose NumPy calls are long: a thread that finishes a call
# waits for the GIL while the other runs Python between its calls (0.5-1.5 MB of tiles took
# 1.35-2.25x the one-thread time on two threads; `/work/notes/s13/wino_min.py`). So on threads
# the chunks are twice as large as at one thread (each call twice as long): measured fwd+bwd
# at 2 threads against 2 MB threaded chunks or none (`/work/notes/s17/wino_layers_ab.py`),
# 16 -> 32 channels on 14x14, batch 32 (4.8 MB of tiles) 0.69x the time, ResNet-18's 256
# channels on 14x14 0.8x, the other CIFAR ResNet and ResNet-18 layers even (0.95-1.02).
# Each rule is (fewest bytes of tiles, fewest channels); under 4 MB one thread is faster.
# From 512 channels the products are most of the work and the BLAS's own threads do them
# better (ResNet-18's 512 channels at 7x7: 1.09-1.16x the time on the pool).
THREADED_RULES = ((2 * CHUNK_BYTES, 0),)
THREADED_MAX_CHANNELS = 256
THREADED_CHUNK_BYTES = 2 * CHUNK_BYTES


def _batch_chunks(x, o, th, tw):
    """(chunks, threads) for the batch of x (N, C, ...), o output channels and th x tw tiles:
    slices of about CHUNK_BYTES of tiles, and where a THREADED_RULE holds, the intra-op
    threads to run them, with chunks of THREADED_CHUNK_BYTES made a multiple of them (an
    equal share each). The same for a convolution and its weight gradient at the same thread
    count, so the transformed input can be kept."""
    n, per_sample = x.shape[0], 16 * th * tw * (x.shape[1] + o) * x.itemsize
    threaded = max(x.shape[1], o) <= THREADED_MAX_CHANNELS and any(
        n * per_sample >= size and min(x.shape[1], o) >= channels
        for size, channels in THREADED_RULES)
    threads = intra_threads() if threaded else 1
    chunk_bytes = max(THREADED_CHUNK_BYTES if threads > 1 else CHUNK_BYTES,
                      SUM_PER_CHUNK * 16 * x.shape[1] * o * x.itemsize)
    count = -(-n // max(1, chunk_bytes // max(per_sample, 1)))
    count = min(n, -(-count // threads) * threads)
    return even_cuts(n, count), threads


def winograd_forward(xp, x, w, lo, osz, keep=None):
    """conv2d of x (N, C, H, W) with w (O, C, 3, 3), stride 1, padding `lo` before (the padding
    after follows from the output size `osz`). A list `keep` receives the transformed input,
    chunk by chunk, for the weight gradient (`winograd_weight_grad`'s `tiles`). The chunks
    run on the intra-op threads where `_batch_chunks` says so."""
    ho, wo = osz
    th, tw = tiles(ho), tiles(wo)
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    u = kernel_transform(w).reshape(16, o, c)
    y = xp.empty((n, o, ho, wo), x.dtype)
    parts, threads = _batch_chunks(x, o, th, tw)

    def chunk(part):
        v = input_transform(xp, _split(xp, x[part], lo, th, tw, "pad"), th, tw,
                            keep=keep is not None)
        m = scratch(xp, "wino_m", (4, 4, th, v.shape[3], tw, o), x.dtype)
        # (tiles, C) @ (C, O), both operands as stored: measured at 1 thread 20-30% faster
        # than the channel-first (O, C) @ (C, tiles), and the whole forward 0.9x (16
        # channels) to 0.6-0.7x (64 channels on 8x8), the parity copies into y included
        one_product(v.reshape(16, -1, c), u.swapaxes(1, 2), m.reshape(16, -1, o))
        output_transform(xp, m, y[part])
        return v

    kept = map_parts(chunk, parts) if threads > 1 else [chunk(part) for part in parts]
    if keep is not None:
        keep.extend(kept)
    return y


def _output_adjoint_1d(xp, g0, g1, out):
    """A applied to pairs (g0, g1): (g0, g0 + g1, g0 - g1, -g1) into out[0..3]."""
    out[0] = g0
    xp.add(g0, g1, out=out[1])
    xp.subtract(g0, g1, out=out[2])
    xp.negative(g1, out=out[3])


def output_transform_adjoint(xp, gy, th, tw):
    """Z (4, 4, O, th, N, tw) = A g A^T per 2x2 tile g of gy (N, O, ho, wo), zero past its end."""
    n, o, ho, wo = gy.shape
    g = scratch(xp, "wino_gy", (2, 2, o, th, n, tw), gy.dtype)  # gy[2t + a, 2s + b] at [a, b]
    if (ho, wo) != (2 * th, 2 * tw):
        g[...] = 0
    for a in range(2):
        for b in range(2):
            part = gy[:, :, a::2, b::2]
            g[a, b, :, :part.shape[2], :, :part.shape[3]] = part.transpose(1, 2, 0, 3)
    rows = scratch(xp, "wino_zrows", (4, 2, o, th, n, tw), gy.dtype)
    _output_adjoint_1d(xp, g[0], g[1], rows)
    z = scratch(xp, "wino_z", (4, 4, o, th, n, tw), gy.dtype)
    _output_adjoint_1d(xp, rows[:, 0], rows[:, 1], z.swapaxes(0, 1))  # all four rows i at once
    return z


def _input_adjoint_1d(xp, g, even, odd, axis):
    """The adjoint of _input_1d along `axis` (of g[k], even, odd): g[0..3] are the gradients
    of its four outputs; `even` and `odd` receive those of the parity-0 and parity-1 planes it
    read, one place longer along `axis` (d0 and d1 were their first places, d2 and d3 their
    last). With B^T's rows (d0 - d2, d1 + d2, d2 - d1, d1 - d3):
        d0: g0, d2: g1 + g2 - g0, d1: g1 - g2 + g3, d3: -g3."""
    n = g.shape[axis + 1]
    lead = (slice(None),) * axis
    first, last, end = lead + (slice(0, n),), lead + (slice(1, n + 1),), lead + (n,)
    xp.add(g[1], g[2], out=even[last])
    even[last] -= g[0]
    even[lead + (0,)] = 0
    even[first] += g[0]
    xp.subtract(g[1], g[2], out=odd[first])
    odd[first] += g[3]
    odd[end] = 0
    odd[last] -= g[3]


def input_transform_adjoint(xp, gv, th, tw):
    """The adjoint of input_transform: gv (4, 4, th, N, tw, C) to the gradient of the split
    padded input, (2, th + 1, N, 2, tw + 1, C) as _split lays it out."""
    n, c = gv.shape[3], gv.shape[5]
    rows = scratch(xp, "wino_grows", (4, 2, th + 1, n, tw, c), gv.dtype)
    _input_adjoint_1d(xp, gv, rows[:, 0], rows[:, 1], 1)  # rows first: undoes the last
    d = scratch(xp, "wino_gd", (2, th + 1, n, 2, tw + 1, c), gv.dtype)
    _input_adjoint_1d(xp, rows, d[:, :, :, 0], d[:, :, :, 1], 3)
    return d


def _unsplit(xp, d, lo, out):
    """The adjoint of _split: out (N, C, H, W) receives the entries of d at its pixels (those
    in the padding are dropped; pixels past the tiles, which the forward never read, get 0)."""
    h, w = out.shape[2:]
    places = d.shape[1], d.shape[4]
    rows = [_parity_range(h, lo[0], places[0], a) for a in range(2)]
    cols = [_parity_range(w, lo[1], places[1], b) for b in range(2)]
    into = _staged(xp, out.shape, out.dtype, "wino_stage") \
        if _planes_collide(xp, out.strides[1], out.shape[1]) else out
    if sum(r1 - r0 for r0, r1, _ in rows) < h or sum(s1 - s0 for s0, s1, _ in cols) < w:
        into[...] = 0
    for a, (r0, r1, i0) in enumerate(rows):
        for b, (s0, s1, j0) in enumerate(cols):
            into[:, :, i0:i0 + 2 * (r1 - r0) - 1:2, j0:j0 + 2 * (s1 - s0) - 1:2] = \
                d[a, r0:r1, :, b, s0:s1].transpose(1, 3, 0, 2)
    if into is not out:
        out[...] = into


def winograd_backward(xp, x, gy, w, lo, need_input=True, tiles_kept=None):
    """(d<gy, y>/dx or None, d<gy, y>/dw) of y = winograd_forward(x, w, lo, gy's size), from
    one transform Z = A gy A^T per chunk for both. The input gradient is the forward's exact
    adjoint: products with U^T, then the adjoint of the input transform and of the split
    (sparing the transform of gy that a convolution of gy with the flipped kernel takes).
    `tiles_kept`: the forward's transformed input (its `keep`), used when it fits."""
    c, o, (ho, wo) = x.shape[1], gy.shape[1], gy.shape[2:]
    th, tw = tiles(ho), tiles(wo)
    gx = xp.empty(x.shape, x.dtype) if need_input else None
    u = kernel_transform(w).reshape(16, o, c) if need_input else None
    parts, threads = _batch_chunks(x, o, th, tw)
    if tiles_kept is not None and [v.shape for v in tiles_kept] != \
            [(4, 4, th, s.stop - s.start, tw, c) for s in parts]:
        tiles_kept = None

    def chunk(k):
        """The chunk's term of the weight gradient (its input gradient is written in place)."""
        part = parts[k]
        v = tiles_kept[k] if tiles_kept is not None else \
            input_transform(xp, _split(xp, x[part], lo, th, tw, "pad"), th, tw)
        z = output_transform_adjoint(xp, gy[part], th, tw).reshape(16, o, -1)
        # (O, tiles) @ (tiles, C): both operands as stored (10-15% faster than the
        # transposed product (C, tiles) @ (tiles, O) at 16-32 channels)
        q = one_product(z, v.reshape(16, -1, c))
        if need_input:
            gv = scratch(xp, "wino_gv", v.shape, x.dtype)
            one_product(z.swapaxes(1, 2), u, gv.reshape(16, -1, c))  # (tiles, O) @ (O, C)
            _unsplit(xp, input_transform_adjoint(xp, gv, th, tw), lo, gx[part])
        return q

    q = xp.zeros((16, o, c), x.dtype)
    if threads > 1:
        # the chunks' terms added in chunk order: the bits of one thread's running sum (all
        # held until the last is done: 16 O C numbers a chunk, at most THREADED_MAX_CHANNELS)
        for term in map_parts(chunk, range(len(parts))):
            q += term
    else:
        for k in range(len(parts)):
            q += chunk(k)
    return gx, kernel_transform_adjoint(q.reshape(4, 4, o, c))


def winograd_weight_grad(xp, x, gy, lo, tiles_kept=None):
    """d<gy, conv2d(x, w)>/dw for 3x3 w, stride 1, padding `lo` before: (O, C, 3, 3).
    `tiles_kept`: the forward's transformed input (its `keep`), used when it fits."""
    return winograd_backward(xp, x, gy, None, lo, False, tiles_kept)[1]
