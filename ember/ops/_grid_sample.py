"""grid_sample and affine_grid for `spatial.py` (that family lists these names): grid_sample
gathers the corners (bilinear, nearest) or the 4x4 neighbourhood (bicubic) of each sample
point, and its backward is written with ember ops (gather, scatter_add), so it is
differentiable again; affine_grid is one matmul with a fixed base grid."""
import builtins
import math
import warnings

import numpy as np

from .._tensor import make_tensor, xp_of
from ._graph import Node, record
from ._spatial_resample import _cubic_coeffs, _cubic_coeffs_grad


# ---- grid_sample -----------------------------------------------------------------------------
# the mode names and the integers torch.grid_sampler takes for them (F re-exports both)
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def _reflect(xp, x, twice_low, twice_high):
    """PyTorch's reflect_coordinates with its derivative (+1 or -1)."""
    if twice_low == twice_high:
        return xp.zeros_like(x), xp.zeros_like(x)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = x - lo
    sign = xp.where(x < 0, -1.0, 1.0).astype(x.dtype)
    x = xp.abs(x)
    extra = xp.fmod(x, span)
    flips = xp.floor(x / span)
    even = (flips % 2) == 0
    out = xp.where(even, extra + lo, span - extra + lo)
    return out.astype(x.dtype), xp.where(even, sign, -sign).astype(x.dtype)


def _clip(xp, x, limit):
    inside = (x > 0) & (x < limit - 1)
    return xp.clip(x, 0, limit - 1).astype(x.dtype), inside.astype(x.dtype)


def _source(xp, g, size, padding_mode, align):
    """Pixel coordinates of normalised grid values along one dim, and d(coord)/d(grid)."""
    if align:
        x = (g + 1) / 2 * (size - 1)
        mult = (size - 1) / 2
    else:
        x = ((g + 1) * size - 1) / 2
        mult = size / 2
    mult = xp.full(g.shape, mult, g.dtype)
    if padding_mode == 1:  # border
        x, m = _clip(xp, x, size)
        mult = mult * m
    elif padding_mode == 2:  # reflection
        if align:
            x, m = _reflect(xp, x, 0, 2 * (size - 1))
        else:
            x, m = _reflect(xp, x, -1, 2 * size - 1)
        x, m2 = _clip(xp, x, size)
        mult = mult * m * m2
    return x.astype(g.dtype), mult


def _pad_tap(xp, p, size, padding_mode, align):
    """Where bicubic's tap at integer position p reads (it pads each tap, not the sample
    point as the other modes do), and whether it reads anything at all (zeros padding)."""
    if padding_mode == 0:
        return p, (p >= 0) & (p <= size - 1)
    if padding_mode == 2:
        p = _reflect(xp, p, 0, 2 * (size - 1))[0] if align else \
            _reflect(xp, p, -1, 2 * size - 1)[0]
    return _clip(xp, p, size)[0], True


def _corners(xp, grid, size, mode, padding_mode, align):
    """Per dim (grid's last-dim order: x, y, z) the source coordinate pieces, and per tap
    (flat index into the input plane (N, L), valid mask, the tap's offset index per dim):
    the 2**nd corners around each point (bilinear), its 4x4 neighbourhood (bicubic), or the
    nearest pixel."""
    nd = len(size)
    n = grid.shape[0]
    g = grid.reshape(n, math.prod(grid.shape[1:-1]), nd)  # sizes: an empty batch too
    coords = []
    for k in range(nd):
        s = size[nd - 1 - k]
        x, mult = _source(xp, g[..., k], s, 0 if mode == 2 else padding_mode, align)
        coords.append((x, mult, s))
    strides = [math.prod(size[nd - k:]) for k in range(nd)]  # dim of grid coord k: stride
    corners = []
    if mode == 1:  # nearest: round half to even, as nearbyint
        flat, valid = 0, True
        for k, (x, _, s) in enumerate(coords):
            p = xp.rint(x)
            valid = valid & (p >= 0) & (p <= s - 1)
            flat = flat + xp.clip(p, 0, s - 1).astype(np.int64) * strides[k]
        corners.append((flat, valid, None))
        return coords, corners, None
    base = [xp.floor(x) for x, _, _ in coords]
    offsets = (-1, 0, 1, 2) if mode == 2 else (0, 1)
    for taps in np.ndindex(*(len(offsets),) * nd):
        flat, valid = 0, True
        for k, ((_, _, s), b) in enumerate(zip(coords, base)):
            p = b + offsets[taps[k]]
            if mode == 2:
                p, ok = _pad_tap(xp, p, s, padding_mode, align)
            else:
                ok = (p >= 0) & (p <= s - 1)
            valid = valid & ok
            flat = flat + xp.clip(p, 0, s - 1).astype(np.int64) * strides[k]
        corners.append((flat, xp.broadcast_to(xp.asarray(valid), flat.shape), taps))
    return coords, corners, base


