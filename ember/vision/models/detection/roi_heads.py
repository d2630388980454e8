"""The second stage of Faster / Mask R-CNN (torchvision.models.detection.roi_heads): RoIHeads
pools a feature patch per proposal, classifies it and refines its box; in training it samples
proposals against the ground truth and returns fastrcnn_loss, in eval it returns the
detections (per-class boxes, score threshold, NMS per class, top detections_per_img).

With a mask branch (Mask R-CNN) it also predicts one mask per class for every positive
proposal (training: maskrcnn_loss against the ground-truth masks cropped to the proposal) or
detection (eval: the mask of the detected class, as probabilities; the transform pastes them
into the image with paste_masks_in_image). The keypoint branch of Keypoint R-CNN is not
built in ember yet: the constructor takes its arguments, and forward refuses when set."""
from .... import arange, cat, float16, float32, float64, int64, nn, stack, where, zeros
from ....nn import functional as F
from ...ops import boxes as box_ops
from ...ops import roi_align
from . import _utils as det_utils

__all__ = ["RoIHeads", "fastrcnn_loss", "maskrcnn_loss", "maskrcnn_inference",
           "project_masks_on_boxes", "paste_masks_in_image"]


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


def maskrcnn_inference(x, labels):
    """The sigmoid of each detection's mask logits for its predicted class, split per image
    as (detections, 1, M, M)."""
    mask_prob = x.sigmoid()
    boxes_per_image = [label.shape[0] for label in labels]
    labels = cat(labels)
    index = arange(x.shape[0], device=labels.device)
    mask_prob = mask_prob[index, labels][:, None]
    return mask_prob.split(boxes_per_image, dim=0)


def project_masks_on_boxes(gt_masks, boxes, matched_idxs, M):
    """Each proposal's matched ground-truth mask cropped to the proposal and resampled to
    M x M with RoIAlign: the training target of the mask head."""
    matched_idxs = matched_idxs.to(boxes)
    rois = cat([matched_idxs[:, None], boxes], dim=1)
    gt_masks = gt_masks[:, None].to(rois)
    return roi_align(gt_masks, rois, (M, M), 1.0)[:, 0]


def maskrcnn_loss(mask_logits, proposals, gt_masks, gt_labels, mask_matched_idxs):
    """Binary cross-entropy of the true class's mask logits against the projected target."""
    discretization_size = mask_logits.shape[-1]
    labels = [gt_label[idxs] for gt_label, idxs in zip(gt_labels, mask_matched_idxs)]
    mask_targets = [project_masks_on_boxes(m, p, i, discretization_size)
                    for m, p, i in zip(gt_masks, proposals, mask_matched_idxs)]
    labels = cat(labels, dim=0)
    mask_targets = cat(mask_targets, dim=0)
    if mask_targets.numel() == 0:  # no positive proposal: a zero that keeps the graph
        return mask_logits.sum() * 0
    return F.binary_cross_entropy_with_logits(
        mask_logits[arange(labels.shape[0], device=labels.device), labels], mask_targets)


def expand_boxes(boxes, scale):
    w_half = (boxes[:, 2] - boxes[:, 0]) * 0.5 * scale
    h_half = (boxes[:, 3] - boxes[:, 1]) * 0.5 * scale
    x_c = (boxes[:, 2] + boxes[:, 0]) * 0.5
    y_c = (boxes[:, 3] + boxes[:, 1]) * 0.5
    return stack([x_c - w_half, y_c - h_half, x_c + w_half, y_c + h_half], dim=1)


def expand_masks(mask, padding):
    M = mask.shape[-1]
    scale = float(M + 2 * padding) / M
    return F.pad(mask, (padding,) * 4), scale


def paste_mask_in_image(mask, box, im_h, im_w):
    """One M x M mask resized (bilinear) to its integer box and placed in an im_h x im_w
    canvas, the parts outside the image cut off."""
    x0_box, y0_box, x1_box, y1_box = (int(v) for v in box.tolist())
    w = max(x1_box - x0_box + 1, 1)
    h = max(y1_box - y0_box + 1, 1)
    mask = F.interpolate(mask.expand((1, 1, -1, -1)), size=(h, w), mode="bilinear",
                         align_corners=False)[0][0]
    im_mask = zeros((im_h, im_w), dtype=mask.dtype, device=mask.device)
    x_0, x_1 = max(x0_box, 0), min(x1_box + 1, im_w)
    y_0, y_1 = max(y0_box, 0), min(y1_box + 1, im_h)
    if x_1 > x_0 and y_1 > y_0:
        im_mask[y_0:y_1, x_0:x_1] = mask[y_0 - y0_box:y_1 - y0_box, x_0 - x0_box:x_1 - x0_box]
    return im_mask


def paste_masks_in_image(masks, boxes, img_shape, padding=1):
    """(N, 1, M, M) masks in box coordinates -> (N, 1, H, W) masks in the image. The mask and
    its box are first grown by `padding` cells so the resize does not clip the border."""
    masks, scale = expand_masks(masks, padding=padding)
    boxes = expand_boxes(boxes, scale).to(dtype=int64)
    im_h, im_w = img_shape
    res = [paste_mask_in_image(m[0], b, im_h, im_w) for m, b in zip(masks, boxes)]
    if res:
        return stack(res, dim=0)[:, None]
    return masks.new_empty((0, 1, im_h, im_w))


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
        if self.has_keypoint():
            raise NotImplementedError("the keypoint head (Keypoint R-CNN) is not available in "
                                      "ember yet")
        if targets is not None:
            for t in targets:
                if t["boxes"].dtype not in (float32, float64, float16):
                    raise TypeError(f"target boxes must of float type, instead got {t['boxes'].dtype}")
                if t["labels"].dtype != int64:
                    raise TypeError("target labels must of int64 type, instead got "
                                    f"{t['labels'].dtype}")
        matched_idxs = labels = None
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
        if self.has_mask():
            self._mask_branch(features, proposals, image_shapes, targets, matched_idxs,
                              labels, result, losses)
        return result, losses

    def _mask_branch(self, features, proposals, image_shapes, targets, matched_idxs, labels,
                     result, losses):
        if self.training:
            # only the positive proposals learn a mask, against their matched object
            positives = [where(lab > 0)[0] for lab in labels]
            mask_proposals = [p[pos] for p, pos in zip(proposals, positives)]
            pos_matched_idxs = [m[pos] for m, pos in zip(matched_idxs, positives)]
        else:
            mask_proposals = [r["boxes"] for r in result]
        mask_features = self.mask_roi_pool(features, mask_proposals, image_shapes)
        mask_features = self.mask_head(mask_features)
        mask_logits = self.mask_predictor(mask_features)
        if self.training:
            gt_masks = [t["masks"] for t in targets]
            gt_labels = [t["labels"] for t in targets]
            losses["loss_mask"] = maskrcnn_loss(mask_logits, mask_proposals, gt_masks,
                                                gt_labels, pos_matched_idxs)
        else:
            masks_probs = maskrcnn_inference(mask_logits, [r["labels"] for r in result])
            for mask_prob, r in zip(masks_probs, result):
                r["masks"] = mask_prob
