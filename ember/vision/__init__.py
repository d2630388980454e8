"""`ember.vision`: torchvision's everyday parts (transforms incl. v2, datasets, models, ops, io,
tv_tensors, utils)."""
import importlib

from ..version import EMBER_RELEASE

__all__ = []
__version__ = EMBER_RELEASE
TORCHVISION_API = "0.28.0"  # the torchvision release ember.vision's API follows (compat shows it)
for _name in ("transforms", "datasets", "models", "utils", "io", "ops", "tv_tensors"):
    try:
        globals()[_name] = importlib.import_module(f".{_name}", __name__)
        __all__.append(_name)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{_name}":
            raise
