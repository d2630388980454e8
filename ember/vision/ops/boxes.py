"""Box utilities (torchvision.ops.boxes) for axis-aligned boxes: areas, pairwise IoU variants,
format conversion, clipping, small-box removal and (batched) non-maximum suppression. All but
the index-returning ones are built from ember ops, so they are differentiable."""
import math

import numpy as np

from ... import atan, empty, float32, float64, int32, int64, no_grad, stack, tensor, where
from ... import max as _max, min as _min

__all__ = ["box_area", "box_iou", "generalized_box_iou", "distance_box_iou",
           "complete_box_iou", "box_convert", "clip_boxes_to_image", "remove_small_boxes",
           "nms", "batched_nms", "masks_to_boxes"]

_AXIS_ALIGNED = ("xyxy", "xywh", "cxcywh")


def _upcast(t):
    """Products of coordinates overflow float16 and int16: compute in float32 / int32."""
    if t.is_floating_point():
        return t if t.dtype in (float32, float64) else t.float()
    return t if t.dtype in (int32, int64) else t.int()


def box_area(boxes, fmt="xyxy"):
    if fmt not in _AXIS_ALIGNED:
        raise ValueError(f"Unsupported Bounding Box area for given format {fmt}")
    boxes = _upcast(boxes)
    if fmt == "xyxy":
        return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    return boxes[..., 2] * boxes[..., 3]


def _corners(boxes, fmt):
    """(top-left, bottom-right) of boxes given in `fmt`."""
    if fmt == "xyxy":
        return boxes[..., :2], boxes[..., 2:]
    if fmt == "xywh":
        return boxes[..., :2], boxes[..., :2] + boxes[..., 2:]
    return boxes[..., :2] - boxes[..., 2:] / 2, boxes[..., :2] + boxes[..., 2:] / 2


def _box_inter_union(boxes1, boxes2, fmt="xyxy"):
    area1 = box_area(boxes1, fmt=fmt)
    area2 = box_area(boxes2, fmt=fmt)
    if fmt not in _AXIS_ALIGNED:
        raise ValueError(f"Unsupported Box IoU Calculation for given fmt {fmt}.")
    lt1, rb1 = _corners(boxes1, fmt)
    lt2, rb2 = _corners(boxes2, fmt)
    lt = _max(lt1[..., None, :], lt2[..., None, :, :])  # [..., N, M, 2]
    rb = _min(rb1[..., None, :], rb2[..., None, :, :])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = area1[..., None] + area2[..., None, :] - inter
    return inter, union


def box_iou(boxes1, boxes2, fmt="xyxy"):
    if fmt not in _AXIS_ALIGNED:
        raise ValueError(
            f"Unsupported format '{fmt}'. Supported axis-aligned formats: {_AXIS_ALIGNED}. "
            "Supported rotated formats: ('cxcywhr', 'xywhr', 'xyxyxyxy').")
    inter, union = _box_inter_union(boxes1, boxes2, fmt=fmt)
    return inter / union


def _enclosing_wh(boxes1, boxes2):
    lti = _min(boxes1[:, None, :2], boxes2[:, :2])
    rbi = _max(boxes1[:, None, 2:], boxes2[:, 2:])
    return _upcast(rbi - lti).clamp(min=0)


def generalized_box_iou(boxes1, boxes2):
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    whi = _enclosing_wh(boxes1, boxes2)
    areai = whi[..., 0] * whi[..., 1]
    return iou - (areai - union) / areai


def _box_diou_iou(boxes1, boxes2, eps=1e-7):
    iou = box_iou(boxes1, boxes2)
    whi = _enclosing_wh(boxes1, boxes2)
    diagonal_distance_squared = (whi[..., 0] ** 2) + (whi[..., 1] ** 2) + eps
    x_p = (boxes1[:, 0] + boxes1[:, 2]) / 2
    y_p = (boxes1[:, 1] + boxes1[:, 3]) / 2
    x_g = (boxes2[:, 0] + boxes2[:, 2]) / 2
    y_g = (boxes2[:, 1] + boxes2[:, 3]) / 2
    centers_distance_squared = (_upcast(x_p[:, None] - x_g[None, :]) ** 2) + (
        _upcast(y_p[:, None] - y_g[None, :]) ** 2)
    return iou - (centers_distance_squared / diagonal_distance_squared), iou


def distance_box_iou(boxes1, boxes2, eps=1e-7):
    diou, _ = _box_diou_iou(_upcast(boxes1), _upcast(boxes2), eps)
    return diou


