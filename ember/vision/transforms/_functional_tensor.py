"""Image transforms on CxHxW (or ...xCxHxW) tensors, computed on the tensor's backend array.

ember.nn.functional has no interpolate/pad/grid_sample yet, so resampling is done here on the
raw NumPy/CuPy array (the same module serves both devices). The formulas follow PyTorch's
kernels (upsample index rules, antialias weights, grid_sample with align_corners=False) so the
values match torchvision's tensor path. Results are not differentiable.
"""
import math
import sys

import numpy as np

from ... import dtypes
from ..._tensor import Tensor

_INT_MAX = {dtypes.uint8: 255, dtypes.int8: 127, dtypes.int16: 32767,
            dtypes.int32: 2 ** 31 - 1, dtypes.int64: 2 ** 63 - 1}


def _xp(arr):
    return np if isinstance(arr, np.ndarray) else sys.modules["cupy"]


def _wrap(arr, like):
    return Tensor._wrap(arr, like.device)


def max_value(dtype):
    if dtype.is_floating_point:
        return 1.0
    if dtype is dtypes.bool:
        return 1
    return _INT_MAX[dtype]


def assert_image_tensor(img):
    if not isinstance(img, Tensor) or img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    assert_image_tensor(img)
    channels = 1 if img.ndim == 2 else img.shape[-3]
    return [channels, img.shape[-2], img.shape[-1]]


def _to_float(arr):
    """(float array, original dtype): integer images are resampled in float32."""
    if arr.dtype.kind == "f":
        return arr, None
    return arr.astype(np.float32), arr.dtype


def _from_float(arr, orig):
    if orig is None:
        return arr
    xp = _xp(arr)
    info = np.iinfo(orig) if orig.kind in "iu" else None
    arr = xp.round(arr)
    if info is not None:
        arr = xp.clip(arr, info.min, info.max)
    return arr.astype(orig)


# ---- geometry -----------------------------------------------------------------------
def crop(img, top, left, height, width):
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                   max(right - w, 0), max(bottom - h, 0)]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], padding, fill=0)
    return img[..., top:bottom, left:right]


def hflip(img):
    assert_image_tensor(img)
    return _wrap(img._array[..., ::-1].copy(), img)


def vflip(img):
    assert_image_tensor(img)
    return _wrap(img._array[..., ::-1, :].copy(), img)


def pad(img, padding, fill=0, padding_mode="constant"):
    """padding is [left, top, right, bottom]; negative values crop, as in torch's pad."""
    assert_image_tensor(img)
    if isinstance(padding, int):
        padding = [padding] * 4
    padding = list(padding)
    if len(padding) == 1:
        padding = padding * 4
    elif len(padding) == 2:
        padding = padding * 2
    left, top, right, bottom = padding
    arr = img._array
    xp = _xp(arr)
    h, w = arr.shape[-2:]
    # negative padding crops first
    arr = arr[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
    left, top, right, bottom = (max(p, 0) for p in (left, top, right, bottom))
    widths = [(0, 0)] * (arr.ndim - 2) + [(top, bottom), (left, right)]
    if padding_mode == "constant":
        out = xp.pad(arr, widths, mode="constant", constant_values=fill if fill is not None else 0)
    else:
        mode = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[padding_mode]
        out = xp.pad(arr, widths, mode=mode)
    return _wrap(out, img)


# ---- resize -------------------------------------------------------------------------
def _aa_filter(mode):
    if mode == "bilinear":
        return 2, lambda x: np.clip(1.0 - np.abs(x), 0.0, None)
    a = -0.5  # PIL's (and PyTorch's antialias) bicubic

    def cubic(x):
        x = np.abs(x)
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))
    return 4, cubic


