"""Helpers of the box losses (torchvision.ops._utils): float upcasting and the element-wise
intersection and union of two aligned sets of xyxy boxes."""
from ... import float32, float64


def _upcast_non_float(t):
    # the losses need a float dtype at least as wide as float32
    return t if t.dtype in (float32, float64) else t.float()


def _loss_inter_union(boxes1, boxes2):
    """Intersection and union areas of boxes1[i] with boxes2[i] (not all pairs)."""
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    # disjoint boxes: a negative extent clamps to 0, and so does the product and its gradient
    inter_w = (x2.minimum(x2g) - x1.maximum(x1g)).clamp(min=0)
    inter_h = (y2.minimum(y2g) - y1.maximum(y1g)).clamp(min=0)
    intersection = inter_w * inter_h
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intersection
    return intersection, union


def _reduce_box_loss(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction "
                     "modes: 'none', 'mean', 'sum'")


def _enclosing_box(boxes1, boxes2):
    """Corners (x1, y1, x2, y2) of the smallest box holding boxes1[i] and boxes2[i]."""
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    return x1.minimum(x1g), y1.minimum(y1g), x2.maximum(x2g), y2.maximum(y2g)
