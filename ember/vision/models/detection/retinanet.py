"""RetinaNet (torchvision.models.detection.retinanet): a one-stage detector, a ResNet-50
FPN (P3-P7) with a classification head trained by sigmoid focal loss and a box regression
head, both shared across levels; torchvision's module names, so its state_dicts load."""
import math
from collections import OrderedDict
from functools import partial
from typing import Optional

from .... import cat, full, int64, nn, sigmoid, where, zeros_like
from ...ops import boxes as box_ops, misc as misc_nn_ops
from ...ops.feature_pyramid_network import LastLevelP6P7
from ...ops.roi import sigmoid_focal_loss
from .._api import register_model, weights_enum
from .._utils import handle_legacy_interface
from ..resnet import ResNet50_Weights, resnet50
from . import _utils as det_utils
from ._utils import _assert, load_detection_weights, resolve_detection_weights
from .anchor_utils import AnchorGenerator
from .backbone_utils import _resnet_fpn_extractor, _validate_trainable_layers
from .generalized_rcnn import _check_degenerate_boxes, _original_sizes
from .transform import GeneralizedRCNNTransform

__all__ = ["RetinaNet", "RetinaNetHead", "RetinaNetClassificationHead",
           "RetinaNetRegressionHead", "RetinaNet_ResNet50_FPN_Weights",
           "RetinaNet_ResNet50_FPN_V2_Weights", "retinanet_resnet50_fpn",
           "retinanet_resnet50_fpn_v2"]


def _sum(x):
    res = x[0]
    for i in x[1:]:
        res = res + i
    return res


def _v1_to_v2_weights(state_dict, prefix):
    # the head convs were a plain Sequential of conv, ReLU pairs (conv.0, conv.2, ...)
    for i in range(4):
        for kind in ("weight", "bias"):
            old_key, new_key = f"{prefix}conv.{2 * i}.{kind}", f"{prefix}conv.{i}.0.{kind}"
            if old_key in state_dict:
                state_dict[new_key] = state_dict.pop(old_key)


def _default_anchorgen():
    # three scales per octave: x, x * 2^(1/3), x * 2^(2/3)
    anchor_sizes = tuple((x, int(x * 2 ** (1.0 / 3)), int(x * 2 ** (2.0 / 3)))
                         for x in [32, 64, 128, 256, 512])
    return AnchorGenerator(anchor_sizes, ((0.5, 1.0, 2.0),) * len(anchor_sizes))


def _flatten_levels(outputs, width):
    """[(N, A*width, H, W) per level] -> (N, sum of H*W*A, width), position-major."""
    flat = []
    for out in outputs:
        N, _, H, W = out.shape
        flat.append(out.view(N, -1, width, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, width))
    return cat(flat, dim=1)


class _HeadLoadMixin:
    _version = 2

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            _v1_to_v2_weights(state_dict, prefix)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def _conv_tower(in_channels, norm_layer):
    conv = nn.Sequential(*[misc_nn_ops.Conv2dNormActivation(in_channels, in_channels,
                                                            norm_layer=norm_layer)
                           for _ in range(4)])
    for layer in conv.modules():
        if isinstance(layer, nn.Conv2d):
            nn.init.normal_(layer.weight, std=0.01)
            if layer.bias is not None:
                nn.init.constant_(layer.bias, 0)
    return conv