def _resize_matrix(in_size, out_size, mode, antialias):
    """(out_size, in_size) matrix W with out = W @ in along one axis."""
    W = np.zeros((out_size, in_size), np.float64)
    dst = np.arange(out_size)
    scale = in_size / out_size
    if mode == "nearest":
        # PyTorch: floor(dst * scale) with scale a float32 quotient
        src = np.floor(dst.astype(np.float32) * (np.float32(in_size) / np.float32(out_size)))
        W[dst, np.minimum(src.astype(np.int64), in_size - 1)] = 1.0
    elif mode == "nearest-exact":
        src = np.floor((dst + 0.5) * scale).astype(np.int64)
        W[dst, np.minimum(src, in_size - 1)] = 1.0
    elif antialias:
        interp, filt = _aa_filter(mode)
        support = interp * 0.5 * scale if scale >= 1.0 else interp * 0.5
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        for i in range(out_size):
            center = scale * (i + 0.5)
            xmin = max(int(center - support + 0.5), 0)
            xmax = min(int(center + support + 0.5), in_size)
            w = filt((np.arange(xmin, xmax) - center + 0.5) * invscale)
            total = w.sum()
            W[i, xmin:xmax] = w / total if total != 0 else w
    elif mode == "bilinear":
        src = np.maximum(scale * (dst + 0.5) - 0.5, 0.0)
        i0 = src.astype(np.int64)
        lam = src - i0
        i1 = np.where(i0 < in_size - 1, i0 + 1, i0)
        np.add.at(W, (dst, i0), 1.0 - lam)
        np.add.at(W, (dst, i1), lam)
    elif mode == "bicubic":
        a = -0.75  # PyTorch's non-antialiased bicubic
        src = scale * (dst + 0.5) - 0.5
        i0 = np.floor(src).astype(np.int64)
        t = src - i0

        def cc1(x):
            return ((a + 2) * x - (a + 3)) * x * x + 1

        def cc2(x):
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        coeffs = [cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)]
        for k in range(4):
            np.add.at(W, (dst, np.clip(i0 - 1 + k, 0, in_size - 1)), coeffs[k])
    else:
        raise ValueError(f"Interpolation mode '{mode}' is unsupported with Tensor input")
    return W


def resize(img, size, interpolation="bilinear", antialias=True):
    """size is the final [h, w]."""
    assert_image_tensor(img)
    if interpolation not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise ValueError("Interpolation mode should be either nearest, nearest-exact, bilinear "
                         f"or bicubic. Got {interpolation}")
    antialias = bool(antialias) and interpolation in ("bilinear", "bicubic")
    arr = img._array
    xp = _xp(arr)
    farr, orig = _to_float(arr)
    h, w = arr.shape[-2:]
    wh = xp.asarray(_resize_matrix(h, size[0], interpolation, antialias), dtype=farr.dtype)
    ww = xp.asarray(_resize_matrix(w, size[1], interpolation, antialias), dtype=farr.dtype)
    out = xp.matmul(xp.matmul(wh, farr), ww.T)
    if orig is not None and interpolation == "bicubic" and orig == np.uint8:
        out = xp.clip(out, 0, 255)
    return _wrap(xp.ascontiguousarray(_from_float(out, orig)), img)


# ---- affine / rotate ----------------------------------------------------------------
def _grid_sample(arr, ix, iy, mode):
    """Sample (..., C, H, W) at pixel coordinates ix, iy (oh, ow); zeros outside."""
    xp = _xp(arr)
    h, w = arr.shape[-2:]
    if mode == "nearest":
        xn, yn = xp.rint(ix).astype(np.int64), xp.rint(iy).astype(np.int64)
        valid = (xn >= 0) & (xn < w) & (yn >= 0) & (yn < h)
        vals = arr[..., xp.clip(yn, 0, h - 1), xp.clip(xn, 0, w - 1)]
        return vals * valid.astype(arr.dtype)
    x0, y0 = xp.floor(ix).astype(np.int64), xp.floor(iy).astype(np.int64)
    out = 0
    for dy in (0, 1):
        for dx in (0, 1):
            xs, ys = x0 + dx, y0 + dy
            wgt = (1 - xp.abs(ix - xs)) * (1 - xp.abs(iy - ys))
            valid = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
            vals = arr[..., xp.clip(ys, 0, h - 1), xp.clip(xs, 0, w - 1)]
            out = out + vals * (wgt * valid).astype(arr.dtype)
    return out


