"""The machinery shared by the detectors (torchvision.models.detection._utils): BoxCoder
(boxes <-> regression targets relative to reference boxes), Matcher (each anchor or proposal
to its best ground-truth box, with the "between thresholds" and "below" verdicts), and
BalancedPositiveNegativeSampler (a fixed-size, fixed-fraction minibatch of anchors)."""
import math
from collections import OrderedDict

from .... import (as_tensor, cat, clamp, exp, log, no_grad, randperm, stack, where,
                  zeros, zeros_like, uint8)
from ....nn import functional as F
from ...ops.ciou_loss import complete_box_iou_loss
from ...ops.diou_loss import distance_box_iou_loss
from ...ops.giou_loss import generalized_box_iou_loss
from ...ops.misc import FrozenBatchNorm2d
from .._api import WeightsEnum
from .._utils import load_weights, overwrite_value_param, verify_weights


def _assert(condition, message):
    if not condition:
        raise AssertionError(message)


class BalancedPositiveNegativeSampler:
    """Per image, draws at most `batch_size_per_image * positive_fraction` positives (labels
    >= 1) and fills the rest of the batch with negatives (label 0); -1 is ignored. Returns
    two lists of uint8 masks (positives, negatives), one mask per image."""

    def __init__(self, batch_size_per_image, positive_fraction):
        self.batch_size_per_image = batch_size_per_image
        self.positive_fraction = positive_fraction

    def __call__(self, matched_idxs):
        pos_idx, neg_idx = [], []
        for labels in matched_idxs:
            positive = where(labels >= 1)[0]
            negative = where(labels == 0)[0]
            num_pos = min(positive.numel(), int(self.batch_size_per_image * self.positive_fraction))
            num_neg = min(negative.numel(), self.batch_size_per_image - num_pos)
            chosen_pos = positive[randperm(positive.numel(), device=positive.device)[:num_pos]]
            chosen_neg = negative[randperm(negative.numel(), device=negative.device)[:num_neg]]
            pos_mask = zeros_like(labels, dtype=uint8)
            neg_mask = zeros_like(labels, dtype=uint8)
            pos_mask[chosen_pos] = 1
            neg_mask[chosen_neg] = 1
            pos_idx.append(pos_mask)
            neg_idx.append(neg_mask)
        return pos_idx, neg_idx


def encode_boxes(reference_boxes, proposals, weights):
    """Regression targets (dx, dy, dw, dh) that turn each proposal into its reference box:
    centre offsets in units of the proposal's size and log size ratios, scaled by weights."""
    wx, wy, ww, wh = weights[0], weights[1], weights[2], weights[3]
    px1, py1, px2, py2 = (proposals[:, i].unsqueeze(1) for i in range(4))
    gx1, gy1, gx2, gy2 = (reference_boxes[:, i].unsqueeze(1) for i in range(4))
    ex_w, ex_h = px2 - px1, py2 - py1
    ex_cx, ex_cy = px1 + 0.5 * ex_w, py1 + 0.5 * ex_h
    gt_w, gt_h = gx2 - gx1, gy2 - gy1
    gt_cx, gt_cy = gx1 + 0.5 * gt_w, gy1 + 0.5 * gt_h
    return cat((wx * (gt_cx - ex_cx) / ex_w, wy * (gt_cy - ex_cy) / ex_h,
                ww * log(gt_w / ex_w), wh * log(gt_h / ex_h)), dim=1)