class RetinaNetClassificationHead(_HeadLoadMixin, nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, prior_probability=0.01,
                 norm_layer=None):
        super().__init__()
        self.conv = _conv_tower(in_channels, norm_layer)
        self.cls_logits = nn.Conv2d(in_channels, num_anchors * num_classes, kernel_size=3,
                                    stride=1, padding=1)
        nn.init.normal_(self.cls_logits.weight, std=0.01)
        # every anchor starts out predicting `prior_probability` for each class, so the
        # many easy negatives do not swamp the first steps
        nn.init.constant_(self.cls_logits.bias,
                          -math.log((1 - prior_probability) / prior_probability))
        self.num_classes = num_classes
        self.num_anchors = num_anchors
        self.BETWEEN_THRESHOLDS = det_utils.Matcher.BETWEEN_THRESHOLDS

    def compute_loss(self, targets, head_outputs, matched_idxs):
        losses = []
        for target, cls_logits, matched in zip(targets, head_outputs["cls_logits"], matched_idxs):
            foreground = matched >= 0
            num_foreground = foreground.sum()
            gt_classes_target = zeros_like(cls_logits)
            gt_classes_target[foreground, target["labels"][matched[foreground]]] = 1.0
            valid = matched != self.BETWEEN_THRESHOLDS
            loss = sigmoid_focal_loss(cls_logits[valid], gt_classes_target[valid],
                                      reduction="sum")
            losses.append(loss / max(1, num_foreground))
        return _sum(losses) / len(targets)

    def forward(self, x):
        return _flatten_levels([self.cls_logits(self.conv(f)) for f in x], self.num_classes)


class RetinaNetRegressionHead(_HeadLoadMixin, nn.Module):
    def __init__(self, in_channels, num_anchors, norm_layer=None):
        super().__init__()
        self.conv = _conv_tower(in_channels, norm_layer)
        self.bbox_reg = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=3, stride=1,
                                  padding=1)
        nn.init.normal_(self.bbox_reg.weight, std=0.01)
        nn.init.zeros_(self.bbox_reg.bias)
        self.box_coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        self._loss_type = "l1"

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        losses = []
        for target, bbox_regression, anchors_per_image, matched in zip(
                targets, head_outputs["bbox_regression"], anchors, matched_idxs):
            foreground = where(matched >= 0)[0]
            matched_gt_boxes = target["boxes"][matched[foreground]]
            loss = det_utils._box_loss(self._loss_type, self.box_coder,
                                       anchors_per_image[foreground, :], matched_gt_boxes,
                                       bbox_regression[foreground, :])
            losses.append(loss / max(1, foreground.numel()))
        return _sum(losses) / max(1, len(targets))

    def forward(self, x):
        return _flatten_levels([self.bbox_reg(self.conv(f)) for f in x], 4)


class RetinaNetHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, norm_layer=None):
        super().__init__()
        self.classification_head = RetinaNetClassificationHead(in_channels, num_anchors,
                                                               num_classes, norm_layer=norm_layer)
        self.regression_head = RetinaNetRegressionHead(in_channels, num_anchors,
                                                       norm_layer=norm_layer)

    def compute_loss(self, targets, head_outputs, anchors, matched_idxs):
        return {"classification": self.classification_head.compute_loss(targets, head_outputs,
                                                                         matched_idxs),
                "bbox_regression": self.regression_head.compute_loss(targets, head_outputs,
                                                                     anchors, matched_idxs)}

    def forward(self, x):
        return {"cls_logits": self.classification_head(x),
                "bbox_regression": self.regression_head(x)}


