"""Mask R-CNN (torchvision.models.detection.mask_rcnn): Faster R-CNN with a mask branch in its
RoI heads (a 14x14 MultiScaleRoIAlign, four 3x3 conv layers, a 2x up-convolution and a 1x1
conv to one mask per class), with torchvision's module names so its checkpoints load with
strict=True."""
from collections import OrderedDict
from typing import Optional

from .... import nn
from ...ops import misc as misc_nn_ops
from ...ops.poolers import MultiScaleRoIAlign
from .._api import register_model, weights_enum
from .._utils import handle_legacy_interface
from ..resnet import ResNet50_Weights
from ._utils import load_detection_weights, resolve_detection_weights
from .faster_rcnn import FasterRCNN, _resnet50_fpn, _v2_heads

__all__ = ["MaskRCNN", "MaskRCNNHeads", "MaskRCNNPredictor", "MaskRCNN_ResNet50_FPN_Weights",
           "MaskRCNN_ResNet50_FPN_V2_Weights", "maskrcnn_resnet50_fpn",
           "maskrcnn_resnet50_fpn_v2"]


class MaskRCNN(FasterRCNN):
    """FasterRCNN whose targets also carry `masks` (UInt8Tensor[N, H, W], one binary mask
    per box) in training, and whose detections carry `masks` (FloatTensor[N, 1, H, W],
    probabilities in the input image's size) in eval."""

    def __init__(self, backbone, num_classes=None, min_size=800, max_size=1333, image_mean=None,
                 image_std=None, rpn_anchor_generator=None, rpn_head=None,
                 rpn_pre_nms_top_n_train=2000, rpn_pre_nms_top_n_test=1000,
                 rpn_post_nms_top_n_train=2000, rpn_post_nms_top_n_test=1000,
                 rpn_nms_thresh=0.7, rpn_fg_iou_thresh=0.7, rpn_bg_iou_thresh=0.3,
                 rpn_batch_size_per_image=256, rpn_positive_fraction=0.5, rpn_score_thresh=0.0,
                 box_roi_pool=None, box_head=None, box_predictor=None, box_score_thresh=0.05,
                 box_nms_thresh=0.5, box_detections_per_img=100, box_fg_iou_thresh=0.5,
                 box_bg_iou_thresh=0.5, box_batch_size_per_image=512, box_positive_fraction=0.25,
                 bbox_reg_weights=None, mask_roi_pool=None, mask_head=None, mask_predictor=None,
                 **kwargs):
        if not isinstance(mask_roi_pool, (MultiScaleRoIAlign, type(None))):
            raise TypeError("mask_roi_pool should be of type MultiScaleRoIAlign or None instead "
                            f"of {type(mask_roi_pool)}")
        if num_classes is not None and mask_predictor is not None:
            raise ValueError("num_classes should be None when mask_predictor is specified")
        out_channels = backbone.out_channels
        if mask_roi_pool is None:
            mask_roi_pool = MultiScaleRoIAlign(featmap_names=["0", "1", "2", "3"],
                                               output_size=14, sampling_ratio=2)
        if mask_head is None:
            mask_head = MaskRCNNHeads(out_channels, (256, 256, 256, 256), 1)
        if mask_predictor is None:
            mask_predictor = MaskRCNNPredictor(256, 256, num_classes)
        super().__init__(
            backbone, num_classes, min_size, max_size, image_mean, image_std,
            rpn_anchor_generator, rpn_head, rpn_pre_nms_top_n_train, rpn_pre_nms_top_n_test,
            rpn_post_nms_top_n_train, rpn_post_nms_top_n_test, rpn_nms_thresh,
            rpn_fg_iou_thresh, rpn_bg_iou_thresh, rpn_batch_size_per_image,
            rpn_positive_fraction, rpn_score_thresh, box_roi_pool, box_head, box_predictor,
            box_score_thresh, box_nms_thresh, box_detections_per_img, box_fg_iou_thresh,
            box_bg_iou_thresh, box_batch_size_per_image, box_positive_fraction,
            bbox_reg_weights, **kwargs)
        self.roi_heads.mask_roi_pool = mask_roi_pool
        self.roi_heads.mask_head = mask_head
        self.roi_heads.mask_predictor = mask_predictor


