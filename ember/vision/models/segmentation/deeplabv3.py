"""DeepLabV3 (torchvision.models.segmentation.deeplabv3): a dilated ResNet or MobileNetV3
backbone with the ASPP head (parallel atrous convolutions and image pooling), optionally an
FCN head on earlier features for the auxiliary loss."""
from typing import Optional

from .... import cat, nn
from ....nn import functional as F
from .._api import register_model, weights_enum
from .._utils import IntermediateLayerGetter, handle_legacy_interface, load_weights
from ..mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from ..resnet import ResNet50_Weights, ResNet101_Weights, resnet50, resnet101
from ._utils import _SimpleSegmentationModel, mobilenet_stage_indices, resolve_segmentation_weights
from .fcn import FCNHead

__all__ = ["DeepLabV3", "DeepLabV3_ResNet50_Weights", "DeepLabV3_ResNet101_Weights",
           "DeepLabV3_MobileNet_V3_Large_Weights", "deeplabv3_mobilenet_v3_large",
           "deeplabv3_resnet50", "deeplabv3_resnet101"]


class DeepLabV3(_SimpleSegmentationModel):
    """DeepLabV3: `backbone` returns {"out"[, "aux"]}, `classifier` is a DeepLabHead."""


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, dilation):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation,
                      bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU())


class ASPPPooling(nn.Sequential):
    """Global average pooling, 1x1 conv, then broadcast back to the input's size."""

    def __init__(self, in_channels, out_channels):
        super().__init__(nn.AdaptiveAvgPool2d(1),
                         nn.Conv2d(in_channels, out_channels, 1, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())

    def forward(self, x):
        size = x.shape[-2:]
        for module in self:
            x = module(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    """Atrous Spatial Pyramid Pooling: a 1x1 conv, one 3x3 conv per atrous rate and image
    pooling, run side by side, concatenated and projected to `out_channels`."""

    def __init__(self, in_channels, atrous_rates, out_channels=256):
        super().__init__()
        branches = [nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False),
                                  nn.BatchNorm2d(out_channels), nn.ReLU())]
        branches += [ASPPConv(in_channels, out_channels, rate) for rate in tuple(atrous_rates)]
        branches.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(branches)
        self.project = nn.Sequential(
            nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(), nn.Dropout(0.5))

    def forward(self, x):
        return self.project(cat([branch(x) for branch in self.convs], dim=1))


class DeepLabHead(nn.Sequential):
    def __init__(self, in_channels, num_classes, atrous_rates=(12, 24, 36)):
        super().__init__(ASPP(in_channels, atrous_rates),
                         nn.Conv2d(256, 256, 3, padding=1, bias=False), nn.BatchNorm2d(256),
                         nn.ReLU(), nn.Conv2d(256, num_classes, 1))


DeepLabV3_ResNet50_Weights = weights_enum("DeepLabV3_ResNet50_Weights", __name__)
DeepLabV3_ResNet101_Weights = weights_enum("DeepLabV3_ResNet101_Weights", __name__)
DeepLabV3_MobileNet_V3_Large_Weights = weights_enum("DeepLabV3_MobileNet_V3_Large_Weights",
                                                    __name__)


def _deeplabv3_resnet(backbone, num_classes, aux):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    backbone = IntermediateLayerGetter(backbone, return_layers=return_layers)
    aux_classifier = FCNHead(1024, num_classes) if aux else None
    return DeepLabV3(backbone, DeepLabHead(2048, num_classes), aux_classifier)


def _deeplabv3_mobilenetv3(backbone, num_classes, aux):
    features = backbone.features
    stages = mobilenet_stage_indices(features)
    out_pos, aux_pos = stages[-1], stages[-4]  # C5 (output stride 16), C2 (stride 8)
    return_layers = {str(out_pos): "out"}
    if aux:
        return_layers[str(aux_pos)] = "aux"
    aux_classifier = FCNHead(features[aux_pos].out_channels, num_classes) if aux else None
    classifier = DeepLabHead(features[out_pos].out_channels, num_classes)
    backbone = IntermediateLayerGetter(features, return_layers=return_layers)
    return DeepLabV3(backbone, classifier, aux_classifier)


def _build_resnet(resnet, weights_enum, backbone_enum, weights, progress, num_classes,
                  aux_loss, weights_backbone):
    weights, weights_backbone, num_classes, aux_loss = resolve_segmentation_weights(
        weights_enum, weights, backbone_enum, weights_backbone, num_classes, aux_loss)
    backbone = resnet(weights=weights_backbone, replace_stride_with_dilation=[False, True, True])
    return load_weights(_deeplabv3_resnet(backbone, num_classes, aux_loss), weights, progress)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", DeepLabV3_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1),
    weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def deeplabv3_resnet50(*, weights: Optional[DeepLabV3_ResNet50_Weights] = None, progress=True,
                       num_classes=None, aux_loss=None,
                       weights_backbone: Optional[ResNet50_Weights] = (
                           ResNet50_Weights.IMAGENET1K_V1),
                       **kwargs):
    return _build_resnet(resnet50, DeepLabV3_ResNet50_Weights, ResNet50_Weights, weights,
                         progress, num_classes, aux_loss, weights_backbone)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", DeepLabV3_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1),
    weights_backbone=("pretrained_backbone", ResNet101_Weights.IMAGENET1K_V1))
def deeplabv3_resnet101(*, weights: Optional[DeepLabV3_ResNet101_Weights] = None,
                        progress=True, num_classes=None, aux_loss=None,
                        weights_backbone: Optional[ResNet101_Weights] = (
                            ResNet101_Weights.IMAGENET1K_V1),
                        **kwargs):
    return _build_resnet(resnet101, DeepLabV3_ResNet101_Weights, ResNet101_Weights, weights,
                         progress, num_classes, aux_loss, weights_backbone)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", DeepLabV3_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1),
    weights_backbone=("pretrained_backbone", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def deeplabv3_mobilenet_v3_large(
        *, weights: Optional[DeepLabV3_MobileNet_V3_Large_Weights] = None, progress=True,
        num_classes=None, aux_loss=None,
        weights_backbone: Optional[MobileNet_V3_Large_Weights] = (
            MobileNet_V3_Large_Weights.IMAGENET1K_V1),
        **kwargs):
    weights, weights_backbone, num_classes, aux_loss = resolve_segmentation_weights(
        DeepLabV3_MobileNet_V3_Large_Weights, weights, MobileNet_V3_Large_Weights,
        weights_backbone, num_classes, aux_loss)
    backbone = mobilenet_v3_large(weights=weights_backbone, dilated=True)
    return load_weights(_deeplabv3_mobilenetv3(backbone, num_classes, aux_loss), weights,
                        progress)
