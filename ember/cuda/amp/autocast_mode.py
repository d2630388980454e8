"""`torch.cuda.amp.autocast_mode`: the deprecated `autocast` of CUDA and the deprecated
`custom_fwd`/`custom_bwd`, which warn and then do what `torch.amp`'s do for "cuda"."""
import functools
import warnings

from ...amp import autocast_mode as _amp
from ._classes import autocast

__all__ = ["autocast", "custom_bwd", "custom_fwd"]


def _deprecated(name):
    warnings.warn(f"`torch.cuda.amp.{name}(args...)` is deprecated. Please use "
                  f"`torch.amp.{name}(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=3)


def custom_fwd(fwd=None, *, cast_inputs=None):
    _deprecated("custom_fwd")
    return functools.partial(_amp.custom_fwd, device_type="cuda")(fwd=fwd,
                                                                   cast_inputs=cast_inputs)


def custom_bwd(bwd):
    _deprecated("custom_bwd")
    return functools.partial(_amp.custom_bwd, device_type="cuda")(bwd)
