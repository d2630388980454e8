"""`torch.cuda.amp`: PyTorch's deprecated spellings of `torch.amp.autocast("cuda")` and
`torch.amp.GradScaler("cuda")`; they warn as PyTorch does and behave the same (without a
GPU both disable themselves with PyTorch's warning)."""
import warnings

from .. import amp as _amp
from .. import dtypes as _dt

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    def __init__(self, enabled=True, dtype=_dt.float16, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
