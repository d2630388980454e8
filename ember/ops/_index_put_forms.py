"""Two forms PyTorch's index_put_ (and so `t[index] = v`) gives special treatment, which
matter on CUDA: a value on the host (moved to the tensor's device), and a masked fill (one
boolean mask, one value: PyTorch hands it to masked_fill_, canDispatchToMaskedFill). A masked
fill never counts the mask's True elements; on CUDA that count would be a device-to-host read,
and top-k samplers (`logits[logits < v[:, [-1]]] = -inf`) would make one for every token."""
import numpy as np

from .._tensor import make_tensor
from ._graph import warn_expanded


def fill_mask(index, vals):
    """The mask when `arr[index] = vals` is a masked fill (`index` as _finish_index makes it:
    full slices, then the mask; `vals` one element), else None."""
    if vals.size != 1 or not index:
        return None
    mask = index[-1]  # _finish_index gives a boolean array only as the one advanced index
    if getattr(mask, "dtype", None) != np.bool_ or not mask.ndim:
        return None
    return mask


def fill_where(arr, index, mask, vals, xp):
    """`vals` (one element) into `arr` where `mask`, placed at the end of `index`, is True."""
    mask = mask.reshape(mask.shape + (1,) * (arr.ndim - len(index) + 1 - mask.ndim))
    if arr.dtype.kind == "V" or arr.dtype.type.__module__ == "ml_dtypes":
        # float8, bfloat16, complex32's record: CuPy has no kernel for them, so move the bits
        bits = f"u{arr.dtype.itemsize}"
        arr, vals = arr.view(bits), vals.view(bits)
    xp.copyto(arr, vals.reshape(()), where=mask)


def warn_expanded_put(t, index, vals, accumulate=False):
    """PyTorch's warnings for an index_put_ into expanded memory: its own, and masked_fill_'s
    too when it hands the write over."""
    warn_expanded(t, "index_put_", "tensor[indices] = tensor", stacklevel=4)
    if not accumulate and fill_mask(index, vals) is not None:
        warn_expanded(t, "masked_fill_", "tensor[mask] = scalar", stacklevel=4)


def put_values(t, index, values, accumulate):
    """index_put's values on t's device. PyTorch moves a 0-dim value there (a CPU scalar
    tensor into a CUDA tensor), and takes any one-element host value for a masked fill (it
    reads it as a number); other values must be on t's device already."""
    if values._device == t._device:
        return values
    if values._array.ndim == 0 or (not accumulate and values._device.type == "cpu"
                                   and fill_mask(index, values._array) is not None):
        from .conversion import _move
        return make_tensor(_move(values._array, values._device, t._device), t._device)
    raise RuntimeError(f"expected device {t._device} but got device {values._device} for value "
                       "tensor")
