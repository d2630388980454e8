"""The shape every torchvision segmentation model but LR-ASPP shares: a backbone returning
{"out": features[, "aux": earlier features]}, a classifier head on "out", an optional
auxiliary head on "aux", each upsampled bilinearly back to the input's size."""
from collections import OrderedDict

from .... import nn
from ....nn import functional as F
from .._api import WeightsEnum
from .._utils import overwrite_value_param, verify_weights


class _SimpleSegmentationModel(nn.Module):
    __constants__ = ["aux_classifier"]

    def __init__(self, backbone, classifier, aux_classifier=None):
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.aux_classifier = aux_classifier

    def forward(self, x):
        input_size = x.shape[-2:]
        features = self.backbone(x)
        result = OrderedDict()
        result["out"] = F.interpolate(self.classifier(features["out"]), size=input_size,
                                      mode="bilinear", align_corners=False)
        if self.aux_classifier is not None:
            result["aux"] = F.interpolate(self.aux_classifier(features["aux"]), size=input_size,
                                          mode="bilinear", align_corners=False)
        return result


def resolve_segmentation_weights(weights_enum, weights, backbone_enum, weights_backbone,
                                 num_classes, aux_loss=None, uses_aux=True):
    """The arguments of a segmentation builder, as torchvision settles them: named weights
    replace the backbone's, fix num_classes to their categories and switch the auxiliary head
    on (their checkpoints hold it); without them num_classes defaults to 21 (VOC)."""
    weights = verify_weights(weights_enum, weights)
    weights_backbone = verify_weights(backbone_enum, weights_backbone)
    if weights is not None:
        weights_backbone = None
        if isinstance(weights, WeightsEnum):
            num_classes = overwrite_value_param("num_classes", num_classes,
                                                len(weights.meta["categories"]))
            if uses_aux:
                aux_loss = overwrite_value_param("aux_loss", aux_loss, True)
    if num_classes is None:
        num_classes = 21
    return weights, weights_backbone, num_classes, aux_loss


def mobilenet_stage_indices(features):
    """Indices of MobileNetV3's `features` blocks that end a stage (C0 .. C5): the first
    block, each strided one, the last; C2 has output stride 8, C5 (dilated) 16."""
    strided = [i for i, block in enumerate(features) if getattr(block, "_is_cn", False)]
    return [0] + strided + [len(features) - 1]