def compute_affine_output_size(matrix, w, h):
    pts = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                    [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]], np.float32)
    theta = np.array(matrix, np.float32).reshape(2, 3)
    new_pts = pts @ theta.T
    min_vals = new_pts.min(0) + np.array([w * 0.5, h * 0.5], np.float32)
    max_vals = new_pts.max(0) + np.array([w * 0.5, h * 0.5], np.float32)
    tol = 1e-4  # truncate so that ceil(1e-15) does not add a pixel
    cmax = np.ceil(np.trunc(max_vals / tol) * tol)
    cmin = np.floor(np.trunc(min_vals / tol) * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def affine(img, matrix, interpolation="nearest", fill=None, expand=False):
    """Inverse affine `matrix` (6 numbers, centred coordinates) as torchvision's grid path."""
    assert_image_tensor(img)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")
    arr = img._array
    h, w = arr.shape[-2:]
    ow, oh = compute_affine_output_size(matrix, w, h) if expand else (w, h)
    # torchvision's grid in the image's float dtype (rounding ties in 'nearest' depend on it):
    # base grid @ (theta^T / [w/2, h/2]), then grid_sample's ((g + 1) * size - 1) / 2
    ft = _to_float(arr[..., :0, :0])[0].dtype.type
    theta = np.asarray(matrix, ft).reshape(2, 3).T / np.asarray([0.5 * w, 0.5 * h], ft)
    x = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 + 0.5 - 1, ow).astype(ft)[None, :]
    y = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 + 0.5 - 1, oh).astype(ft)[:, None]
    gx = x * theta[0, 0] + y * theta[1, 0] + theta[2, 0]
    gy = x * theta[0, 1] + y * theta[1, 1] + theta[2, 1]
    return _apply_grid(img, gx, gy, interpolation, fill)


def _apply_grid(img, gx, gy, interpolation, fill):
    """grid_sample (zeros padding, align_corners=False) at normalized coordinates gx, gy,
    then the fill colour where the sample fell outside, as torchvision's _apply_grid_transform."""
    arr = img._array
    xp = _xp(arr)
    farr, orig = _to_float(arr)
    ft = farr.dtype.type
    h, w = arr.shape[-2:]
    ix = ((gx + ft(1)) * ft(w) - ft(1)) / ft(2)
    iy = ((gy + ft(1)) * ft(h) - ft(1)) / ft(2)
    ix, iy = xp.asarray(ix), xp.asarray(iy)
    out = _grid_sample(farr, ix, iy, interpolation)
    if fill is not None:
        mask = _grid_sample(xp.ones((1,) + farr.shape[-2:], farr.dtype), ix, iy, interpolation)
        fill_list = list(fill) if isinstance(fill, (list, tuple)) else [float(fill)]
        fill_img = xp.asarray(fill_list, dtype=farr.dtype).reshape(-1, 1, 1)
        if interpolation == "nearest":
            out = xp.where(mask < 0.5, fill_img, out)
        else:
            out = out * mask + (1.0 - mask) * fill_img
    return _wrap(xp.ascontiguousarray(_from_float(out, orig)), img)


def _check_grid_inputs(img, interpolation, fill):
    assert_image_tensor(img)
    channels = get_dimensions(img)[0]
    if fill is not None and isinstance(fill, (tuple, list)) and 1 < len(fill) != channels:
        raise ValueError("The number of elements in 'fill' cannot broadcast to match the number "
                         f"of channels of the image ({len(fill)} != {channels})")
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")


