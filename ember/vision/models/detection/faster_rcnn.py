"""Faster R-CNN (torchvision.models.detection.faster_rcnn): a backbone with FPN, the RPN,
and RoI heads with a two-layer MLP box head and a FastRCNNPredictor, with torchvision's
module names and defaults, so its state_dicts load with strict=True."""

from typing import Optional

from .... import nn
from ....nn import functional as F
from ...ops import misc as misc_nn_ops
from ...ops.poolers import MultiScaleRoIAlign
from .._api import register_model, weights_enum
from .._utils import handle_legacy_interface
from ..mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from ..resnet import ResNet50_Weights, resnet50
from ._utils import _assert, load_detection_weights, resolve_detection_weights
from .anchor_utils import AnchorGenerator
from .backbone_utils import _mobilenet_extractor, _resnet_fpn_extractor, _validate_trainable_layers
from .generalized_rcnn import GeneralizedRCNN
from .roi_heads import RoIHeads
from .rpn import RegionProposalNetwork, RPNHead
from .transform import GeneralizedRCNNTransform

__all__ = ["FasterRCNN", "TwoMLPHead", "FastRCNNConvFCHead", "FastRCNNPredictor",
           "FasterRCNN_ResNet50_FPN_Weights", "FasterRCNN_ResNet50_FPN_V2_Weights",
           "FasterRCNN_MobileNet_V3_Large_FPN_Weights",
           "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights", "fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2",
           "fasterrcnn_mobilenet_v3_large_fpn", "fasterrcnn_mobilenet_v3_large_320_fpn"]


def _default_anchorgen():
    anchor_sizes = ((32,), (64,), (128,), (256,), (512,))
    return AnchorGenerator(anchor_sizes, ((0.5, 1.0, 2.0),) * len(anchor_sizes))


def _resnet50_fpn(weights, weights_backbone, progress, trainable_backbone_layers, v2=False):
    """The ResNet-50 FPN backbone of the R-CNN builders. The first recipe freezes BatchNorm
    whenever trained weights are loaded; the v2 recipe trains plain BatchNorm, in the FPN too."""
    is_trained = weights is not None or weights_backbone is not None
    trainable = _validate_trainable_layers(is_trained, trainable_backbone_layers, 5, 3)
    if v2:
        return _resnet_fpn_extractor(resnet50(weights=weights_backbone, progress=progress),
                                     trainable, norm_layer=nn.BatchNorm2d)
    norm_layer = misc_nn_ops.FrozenBatchNorm2d if is_trained else nn.BatchNorm2d
    backbone = resnet50(weights=weights_backbone, progress=progress, norm_layer=norm_layer)
    return _resnet_fpn_extractor(backbone, trainable)


def _v2_heads(out_channels):
    """The v2 recipe's RPN (two 3x3 convs) and box head (four convs with BatchNorm, one FC)."""
    anchor_generator = _default_anchorgen()
    return dict(
        rpn_anchor_generator=anchor_generator,
        rpn_head=RPNHead(out_channels, anchor_generator.num_anchors_per_location()[0],
                         conv_depth=2),
        box_head=FastRCNNConvFCHead((out_channels, 7, 7), [256, 256, 256, 256], [1024],
                                    norm_layer=nn.BatchNorm2d))