def complete_box_iou(boxes1, boxes2, eps=1e-7):
    boxes1, boxes2 = _upcast(boxes1), _upcast(boxes2)
    diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    w_pred = boxes1[:, None, 2] - boxes1[:, None, 0]
    h_pred = boxes1[:, None, 3] - boxes1[:, None, 1]
    w_gt = boxes2[:, 2] - boxes2[:, 0]
    h_gt = boxes2[:, 3] - boxes2[:, 1]
    v = (4 / (math.pi ** 2)) * (atan(w_pred / h_pred) - atan(w_gt / h_gt)) ** 2
    with no_grad():  # the trade-off weight is a constant for the gradient
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v


def box_convert(boxes, in_fmt, out_fmt):
    if in_fmt not in _AXIS_ALIGNED or out_fmt not in _AXIS_ALIGNED:
        raise ValueError(f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} "
                         f"and out_fmt {out_fmt}")
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":  # to xyxy
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    if out_fmt == "xywh":  # from xyxy
        a, b, c, d = a, b, c - a, d - b
    elif out_fmt == "cxcywh":
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return stack((a, b, c, d), dim=-1)


def clip_boxes_to_image(boxes, size):
    dim = boxes.dim()
    height, width = size
    boxes_x = boxes[..., 0::2].clamp(min=0, max=width)
    boxes_y = boxes[..., 1::2].clamp(min=0, max=height)
    return stack((boxes_x, boxes_y), dim=dim).reshape(boxes.shape)


def remove_small_boxes(boxes, min_size):
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return where(keep)[0]


def nms(boxes, scores, iou_threshold):
    """Indices (int64) of the boxes kept, highest score first: a box is dropped when its IoU
    with a kept, higher-scoring box is greater than `iou_threshold`."""
    if boxes.dim() != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {boxes.dim()}D")
    if boxes.shape[1] != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.shape[1]}")
    if scores.dim() != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.dim()}D")
    if boxes.shape[0] != scores.shape[0]:
        raise RuntimeError("boxes and scores should have same number of elements in dimension "
                           f"0, got {boxes.shape[0]} and {scores.shape[0]}")
    if boxes.numel() == 0:
        return empty((0,), dtype=int64, device=boxes.device)
    b = boxes.detach().cpu().numpy()
    s = scores.detach().cpu().numpy()
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    order = np.argsort(-s, kind="stable")
    suppressed = np.zeros(len(s), dtype=bool)
    keep = []
    for pos, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[pos + 1:]
        rest = rest[~suppressed[rest]]
        if rest.size == 0:
            continue
        w = np.maximum(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0)
        h = np.maximum(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0)
        inter = w * h
        iou = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest[iou > iou_threshold]] = True
    return tensor(np.asarray(keep, dtype=np.int64), device=boxes.device)


def batched_nms(boxes, scores, idxs, iou_threshold):
    """nms within each category of `idxs`: boxes of different categories never suppress each
    other. Kept indices come highest score first."""
    if boxes.numel() > 4000:
        return _batched_nms_vanilla(boxes, scores, idxs, iou_threshold)
    return _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold)


def _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold):
    # shift each category's boxes by a different offset so that they cannot overlap
    if boxes.numel() == 0:
        return empty((0,), dtype=int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + tensor(1).to(boxes))
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def _batched_nms_vanilla(boxes, scores, idxs, iou_threshold):
    from ... import unique, zeros_like
    keep_mask = zeros_like(scores, dtype=bool)
    for class_id in unique(idxs):
        curr = where(idxs == class_id)[0]
        keep_mask[curr[nms(boxes[curr], scores[curr], iou_threshold)]] = True
    keep_indices = where(keep_mask)[0]
    return keep_indices[scores[keep_indices].sort(descending=True)[1]]


def masks_to_boxes(masks):
    """(N, H, W) masks -> (N, 4) float xyxy boxes around their nonzero pixels (inclusive
    pixel indices); an empty mask gives [0, 0, 0, 0]."""
    from ... import zeros
    if masks.numel() == 0:
        return zeros((0, 4), device=masks.device, dtype=float32)
    _, h, w = masks.shape
    masks = masks.bool()
    rows = masks.any(dim=2).float()
    cols = masks.any(dim=1).float()
    empty = rows.sum(dim=1) == 0
    # argmax returns the first maximum: the first nonzero row/column from either end
    y1, x1 = rows.argmax(dim=1), cols.argmax(dim=1)
    y2 = (h - 1) - rows.flip(dims=[1]).argmax(dim=1)
    x2 = (w - 1) - cols.flip(dims=[1]).argmax(dim=1)
    boxes = stack([x1, y1, x2, y2], dim=1).float()
    boxes[empty] = 0
    return boxes
