"""Resampling half of `spatial.py` (that family lists these names): interpolate/upsample as
axis maps, grid_sample as a corner gather whose backward is written with ember ops, and
affine_grid as one matmul with a fixed base grid."""
import builtins
import math
import warnings

import numpy as np

from .._state import grad as _grad_state
from .._tensor import Tensor, make_tensor
from ._graph import Node, _type_name, record
from .pointwise import xp_of

_DT = {"float32": np.float32, "float64": np.float64}


def _opmath(dtype, mode=None):
    """The dtype PyTorch computes an interpolation's coordinates in (its uint8 image path,
    with fixed-point weights, computes them in double)."""
    if np.dtype(dtype) == np.float64 or np.dtype(dtype) == np.uint8 and mode in _FIXED_POINT:
        return np.float64
    return np.float32


_FIXED_POINT = ("bilinear", "bicubic", "lanczos")


# ---- interpolate ---------------------------------------------------------------------------
def _scale_value(scale, n_in, n_out, ft):
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _nearest_map(axis, n_in, n_out, scale, exact, ft):
    s = _scale_value(scale, n_in, n_out, ft)
    j = np.arange(n_out).astype(ft)
    src = np.floor(((j + ft(0.5)) if exact else j) * s).astype(np.int64)
    return AxisMap(axis, np.minimum(src, n_in - 1)[None], None, n_in)


def _area_scale(n_in, n_out, align, scale, ft):
    if align:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    return _scale_value(scale, n_in, n_out, ft)


def _linear_map(axis, n_in, n_out, scale, align, ft):
    r = _area_scale(n_in, n_out, align, scale, ft)
    j = np.arange(n_out).astype(ft)
    src = r * j if align else np.maximum(r * (j + ft(0.5)) - ft(0.5), ft(0))
    i0 = src.astype(np.int64)
    i1 = i0 + (i0 < n_in - 1)
    l1 = (src - i0.astype(ft)).astype(ft)
    return AxisMap(axis, np.stack([i0, i1]), np.stack([ft(1) - l1, l1]), n_in)


def _cubic_map(axis, n_in, n_out, scale, align, ft):
    r = _area_scale(n_in, n_out, align, scale, ft)
    j = np.arange(n_out).astype(ft)
    src = r * j if align else r * (j + ft(0.5)) - ft(0.5)
    i = np.floor(src)
    t = np.clip(src - i, 0, 1).astype(ft)
    A = ft(-0.75)

    def cc1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def cc2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    w = np.stack([cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)]).astype(ft)
    i = i.astype(np.int64)
    idx = np.stack([np.clip(i + k, 0, n_in - 1) for k in (-1, 0, 1, 2)])
    return AxisMap(axis, idx, w, n_in)


_UPSAMPLE = {"nearest": "UpsampleNearest{}DBackward0",
             "nearest-exact": "UpsampleNearestExact{}DBackward0",
             "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
             "bicubic": "UpsampleBicubic2DBackward0", "trilinear": "UpsampleTrilinear3DBackward0"}


