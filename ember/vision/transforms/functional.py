"""Functional image transforms on PIL images, NumPy arrays and tensors."""
import numpy as np

from ... import dtypes
from ..._tensor import Tensor

__all__ = ["to_tensor", "pil_to_tensor", "to_pil_image", "normalize"]


def _is_pil(img):
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(img, Image.Image)


def to_tensor(pic):
    """PIL image or HxWxC ndarray -> CxHxW tensor; uint8 scaled from [0, 255] to [0, 1] float32."""
    from ...ops.creation import from_numpy
    if not (_is_pil(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        t = from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
        if arr.dtype == np.uint8:
            return t.to(dtypes.get_default_dtype()).div(255)
        return t
    mode_dtypes = {"I": np.int32, "I;16": np.int16, "I;16B": np.int16, "F": np.float32}
    arr = np.array(pic, dtype=mode_dtypes.get(pic.mode, None), copy=True)
    if pic.mode == "1":
        arr = 255 * arr.astype(np.uint8)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    t = from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
    if t.dtype is dtypes.uint8:
        return t.to(dtypes.get_default_dtype()).div(255)
    return t


def pil_to_tensor(pic):
    from ...ops.creation import from_numpy
    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def to_pil_image(pic, mode=None):
    """CxHxW tensor (float in [0, 1] is scaled to uint8) or HxWxC ndarray -> PIL image."""
    from PIL import Image
    if isinstance(pic, Tensor):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        arr = np.transpose(pic.detach().cpu().numpy(), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        arr = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if arr.shape[2] == 1:
        arr = arr[:, :, 0]
        if mode is None:
            mode = {np.uint8: "L", np.int16: "I;16", np.int32: "I", np.float32: "F"}.get(
                arr.dtype.type)
    return Image.fromarray(arr, mode=mode) if mode else Image.fromarray(arr)


def normalize(tensor, mean, std, inplace=False):
    from ...ops.creation import as_tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tuple(tensor.size())}")
    mean = as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to "
                         "division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean).div_(std)
    return tensor.sub(mean).div(std)
