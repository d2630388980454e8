"""torchvision.models.mobilenet: one import place for MobileNetV2 and MobileNetV3."""
from .mobilenetv2 import *  # noqa: F401,F403
from .mobilenetv3 import *  # noqa: F401,F403
from .mobilenetv2 import __all__ as _v2_names
from .mobilenetv3 import __all__ as _v3_names

__all__ = list(_v2_names) + list(_v3_names)
