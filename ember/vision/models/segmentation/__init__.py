"""`ember.vision.models.segmentation`: torchvision's semantic segmentation models (FCN,
DeepLabV3, LR-ASPP), with its module names so its state_dicts load with strict=True."""
from .deeplabv3 import *  # noqa: F401,F403
from .fcn import *  # noqa: F401,F403
from .lraspp import *  # noqa: F401,F403
from . import deeplabv3 as _deeplabv3, fcn as _fcn, lraspp as _lraspp

__all__ = _deeplabv3.__all__ + _fcn.__all__ + _lraspp.__all__
