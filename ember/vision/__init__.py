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

_image_backend = "PIL"
_video_backend = "pyav"


def get_image_backend():
    """The package datasets load images with: 'PIL' (the default) or 'accimage'."""
    return _image_backend


def set_image_backend(backend):
    global _image_backend
    if backend not in ["PIL", "accimage"]:
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
    _image_backend = backend


def get_video_backend():
    """The package videos decode with: 'pyav', the only one torchvision 0.28 keeps."""
    return _video_backend


def set_video_backend(backend):
    """torchvision 0.28 accepts any name here and keeps decoding with 'pyav'."""


def disable_beta_transforms_warning():
    """The v2 transforms are stable: there is no warning left to disable."""


__all__ += ["get_image_backend", "set_image_backend", "get_video_backend", "set_video_backend",
            "disable_beta_transforms_warning"]
