"""`ember.vision.models.video` (torchvision.models.video): video classification models over
(N, C, T, H, W) clips."""
from .resnet import *  # noqa: F401,F403
from . import resnet as _resnet

__all__ = list(_resnet.__all__)
