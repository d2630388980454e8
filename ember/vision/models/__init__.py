"""`ember.vision.models`: torchvision's classification architectures, with its module names
so torchvision state_dicts load with strict=True."""
from .alexnet import *  # noqa: F401,F403
from .lenet import *  # noqa: F401,F403
from .mobilenetv2 import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
import sys as _sys

# the builders share their modules' names (alexnet, vgg), so read the modules from sys.modules
__all__ = [n for m in ("alexnet", "lenet", "mobilenetv2", "resnet", "squeezenet", "vgg")
           for n in _sys.modules[f"{__name__}.{m}"].__all__ if n != "make_layers"]
