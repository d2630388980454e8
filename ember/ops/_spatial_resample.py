"""Resampling half of `spatial.py` (that family lists these names): interpolate/upsample as
axis maps (grid_sample and affine_grid live in `_grid_sample.py`)."""
import builtins
import math
import warnings

import numpy as np

from .._memory_format import follow_channels_last
from .._tensor import make_tensor, Tensor, xp_of
from ._axis_maps import AxisMap, _map, _pair

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


def _cubic_coeffs(t, A=-0.75):
    """Keys' cubic convolution weights of the four taps at offsets -1, 0, 1, 2 from floor(x),
    for t = x - floor(x); arithmetic only, so t may be an array or an ember Tensor."""
    def near(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_coeffs_grad(t, A=-0.75):
    """d/dt of `_cubic_coeffs(t)`."""
    def near(x):
        return (3 * (A + 2) * x - 2 * (A + 3)) * x

    def far(x):
        return (3 * A * x - 10 * A) * x + 8 * A
    return [far(t + 1), near(t), -near(1 - t), -far(2 - t)]


def _cubic_map(axis, n_in, n_out, scale, align, ft):
    r = _area_scale(n_in, n_out, align, scale, ft)
    j = np.arange(n_out).astype(ft)
    src = r * j if align else r * (j + ft(0.5)) - ft(0.5)
    i = np.floor(src)
    t = np.clip(src - i, 0, 1).astype(ft)
    w = np.stack(_cubic_coeffs(t, ft(-0.75))).astype(ft)
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
        return follow_channels_last(_upsample_aa(input, mode, out_size, scales, align_corners),
                                    input)
    wanted = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2, 3),
              "linear": (1,), "bilinear": (2,), "bicubic": (2,), "trilinear": (3,)}
    if mode in wanted and dim in wanted[mode]:
        if out_size is None:
            out_size = [builtins.int(input.shape[i + 2] * scales[i]) for i in range(dim)]
        if mode == "area":
            from . import pooling
            return getattr(pooling, f"adaptive_avg_pool{dim}d")(input, out_size)
        return follow_channels_last(_upsample(input, mode, out_size, scales, align_corners),
                                    input)
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
                                  f"'{x.dtype._scalar_name}'")
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
            f"\"compute_index_ranges_weights\" not implemented for '{x.dtype._scalar_name}'")
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
