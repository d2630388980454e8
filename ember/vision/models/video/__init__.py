"""`ember.vision.models.video` (torchvision.models.video): video classification models over
(N, C, T, H, W) clips."""
import sys as _sys

from .resnet import *  # noqa: F401,F403
from .s3d import *  # noqa: F401,F403
from .swin_transformer import *  # noqa: F401,F403

# the s3d builder shadows its module's name here, so read the modules from sys.modules
__all__ = [n for m in ("resnet", "s3d", "swin_transformer")
           for n in _sys.modules[f"{__name__}.{m}"].__all__]
