"""Shifted-row convolution: stride-1, groups-1 2-d convolutions with few channels, as one
product over shifted copies of the input, channels first (NumPy only: the CPU path).

The input's padded planes are laid end to end, (C, N * Hp * Wp): output pixel q of that flat
grid (its top-left window corner) reads input q + i * Wp + j for kernel offset (i, j). So kw
copies of the flat input, copy j shifted by j places, stacked as a (kw * C, L) matrix, give
the convolution as the sum over kernel rows i of W_i (O, kw * C) @ copies, read at q + i * Wp.
All kh rows' products are one product (kh * O, kw * C) @ copies (its M three times 16: 14%
faster than three products at 16 channels), whose kh row blocks are then added, each at its
offset. Outputs whose window runs past their row or plane are dropped at the end (the last
columns and rows of each plane: 6% at 32x32 with 3x3, see `_geometry`), and the inputs they
read are never read by a kept output.

Against Winograd F(2x2, 3x3) this does 2.25x the multiplies, but its copies are long runs
(whole rows of pixels), where Winograd's channels-last layout moves runs of C numbers: with
16 channels its transforms, not its products, were the bulk of a convolution. The weight
gradient is one product of kh moved copies of gy (kh * O, L) with the forward's kept copies
(22% faster than kh products), and the input gradient a convolution of gy with the flipped
kernel (conv_transpose_forward), which takes this path by the same rule.
"""
from ..._parallel import even_cuts, intra_threads, map_parts, one_product
from ._im2col import scratch

# A batch is taken in chunks whose shifted copies take about this many bytes: each product
# then reads what the copies wrote from cache (measured at 1 thread, 16 channels on 32x32,
# batch 32: chunks of 2, 4 and 8 samples (0.45-1.8 MB) within 5%, the whole batch 1.3x).
CHUNK_BYTES = 1 << 20
# Chunks run on the intra-op threads from this many bytes of copies in the batch.
THREADED_MIN_BYTES = 4 << 20


class ShiftedCopies:
    """A forward's shifted copies of the samples `part` of its batch, kept for the weight
    gradient (one per chunk)."""

    def __init__(self, copies, part):
        self.copies, self.part = copies, part


def _geometry(w_shape, osz, lo, size):
    """(kh, kw, Hp, Wp): the kernel and the plane the outputs' windows cover, laid end to end.
    Consecutive rows (and planes) share their zero padding: the columns a row's last windows
    read past its end are the next row's leading zeros. So a row is W + max(lo, hi) places,
    not W + lo + hi (33 for 32 columns padded by 1: 6% fewer products and copies on a 32x32
    plane than 34x34), as long as the shared part is at most k - 1 places (every kept
    output still fits in the row)."""
    kh, kw = w_shape[2:]
    hp, wp = osz[0] + kh - 1, osz[1] + kw - 1  # lo + size + hi
    share_h = max(0, min(lo[0], hp - size[0] - lo[0], kh - 1))
    share_w = max(0, min(lo[1], wp - size[1] - lo[1], kw - 1))
    return kh, kw, hp - share_h, wp - share_w