class MaskRCNNHeads(nn.Sequential):
    """`layers` 3x3 Conv2dNormActivation blocks (keys `0.0.weight` ...)."""
    _version = 2

    def __init__(self, in_channels, layers, dilation, norm_layer=None):
        blocks = []
        next_feature = in_channels
        for layer_features in layers:
            blocks.append(misc_nn_ops.Conv2dNormActivation(
                next_feature, layer_features, kernel_size=3, stride=1, padding=dilation,
                dilation=dilation, norm_layer=norm_layer))
            next_feature = layer_features
        super().__init__(*blocks)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # checkpoints before version 2 named the convolutions mask_fcn1, mask_fcn2 ...
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            for i in range(len(self)):
                for kind in ("weight", "bias"):
                    old_key = f"{prefix}mask_fcn{i + 1}.{kind}"
                    if old_key in state_dict:
                        state_dict[f"{prefix}{i}.0.{kind}"] = state_dict.pop(old_key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class MaskRCNNPredictor(nn.Sequential):
    """A 2x transposed convolution and a 1x1 convolution to `num_classes` mask logits."""

    def __init__(self, in_channels, dim_reduced, num_classes):
        super().__init__(OrderedDict([
            ("conv5_mask", nn.ConvTranspose2d(in_channels, dim_reduced, 2, 2, 0)),
            ("relu", nn.ReLU(inplace=True)),
            ("mask_fcn_logits", nn.Conv2d(dim_reduced, num_classes, 1, 1, 0)),
        ]))
        for name, param in self.named_parameters():
            if "weight" in name:
                nn.init.kaiming_normal_(param, mode="fan_out", nonlinearity="relu")


MaskRCNN_ResNet50_FPN_Weights = weights_enum("MaskRCNN_ResNet50_FPN_Weights", __name__)
MaskRCNN_ResNet50_FPN_V2_Weights = weights_enum("MaskRCNN_ResNet50_FPN_V2_Weights", __name__)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", MaskRCNN_ResNet50_FPN_Weights.COCO_V1),
    weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def maskrcnn_resnet50_fpn(*, weights: Optional[MaskRCNN_ResNet50_FPN_Weights] = None,
                          progress=True, num_classes=None,
                          weights_backbone: Optional[ResNet50_Weights] =
                          ResNet50_Weights.IMAGENET1K_V1,
                          trainable_backbone_layers=None, **kwargs):
    weights, weights_backbone, num_classes = resolve_detection_weights(
        MaskRCNN_ResNet50_FPN_Weights, weights, ResNet50_Weights, weights_backbone,
        num_classes)
    backbone = _resnet50_fpn(weights, weights_backbone, progress, trainable_backbone_layers)
    model = MaskRCNN(backbone, num_classes=num_classes, **kwargs)
    return load_detection_weights(model, weights, progress, MaskRCNN_ResNet50_FPN_Weights.COCO_V1)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1),
    weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def maskrcnn_resnet50_fpn_v2(*, weights: Optional[MaskRCNN_ResNet50_FPN_V2_Weights] = None,
                             progress=True, num_classes=None,
                             weights_backbone: Optional[ResNet50_Weights] = None,
                             trainable_backbone_layers=None, **kwargs):
    weights, weights_backbone, num_classes = resolve_detection_weights(
        MaskRCNN_ResNet50_FPN_V2_Weights, weights, ResNet50_Weights, weights_backbone,
        num_classes)
    backbone = _resnet50_fpn(weights, weights_backbone, progress, trainable_backbone_layers,
                             v2=True)
    mask_head = MaskRCNNHeads(backbone.out_channels, [256, 256, 256, 256], 1,
                              norm_layer=nn.BatchNorm2d)
    model = MaskRCNN(backbone, num_classes=num_classes, **_v2_heads(backbone.out_channels),
                     mask_head=mask_head, **kwargs)
    return load_detection_weights(model, weights, progress)
