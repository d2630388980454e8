"""ResNet (torchvision.models.resnet): BasicBlock/Bottleneck stacks with torchvision's module
names (conv1, bn1, layer1.0.conv1, layer1.0.downsample.0, fc), so its state_dicts load."""
from typing import Optional

from ... import Tensor, flatten, nn
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param, prepare_weights

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet34", "resnet50", "resnet101",
           "resnet152", "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d",
           "wide_resnet50_2", "wide_resnet101_2", "ResNet101_Weights", "ResNet152_Weights",
           "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights", "ResNeXt101_32X8D_Weights",
           "ResNeXt101_64X4D_Weights", "ResNeXt50_32X4D_Weights", "Wide_ResNet101_2_Weights",
           "Wide_ResNet50_2_Weights"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1,
                 width_per_group=64, replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, "
                             f"got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2,
                                       dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2,
                                       dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2,
                                       dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            # each residual branch starts as zero, so every block starts as the identity
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(flatten(self.avgpool(x), 1))


def _resnet(name, block, layers, weights, progress, kwargs):
    return load_weights(ResNet(block, layers, **kwargs), weights, progress)


ResNet101_Weights = weights_enum("ResNet101_Weights", __name__)
ResNet152_Weights = weights_enum("ResNet152_Weights", __name__)
ResNet18_Weights = weights_enum("ResNet18_Weights", __name__)
ResNet34_Weights = weights_enum("ResNet34_Weights", __name__)
ResNet50_Weights = weights_enum("ResNet50_Weights", __name__)
ResNeXt101_32X8D_Weights = weights_enum("ResNeXt101_32X8D_Weights", __name__)
ResNeXt101_64X4D_Weights = weights_enum("ResNeXt101_64X4D_Weights", __name__)
ResNeXt50_32X4D_Weights = weights_enum("ResNeXt50_32X4D_Weights", __name__)
Wide_ResNet101_2_Weights = weights_enum("Wide_ResNet101_2_Weights", __name__)
Wide_ResNet50_2_Weights = weights_enum("Wide_ResNet50_2_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet18_Weights.IMAGENET1K_V1))
def resnet18(*, weights: Optional[ResNet18_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ResNet18_Weights, weights, kwargs)
    return _resnet("resnet18", BasicBlock, [2, 2, 2, 2], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet34_Weights.IMAGENET1K_V1))
def resnet34(*, weights: Optional[ResNet34_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ResNet34_Weights, weights, kwargs)
    return _resnet("resnet34", BasicBlock, [3, 4, 6, 3], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet50_Weights.IMAGENET1K_V1))
def resnet50(*, weights: Optional[ResNet50_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ResNet50_Weights, weights, kwargs)
    return _resnet("resnet50", Bottleneck, [3, 4, 6, 3], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet101_Weights.IMAGENET1K_V1))
def resnet101(*, weights: Optional[ResNet101_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ResNet101_Weights, weights, kwargs)
    return _resnet("resnet101", Bottleneck, [3, 4, 23, 3], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNet152_Weights.IMAGENET1K_V1))
def resnet152(*, weights: Optional[ResNet152_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ResNet152_Weights, weights, kwargs)
    return _resnet("resnet152", Bottleneck, [3, 8, 36, 3], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt50_32X4D_Weights.IMAGENET1K_V1))
def resnext50_32x4d(*, weights: Optional[ResNeXt50_32X4D_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ResNeXt50_32X4D_Weights, weights, kwargs)
    overwrite_named_param(kwargs, "groups", 32)
    overwrite_named_param(kwargs, "width_per_group", 4)
    return _resnet("resnext50_32x4d", Bottleneck, [3, 4, 6, 3], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt101_32X8D_Weights.IMAGENET1K_V1))
def resnext101_32x8d(*, weights: Optional[ResNeXt101_32X8D_Weights] = None,
                     progress=True, **kwargs):
    weights = prepare_weights(ResNeXt101_32X8D_Weights, weights, kwargs)
    overwrite_named_param(kwargs, "groups", 32)
    overwrite_named_param(kwargs, "width_per_group", 8)
    return _resnet("resnext101_32x8d", Bottleneck, [3, 4, 23, 3], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ResNeXt101_64X4D_Weights.IMAGENET1K_V1))
def resnext101_64x4d(*, weights: Optional[ResNeXt101_64X4D_Weights] = None,
                     progress=True, **kwargs):
    weights = prepare_weights(ResNeXt101_64X4D_Weights, weights, kwargs)
    overwrite_named_param(kwargs, "groups", 64)
    overwrite_named_param(kwargs, "width_per_group", 4)
    return _resnet("resnext101_64x4d", Bottleneck, [3, 4, 23, 3], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Wide_ResNet50_2_Weights.IMAGENET1K_V1))
def wide_resnet50_2(*, weights: Optional[Wide_ResNet50_2_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(Wide_ResNet50_2_Weights, weights, kwargs)
    overwrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet("wide_resnet50_2", Bottleneck, [3, 4, 6, 3], weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Wide_ResNet101_2_Weights.IMAGENET1K_V1))
def wide_resnet101_2(*, weights: Optional[Wide_ResNet101_2_Weights] = None,
                     progress=True, **kwargs):
    weights = prepare_weights(Wide_ResNet101_2_Weights, weights, kwargs)
    overwrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet("wide_resnet101_2", Bottleneck, [3, 4, 23, 3], weights, progress, kwargs)
