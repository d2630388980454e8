"""The second stage of Faster R-CNN (torchvision.models.detection.roi_heads): RoIHeads pools
a feature patch per proposal, classifies it and refines its box; in training it samples
proposals against the ground truth and returns fastrcnn_loss, in eval it returns the
detections (per-class boxes, score threshold, NMS per class, top detections_per_img).

The mask and keypoint branches of Mask / Keypoint R-CNN are not built in ember yet: the
constructor takes their arguments, and forward refuses when they are set."""
from .... import arange, cat, float16, float32, float64, int64, nn, where, zeros
from ....nn import functional as F
from ...ops import boxes as box_ops
from . import _utils as det_utils

__all__ = ["RoIHeads", "fastrcnn_loss"]


def fastrcnn_loss(class_logits, box_regression, labels, regression_targets):
    """Cross-entropy over the classes, and smooth-L1 (beta 1/9) on the box of each positive
    sample's true class, summed and divided by the number of samples."""
    labels = cat(labels, dim=0)
    regression_targets = cat(regression_targets, dim=0)
    classification_loss = F.cross_entropy(class_logits, labels)
    pos = where(labels > 0)[0]
    labels_pos = labels[pos]
    N = class_logits.shape[0]
    box_regression = box_regression.reshape(N, box_regression.size(-1) // 4, 4)
    box_loss = F.smooth_l1_loss(box_regression[pos, labels_pos], regression_targets[pos],
                                beta=1 / 9, reduction="sum")
    return classification_loss, box_loss / labels.numel()


class RoIHeads(nn.Module):
    def __init__(self, box_roi_pool, box_head, box_predictor, fg_iou_thresh, bg_iou_thresh,
                 batch_size_per_image, positive_fraction, bbox_reg_weights, score_thresh,
                 nms_thresh, detections_per_img, mask_roi_pool=None, mask_head=None,
                 mask_predictor=None, keypoint_roi_pool=None, keypoint_head=None,
                 keypoint_predictor=None):
        super().__init__()
        self.box_similarity = box_ops.box_iou
        self.proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh,
                                                  allow_low_quality_matches=False)
        self.fg_bg_sampler = det_utils.BalancedPositiveNegativeSampler(batch_size_per_image,
                                                                       positive_fraction)
        if bbox_reg_weights is None:
            bbox_reg_weights = (10.0, 10.0, 5.0, 5.0)
        self.box_coder = det_utils.BoxCoder(bbox_reg_weights)
        self.box_roi_pool = box_roi_pool
        self.box_head = box_head
        self.box_predictor = box_predictor
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.mask_roi_pool = mask_roi_pool
        self.mask_head = mask_head
        self.mask_predictor = mask_predictor
        self.keypoint_roi_pool = keypoint_roi_pool
        self.keypoint_head = keypoint_head
        self.keypoint_predictor = keypoint_predictor

    def has_mask(self):
        return not (self.mask_roi_pool is None or self.mask_head is None
                    or self.mask_predictor is None)

    def has_keypoint(self):
        return not (self.keypoint_roi_pool is None or self.keypoint_head is None
                    or self.keypoint_predictor is None)

    def assign_targets_to_proposals(self, proposals, gt_boxes, gt_labels):
        """Per image: the matched ground-truth index of each proposal (clamped to >= 0) and
        its class label (0 background, -1 ignored)."""
        matched_idxs, labels = [], []
        for proposals_in_image, gt_boxes_in_image, gt_labels_in_image in zip(
                proposals, gt_boxes, gt_labels):
            if gt_boxes_in_image.numel() == 0:
                n, device = proposals_in_image.shape[0], proposals_in_image.device
                clamped = zeros((n,), dtype=int64, device=device)
                labels_in_image = zeros((n,), dtype=int64, device=device)
            else:
                quality = box_ops.box_iou(gt_boxes_in_image, proposals_in_image)
                matched = self.proposal_matcher(quality)
                clamped = matched.clamp(min=0)
                labels_in_image = gt_labels_in_image[clamped].to(dtype=int64)
                labels_in_image[matched == self.proposal_matcher.BELOW_LOW_THRESHOLD] = 0
                labels_in_image[matched == self.proposal_matcher.BETWEEN_THRESHOLDS] = -1
            matched_idxs.append(clamped)
            labels.append(labels_in_image)
        return matched_idxs, labels

    def subsample(self, labels):
        sampled_pos, sampled_neg = self.fg_bg_sampler(labels)
        return [where(pos | neg)[0] for pos, neg in zip(sampled_pos, sampled_neg)]

    def add_gt_proposals(self, proposals, gt_boxes):
        # the ground-truth boxes join the proposals, so every object has a perfect sample
        return [cat((proposal, gt)) for proposal, gt in zip(proposals, gt_boxes)]

    def check_targets(self, targets):
        if targets is None:
            raise ValueError("targets should not be None")
        if not all("boxes" in t for t in targets):
            raise ValueError("Every element of targets should have a boxes key")
        if not all("labels" in t for t in targets):
            raise ValueError("Every element of targets should have a labels key")

    def select_training_samples(self, proposals, targets):
        self.check_targets(targets)
        dtype, device = proposals[0].dtype, proposals[0].device
        gt_boxes = [t["boxes"].to(dtype) for t in targets]
        gt_labels = [t["labels"] for t in targets]
        proposals = self.add_gt_proposals(proposals, gt_boxes)
        matched_idxs, labels = self.assign_targets_to_proposals(proposals, gt_boxes, gt_labels)
        sampled_inds = self.subsample(labels)
        matched_gt_boxes = []
        for img_id, inds in enumerate(sampled_inds):
            proposals[img_id] = proposals[img_id][inds]
            labels[img_id] = labels[img_id][inds]
            matched_idxs[img_id] = matched_idxs[img_id][inds]
            gt = gt_boxes[img_id]
            if gt.numel() == 0:
                gt = zeros((1, 4), dtype=dtype, device=device)
            matched_gt_boxes.append(gt[matched_idxs[img_id]])
        regression_targets = self.box_coder.encode(matched_gt_boxes, proposals)
        return proposals, matched_idxs, labels, regression_targets

    def postprocess_detections(self, class_logits, box_regression, proposals, image_shapes):
        device = class_logits.device
        num_classes = class_logits.shape[-1]
        boxes_per_image = [p.shape[0] for p in proposals]
        pred_boxes = self.box_coder.decode(box_regression, proposals)
        pred_scores = F.softmax(class_logits, -1)
        all_boxes, all_scores, all_labels = [], [], []
        for boxes, scores, image_shape in zip(pred_boxes.split(boxes_per_image, 0),
                                              pred_scores.split(boxes_per_image, 0),
                                              image_shapes):
            boxes = box_ops.clip_boxes_to_image(boxes, image_shape)
            labels = arange(num_classes, device=device).view(1, -1).expand_as(scores)
            # one candidate per (proposal, class), class 0 (background) left out
            boxes = boxes[:, 1:].reshape(-1, 4)
            scores = scores[:, 1:].reshape(-1)
            labels = labels[:, 1:].reshape(-1)
            inds = where(scores > self.score_thresh)[0]
            boxes, scores, labels = boxes[inds], scores[inds], labels[inds]
            keep = box_ops.remove_small_boxes(boxes, min_size=1e-2)
            boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
            keep = box_ops.batched_nms(boxes, scores, labels, self.nms_thresh)
            keep = keep[:self.detections_per_img]
            all_boxes.append(boxes[keep])
            all_scores.append(scores[keep])
            all_labels.append(labels[keep])
        return all_boxes, all_scores, all_labels

    def forward(self, features, proposals, image_shapes, targets=None):
        if self.has_mask() or self.has_keypoint():
            raise NotImplementedError("the mask and keypoint heads (Mask / Keypoint R-CNN) are "
                                      "not available in ember yet")
        if targets is not None:
            for t in targets:
                if t["boxes"].dtype not in (float32, float64, float16):
                    raise TypeError(f"target boxes must of float type, instead got {t['boxes'].dtype}")
                if t["labels"].dtype != int64:
                    raise TypeError("target labels must of int64 type, instead got "
                                    f"{t['labels'].dtype}")
        if self.training:
            proposals, matched_idxs, labels, regression_targets = self.select_training_samples(
                proposals, targets)
        box_features = self.box_roi_pool(features, proposals, image_shapes)
        box_features = self.box_head(box_features)
        class_logits, box_regression = self.box_predictor(box_features)
        result, losses = [], {}
        if self.training:
            loss_classifier, loss_box_reg = fastrcnn_loss(class_logits, box_regression, labels,
                                                          regression_targets)
            losses = {"loss_classifier": loss_classifier, "loss_box_reg": loss_box_reg}
        else:
            boxes, scores, labels = self.postprocess_detections(class_logits, box_regression,
                                                                proposals, image_shapes)
            result = [{"boxes": b, "labels": l, "scores": s}
                      for b, s, l in zip(boxes, scores, labels)]
        return result, losses