def _factors(frac, mode, grad=True):
    """Per dim, each tap's weight factor as a function of the fractional offset t, and its
    derivative in t; the taps' weights are products of one factor per dim. Arithmetic only,
    so t may be arrays (forward) or ember Tensors (backward, differentiable again)."""
    if mode == 2:
        return [(_cubic_coeffs(t), _cubic_coeffs_grad(t) if grad else None) for t in frac]
    return [([1 - t, t], [-1, 1]) for t in frac]


def _tap_weight(factors, taps, skip=None):
    w = None
    for k, (f, _) in enumerate(factors):
        if k != skip:
            w = f[taps[k]] if w is None else w * f[taps[k]]
    return w


class _GridSamplerBackward(Node):
    def backward(self, grad):
        x, grid = self.saved_tensors
        return _grid_backward(x, grid, grad, self.args, self._next)


def _frac(grid, coords, base):
    """Each dim's fractional offset as a function of the grid tensor: coord = mult*g + c."""
    nd = len(coords)
    g = grid.reshape(grid.shape[0], math.prod(grid.shape[1:-1]), nd)
    fr = []
    for k, ((x, mult, _), b) in enumerate(zip(coords, base)):
        const = make_tensor(x - mult * g._array[..., k] - b, grid._device)
        fr.append(g[..., k] * make_tensor(mult, grid._device) + const)
    return fr


def _gather_corner(xflat, flat):
    n, c, _ = xflat.shape
    idx = make_tensor(flat[:, None, :], xflat._device).expand(n, c, flat.shape[-1])
    return xflat.gather(2, idx)


def _grid_backward(x, grid, grad, args, nxt):
    size, mode, padding_mode, align = args
    xp = xp_of(x)
    n, c = x.shape[:2]
    coords, corners, base = _corners(xp, grid._array, size, mode, padding_mode, align)
    gflat = grad.reshape(n, c, math.prod(grad.shape[2:]))  # sizes: an empty batch too
    dev = x._device
    gx = ggrid = None
    valids = [make_tensor(v.astype(x._array.dtype), dev) for _, v, _ in corners]
    if mode == 1:
        weights = valids
    else:
        factors = _factors(_frac(grid, coords, base), mode)
        weights = [_tap_weight(factors, taps) * v for (_, _, taps), v in zip(corners, valids)]
    if nxt[0][0] is not None:
        from .shape import cat
        idx = make_tensor(xp.concatenate([f for f, _, _ in corners], axis=1)[:, None, :], dev)
        src = cat([gflat * w[:, None, :] for w in weights], 2)
        zeros = make_tensor(xp.zeros((n, c, math.prod(size)), x._array.dtype), dev)
        gx = zeros.scatter_add(2, idx.expand(n, c, idx.shape[-1]), src).reshape(x.shape)
    if nxt[1][0] is not None:
        if mode == 1:
            ggrid = make_tensor(xp.zeros(grid.shape, grid._array.dtype), dev)
        else:
            from .shape import stack
            xflat = x.reshape(n, c, math.prod(size))
            nd = len(size)
            parts = [None] * nd
            for (flat, _, taps), v in zip(corners, valids):
                s = (gflat * _gather_corner(xflat, flat)).sum(1) * v
                for k in range(nd):
                    d = factors[k][1][taps[k]]
                    other = _tap_weight(factors, taps, skip=k)
                    term = s * d if other is None else s * (other * d)
                    parts[k] = term if parts[k] is None else parts[k] + term
            ggrid = stack([p * make_tensor(coords[k][1], dev) for k, p in enumerate(parts)],
                          -1).reshape(grid.shape)
    return gx, ggrid


