"""`ember.vision.ops`: torchvision.ops building blocks used by the models."""
from .misc import Conv2dNormActivation

__all__ = ["Conv2dNormActivation"]
