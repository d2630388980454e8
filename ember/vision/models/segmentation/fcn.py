"""FCN (torchvision.models.segmentation.fcn): a dilated ResNet (output stride 8) with a
3x3-conv head, optionally a second head on layer3 for the auxiliary loss."""
from typing import Optional

from .... import nn
from .._api import register_model, weights_enum
from .._utils import IntermediateLayerGetter, handle_legacy_interface, load_weights
from ..resnet import ResNet50_Weights, ResNet101_Weights, resnet50, resnet101
from ._utils import _SimpleSegmentationModel, resolve_segmentation_weights

__all__ = ["FCN", "FCN_ResNet50_Weights", "FCN_ResNet101_Weights", "fcn_resnet50",
           "fcn_resnet101"]


class FCN(_SimpleSegmentationModel):
    """Fully Convolutional Network: `backbone` returns {"out"[, "aux"]}, `classifier` (and
    `aux_classifier`) predict per-pixel class scores upsampled to the input size."""


class FCNHead(nn.Sequential):
    def __init__(self, in_channels, channels):
        inter_channels = in_channels // 4
        super().__init__(
            nn.Conv2d(in_channels, inter_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(inter_channels), nn.ReLU(), nn.Dropout(0.1),
            nn.Conv2d(inter_channels, channels, 1))


FCN_ResNet50_Weights = weights_enum("FCN_ResNet50_Weights", __name__)
FCN_ResNet101_Weights = weights_enum("FCN_ResNet101_Weights", __name__)


def _fcn_resnet(backbone, num_classes, aux):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    backbone = IntermediateLayerGetter(backbone, return_layers=return_layers)
    aux_classifier = FCNHead(1024, num_classes) if aux else None
    return FCN(backbone, FCNHead(2048, num_classes), aux_classifier)


def _build(resnet, weights_enum, backbone_enum, weights, progress, num_classes, aux_loss,
           weights_backbone):
    weights, weights_backbone, num_classes, aux_loss = resolve_segmentation_weights(
        weights_enum, weights, backbone_enum, weights_backbone, num_classes, aux_loss)
    # layer3 and layer4 dilate instead of striding: output stride 8
    backbone = resnet(weights=weights_backbone, replace_stride_with_dilation=[False, True, True])
    return load_weights(_fcn_resnet(backbone, num_classes, aux_loss), weights, progress)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1),
    weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def fcn_resnet50(*, weights: Optional[FCN_ResNet50_Weights] = None, progress=True,
                 num_classes=None, aux_loss=None,
                 weights_backbone: Optional[ResNet50_Weights] = ResNet50_Weights.IMAGENET1K_V1,
                 **kwargs):
    return _build(resnet50, FCN_ResNet50_Weights, ResNet50_Weights, weights, progress,
                  num_classes, aux_loss, weights_backbone)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", FCN_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1),
    weights_backbone=("pretrained_backbone", ResNet101_Weights.IMAGENET1K_V1))
def fcn_resnet101(*, weights: Optional[FCN_ResNet101_Weights] = None, progress=True,
                  num_classes=None, aux_loss=None,
                  weights_backbone: Optional[ResNet101_Weights] = ResNet101_Weights.IMAGENET1K_V1,
                  **kwargs):
    return _build(resnet101, FCN_ResNet101_Weights, ResNet101_Weights, weights, progress,
                  num_classes, aux_loss, weights_backbone)
