"""complete_box_iou_loss (torchvision.ops.ciou_loss): the DIoU loss plus an aspect-ratio
consistency term whose trade-off weight is held constant for the gradient."""
import math

from ... import atan, no_grad
from ._utils import _reduce_box_loss, _upcast_non_float
from .diou_loss import _diou_iou_loss

__all__ = ["complete_box_iou_loss"]


def complete_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    diou_loss, iou = _diou_iou_loss(boxes1, boxes2)  # torchvision passes no eps here
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    v = (4 / (math.pi ** 2)) * (atan((x2g - x1g) / (y2g - y1g))
                                - atan((x2 - x1) / (y2 - y1))) ** 2
    with no_grad():
        alpha = v / (1 - iou + v + eps)
    return _reduce_box_loss(diou_loss + alpha * v, reduction)
