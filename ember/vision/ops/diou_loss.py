"""distance_box_iou_loss (torchvision.ops.diou_loss): 1 - IoU plus the squared distance of
the centres over the squared diagonal of the enclosing box."""
from ._utils import _enclosing_box, _loss_inter_union, _reduce_box_loss, _upcast_non_float

__all__ = ["distance_box_iou_loss"]


def distance_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    loss, _ = _diou_iou_loss(boxes1, boxes2, eps)
    return _reduce_box_loss(loss, reduction)


def _diou_iou_loss(boxes1, boxes2, eps=1e-7):
    intersection, union = _loss_inter_union(boxes1, boxes2)
    iou = intersection / (union + eps)
    xc1, yc1, xc2, yc2 = _enclosing_box(boxes1, boxes2)
    diagonal_distance_squared = (xc2 - xc1) ** 2 + (yc2 - yc1) ** 2 + eps
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    centers_distance_squared = ((x2 + x1) / 2 - (x1g + x2g) / 2) ** 2 + \
        ((y2 + y1) / 2 - (y1g + y2g) / 2) ** 2
    return 1 - iou + centers_distance_squared / diagonal_distance_squared, iou
