"""VGG (torchvision.models.vgg): `features` (convs, optional BatchNorm, max pools), a 7x7
adaptive average pool and a three-layer `classifier`, named as torchvision's."""
from typing import Optional

from ... import flatten, nn
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, prepare_weights

__all__ = ["VGG", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19",
           "vgg19_bn", "make_layers", "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights",
           "VGG13_BN_Weights", "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights",
           "VGG19_BN_Weights"]

cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512,
          "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512,
          512, 512, 512, "M"],
}


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.classifier(flatten(self.avgpool(self.features(x)), 1))


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


def _vgg(name, cfg, batch_norm, weights, progress, kwargs):
    if weights is not None:
        kwargs["init_weights"] = False  # the loaded weights replace the initial ones anyway
    model = VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs)
    return load_weights(model, weights, progress)


VGG11_Weights = weights_enum("VGG11_Weights", __name__)
VGG11_BN_Weights = weights_enum("VGG11_BN_Weights", __name__)
VGG13_Weights = weights_enum("VGG13_Weights", __name__)
VGG13_BN_Weights = weights_enum("VGG13_BN_Weights", __name__)
VGG16_Weights = weights_enum("VGG16_Weights", __name__)
VGG16_BN_Weights = weights_enum("VGG16_BN_Weights", __name__)
VGG19_Weights = weights_enum("VGG19_Weights", __name__)
VGG19_BN_Weights = weights_enum("VGG19_BN_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG11_Weights.IMAGENET1K_V1))
def vgg11(*, weights: Optional[VGG11_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(VGG11_Weights, weights, kwargs)
    return _vgg("vgg11", "A", False, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG11_BN_Weights.IMAGENET1K_V1))
def vgg11_bn(*, weights: Optional[VGG11_BN_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(VGG11_BN_Weights, weights, kwargs)
    return _vgg("vgg11_bn", "A", True, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG13_Weights.IMAGENET1K_V1))
def vgg13(*, weights: Optional[VGG13_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(VGG13_Weights, weights, kwargs)
    return _vgg("vgg13", "B", False, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG13_BN_Weights.IMAGENET1K_V1))
def vgg13_bn(*, weights: Optional[VGG13_BN_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(VGG13_BN_Weights, weights, kwargs)
    return _vgg("vgg13_bn", "B", True, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG16_Weights.IMAGENET1K_V1))
def vgg16(*, weights: Optional[VGG16_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(VGG16_Weights, weights, kwargs)
    return _vgg("vgg16", "D", False, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG16_BN_Weights.IMAGENET1K_V1))
def vgg16_bn(*, weights: Optional[VGG16_BN_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(VGG16_BN_Weights, weights, kwargs)
    return _vgg("vgg16_bn", "D", True, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG19_Weights.IMAGENET1K_V1))
def vgg19(*, weights: Optional[VGG19_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(VGG19_Weights, weights, kwargs)
    return _vgg("vgg19", "E", False, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG19_BN_Weights.IMAGENET1K_V1))
def vgg19_bn(*, weights: Optional[VGG19_BN_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(VGG19_BN_Weights, weights, kwargs)
    return _vgg("vgg19_bn", "E", True, weights, progress, kwargs)
