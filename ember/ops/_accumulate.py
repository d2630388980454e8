"""Scatter-add with repeated positions adding up: `flat[lin] += vals` (`accumulate_flat`),
rows along one dim (`add_along`), a sized `bincount` (`bincount_sized`), and the reductions
they rest on. The CPU sums through NumPy's bincount or a sort and `reduceat`, never
`np.add.at`; a device (CuPy) through a deterministic sorted segment sum
(`add_rows_on_device`), never by racing atomic adds, and with no host read."""
import numpy as np

from .._meta.array import ndarray as MetaArray
from . import _device_kernels


def accumulate_flat(flat, lin, vals):
    """`flat[lin] += vals` with repeated positions adding up; `flat` is 1-D and contiguous,
    `lin` and `vals` are 1-D of one length."""
    if lin.size == 0:
        return
    if type(flat) is not np.ndarray:
        add_rows_on_device(flat, lin, vals)
        return
    kind = flat.dtype.kind
    if lin.size * 8 >= flat.size and (kind == "f" or flat.dtype.name == "bfloat16"):
        flat += np.bincount(lin, weights=vals.astype(np.float64, copy=False),
                            minlength=flat.size).astype(flat.dtype, copy=False)
    elif lin.size * 8 >= flat.size and kind == "c":
        re = np.bincount(lin, weights=vals.real.astype(np.float64), minlength=flat.size)
        im = np.bincount(lin, weights=vals.imag.astype(np.float64), minlength=flat.size)
        flat += (re + 1j * im).astype(flat.dtype, copy=False)
    else:
        positions, sums = segment_reduce(lin, vals, np.add)
        flat[positions] += sums


def bincount_sized(xp, x, weights, size):
    """`np.bincount(x, weights, minlength=size)` for `x` all below `size`: counts (int64) or
    weighted sums (float64, or complex128 for complex weights). On the CPU NumPy's own; on a
    device a deterministic scatter-add (`add_rows_on_device`): CuPy's bincount reads x's sign
    and maximum on the host (two syncs) and adds floats with atomics in any order."""
    if xp is np:
        return np.bincount(x, weights, size)
    if weights is None:
        out = xp.zeros(size, np.int64)
        accumulate_flat(out, x, xp.ones(x.shape, np.int64))
    else:
        out = xp.zeros(size, np.complex128 if weights.dtype.kind == "c" else np.float64)
        accumulate_flat(out, x, weights.astype(out.dtype))
    return out


def add_rows_on_device(arr, idx, vals):
    """`arr[idx] += vals` on a device (CuPy), repeated rows adding up deterministically, as
    PyTorch's CUDA embedding and index_put backward do. Plain atomic adds would sum a row's
    values in whatever order the threads run. Here the values are sorted by row and summed
    within each row by a segmented scan of log2(len(idx)) passes over whole rows of `vals`
    (floats in float64, as the CPU's bincount); each row's last position then holds its sum,
    and one scatter-add puts it in, every row receiving one nonzero term, so the order
    cannot matter. All shapes are known up front: no sync."""
    if isinstance(arr, MetaArray):  # meta memory keeps no values: nothing to add
        return
    import cupy as xp  # only reached for CuPy arrays
    if vals.dtype.kind not in "fcV" and vals.dtype.name != "bfloat16":
        xp.add.at(arr, idx, vals)  # integers and bools: exact in any order
        return
    n = idx.size
    order = xp.argsort(idx)  # stable
    rows = idx[order]
    if _device_kernels.usable(xp, vals):  # float32/64: each row's sum by one kernel
        sums = _run_sums(xp, vals, order, rows, xp.searchsorted(rows, rows))
        xp.add.at(arr, rows, sums.astype(arr.dtype, copy=False))
        return
    steps = [1 << p for p in range((n - 1).bit_length())]  # 1, 2, 4 ... below n
    pad = steps[-1] if steps else 0
    # the sums after `pad` rows of zeros, so that every pass reads its shifted terms as one
    # slice as long as the sums (and compares the whole of `run`)
    buf = xp.zeros((pad + n,) + vals.shape[1:],
                   np.complex128 if vals.dtype.kind == "c" else np.float64)
    sums = buf[pad:]
    sums[...] = vals[order]
    # each entry's place in its row's run of the sorted order: sums[k] takes in sums[k - step]
    # while that is still the same row's (one comparison per pass, no row compare)
    run = xp.arange(n) - xp.searchsorted(rows, rows)
    if vals.ndim > 1:
        run = run.reshape((n,) + (1,) * (vals.ndim - 1))
    for step in steps:  # Hillis-Steele: the terms are read before any is written
        xp.add(sums, xp.where(run >= step, buf[pad - step:pad - step + n], 0), out=sums)
    last = xp.searchsorted(rows, rows, side="right") == xp.arange(1, n + 1)
    if vals.ndim > 1:
        last = last.reshape(run.shape)
    xp.add.at(arr, rows, xp.where(last, sums, 0).astype(arr.dtype))