class RetinaNet(nn.Module):
    """Training mode returns {"classification", "bbox_regression"} losses; eval mode one
    dict of boxes, scores and labels per image."""

    def __init__(self, backbone, num_classes, min_size=800, max_size=1333, image_mean=None,
                 image_std=None, anchor_generator=None, head=None, proposal_matcher=None,
                 score_thresh=0.05, nms_thresh=0.5, detections_per_img=300, fg_iou_thresh=0.5,
                 bg_iou_thresh=0.4, topk_candidates=1000, **kwargs):
        super().__init__()
        if not hasattr(backbone, "out_channels"):
            raise ValueError("backbone should contain an attribute out_channels specifying the "
                             "number of output channels (assumed to be the same for all the "
                             "levels)")
        self.backbone = backbone
        if not isinstance(anchor_generator, (AnchorGenerator, type(None))):
            raise TypeError("anchor_generator should be of type AnchorGenerator or None instead "
                            f"of {type(anchor_generator)}")
        if anchor_generator is None:
            anchor_generator = _default_anchorgen()
        self.anchor_generator = anchor_generator
        if head is None:
            head = RetinaNetHead(backbone.out_channels,
                                 anchor_generator.num_anchors_per_location()[0], num_classes)
        self.head = head
        if proposal_matcher is None:
            proposal_matcher = det_utils.Matcher(fg_iou_thresh, bg_iou_thresh,
                                                 allow_low_quality_matches=True)
        self.proposal_matcher = proposal_matcher
        self.box_coder = det_utils.BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))
        if image_mean is None:
            image_mean = [0.485, 0.456, 0.406]
        if image_std is None:
            image_std = [0.229, 0.224, 0.225]
        self.transform = GeneralizedRCNNTransform(min_size, max_size, image_mean, image_std,
                                                  **kwargs)
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img
        self.topk_candidates = topk_candidates
        self._has_warned = False

    def eager_outputs(self, losses, detections):
        return losses if self.training else detections

    def compute_loss(self, targets, head_outputs, anchors):
        matched_idxs = []
        for anchors_per_image, target in zip(anchors, targets):
            if target["boxes"].numel() == 0:
                matched_idxs.append(full((anchors_per_image.size(0),), -1, dtype=int64,
                                         device=anchors_per_image.device))
                continue
            quality = box_ops.box_iou(target["boxes"], anchors_per_image)
            matched_idxs.append(self.proposal_matcher(quality))
        return self.head.compute_loss(targets, head_outputs, anchors, matched_idxs)

    def postprocess_detections(self, head_outputs, anchors, image_shapes):
        class_logits = head_outputs["cls_logits"]
        box_regression = head_outputs["bbox_regression"]
        detections = []
        for index, image_shape in enumerate(image_shapes):
            image_boxes, image_scores, image_labels = [], [], []
            for box_regression_level, logits_level, anchors_level in zip(
                    [br[index] for br in box_regression], [cl[index] for cl in class_logits],
                    anchors[index]):
                num_classes = logits_level.shape[-1]
                scores = sigmoid(logits_level).flatten()
                keep = scores > self.score_thresh
                scores = scores[keep]
                topk_idxs = where(keep)[0]
                # the best topk_candidates (anchor, class) pairs of the level
                num_topk = det_utils._topk_min(topk_idxs, self.topk_candidates, 0)
                scores, idxs = scores.topk(num_topk)
                topk_idxs = topk_idxs[idxs]
                anchor_idxs = topk_idxs // num_classes
                labels = topk_idxs % num_classes
                boxes = self.box_coder.decode_single(box_regression_level[anchor_idxs],
                                                     anchors_level[anchor_idxs])
                image_boxes.append(box_ops.clip_boxes_to_image(boxes, image_shape))
                image_scores.append(scores)
                image_labels.append(labels)
            image_boxes = cat(image_boxes, dim=0)
            image_scores = cat(image_scores, dim=0)
            image_labels = cat(image_labels, dim=0)
            keep = box_ops.batched_nms(image_boxes, image_scores, image_labels, self.nms_thresh)
            keep = keep[:self.detections_per_img]
            detections.append({"boxes": image_boxes[keep], "scores": image_scores[keep],
                               "labels": image_labels[keep]})
        return detections

    def forward(self, images, targets=None):
        if self.training:
            if targets is None:
                _assert(False, "targets should not be none when in training mode")
            for target in targets:
                boxes = target["boxes"]
                _assert(hasattr(boxes, "dim"), "Expected target boxes to be of type Tensor.")
                _assert(boxes.dim() == 2 and boxes.shape[-1] == 4,
                        "Expected target boxes to be a tensor of shape [N, 4].")
        original_image_sizes = _original_sizes(images)
        images, targets = self.transform(images, targets)
        if targets is not None:
            _check_degenerate_boxes(targets)
        features = self.backbone(images.tensors)
        if hasattr(features, "dim"):
            features = OrderedDict([("0", features)])
        features = list(features.values())
        head_outputs = self.head(features)
        anchors = self.anchor_generator(images, features)
        losses, detections = {}, []
        if self.training:
            losses = self.compute_loss(targets, head_outputs, anchors)
        else:
            hw_per_level = [x.size(2) * x.size(3) for x in features]
            A = head_outputs["cls_logits"].size(1) // sum(hw_per_level)
            num_anchors_per_level = [hw * A for hw in hw_per_level]
            split_head_outputs = {k: list(v.split(num_anchors_per_level, dim=1))
                                  for k, v in head_outputs.items()}
            split_anchors = [list(a.split(num_anchors_per_level)) for a in anchors]
            detections = self.postprocess_detections(split_head_outputs, split_anchors,
                                                      images.image_sizes)
            detections = self.transform.postprocess(detections, images.image_sizes,
                                                    original_image_sizes)
        return self.eager_outputs(losses, detections)