def _is_integer(x):
    return isinstance(x, (builtins.int, np.integer)) and not isinstance(x, builtins.bool) or \
        (isinstance(x, Tensor) and x.ndim == 0 and not x.is_floating_point())


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """`nn.functional.interpolate`: resize the spatial dims (all dims after the second)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(x) for x in size]}")
            out_size = [builtins.int(s) for s in size]
        else:
            out_size = [builtins.int(size)] * dim
    elif scale_factor is not None:
        out_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, "
                    "C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [builtins.float(s) for s in scale_factor]
        else:
            scales = [builtins.float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        out_size = [math.floor(input.shape[i + 2] * scales[i]) for i in range(dim)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:
        if out_size is None:
            out_size = [builtins.int(input.shape[i + 2] * scales[i]) for i in range(dim)]
        return _upsample_aa(input, mode, out_size, scales, align_corners)
    wanted = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2, 3),
              "linear": (1,), "bilinear": (2,), "bicubic": (2,), "trilinear": (3,)}
    if mode in wanted and dim in wanted[mode]:
        if out_size is None:
            out_size = [builtins.int(input.shape[i + 2] * scales[i]) for i in range(dim)]
        if mode == "area":
            from . import pooling
            return getattr(pooling, f"adaptive_avg_pool{dim}d")(input, out_size)
        return _upsample(input, mode, out_size, scales, align_corners)
    need = {"linear": 3, "bilinear": 4, "trilinear": 5}
    if mode in need and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{need[mode]}D input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | "
        f"trilinear | lanczos | area | nearest-exact (got {mode})")


# the kernel PyTorch names when a weighted mode meets an integer (or complex) dtype
_WEIGHING_KERNEL = {"linear": "compute_indices_weights_linear",
                    "trilinear": "compute_indices_weights_linear",
                    "bilinear": "upsample_bilinear2d_channels_last",
                    "bicubic": "compute_indices_weights_cubic"}


def _check_sizes(in_size, out_size):
    names = "DHW"[3 - len(out_size):]
    if any(s <= 0 for s in in_size) or any(s <= 0 for s in out_size):
        ins = ", ".join(f"{n}: {s}" for n, s in zip(names, in_size))
        outs = ", ".join(f"{n}: {s}" for n, s in zip(names, out_size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({ins}) output ({outs})")


def _upsample(x, mode, out_size, scales, align):
    nd = len(out_size)
    in_size = x.shape[2:]
    _check_sizes(in_size, out_size)
    if not x.is_floating_point() and mode in _WEIGHING_KERNEL \
            and not (x._array.dtype == np.uint8 and mode in _FIXED_POINT):
        raise NotImplementedError(f"\"{_WEIGHING_KERNEL[mode]}\" not implemented for "
                                  f"'{_type_name(x.dtype)}'")
    ft = _opmath(x._array.dtype, mode)
    maps = []
    for d in range(nd):
        axis = d - nd
        n_in, n_out = in_size[d], out_size[d]
        s = scales[d] if scales is not None else None
        if mode in ("nearest", "nearest-exact"):
            maps.append(_nearest_map(axis, n_in, n_out, s, mode == "nearest-exact", ft))
        elif mode == "bicubic":
            maps.append(_cubic_map(axis, n_in, n_out, s, align, ft))
        else:
            maps.append(_linear_map(axis, n_in, n_out, s, align, ft))
    if x._array.dtype == np.uint8 and mode in ("bilinear", "bicubic"):
        return _resample_uint8(x, maps[::-1])
    return _map(x, maps[::-1], _pair(_UPSAMPLE[mode].format(nd)))


# ---- antialiased interpolate (bilinear, bicubic, lanczos on 4-D input) -------------------------
def _triangle(x):
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0)


def _keys_cubic(x):
    """Keys' cubic with a = -0.5 (PIL's choice, which PyTorch's antialias path follows; the
    plain bicubic path uses a = -0.75)."""
    a = -0.5
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((x - 5) * x + 8) * x * a - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0))


def _lanczos3(x):
    return np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0)


# mode: (filter, its support radius at scale 1)
_AA_FILTERS = {"bilinear": (_triangle, 1), "bicubic": (_keys_cubic, 2), "lanczos": (_lanczos3, 3)}
_UPSAMPLE_AA = {"bilinear": "UpsampleBilinear2DAaBackward0",
                "bicubic": "UpsampleBicubic2DAaBackward0",
                "lanczos": "UpsampleLanczos2DAaBackward0"}


def _aa_map(axis, n_in, n_out, scale, align, mode, ft):
    """Output j averages the inputs under the filter centred on its source position; when
    downsampling (scale > 1) the filter is stretched by the scale so that every input pixel
    contributes, and each output's weights are normalised to sum to one."""
    if n_in == n_out:  # PyTorch leaves an unchanged dim alone, whatever the scale factor
        return AxisMap(axis, np.arange(n_in)[None], None, n_in)
    fn, radius = _AA_FILTERS[mode]
    s = _area_scale(n_in, n_out, align, scale, ft)
    stretch = s if s >= 1 else ft(1)
    support = ft(radius) * stretch
    centre = s * (np.arange(n_out).astype(ft) + ft(0.5))
    # truncation toward zero (C's int cast) then clamping: the taps PyTorch visits
    lo = np.maximum(np.trunc(centre - support + ft(0.5)).astype(np.int64), 0)
    hi = np.minimum(np.trunc(centre + support + ft(0.5)).astype(np.int64), n_in)
    taps = builtins.max(builtins.int((hi - lo).max()), 1)
    k = np.arange(taps)[:, None]
    idx = lo[None] + k
    inside = idx < hi[None]
    w = fn(((idx - centre[None]).astype(ft) + ft(0.5)) / stretch).astype(ft) * inside
    total = w.sum(0)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w).astype(ft)
    return AxisMap(axis, np.minimum(idx, n_in - 1), w, n_in)