_GRID_NODES = {2: type("GridSampler2DBackward0", (_GridSamplerBackward,), {}),
               3: type("GridSampler3DBackward0", (_GridSamplerBackward,), {})}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """`torch.grid_sampler`: modes as integers (0 bilinear, 1 nearest, 2 bicubic; 0 zeros,
    1 border, 2 reflection)."""
    if input._device != grid._device:
        raise RuntimeError("grid_sampler(): expected input and grid to be on same device, but "
                           f"input is on {input.device} and grid is on {grid.device}")
    if input.dtype is not grid.dtype:
        raise RuntimeError("grid_sampler(): expected input and grid to have same dtype, but "
                           f"input has {input.dtype} and grid has {grid.dtype}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if interpolation_mode == 2 and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    xp = xp_of(input)
    n, c = input.shape[:2]
    size = tuple(input.shape[2:])
    args = (size, interpolation_mode, padding_mode, align_corners)
    xflat = input._array.reshape(n, c, math.prod(size))  # sizes: an empty batch too
    coords, corners, base = _corners(xp, grid._array, size, interpolation_mode, padding_mode,
                                     align_corners)
    if interpolation_mode == 1:
        flat, valid, _ = corners[0]
        idx = xp.broadcast_to(flat[:, None, :], (n, c, flat.shape[-1]))
        out = xp.take_along_axis(xflat, idx, axis=2) * valid[:, None, :].astype(xflat.dtype)
    else:
        factors = _factors([x - b for (x, _, _), b in zip(coords, base)], interpolation_mode,
                           grad=False)
        out = 0
        for flat, valid, taps in corners:
            w = _tap_weight(factors, taps) * valid
            idx = xp.broadcast_to(flat[:, None, :], (n, c, flat.shape[-1]))
            out = out + xp.take_along_axis(xflat, idx, axis=2) * w[:, None, :]
    out = out.astype(xflat.dtype).reshape((n, c) + tuple(grid.shape[1:-1]))
    res = make_tensor(out, input._device)
    node = record(_GRID_NODES[input.ndim - 2], (input, grid), res)
    if node is not None:
        node.save_for_backward(input, grid)
        node.args = args
    return res


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, GRID_SAMPLE_INTERPOLATION_MODES[mode],
                        GRID_SAMPLE_PADDING_MODES[padding_mode], align_corners)


# ---- affine_grid -----------------------------------------------------------------------------
def _linspace(n, align, dtype):
    if n <= 1:
        return np.zeros(max(n, 1), dtype)
    r = np.linspace(-1, 1, n, dtype=np.float64).astype(dtype)
    if not align:
        r = r * dtype((n - 1) / n)
    return r.astype(dtype)


def _base_grid(spatial, align, dtype):
    """(prod(spatial), nd + 1) rows [x, (y, (z,)) 1], x running along the last dim."""
    axes = [_linspace(s, align, dtype) for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in mesh[::-1]] + [np.ones(math.prod(spatial), dtype)]
    return np.stack(cols, 1)


class AffineGridGeneratorBackward0(Node):
    def backward(self, grad):
        n = grad.shape[0]
        k = self.base.shape[1] - 1
        g = grad.reshape(n, math.prod(grad.shape[1:-1]), k).transpose(1, 2)
        return g.matmul(make_tensor(self.base, grad._device).to(grad.dtype))


def affine_grid_generator(theta, size, align_corners):
    size = [builtins.int(s) for s in size]
    spatial = size[2:]
    dt = theta._array.dtype.type
    xp = xp_of(theta)
    base = xp.asarray(_base_grid(spatial, align_corners, dt))  # built on the host, copied once
    out = xp.matmul(base, theta._array.swapaxes(1, 2))
    res = make_tensor(out.reshape([size[0]] + spatial + [len(spatial)]), theta._device)
    node = record(AffineGridGeneratorBackward0, (theta,), res)
    if node is not None:
        node.base = base
    return res


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{tuple(size)}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{tuple(size)}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {tuple(size)}.")
    if min(size) <= 0:  # the batch too, as PyTorch checks it
        raise ValueError(f"Expected non-zero, positive output size. Got {tuple(size)}")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", UserWarning,
                      stacklevel=2)
    return affine_grid_generator(theta, size, align_corners)