def perspective(img, perspective_coeffs, interpolation="bilinear", fill=None):
    """Pillow's PERSPECTIVE mapping: output pixel (x, y) samples the input at
    ((a x + b y + c) / (g x + h y + 1), (d x + e y + f) / (g x + h y + 1)), pixel centres."""
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor.")
    if len(perspective_coeffs) != 8:
        raise ValueError("Argument coeffs should have 8 float values")
    _check_grid_inputs(img, interpolation, fill)
    oh, ow = img.shape[-2:]
    ft = np.dtype(img._array.dtype if img.is_floating_point() else np.float32).type
    a, b, c, d, e, f, g, hh = (ft(v) for v in perspective_coeffs)
    x = np.linspace(0.5, ow * 1.0 + 0.5 - 1.0, ow).astype(ft)[None, :]
    y = np.linspace(0.5, oh * 1.0 + 0.5 - 1.0, oh).astype(ft)[:, None]
    den = x * g + y * hh + ft(1)
    gx = (x * (a / ft(0.5 * ow)) + y * (b / ft(0.5 * ow)) + c / ft(0.5 * ow)) / den - ft(1)
    gy = (x * (d / ft(0.5 * oh)) + y * (e / ft(0.5 * oh)) + f / ft(0.5 * oh)) / den - ft(1)
    return _apply_grid(img, gx, gy, interpolation, fill)


def elastic_transform(img, displacement, interpolation="bilinear", fill=None):
    """Sample at the identity grid plus `displacement` (1 x H x W x 2, normalized units)."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
    _check_grid_inputs(img, interpolation, fill)
    h, w = img.shape[-2:]
    disp = displacement.detach().to(img.device)._array
    xp = _xp(img._array)
    ft = np.dtype(img._array.dtype if img.is_floating_point() else np.float32).type
    # the identity grid is float32, as torchvision's linspace; the sum promotes as torch would
    gx0 = np.linspace((-w + 1) / w, (w - 1) / w, w, dtype=np.float32)[None, :]
    gy0 = np.linspace((-h + 1) / h, (h - 1) / h, h, dtype=np.float32)[:, None]
    gx = (xp.asarray(gx0) + disp[0, ..., 0]).astype(ft)
    gy = (xp.asarray(gy0) + disp[0, ..., 1]).astype(ft)
    return _apply_grid(img, gx, gy, interpolation, fill)


# ---- color --------------------------------------------------------------------------
def convert_image_dtype(image, dtype):
    if not isinstance(image, Tensor):
        raise TypeError("Input img should be Tensor Image")
    if image.dtype is dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype is dtypes.float32 and dtype in (dtypes.int32, dtypes.int64)) or (
                image.dtype is dtypes.float64 and dtype is dtypes.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed "
                               "safely.")
        eps = 1e-3
        return image.mul(float(max_value(dtype)) + 1.0 - eps).to(dtype)
    input_max = float(max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / input_max
    output_max = float(max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return _wrap(image._array // factor, image).to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def _blend_arr(a1, a2, ratio, dtype):
    xp = _xp(a1)
    bound = 1.0 if dtype.kind == "f" else float(np.iinfo(dtype).max)
    ratio = float(ratio)
    out = xp.clip(ratio * a1.astype(np.float32 if dtype.kind != "f" else dtype) +
                  (1.0 - ratio) * a2, 0, bound)
    return out.astype(dtype)


def _gray_arr(arr):
    """PyTorch's luma (0.2989, 0.587, 0.114), cast back to the input dtype (truncating)."""
    r, g, b = arr[..., 0, :, :], arr[..., 1, :, :], arr[..., 2, :, :]
    ft = arr.dtype if arr.dtype.kind == "f" else np.float32
    lum = (0.2989 * r.astype(ft) + 0.587 * g.astype(ft) + 0.114 * b.astype(ft))
    return lum.astype(arr.dtype)[..., None, :, :]


def _assert_channels(img, permitted):
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but "
                        f"found {c}")