RetinaNet_ResNet50_FPN_Weights = weights_enum("RetinaNet_ResNet50_FPN_Weights", __name__)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", RetinaNet_ResNet50_FPN_Weights.COCO_V1),
    weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def retinanet_resnet50_fpn(*, weights: Optional[RetinaNet_ResNet50_FPN_Weights] = None,
                           progress=True, num_classes=None,
                           weights_backbone: Optional[ResNet50_Weights] =
                           ResNet50_Weights.IMAGENET1K_V1,
                           trainable_backbone_layers=None, **kwargs):
    weights, weights_backbone, num_classes = resolve_detection_weights(
        RetinaNet_ResNet50_FPN_Weights, weights, ResNet50_Weights, weights_backbone, num_classes)
    is_trained = weights is not None or weights_backbone is not None
    trainable_backbone_layers = _validate_trainable_layers(is_trained, trainable_backbone_layers,
                                                           5, 3)
    norm_layer = misc_nn_ops.FrozenBatchNorm2d if is_trained else nn.BatchNorm2d
    backbone = resnet50(weights=weights_backbone, progress=progress, norm_layer=norm_layer)
    # P3-P7: layers 2-4 and two extra levels from P5
    backbone = _resnet_fpn_extractor(backbone, trainable_backbone_layers, returned_layers=[2, 3, 4],
                                     extra_blocks=LastLevelP6P7(256, 256))
    model = RetinaNet(backbone, num_classes, **kwargs)
    return load_detection_weights(model, weights, progress,
                                  RetinaNet_ResNet50_FPN_Weights.COCO_V1)


RetinaNet_ResNet50_FPN_V2_Weights = weights_enum("RetinaNet_ResNet50_FPN_V2_Weights", __name__)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", RetinaNet_ResNet50_FPN_V2_Weights.COCO_V1),
    weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def retinanet_resnet50_fpn_v2(*, weights: Optional[RetinaNet_ResNet50_FPN_V2_Weights] = None,
                              progress=True, num_classes=None,
                              weights_backbone: Optional[ResNet50_Weights] = None,
                              trainable_backbone_layers=None, **kwargs):
    """The improved recipe: plain BatchNorm in the backbone, P6 from C5, GroupNorm in the
    heads and the GIoU box loss."""
    weights, weights_backbone, num_classes = resolve_detection_weights(
        RetinaNet_ResNet50_FPN_V2_Weights, weights, ResNet50_Weights, weights_backbone,
        num_classes)
    is_trained = weights is not None or weights_backbone is not None
    trainable_backbone_layers = _validate_trainable_layers(is_trained, trainable_backbone_layers,
                                                           5, 3)
    backbone = resnet50(weights=weights_backbone, progress=progress)
    backbone = _resnet_fpn_extractor(backbone, trainable_backbone_layers, returned_layers=[2, 3, 4],
                                     extra_blocks=LastLevelP6P7(2048, 256))
    anchor_generator = _default_anchorgen()
    head = RetinaNetHead(backbone.out_channels, anchor_generator.num_anchors_per_location()[0],
                         num_classes, norm_layer=partial(nn.GroupNorm, 32))
    head.regression_head._loss_type = "giou"
    model = RetinaNet(backbone, num_classes, anchor_generator=anchor_generator, head=head,
                      **kwargs)
    return load_detection_weights(model, weights, progress)
