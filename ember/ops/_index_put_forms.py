"""Two forms PyTorch's index_put_ (and so `t[index] = v`) gives special treatment, which
matter on CUDA: a value on the host (moved to the tensor's device), and a masked fill (one
boolean mask, one value: PyTorch hands it to masked_fill_, canDispatchToMaskedFill). A masked
fill never counts the mask's True elements; on CUDA that count would be a device-to-host read,
and top-k samplers (`logits[logits < v[:, [-1]]] = -inf`) would make one for every token.
A number written is checked as PyTorch checks it (`checked_number`)."""
import builtins

import numpy as np

from .._tensor import make_tensor
from ._writes import warn_expanded


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


NUMBERS = (builtins.bool, builtins.int, builtins.float, builtins.complex, np.generic)


def checked_number(value, like):
    """A number as `t[idx] = number` writes it into `like`'s dtype, with PyTorch's checks: a
    complex with an imaginary part into a real tensor, or an integer out of range, raises
    'value cannot be converted to type ... without overflow' (NumPy would drop the imaginary
    part, wrap, or raise its own TypeError); a float past a floating type's range becomes
    inf, as PyTorch's copy gives it (fill_ and masked_fill_ refuse it)."""
    d = like.dtype
    if d._kind:
        return value
    if d.is_floating_point and not (isinstance(value, builtins.complex) and value.imag):
        return value.real if isinstance(value, builtins.complex) else value
    from .creation import _convert_scalar
    return _convert_scalar(value, d)


def scalar_like(value, like):
    """A number `t[index] = number` writes, as a 0-d tensor of `like`'s dtype and device."""
    from .creation import tensor
    if isinstance(value, (list, tuple)) or not isinstance(value, NUMBERS):
        raise TypeError(f"can't assign a {type(value).__name__} to a torch.{like.dtype._tensor_type}")
    value = checked_number(value, like)
    if like.dtype.is_floating_point and not like.dtype._kind:  # past the range: inf, as above
        value = np.asarray(value, np.float64).astype(like.dtype.np)
    return tensor(value, dtype=like.dtype, device=like._device)


def value_for(target, value):
    """`value` as `t[idx] = value` writes it: leading size-1 dims dropped, then expanded to
    the target (PyTorch's expand errors when it cannot be)."""
    shape = value._array.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    if k:
        value = value.reshape(shape[k:])
    if value._array.shape != target._array.shape:
        value.expand(target._array.shape)  # raises PyTorch's message where it does not fit
    return value
