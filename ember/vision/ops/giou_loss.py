"""generalized_box_iou_loss (torchvision.ops.giou_loss): 1 - GIoU of aligned box pairs."""
from ._utils import _enclosing_box, _loss_inter_union, _reduce_box_loss, _upcast_non_float

__all__ = ["generalized_box_iou_loss"]


def generalized_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """GIoU = IoU - (area of the enclosing box not covered by the union) / (enclosing area):
    unlike 1 - IoU it still has a gradient when the boxes do not overlap."""
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    intersection, union = _loss_inter_union(boxes1, boxes2)
    iou = intersection / (union + eps)
    xc1, yc1, xc2, yc2 = _enclosing_box(boxes1, boxes2)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    return _reduce_box_loss(1 - (iou - (area_c - union) / (area_c + eps)), reduction)
