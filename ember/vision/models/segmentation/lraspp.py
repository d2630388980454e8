"""LR-ASPP (torchvision.models.segmentation.lraspp): MobileNetV3-Large (dilated) with the
Lite R-ASPP head, which gates the high-level features by their pooled sigmoid and adds a
classifier on the low-level ones."""
from collections import OrderedDict
from typing import Optional

from .... import nn
from ....nn import functional as F
from .._api import register_model, weights_enum
from .._utils import IntermediateLayerGetter, handle_legacy_interface, load_weights
from ..mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from ._utils import mobilenet_stage_indices, resolve_segmentation_weights

__all__ = ["LRASPP", "LRASPP_MobileNet_V3_Large_Weights", "lraspp_mobilenet_v3_large"]


class LRASPP(nn.Module):
    """Lite R-ASPP: `backbone` returns {"low", "high"} feature maps with `low_channels` and
    `high_channels` channels; the output is {"out": per-pixel scores at the input size}."""

    def __init__(self, backbone, low_channels, high_channels, num_classes, inter_channels=128):
        super().__init__()
        self.backbone = backbone
        self.classifier = LRASPPHead(low_channels, high_channels, num_classes, inter_channels)

    def forward(self, input):
        out = self.classifier(self.backbone(input))
        result = OrderedDict()
        result["out"] = F.interpolate(out, size=input.shape[-2:], mode="bilinear",
                                      align_corners=False)
        return result


class LRASPPHead(nn.Module):
    def __init__(self, low_channels, high_channels, num_classes, inter_channels):
        super().__init__()
        self.cbr = nn.Sequential(nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                 nn.BatchNorm2d(inter_channels), nn.ReLU(inplace=True))
        self.scale = nn.Sequential(nn.AdaptiveAvgPool2d(1),
                                   nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                   nn.Sigmoid())
        self.low_classifier = nn.Conv2d(low_channels, num_classes, 1)
        self.high_classifier = nn.Conv2d(inter_channels, num_classes, 1)

    def forward(self, input):
        low, high = input["low"], input["high"]
        x = self.cbr(high) * self.scale(high)
        x = F.interpolate(x, size=low.shape[-2:], mode="bilinear", align_corners=False)
        return self.low_classifier(low) + self.high_classifier(x)


LRASPP_MobileNet_V3_Large_Weights = weights_enum("LRASPP_MobileNet_V3_Large_Weights", __name__)


def _lraspp_mobilenetv3(backbone, num_classes):
    features = backbone.features
    stages = mobilenet_stage_indices(features)
    low_pos, high_pos = stages[-4], stages[-1]  # C2 (output stride 8), C5 (stride 16)
    low_channels = features[low_pos].out_channels
    high_channels = features[high_pos].out_channels
    backbone = IntermediateLayerGetter(
        features, return_layers={str(low_pos): "low", str(high_pos): "high"})
    return LRASPP(backbone, low_channels, high_channels, num_classes)


@register_model()
@handle_legacy_interface(
    weights=("pretrained", LRASPP_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1),
    weights_backbone=("pretrained_backbone", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def lraspp_mobilenet_v3_large(
        *, weights: Optional[LRASPP_MobileNet_V3_Large_Weights] = None, progress=True,
        num_classes=None,
        weights_backbone: Optional[MobileNet_V3_Large_Weights] = (
            MobileNet_V3_Large_Weights.IMAGENET1K_V1),
        **kwargs):
    if kwargs.pop("aux_loss", False):
        raise NotImplementedError("This model does not use auxiliary loss")
    weights, weights_backbone, num_classes, _ = resolve_segmentation_weights(
        LRASPP_MobileNet_V3_Large_Weights, weights, MobileNet_V3_Large_Weights,
        weights_backbone, num_classes, uses_aux=False)
    backbone = mobilenet_v3_large(weights=weights_backbone, dilated=True)
    return load_weights(_lraspp_mobilenetv3(backbone, num_classes), weights, progress)
