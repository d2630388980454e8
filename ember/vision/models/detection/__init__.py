"""`ember.vision.models.detection`: torchvision's object detectors (Faster / Mask R-CNN,
RetinaNet) with their building blocks, named as torchvision's so its checkpoints load."""
from .faster_rcnn import *  # noqa: F401,F403
from .mask_rcnn import *  # noqa: F401,F403
from .retinanet import *  # noqa: F401,F403
