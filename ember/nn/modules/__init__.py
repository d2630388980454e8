"""nn's layers, one file per family; this package gathers them."""
import importlib

from .module import Module
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, LazyLinear, Linear

# Layer families written alongside (each file lists its classes in __all__).
_FAMILIES = ("activation", "conv", "pooling", "normalization", "batchnorm", "instancenorm",
             "dropout", "loss", "sparse", "padding", "pixelshuffle", "upsampling", "distance",
             "flatten", "rnn", "transformer", "channelshuffle", "fold", "adaptive")
__all__ = ["Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict", "Identity", "Linear", "Bilinear", "LazyLinear"]
for _family in _FAMILIES:
    try:
        _mod = importlib.import_module(f".{_family}", __name__)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{_family}":
            raise
        continue
    globals().update({name: getattr(_mod, name) for name in _mod.__all__})
    __all__ += list(_mod.__all__)