def _chunks(x, w_shape, osz, lo):
    """(slices of the batch, threads) for copies of about CHUNK_BYTES each."""
    n = x.shape[0]
    kh, kw, hp, wp = _geometry(w_shape, osz, lo, x.shape[2:])
    per_sample = kw * x.shape[1] * hp * wp * x.itemsize
    count = -(-n * per_sample // CHUNK_BYTES)
    threads = intra_threads() if n * per_sample >= THREADED_MIN_BYTES else 1
    count = min(n, -(-count // threads) * threads)
    return even_cuts(n, max(count, 1)), threads


def _shifted_copies(xp, x, lo, kh, kw, hp, wp, out):
    """out (kw * C, M * Hp * Wp + (kh - 1) * Wp): copy j of x (M, C, H, W) zero-padded by `lo`
    before (negative: cropped) into Hp x Wp planes, shifted left by j places. Only the first
    Wp - kw + 1 columns of each row are read by kept outputs; the rest are zeros or numbers of
    other columns, never read by them."""
    m, c, h, w = x.shape
    rows = m * hp
    flat = out.reshape(kw, c, -1)
    first = flat[0]
    first[:, rows * wp:] = 0  # the last plane's windows that run past the batch
    planes = first[:, :rows * wp].reshape(c, m, hp, wp)
    r0, r1 = max(lo[0], 0), min(hp, lo[0] + h)  # rows of the plane that hold input
    s0, s1 = max(lo[1], 0), min(wp, lo[1] + w)  # columns of the plane that hold input
    planes[:, :, :r0] = 0
    planes[:, :, r1:] = 0
    band = planes[:, :, r0:r1]
    band[..., :s0] = 0
    band[..., s1:] = 0
    band[..., s0:s1] = x[:, :, r0 - lo[0]:r1 - lo[0], s0 - lo[1]:s1 - lo[1]].transpose(1, 0, 2, 3)
    # Copy j is copy 0 moved j places left along its flat rows: a read of copy 0's place q + j
    # within a plane row is a read of copy j's place q. Moving whole rows is a long contiguous
    # copy, where padding each copy from x again copied runs of W numbers (at 2 threads those
    # short runs scaled 1.16x: the copies took a quarter of a 16-channel convolution).
    length = flat.shape[2]
    for j in range(1, kw):
        flat[j, :, :length - j] = first[:, j:]
        flat[j, :, length - j:] = 0


def shifted_forward(xp, x, w, lo, osz, keep=None):
    """conv2d of x (N, C, H, W) with w (O, C, kh, kw), stride 1, padding `lo` before (that
    after follows from the output size `osz`). A list `keep` receives the shifted copies,
    chunk by chunk (ShiftedCopies), for `shifted_weight_grad`."""
    n, c = x.shape[:2]
    o = w.shape[0]
    kh, kw, hp, wp = _geometry(w.shape, osz, lo, x.shape[2:])
    # rows (i, O), columns (j, C), the copies' order: all kernel rows in one product (see
    # the module's docstring)
    wk = w.transpose(2, 0, 3, 1).reshape(kh * o, kw * c)
    y = xp.empty((n, o) + tuple(osz), x.dtype)
    parts, threads = _chunks(x, w.shape, osz, lo)

    def chunk(part):
        m = part.stop - part.start
        size = m * hp * wp
        length = size + (kh - 1) * wp
        copies = xp.empty((kw * c, length), x.dtype) if keep is not None else \
            scratch(xp, "shift_copies", (kw * c, length), x.dtype)
        _shifted_copies(xp, x[part], lo, kh, kw, hp, wp, copies)
        z = scratch(xp, "shift_z", (kh, o, length), x.dtype)
        one_product(wk, copies, z.reshape(kh * o, length))  # z[i] = W_i @ copies
        total = z[0, :, :size]
        if kh > 1:  # output q sums z[i] at q + i * Wp
            total = xp.add(total, z[1, :, wp:wp + size],
                           out=scratch(xp, "shift_y", (o, size), x.dtype))
            for i in range(2, kh):
                total += z[i, :, i * wp:i * wp + size]
        y[part] = total.reshape(o, m, hp, wp)[:, :, :osz[0], :osz[1]].transpose(1, 0, 2, 3)
        return ShiftedCopies(copies, part)

    kept = map_parts(chunk, parts) if threads > 1 else [chunk(part) for part in parts]
    if keep is not None:
        keep.extend(kept)
    return y


def shifted_weight_grad(xp, x, gy, w_shape, lo, kept=None):
    """d<gy, conv2d(x, w)>/dw (O, C, kh, kw) of shifted_forward's convolution, from the
    forward's kept copies when they are given and match this batch's chunks."""
    n, c = x.shape[:2]
    o, osz = gy.shape[1], gy.shape[2:]
    kh, kw, hp, wp = _geometry(w_shape, osz, lo, x.shape[2:])
    parts, threads = _chunks(x, w_shape, osz, lo)
    if kept is None or [k.part for k in kept] != parts:
        kept = None

    def chunk(k):
        part = parts[k]
        m = part.stop - part.start
        size = m * hp * wp
        if kept is not None:
            copies = kept[k].copies
        else:
            copies = scratch(xp, "shift_copies", (kw * c, size + (kh - 1) * wp), x.dtype)
            _shifted_copies(xp, x[part], lo, kh, kw, hp, wp, copies)
        # gy in the flat grid of the padded planes, zero where the forward's outputs were
        # dropped, as kh copies, copy i moved i * Wp places right: one product with the copies
        # gives every kernel row's term (its dropped and moved-in places are zeros, so an inf
        # in x there makes NaN as an inf in a dropped column already does)
        length = size + (kh - 1) * wp
        grids = scratch(xp, "shift_gy", (kh, o, length), gy.dtype)
        grid = grids[0, :, :size].reshape(o, m, hp, wp)
        grid[:, :, osz[0]:] = 0
        grid[:, :, :osz[0], osz[1]:] = 0
        grid[:, :, :osz[0], :osz[1]] = gy[part].transpose(1, 0, 2, 3)
        grids[0, :, size:] = 0
        for i in range(1, kh):
            grids[i, :, :i * wp] = 0
            grids[i, :, i * wp:i * wp + size] = grids[0, :, :size]
            grids[i, :, i * wp + size:] = 0
        return one_product(grids.reshape(kh * o, length), copies.T)  # rows (i, O), cols (j, C)

    if threads > 1:
        terms = map_parts(chunk, range(len(parts)))
    else:
        terms = (chunk(k) for k in range(len(parts)))
    total = None
    for term in terms:  # added in chunk order: the same bits on every run
        if total is None:
            total = term
        else:
            total += term
    if total is None:  # an empty batch
        return xp.zeros(w_shape, x.dtype)
    return xp.ascontiguousarray(total.reshape(kh, o, kw, c).transpose(1, 3, 0, 2))

