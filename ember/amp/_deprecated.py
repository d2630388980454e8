"""`torch.cpu.amp` and `torch.cuda.amp`: PyTorch's deprecated spellings of
`torch.amp.autocast(device)` and `torch.amp.GradScaler(device)` (and, for cuda, of
`torch.amp.custom_fwd`/`custom_bwd`). Both packages get their pair of classes from
`deprecated_spellings`; they warn as PyTorch does and behave the same."""
import warnings

from .autocast_mode import autocast as _autocast
from .grad_scaler import GradScaler as _GradScaler


def deprecated_spellings(device, default_dtype, package):
    """(autocast, GradScaler) classes of `package` (`ember.cpu.amp`) for `device`, defined in
    its autocast_mode and grad_scaler modules as PyTorch's are."""

    def _warn(name):
        warnings.warn(f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use "
                      f"`torch.amp.{name}('{device}', args...)` instead.", FutureWarning,
                      stacklevel=3)

    class autocast(_autocast):
        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            _warn("autocast")
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            _warn("GradScaler")
            super().__init__(device, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)

    autocast.__module__ = f"{package}.autocast_mode"
    GradScaler.__module__ = f"{package}.grad_scaler"
    for cls in (autocast, GradScaler):
        cls.__qualname__ = cls.__name__
    return autocast, GradScaler
