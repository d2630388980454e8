"""`torch.cuda.amp.common`: whether mixed precision on an accelerator is surely unavailable."""
import importlib.util

__all__ = ["amp_definitely_not_available"]


def amp_definitely_not_available():
    """True when there is no CUDA device (and no XLA package) to run autocast on."""
    from .. import is_available
    return not (is_available() or importlib.util.find_spec("torch_xla"))