def rgb_to_grayscale(img, num_output_channels=1):
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found "
                        f"{img.ndim}")
    _assert_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    arr = img._array
    gray = _gray_arr(arr) if arr.shape[-3] == 3 else arr.copy()
    if num_output_channels == 3:
        gray = _xp(arr).broadcast_to(gray, arr.shape)
    return _wrap(gray, img)


def adjust_brightness(img, factor):
    _assert_channels(img, [1, 3])
    arr = img._array
    return _wrap(_blend_arr(arr, 0.0, factor, arr.dtype), img)


def adjust_contrast(img, factor):
    _assert_channels(img, [3, 1])
    arr = img._array
    xp = _xp(arr)
    ft = arr.dtype if arr.dtype.kind == "f" else np.float32
    src = _gray_arr(arr) if arr.shape[-3] == 3 else arr
    mean = xp.mean(src.astype(ft), axis=(-3, -2, -1), keepdims=True)
    return _wrap(_blend_arr(arr, mean, factor, arr.dtype), img)


def adjust_saturation(img, factor):
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    arr = img._array
    return _wrap(_blend_arr(arr, _gray_arr(arr), factor, arr.dtype), img)


def _rgb2hsv(arr):
    xp = _xp(arr)
    r, g, b = arr[..., 0, :, :], arr[..., 1, :, :], arr[..., 2, :, :]
    maxc, minc = arr.max(axis=-3), arr.min(axis=-3)
    eqc = maxc == minc
    cr = maxc - minc
    ones = xp.ones_like(maxc)
    s = cr / xp.where(eqc, ones, maxc)
    crd = xp.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / crd, (maxc - g) / crd, (maxc - b) / crd
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = xp.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return h.astype(arr.dtype), s, maxc


def _hsv2rgb(h, s, v):
    xp = _xp(h)
    i = xp.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int32) % 6
    p = xp.clip(v * (1.0 - s), 0.0, 1.0)
    q = xp.clip(v * (1.0 - s * f), 0.0, 1.0)
    t = xp.clip(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    out = [xp.select([i == k for k in range(6)], [c[ch] for c in choices]) for ch in range(3)]
    return xp.stack(out, axis=-3).astype(h.dtype)


def adjust_hue(img, hue_factor):
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor image")
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    orig = img.dtype
    f = convert_image_dtype(img, dtypes.float32)._array
    h, s, v = _rgb2hsv(f)
    h = (h + hue_factor) % 1.0
    return convert_image_dtype(_wrap(_hsv2rgb(h, s, v), img), orig)


def gaussian_blur(img, kernel_size, sigma):
    """kernel_size, sigma: [x, y]; reflect padding, as torchvision (a separable 2-D kernel)."""
    assert_image_tensor(img)
    arr = img._array
    xp = _xp(arr)
    farr, orig = _to_float(arr)

    def kernel1d(k, s):
        half = (k - 1) * 0.5
        x = np.linspace(-half, half, k)
        pdf = np.exp(-0.5 * (x / s) ** 2)
        return (pdf / pdf.sum()).astype(farr.dtype)
    kx, ky = kernel1d(kernel_size[0], sigma[0]), kernel1d(kernel_size[1], sigma[1])
    px, py = kernel_size[0] // 2, kernel_size[1] // 2
    widths = [(0, 0)] * (farr.ndim - 2) + [(py, py), (px, px)]
    padded = xp.pad(farr, widths, mode="reflect")
    h, w = farr.shape[-2:]
    tmp = sum(float(kx[k]) * padded[..., :, k:k + w] for k in range(len(kx)))
    out = sum(float(ky[k]) * tmp[..., k:k + h, :] for k in range(len(ky)))
    return _wrap(xp.ascontiguousarray(_from_float(out.astype(farr.dtype), orig)), img)


def erase(img, i, j, h, w, v, inplace=False):
    assert_image_tensor(img)
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


def inverse_affine_matrix(center, angle, translate, scale, shear):
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    matrix = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
    matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty)
    matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty)
    matrix[2] += cx
    matrix[5] += cy
    return matrix