class FasterRCNN(GeneralizedRCNN):
    """Images are a list of [C, H, W] float tensors in [0, 1], of any sizes. In training,
    targets is a list of dicts with `boxes` (FloatTensor[N, 4], x1 y1 x2 y2) and `labels`
    (Int64Tensor[N], 0 is background), and forward returns the losses; in eval it returns
    one dict of boxes, labels and scores per image, in the input's pixel coordinates."""

    def __init__(self, backbone, num_classes=None, min_size=800, max_size=1333, image_mean=None,
                 image_std=None, rpn_anchor_generator=None, rpn_head=None,
                 rpn_pre_nms_top_n_train=2000, rpn_pre_nms_top_n_test=1000,
                 rpn_post_nms_top_n_train=2000, rpn_post_nms_top_n_test=1000,
                 rpn_nms_thresh=0.7, rpn_fg_iou_thresh=0.7, rpn_bg_iou_thresh=0.3,
                 rpn_batch_size_per_image=256, rpn_positive_fraction=0.5, rpn_score_thresh=0.0,
                 box_roi_pool=None, box_head=None, box_predictor=None, box_score_thresh=0.05,
                 box_nms_thresh=0.5, box_detections_per_img=100, box_fg_iou_thresh=0.5,
                 box_bg_iou_thresh=0.5, box_batch_size_per_image=512, box_positive_fraction=0.25,
                 bbox_reg_weights=None, **kwargs):
        if not hasattr(backbone, "out_channels"):
            raise ValueError("backbone should contain an attribute out_channels specifying the "
                             "number of output channels (assumed to be the same for all the "
                             "levels)")
        if not isinstance(rpn_anchor_generator, (AnchorGenerator, type(None))):
            raise TypeError("rpn_anchor_generator should be of type AnchorGenerator or None "
                            f"instead of {type(rpn_anchor_generator)}")
        if not isinstance(box_roi_pool, (MultiScaleRoIAlign, type(None))):
            raise TypeError("box_roi_pool should be of type MultiScaleRoIAlign or None instead "
                            f"of {type(box_roi_pool)}")
        if num_classes is not None:
            if box_predictor is not None:
                raise ValueError("num_classes should be None when box_predictor is specified")
        elif box_predictor is None:
            raise ValueError("num_classes should not be None when box_predictor is not specified")
        out_channels = backbone.out_channels
        if rpn_anchor_generator is None:
            rpn_anchor_generator = _default_anchorgen()
        if rpn_head is None:
            rpn_head = RPNHead(out_channels, rpn_anchor_generator.num_anchors_per_location()[0])
        rpn = RegionProposalNetwork(
            rpn_anchor_generator, rpn_head, rpn_fg_iou_thresh, rpn_bg_iou_thresh,
            rpn_batch_size_per_image, rpn_positive_fraction,
            dict(training=rpn_pre_nms_top_n_train, testing=rpn_pre_nms_top_n_test),
            dict(training=rpn_post_nms_top_n_train, testing=rpn_post_nms_top_n_test),
            rpn_nms_thresh, score_thresh=rpn_score_thresh)
        if box_roi_pool is None:
            box_roi_pool = MultiScaleRoIAlign(featmap_names=["0", "1", "2", "3"], output_size=7,
                                              sampling_ratio=2)
        representation_size = 1024
        if box_head is None:
            resolution = box_roi_pool.output_size[0]
            box_head = TwoMLPHead(out_channels * resolution ** 2, representation_size)
        if box_predictor is None:
            box_predictor = FastRCNNPredictor(representation_size, num_classes)
        roi_heads = RoIHeads(box_roi_pool, box_head, box_predictor, box_fg_iou_thresh,
                             box_bg_iou_thresh, box_batch_size_per_image, box_positive_fraction,
                             bbox_reg_weights, box_score_thresh, box_nms_thresh,
                             box_detections_per_img)
        if image_mean is None:
            image_mean = [0.485, 0.456, 0.406]
        if image_std is None:
            image_std = [0.229, 0.224, 0.225]
        transform = GeneralizedRCNNTransform(min_size, max_size, image_mean, image_std, **kwargs)
        super().__init__(backbone, rpn, roi_heads, transform)


class TwoMLPHead(nn.Module):
    """The box head of the FPN models: flatten, fc6 + ReLU, fc7 + ReLU."""

    def __init__(self, in_channels, representation_size):
        super().__init__()
        self.fc6 = nn.Linear(in_channels, representation_size)
        self.fc7 = nn.Linear(representation_size, representation_size)

    def forward(self, x):
        x = x.flatten(start_dim=1)
        return F.relu(self.fc7(F.relu(self.fc6(x))))


class FastRCNNConvFCHead(nn.Sequential):
    """conv_layers 3x3 Conv2dNormActivation blocks, flatten, then Linear + ReLU per fc_layers
    width (the box head of fasterrcnn_resnet50_fpn_v2)."""

    def __init__(self, input_size, conv_layers, fc_layers, norm_layer=None):
        in_channels, in_height, in_width = input_size
        blocks, previous = [], in_channels
        for channels in conv_layers:
            blocks.append(misc_nn_ops.Conv2dNormActivation(previous, channels,
                                                           norm_layer=norm_layer))
            previous = channels
        blocks.append(nn.Flatten())
        previous = previous * in_height * in_width
        for channels in fc_layers:
            blocks.append(nn.Linear(previous, channels))
            blocks.append(nn.ReLU(inplace=True))
            previous = channels
        super().__init__(*blocks)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)


class FastRCNNPredictor(nn.Module):
    """Class scores (num_classes, background included) and per-class box deltas."""

    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.cls_score = nn.Linear(in_channels, num_classes)
        self.bbox_pred = nn.Linear(in_channels, num_classes * 4)

    def forward(self, x):
        if x.dim() == 4:
            _assert(list(x.shape[2:]) == [1, 1], "x has the wrong shape, expecting the last two "
                                                 f"dimensions to be [1,1] instead of {list(x.shape[2:])}")
        x = x.flatten(start_dim=1)
        return self.cls_score(x), self.bbox_pred(x)


FasterRCNN_ResNet50_FPN_Weights = weights_enum("FasterRCNN_ResNet50_FPN_Weights", __name__)
FasterRCNN_ResNet50_FPN_V2_Weights = weights_enum("FasterRCNN_ResNet50_FPN_V2_Weights", __name__)
FasterRCNN_MobileNet_V3_Large_FPN_Weights = weights_enum(
    "FasterRCNN_MobileNet_V3_Large_FPN_Weights", __name__)
