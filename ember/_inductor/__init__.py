"""`torch._inductor`, as far as programs touch it: its `config` (ember compiles nothing, so a
compiled program runs eagerly and the settings change no behaviour)."""
from . import config

__all__ = ["config"]
