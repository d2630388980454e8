"""`ember.vision.ops`: torchvision.ops building blocks used by the models."""
from .misc import MLP, Conv2dNormActivation, FrozenBatchNorm2d, Permute, SqueezeExcitation
from .stochastic_depth import StochasticDepth, stochastic_depth

__all__ = ["Conv2dNormActivation", "FrozenBatchNorm2d", "MLP", "Permute", "SqueezeExcitation",
           "StochasticDepth", "stochastic_depth"]