class BoxCoder:
    """Encodes boxes as regression targets relative to reference boxes, and decodes them
    back. Size deltas are clipped at `bbox_xform_clip` before exp, so a wild prediction
    cannot overflow."""

    def __init__(self, weights, bbox_xform_clip=math.log(1000.0 / 16)):
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def encode(self, reference_boxes, proposals):
        boxes_per_image = [len(b) for b in reference_boxes]
        targets = self.encode_single(cat(reference_boxes, dim=0), cat(proposals, dim=0))
        return targets.split(boxes_per_image, 0)

    def encode_single(self, reference_boxes, proposals):
        weights = as_tensor(self.weights, dtype=reference_boxes.dtype,
                            device=reference_boxes.device)
        return encode_boxes(reference_boxes, proposals, weights)

    def decode(self, rel_codes, boxes):
        _assert(isinstance(boxes, (list, tuple)),
                "This function expects boxes of type list or tuple.")
        _assert(hasattr(rel_codes, "dim"), "This function expects rel_codes of type torch.Tensor.")
        box_sum = sum(b.size(0) for b in boxes)
        if box_sum > 0:
            rel_codes = rel_codes.reshape(box_sum, -1)
        pred_boxes = self.decode_single(rel_codes, cat(boxes, dim=0))
        if box_sum > 0:
            pred_boxes = pred_boxes.reshape(box_sum, -1, 4)
        return pred_boxes

    def decode_single(self, rel_codes, boxes):
        boxes = boxes.to(rel_codes.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = rel_codes[:, 0::4] / wx
        dy = rel_codes[:, 1::4] / wy
        dw = clamp(rel_codes[:, 2::4] / ww, max=self.bbox_xform_clip)
        dh = clamp(rel_codes[:, 3::4] / wh, max=self.bbox_xform_clip)
        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        half_w = 0.5 * (exp(dw) * widths[:, None])
        half_h = 0.5 * (exp(dh) * heights[:, None])
        return stack((pred_ctr_x - half_w, pred_ctr_y - half_h, pred_ctr_x + half_w,
                      pred_ctr_y + half_h), dim=2).flatten(1)


class Matcher:
    """Assigns each prediction (column of an M x N quality matrix, M ground truths) the
    index of its best ground truth, or BELOW_LOW_THRESHOLD (-1) / BETWEEN_THRESHOLDS (-2)
    when its best quality is < low_threshold / in [low, high). With
    allow_low_quality_matches, every ground truth keeps its best predictions (ties too)
    even below the thresholds, so no ground truth is left without a match."""
    BELOW_LOW_THRESHOLD = -1
    BETWEEN_THRESHOLDS = -2

    def __init__(self, high_threshold, low_threshold, allow_low_quality_matches=False):
        _assert(low_threshold <= high_threshold, "low_threshold should be <= high_threshold")
        self.high_threshold = high_threshold
        self.low_threshold = low_threshold
        self.allow_low_quality_matches = allow_low_quality_matches

    def __call__(self, match_quality_matrix):
        if match_quality_matrix.numel() == 0:
            if match_quality_matrix.shape[0] == 0:
                raise ValueError("No ground-truth boxes available for one of the images "
                                 "during training")
            raise ValueError("No proposal boxes available for one of the images during training")
        matched_vals, matches = match_quality_matrix.max(dim=0)
        all_matches = matches.clone() if self.allow_low_quality_matches else None
        below = matched_vals < self.low_threshold
        between = (matched_vals >= self.low_threshold) & (matched_vals < self.high_threshold)
        matches[below] = self.BELOW_LOW_THRESHOLD
        matches[between] = self.BETWEEN_THRESHOLDS
        if self.allow_low_quality_matches:
            self.set_low_quality_matches_(matches, all_matches, match_quality_matrix)
        return matches

    def set_low_quality_matches_(self, matches, all_matches, match_quality_matrix):
        best_per_gt, _ = match_quality_matrix.max(dim=1)
        pred_inds = where(match_quality_matrix == best_per_gt[:, None])[1]
        matches[pred_inds] = all_matches[pred_inds]


class SSDMatcher(Matcher):
    """A single-threshold Matcher that also gives every ground truth its best prediction."""

    def __init__(self, threshold):
        super().__init__(threshold, threshold, allow_low_quality_matches=False)

    def __call__(self, match_quality_matrix):
        from .... import arange, int64
        matches = super().__call__(match_quality_matrix)
        _, best_pred_per_gt = match_quality_matrix.max(dim=1)
        matches[best_pred_per_gt] = arange(best_pred_per_gt.size(0), dtype=int64,
                                           device=best_pred_per_gt.device)
        return matches


def overwrite_eps(model, eps):
    """Sets eps of every FrozenBatchNorm2d in `model` (the published COCO checkpoints were
    trained with eps=0)."""
    for module in model.modules():
        if isinstance(module, FrozenBatchNorm2d):
            module.eps = eps


def retrieve_out_channels(model, size):
    """The channel counts of the feature maps `model` returns for a zero image of `size`
    (width, height)."""
    in_training = model.training
    model.eval()
    with no_grad():
        device = next(model.parameters()).device
        features = model(zeros((1, 3, size[1], size[0]), device=device))
        if hasattr(features, "dim"):
            features = OrderedDict([("0", features)])
        out_channels = [x.size(1) for x in features.values()]
    if in_training:
        model.train()
    return out_channels


def _topk_min(input, orig_kval, axis):
    return min(orig_kval, input.size(axis))


def _box_loss(type, box_coder, anchors_per_image, matched_gt_boxes_per_image,
              bbox_regression_per_image, cnf=None):
    """The summed box loss of the matched anchors: L1 / smooth L1 on the encoded deltas, or
    an IoU loss (giou, diou, ciou) on the decoded boxes."""
    _assert(type in ["l1", "smooth_l1", "ciou", "diou", "giou"], f"Unsupported loss: {type}")
    if type in ("l1", "smooth_l1"):
        target = box_coder.encode_single(matched_gt_boxes_per_image, anchors_per_image)
        if type == "l1":
            return F.l1_loss(bbox_regression_per_image, target, reduction="sum")
        beta = cnf["beta"] if cnf is not None and "beta" in cnf else 1.0
        return F.smooth_l1_loss(bbox_regression_per_image, target, reduction="sum", beta=beta)
    boxes = box_coder.decode_single(bbox_regression_per_image, anchors_per_image)
    eps = cnf["eps"] if cnf is not None and "eps" in cnf else 1e-7
    loss = {"ciou": complete_box_iou_loss, "diou": distance_box_iou_loss,
            "giou": generalized_box_iou_loss}[type]
    return loss(boxes, matched_gt_boxes_per_image, reduction="sum", eps=eps)


def resolve_detection_weights(weights_enum, weights, backbone_enum, weights_backbone,
                              num_classes):
    """The weights arguments of a detection builder, as torchvision settles them: named
    weights replace the backbone's and fix num_classes to their categories; without them
    num_classes defaults to COCO's 91."""
    weights = verify_weights(weights_enum, weights)
    weights_backbone = verify_weights(backbone_enum, weights_backbone)
    if weights is not None:
        weights_backbone = None
        if isinstance(weights, WeightsEnum):
            num_classes = overwrite_value_param("num_classes", num_classes,
                                                len(weights.meta["categories"]))
    if num_classes is None:
        num_classes = 91
    return weights, weights_backbone, num_classes


def load_detection_weights(model, weights, progress, zero_eps_weights=None):
    """Loads `weights` into the built model; `zero_eps_weights` (the first published COCO
    checkpoints, trained before FrozenBatchNorm2d had an eps) get eps 0 back."""
    load_weights(model, weights, progress)
    if zero_eps_weights is not None and weights == zero_eps_weights:
        overwrite_eps(model, 0.0)
    return model
