"""Point and histogram operations on (..., C, H, W) tensors: gamma, invert, posterize,
solarize, sharpness, autocontrast, equalize (torchvision's tensor path, value for value).

Written with ember ops, so float images keep their autograd graph as in torchvision; the
histogram of `equalize` is counted on the backend array (it is integer work with no gradient).
"""
from ... import dtypes
from ..._tensor import Tensor
from ._functional_tensor import (_assert_channels, _xp, _wrap, assert_image_tensor,
                                 convert_image_dtype, max_value)


def _require_3d(img):
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found "
                        f"{img.ndim}")


def _blend(img1, img2, ratio):
    """ratio * img1 + (1 - ratio) * img2, clamped to the dtype's range, in img1's dtype."""
    ratio = float(ratio)
    bound = max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_gamma(img, gamma, gain=1):
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be a Tensor.")
    _assert_channels(img, [1, 3])
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    dtype = img.dtype
    result = img if img.is_floating_point() else convert_image_dtype(img, dtypes.float32)
    result = (gain * result.pow(gamma)).clamp(0, 1)
    return convert_image_dtype(result, dtype)


def invert(img):
    assert_image_tensor(img)
    _require_3d(img)
    _assert_channels(img, [1, 3])
    return max_value(img.dtype) - img


def posterize(img, bits):
    assert_image_tensor(img)
    _require_3d(img)
    if img.dtype is not dtypes.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _assert_channels(img, [1, 3])
    # keep the top `bits` bits: ~(2 ** (8 - bits) - 1) as an unsigned byte
    mask = (-(2 ** (8 - bits))) & 0xFF
    return _wrap(img._array & img._array.dtype.type(mask), img)


def solarize(img, threshold):
    from ...ops import where
    assert_image_tensor(img)
    _require_3d(img)
    _assert_channels(img, [1, 3])
    if threshold > max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    return where(img >= threshold, invert(img), img)


def _blurred_degenerate_image(img):
    """PIL's SMOOTH kernel (ones with 5 in the middle, /13) inside, the border unchanged."""
    from ...nn.functional import conv2d
    from ...ops.creation import ones
    ft = img.dtype if img.is_floating_point() else dtypes.float32
    kernel = ones((3, 3), dtype=ft, device=img.device)
    kernel[1, 1] = 5.0
    kernel = (kernel / kernel.sum()).expand(img.shape[-3], 1, 3, 3)
    batch_shape = img.shape[:-3]
    flat = img.reshape((-1,) + tuple(img.shape[-3:]))
    blurred = conv2d(flat.to(ft), kernel, groups=img.shape[-3])
    if not img.is_floating_point():
        blurred = blurred.round()
    blurred = blurred.to(img.dtype).reshape(tuple(batch_shape) + tuple(blurred.shape[-3:]))
    result = img.clone()
    result[..., 1:-1, 1:-1] = blurred
    return result


def adjust_sharpness(img, sharpness_factor):
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    return _blend(img, _blurred_degenerate_image(img), sharpness_factor)


def autocontrast(img):
    from ...ops import isfinite, where
    assert_image_tensor(img)
    _require_3d(img)
    _assert_channels(img, [1, 3])
    bound = max_value(img.dtype)
    ft = img.dtype if img.is_floating_point() else dtypes.float32
    minimum = img.amin(dim=(-2, -1), keepdim=True).to(ft)
    maximum = img.amax(dim=(-2, -1), keepdim=True).to(ft)
    scale = bound / (maximum - minimum)
    flat = isfinite(scale).logical_not()  # a constant channel stays as it is
    minimum = where(flat, 0.0, minimum)
    scale = where(flat, 1.0, scale)
    return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)


def _equalize_channel(chan, xp):
    """PIL's equalize on one uint8 channel: a lookup table from the cumulative histogram."""
    hist = xp.bincount(chan.reshape(-1), minlength=256).astype(xp.int64)
    nonzero = hist[hist != 0]
    step = int(nonzero[:-1].sum()) // 255
    if step == 0:
        return chan
    lut = (xp.cumsum(hist) + step // 2) // step
    lut = xp.concatenate([xp.zeros(1, xp.int64), lut[:-1]]).clip(0, 255)
    return lut[chan.astype(xp.int64)].astype(xp.uint8)


def equalize(img):
    assert_image_tensor(img)
    if not 3 <= img.ndim <= 4:
        raise TypeError(f"Input image tensor should have 3 or 4 dimensions, but found "
                        f"{img.ndim}")
    if img.dtype is not dtypes.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _assert_channels(img, [1, 3])
    arr = img._array
    xp = _xp(arr)
    flat = arr.reshape((-1,) + arr.shape[-2:])
    out = xp.stack([_equalize_channel(chan, xp) for chan in flat])
    return _wrap(out.reshape(arr.shape), img)