def _upsample_aa(x, mode, out_size, scales, align):
    if x._array.dtype not in (np.float32, np.float64, np.uint8):
        raise NotImplementedError(
            f"\"compute_index_ranges_weights\" not implemented for '{_type_name(x.dtype)}'")
    _check_sizes(x.shape[2:], out_size)
    ft = _opmath(x._array.dtype, mode)
    maps = [_aa_map(d - 2, x.shape[2 + d], out_size[d], None if scales is None else scales[d],
                    align, mode, ft) for d in range(2)]
    if x._array.dtype == np.uint8:
        return _resample_uint8(x, maps[::-1])
    return _map(x, maps[::-1], _pair(_UPSAMPLE_AA[mode]))


def _int_weights(mat):
    """PIL-style fixed point, as PyTorch's uint8 resampling: the weights scaled by 2**p with
    p as large as keeps the biggest weight within int16 (at most 22 bits), rounded half away
    from zero."""
    top = float(mat.max())
    p = 0
    while p < 22 and builtins.int(0.5 + top * (1 << (p + 1))) < (1 << 15):
        p += 1
    scaled = mat * (1 << p)
    return np.where(mat >= 0, np.trunc(scaled + 0.5), np.trunc(scaled - 0.5)).astype(np.int64), p


def _resample_uint8(x, maps):
    """uint8 images resample one dim at a time in integer arithmetic, rounding and saturating
    to 0..255 after each pass (width first), so the values are PyTorch's to the last bit."""
    xp = xp_of(x)
    a = x._array
    for m in maps:
        w, p = _int_weights(m.dense(np, np.float64))
        w = w if xp is np else xp.asarray(w)
        ax = a.ndim + m.axis
        acc = xp.matmul(xp.moveaxis(a, ax, -1).astype(np.int64), w.T) + (1 << (p - 1))
        a = xp.moveaxis(xp.clip(acc >> p, 0, 255).astype(np.uint8), -1, ax)
    return make_tensor(xp.ascontiguousarray(a), x._device)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.",
                  UserWarning, stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", UserWarning, stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", UserWarning, stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- grid_sample -----------------------------------------------------------------------------
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
        mult = np.full((), (size - 1) / 2)
    else:
        x = ((g + 1) * size - 1) / 2
        mult = np.full((), size / 2)
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


def _corners(xp, grid, size, mode, padding_mode, align):
    """Per dim (grid's last-dim order: x, y, z) the source coordinate pieces, and per corner
    (flat index into the input plane (N, L), valid mask, which side per dim)."""
    nd = len(size)
    n = grid.shape[0]
    g = grid.reshape(n, -1, nd)
    coords = []
    for k in range(nd):
        s = size[nd - 1 - k]
        x, mult = _source(xp, g[..., k], s, padding_mode, align)
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
    for sides in np.ndindex(*(2,) * nd):
        flat, valid = 0, True
        for k, ((_, _, s), b) in enumerate(zip(coords, base)):
            p = b + sides[k]
            valid = valid & (p >= 0) & (p <= s - 1)
            flat = flat + xp.clip(p, 0, s - 1).astype(np.int64) * strides[k]
        corners.append((flat, valid, sides))
    return coords, corners, base


def _weights(frac, sides, valid):
    """A corner's weight (ember ops, so it is differentiable in the grid)."""
    w = None
    for f, side in zip(frac, sides):
        term = f if side else 1 - f
        w = term if w is None else w * term
    return w * valid


