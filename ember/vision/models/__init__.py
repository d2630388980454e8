"""`ember.vision.models`: torchvision's classification architectures (and the segmentation and
detection sub-packages), with its module names so torchvision state_dicts load with
strict=True."""
import sys as _sys

from .alexnet import *  # noqa: F401,F403
from .convnext import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .efficientnet import *  # noqa: F401,F403
from .googlenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .lenet import *  # noqa: F401,F403
from .maxvit import *  # noqa: F401,F403
from .mnasnet import *  # noqa: F401,F403
from .mobilenet import *  # noqa: F401,F403
from .mobilenetv2 import *  # noqa: F401,F403
from .mobilenetv3 import *  # noqa: F401,F403
from .regnet import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .shufflenetv2 import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .swin_transformer import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from .vision_transformer import *  # noqa: F401,F403
from . import detection, segmentation  # noqa: F401
from . import video  # noqa: F401
from ._api import (Weights, WeightsEnum, get_model, get_model_builder,  # noqa: F401
                   get_model_weights, get_weight, list_models)

_MODULES = ("alexnet", "convnext", "densenet", "efficientnet", "googlenet", "inception",
            "lenet", "mobilenetv2", "mobilenetv3", "resnet", "squeezenet", "vgg", "vision_transformer")
_MODULES += ("mnasnet", "regnet", "shufflenetv2", "swin_transformer", "maxvit")
# the builders share their modules' names (alexnet, vgg, googlenet), so read the modules from
# sys.modules
__all__ = [n for m in _MODULES for n in _sys.modules[f"{__name__}.{m}"].__all__
           if n != "make_layers" and not n.startswith("_")] + [
    "Weights", "WeightsEnum", "get_model", "get_model_builder", "get_model_weights",
    "get_weight", "list_models"]