FasterRCNN_MobileNet_V3_Large_320_FPN_Weights = weights_enum(
    "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights", __name__)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", FasterRCNN_ResNet50_FPN_Weights.COCO_V1),
    weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def fasterrcnn_resnet50_fpn(*, weights: Optional[FasterRCNN_ResNet50_FPN_Weights] = None,
                            progress=True, num_classes=None,
                            weights_backbone: Optional[ResNet50_Weights] =
                            ResNet50_Weights.IMAGENET1K_V1,
                            trainable_backbone_layers=None, **kwargs):
    weights, weights_backbone, num_classes = resolve_detection_weights(
        FasterRCNN_ResNet50_FPN_Weights, weights, ResNet50_Weights, weights_backbone,
        num_classes)
    backbone = _resnet50_fpn(weights, weights_backbone, progress, trainable_backbone_layers)
    model = FasterRCNN(backbone, num_classes=num_classes, **kwargs)
    return load_detection_weights(model, weights, progress,
                                  FasterRCNN_ResNet50_FPN_Weights.COCO_V1)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1),
    weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def fasterrcnn_resnet50_fpn_v2(*, weights: Optional[FasterRCNN_ResNet50_FPN_V2_Weights] = None,
                               progress=True, num_classes=None,
                               weights_backbone: Optional[ResNet50_Weights] = None,
                               trainable_backbone_layers=None, **kwargs):
    weights, weights_backbone, num_classes = resolve_detection_weights(
        FasterRCNN_ResNet50_FPN_V2_Weights, weights, ResNet50_Weights, weights_backbone,
        num_classes)
    backbone = _resnet50_fpn(weights, weights_backbone, progress, trainable_backbone_layers,
                             v2=True)
    model = FasterRCNN(backbone, num_classes=num_classes, **_v2_heads(backbone.out_channels),
                       **kwargs)
    return load_detection_weights(model, weights, progress)


def _fasterrcnn_mobilenet_v3_large_fpn(weights_enum, weights, progress, num_classes,
                                       weights_backbone, trainable_backbone_layers, kwargs):
    weights, weights_backbone, num_classes = resolve_detection_weights(
        weights_enum, weights, MobileNet_V3_Large_Weights, weights_backbone, num_classes)
    is_trained = weights is not None or weights_backbone is not None
    trainable_backbone_layers = _validate_trainable_layers(is_trained, trainable_backbone_layers,
                                                           6, 3)
    norm_layer = misc_nn_ops.FrozenBatchNorm2d if is_trained else nn.BatchNorm2d
    backbone = mobilenet_v3_large(weights=weights_backbone, progress=progress,
                                  norm_layer=norm_layer)
    backbone = _mobilenet_extractor(backbone, True, trainable_backbone_layers)
    anchor_sizes = ((32, 64, 128, 256, 512),) * 3
    aspect_ratios = ((0.5, 1.0, 2.0),) * len(anchor_sizes)
    model = FasterRCNN(backbone, num_classes,
                       rpn_anchor_generator=AnchorGenerator(anchor_sizes, aspect_ratios), **kwargs)
    return load_detection_weights(model, weights, progress)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", FasterRCNN_MobileNet_V3_Large_320_FPN_Weights.COCO_V1),
    weights_backbone=("pretrained_backbone", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def fasterrcnn_mobilenet_v3_large_320_fpn(
        *, weights: Optional[FasterRCNN_MobileNet_V3_Large_320_FPN_Weights] = None,
        progress=True, num_classes=None,
        weights_backbone: Optional[MobileNet_V3_Large_Weights] =
        MobileNet_V3_Large_Weights.IMAGENET1K_V1,
        trainable_backbone_layers=None, **kwargs):
    defaults = {"min_size": 320, "max_size": 640, "rpn_pre_nms_top_n_test": 150,
                "rpn_post_nms_top_n_test": 150, "rpn_score_thresh": 0.05}
    return _fasterrcnn_mobilenet_v3_large_fpn(
        FasterRCNN_MobileNet_V3_Large_320_FPN_Weights, weights, progress, num_classes,
        weights_backbone, trainable_backbone_layers, {**defaults, **kwargs})


@register_model()
@handle_legacy_interface(
    weights=("pretrained", FasterRCNN_MobileNet_V3_Large_FPN_Weights.COCO_V1),
    weights_backbone=("pretrained_backbone", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def fasterrcnn_mobilenet_v3_large_fpn(
        *, weights: Optional[FasterRCNN_MobileNet_V3_Large_FPN_Weights] = None, progress=True,
        num_classes=None,
        weights_backbone: Optional[MobileNet_V3_Large_Weights] =
        MobileNet_V3_Large_Weights.IMAGENET1K_V1,
        trainable_backbone_layers=None, **kwargs):
    defaults = {"rpn_score_thresh": 0.05}
    return _fasterrcnn_mobilenet_v3_large_fpn(
        FasterRCNN_MobileNet_V3_Large_FPN_Weights, weights, progress, num_classes,
        weights_backbone, trainable_backbone_layers, {**defaults, **kwargs})