# sums[k] = the sum, in float64 and in position order (the CPU's bincount's), of the rows
# vals[order[j]] of the run of equal `rows` that ends at sorted place k (`first`: each place's
# run start), 0 at a place that does not end its run: one kernel where the scan took
# 3 calls a doubling
_RUN_SUMS = _device_kernels.Kernel(
    "ember_run_sums",
    "raw T vals, raw int64 order, raw int64 rows, raw int64 first, int64 n, int64 width",
    "double sums",
    "ptrdiff_t k = i / width; ptrdiff_t d = i % width;"
    "bool last = k == n - 1 || rows[k + 1] != rows[k];"
    "ptrdiff_t from = last ? first[k] : k + 1;"
    "double s = 0;"
    "for (int j = from; j < k + 1; j++) { s += double(vals[order[j] * width + d]); }"
    "sums = s",
    trial=lambda xp, dtype: _run_sums_trial(xp, dtype))


def _run_sums(xp, vals, order, rows, first):
    """_RUN_SUMS of vals (n, *rest): float64 sums shaped as vals."""
    if not vals.flags.c_contiguous:  # read by C-order index
        vals = xp.ascontiguousarray(vals)
    n = vals.shape[0]
    width = vals.size // n if n else 0
    sums = _RUN_SUMS(xp, vals, order, rows.astype(np.int64, copy=False), first, n, width,
                     size=vals.size)
    return sums.reshape(vals.shape)


def _run_sums_trial(xp, dtype):
    """_RUN_SUMS on a small case against NumPy; a difference fails the next read as a
    device-side assert does (see `_device_kernels.Kernel`)."""
    idx = np.array([3, 1, 3, 0, 1, 3])
    vals = (np.arange(12) - 4).astype(dtype).reshape(6, 2)
    order = np.argsort(idx, kind="stable")
    rows = idx[order]
    want = np.zeros((6, 2))
    for k in range(6):
        if k == 5 or rows[k + 1] != rows[k]:
            want[k] = vals[order[np.searchsorted(rows, rows[k]):k + 1]].sum(0)
    got = _run_sums(xp, xp.asarray(vals), xp.asarray(order), xp.asarray(rows),
                    xp.asarray(np.searchsorted(rows, rows)))
    _device_kernels.trial_verdict(xp, got != xp.asarray(want), "ember_run_sums",
                                  "segment sums")


def segment_reduce(lin, vals, ufunc):
    """(unique positions, ufunc-reduction of the values at each), by sorting (NumPy)."""
    order = np.argsort(lin, kind="stable")
    sl = lin[order]
    starts = np.flatnonzero(np.concatenate(([True], sl[1:] != sl[:-1])))
    return sl[starts], ufunc.reduceat(vals[order], starts)


def add_along(arr, d, idx, vals, xp):
    """`arr[..., idx, ...] += vals` along dim d in place, repeated indices adding up: sums of
    rows by sorting (cost of the index and the values, not of the whole of arr)."""
    if idx.size == 0:
        return
    n = arr.shape[d]
    idx = idx % n  # negative indices count from the end (no host look whether any is)
    lead = (slice(None),) * d
    if xp is not np:
        add_rows_on_device(xp.moveaxis(arr, d, 0), idx, xp.moveaxis(vals, d, 0))
        return
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    if starts.size == s.size:  # no repeats: a plain indexed add is exact
        arr[lead + (idx,)] += vals
        return
    sums = np.add.reduceat(np.take(vals, order, axis=d), starts, axis=d)
    arr[lead + (s[starts],)] += sums


def scatter_extreme(xp, target, index, values, largest):
    """`target[index] = max (or min) of target[index] and values`, repeats reduced together, in
    place: the device form of `np.maximum.at` / `np.minimum.at` (first-axis `index`). CuPy's
    float scatter-max and -min are not exact: on an H200 (CuPy 14.2) float64 maxima of random
    values came back within float32's rounding, so no input equalled its row's maximum and
    index_reduce's and embedding_bag's backward found no winner. Floats therefore go through
    integer keys that order as the floats do (NaN first to propagate), and integer atomics
    are exact; other dtypes, and NumPy arrays, take the ufunc's own."""
    ufunc = xp.maximum if largest else xp.minimum
    if xp is np or (target.dtype.kind != "f" and target.dtype.name != "bfloat16"):
        ufunc.at(target, index, values)
        return
    wide = np.float64 if target.dtype == np.float64 else np.float32
    keys = _float_keys(xp, target.astype(wide), largest)
    ufunc.at(keys, index, _float_keys(xp, values.astype(wide), largest))
    target[...] = _from_float_keys(xp, keys, wide).astype(target.dtype)


def _float_keys(xp, a, largest):
    """Signed integers of a's width whose order is the floats' (-0.0 just below +0.0); NaNs
    become the key that wins (+NaN's for a maximum, -NaN's for a minimum)."""
    ints = np.int64 if a.dtype == np.float64 else np.int32
    nan = np.float64("nan") if largest else -np.float64("nan")
    bits = xp.where(xp.isnan(a), a.dtype.type(nan), a).view(ints)
    return xp.where(bits < 0, bits ^ ints(np.iinfo(ints).max), bits)


def _from_float_keys(xp, keys, wide):
    ints = keys.dtype.type
    return xp.where(keys < 0, keys ^ ints(np.iinfo(ints).max), keys).view(wide)
