"""`skip_init` (as torch.nn.utils.skip_init): build a module without initialising it."""
import inspect

from .. import init as _init
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Instantiate `module_cls(*args, **kwargs)` with its nn.init initialisers skipped: the
    parameters hold whatever their fresh storage holds (as after torch.empty) and no random
    numbers are drawn. The class must take a `device` argument, as PyTorch requires (it builds
    on its meta device)."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    with _init._skipping():
        return module_cls(*args, **kwargs)
