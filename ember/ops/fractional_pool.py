"""Fractional max pooling (Graham, 2014), as PyTorch's fractional_max_pool2d/3d: each output
cell takes the max of a kernel-sized window whose start positions advance by a fractional
step alpha = (in - k) / (out - 1), offset by one random sample per (batch, plane, dim) in
[0, 1): start_i = int((i + u) alpha) - int(u alpha), the last window ending at the input's
edge. The starts are computed in the input's precision, as PyTorch's kernel does (so float32
inputs pick the same windows). Indices are flat positions in each input plane; the backward
scatters through them with max pooling's machinery."""
import numpy as np

from .._tensor import Tensor, xp_of
from .pooling._common import _grad_enabled, _max_result, _pair_of

__all__ = []
METHODS = []
FUNCTIONAL = ["fractional_max_pool2d", "fractional_max_pool3d",
              "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

_PAIRS = {nd: _pair_of(f"FractionalMaxPool{nd}DBackward0",
                       f"FractionalMaxPool{nd}DBackwardBackward0") for nd in (2, 3)}
_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(value, n):
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * n


def _starts(samples, in_size, out_size, k, dtype):
    """Window starts (planes..., out_size) from the samples (planes...) of one dim."""
    seq = np.empty(samples.shape + (out_size,), np.int64)
    if out_size > 1:
        if dtype in (np.float32, np.float64):
            def r(v):
                return v
            ct = dtype.type
        else:
            # half types: every step of PyTorch's formula rounds to the input's type
            def r(v):
                return np.asarray(v).astype(dtype).astype(np.float32)
            ct = np.float32
        alpha = r(ct(in_size - k) / ct(out_size - 1))
        u = samples.astype(ct)
        i = np.arange(out_size - 1, dtype=ct)
        first = r(r(i + u[..., None]) * alpha).astype(np.int64)
        seq[..., :-1] = first - r(u * alpha).astype(np.int64)[..., None]
    if out_size > 0:
        seq[..., -1] = in_size - k
    return seq


def _fractional(input, nd, kernel_size, output_size, samples, return_indices):
    fname = f"fractional_max_pool{nd}d"
    where = fname + "()" if nd == 2 else "fractional_max_pool3d_out()"
    words = "Ints" if nd == 2 else "three Ints"
    if isinstance(samples, Tensor) and samples.requires_grad and _grad_enabled():
        raise RuntimeError(f"The function '{fname}' is not differentiable with respect to "
                           "argument 'random_samples'. This input cannot have requires_grad "
                           "True.")
    k, o = _tuple(kernel_size, nd), _tuple(output_size, nd)
    if len(k) != nd:
        raise RuntimeError(f"{fname}: kernel_size must either be a single Int or tuple of {words}")
    if len(o) != nd:
        raise RuntimeError(f"{fname}: output_size must either be a single Int or tuple of {words}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    batched = input.ndim == nd + 2
    for d in range(int(batched), input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {d} "
                               "being empty.")
    size = tuple(input.shape[input.ndim - nd:])
    for d in range(nd):
        # 3-d pooling demands one spare row more than 2-d (PyTorch's checks differ so)
        fits = o[d] + k[d] - 1 <= size[d] if nd == 2 else o[d] + k[d] - 1 < size[d]
        if not fits:
            name = _DIM_NAMES[nd][d]
            raise RuntimeError(f"{where}: pool {name} {k[d]} too large relative to input "
                               f"{name} {size[d]}")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    n_batch = input.shape[0] if batched else 1
    planes = input.shape[1] if batched else input.shape[0]
    if samples.shape[0] < n_batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{fname}_out_frame\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    xp = xp_of(input)
    x = input._array.reshape((n_batch, planes) + size)
    u = samples.detach().cpu()._array[:n_batch]
    np_dtype = input._array.dtype
    # 2-d samples are (width, height), 3-d ones (time, height, width)
    which = (1, 0) if nd == 2 else (0, 1, 2)
    # window element coordinates per dim: (N, P, out_d, k_d)
    coords = [xp.asarray(_starts(u[..., which[d]], size[d], o[d], k[d], np_dtype)[..., None]
                         + np.arange(k[d])) for d in range(nd)]
    n_idx = xp.arange(n_batch).reshape((n_batch,) + (1,) * (1 + 2 * nd))
    p_idx = xp.arange(planes).reshape((1, planes) + (1,) * (2 * nd))
    index = [n_idx, p_idx]
    for d in range(nd):  # windows laid out as (N, P, o_0 .. o_nd-1, k_0 .. k_nd-1)
        index.append(_place(coords[d], n_batch, planes, nd, d, o[d], k[d]))
    windows = x[tuple(index)]
    flat_windows = windows.reshape((n_batch, planes) + o + (-1,))
    # PyTorch's scan keeps the first maximum in row-major window order, but the last NaN
    isnan = xp.isnan(flat_windows)
    last_nan = flat_windows.shape[-1] - 1 - xp.argmax(isnan[..., ::-1], axis=-1)
    best = xp.where(isnan.any(axis=-1), last_nan, xp.argmax(flat_windows, axis=-1))
    vals = xp.take_along_axis(flat_windows, best[..., None], axis=-1)[..., 0]
    offsets = xp.unravel_index(best, k) if nd > 1 else (best,)
    flat = None
    for d in range(nd):
        start = _place_start(coords[d], n_batch, planes, nd, d, o[d])
        pos = start + offsets[d]
        flat = pos if flat is None else flat * size[d] + pos
    flat = flat.astype(np.int64)
    lead = input.shape[:input.ndim - nd]
    vals = vals.reshape(tuple(lead) + o)
    flat = flat.reshape(tuple(lead) + o)
    return _max_result(input, vals, flat, size, _PAIRS[nd], True, return_indices, nd)


def _place(coord, n_batch, planes, nd, d, o, k):
    """(N, P, o, k) coordinates of dim d, shaped to broadcast over (N, P, *outs, *ks)."""
    shape = [n_batch, planes] + [1] * (2 * nd)
    shape[2 + d], shape[2 + nd + d] = o, k
    return coord.reshape(shape)


def _place_start(coord, n_batch, planes, nd, d, o):
    """Window starts of dim d shaped to broadcast over (N, P, *outs)."""
    shape = [n_batch, planes] + [1] * nd
    shape[2 + d] = o
    return coord[..., 0].reshape(shape)


def _output_size(input, nd, output_size, output_ratio):
    fname = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fname} requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{fname} requires output_ratio to either be a single Int or "
                             "tuple of Ints.")
        ratio = _tuple(output_ratio, nd)
        output_size = [int(input.size(d - nd) * ratio[d]) for d in range(nd)]
    return output_size


def _random(input, nd, samples):
    if samples is None:
        from .random_ops import rand
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    return samples


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    output_size = _output_size(input, 2, output_size, output_ratio)
    samples = _random(input, 2, _random_samples)
    return _fractional(input, 2, kernel_size, output_size, samples, True)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    output_size = _output_size(input, 3, output_size, output_ratio)
    samples = _random(input, 3, _random_samples)
    return _fractional(input, 3, kernel_size, output_size, samples, True)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]
