"""`ember.vision.transforms`: image transforms, as torchvision.transforms."""
from . import functional  # noqa: F401
from .transforms import *  # noqa: F401,F403
from .transforms import __all__  # noqa: F401
from .autoaugment import *  # noqa: F401,F403