class _GridSamplerBackward(Node):
    def backward(self, grad):
        x, grid = self.saved_tensors
        return _grid_backward(x, grid, grad, self.args, self._next)


def _frac(grid, coords, base):
    """Each dim's fractional offset as a function of the grid tensor: coord = mult*g + c."""
    nd = len(coords)
    g = grid.reshape(grid.shape[0], -1, nd)
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
    gflat = grad.reshape(n, c, -1)
    dev = x._device
    gx = ggrid = None
    if mode == 1:
        weights = [make_tensor(v.astype(x._array.dtype), dev) for _, v, _ in corners]
    else:
        frac = _frac(grid, coords, base)
        weights = [_weights(frac, sides, make_tensor(v.astype(x._array.dtype), dev))
                   for _, v, sides in corners]
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
            xflat = x.reshape(n, c, -1)
            nd = len(size)
            parts = [None] * nd
            for (flat, valid, sides) in corners:
                s = (gflat * _gather_corner(xflat, flat)).sum(1) * \
                    make_tensor(valid.astype(x._array.dtype), dev)
                for k in range(nd):
                    d = None
                    for e in range(nd):
                        if e != k:
                            t = frac[e] if sides[e] else 1 - frac[e]
                            d = t if d is None else d * t
                    term = s if d is None else s * d
                    parts[k] = (term if sides[k] else -term) if parts[k] is None else \
                        (parts[k] + term if sides[k] else parts[k] - term)
            ggrid = stack([p * make_tensor(coords[k][1], dev) for k, p in enumerate(parts)],
                          -1).reshape(grid.shape)
    return gx, ggrid


_GRID_NODES = {2: type("GridSampler2DBackward0", (_GridSamplerBackward,), {}),
               3: type("GridSampler3DBackward0", (_GridSamplerBackward,), {})}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """`torch.grid_sampler`: modes as integers (0 bilinear, 1 nearest; 0 zeros, 1 border,
    2 reflection)."""
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
    if interpolation_mode == 2:
        raise NotImplementedError("grid_sample(mode='bicubic') is not supported by ember")
    xp = xp_of(input)
    n, c = input.shape[:2]
    size = tuple(input.shape[2:])
    args = (size, interpolation_mode, padding_mode, align_corners)
    xflat = input._array.reshape(n, c, -1)
    _, corners, base = _corners(xp, grid._array, size, interpolation_mode, padding_mode,
                                align_corners)
    if interpolation_mode == 1:
        flat, valid, _ = corners[0]
        idx = xp.broadcast_to(flat[:, None, :], (n, c, flat.shape[-1]))
        out = xp.take_along_axis(xflat, idx, axis=2) * valid[:, None, :].astype(xflat.dtype)
    else:
        coords = _corners(xp, grid._array, size, 0, padding_mode, align_corners)[0]
        frac = [x - b for (x, _, _), b in zip(coords, base)]
        out = 0
        for flat, valid, sides in corners:
            w = valid.astype(xflat.dtype)
            for f, side in zip(frac, sides):
                w = w * (f if side else 1 - f)
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
    return grid_sampler(input, grid, ("bilinear", "nearest", "bicubic").index(mode),
                        ("zeros", "border", "reflection").index(padding_mode), align_corners)


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
        g = grad.reshape(n, -1, k).transpose(1, 2)
        return g.matmul(make_tensor(self.base, grad._device).to(grad.dtype))


def affine_grid_generator(theta, size, align_corners):
    size = [builtins.int(s) for s in size]
    spatial = size[2:]
    dt = theta._array.dtype.type
    base = _base_grid(spatial, align_corners, dt)
    xp = xp_of(theta)
    if xp is not np:
        base = xp.asarray(base)
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
    if min(spatial) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {tuple(size)}")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", UserWarning,
                      stacklevel=2)
    return affine_grid_generator(theta, size, align_corners)


from .spatial import AxisMap, _map, _pair  # noqa: E402  (spatial imports this module late)
del _grad_state, _DT
