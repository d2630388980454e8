"""Feature pyramids (torchvision.ops.feature_pyramid_network): FeaturePyramidNetwork merges a
backbone's feature maps top-down (each coarser map upsampled and added to the next finer
one's 1x1 projection, then smoothed by a 3x3 conv); an ExtraFPNBlock adds levels above the
top one: LastLevelMaxPool (a stride-2 subsampling, "pool") or LastLevelP6P7 (two stride-2
convs, RetinaNet's P6 and P7)."""
from collections import OrderedDict

from ... import nn
from ...nn import functional as F
from .misc import Conv2dNormActivation

__all__ = ["ExtraFPNBlock", "FeaturePyramidNetwork", "LastLevelMaxPool", "LastLevelP6P7"]


class ExtraFPNBlock(nn.Module):
    """Base of the blocks that extend a pyramid: forward(results, x, names) gets the FPN
    outputs, the backbone's inputs and the level names, and returns both lists extended."""

    def forward(self, results, x, names):
        raise NotImplementedError(f"{type(self).__name__} must implement forward")


def _rename_legacy_conv_keys(state_dict, prefix, old_to_new):
    # checkpoints saved before the blocks became Conv2dNormActivation hold `block.i.weight`
    # where the conv now lives at `block.i.0.weight`
    for old, new in old_to_new:
        for kind in ("weight", "bias"):
            if prefix + old + kind in state_dict:
                state_dict[prefix + new + kind] = state_dict.pop(prefix + old + kind)


class FeaturePyramidNetwork(nn.Module):
    _version = 2

    def __init__(self, in_channels_list, out_channels, extra_blocks=None, norm_layer=None):
        super().__init__()
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            if in_channels == 0:
                raise ValueError("in_channels=0 is currently not supported")
            self.inner_blocks.append(Conv2dNormActivation(
                in_channels, out_channels, kernel_size=1, padding=0, norm_layer=norm_layer,
                activation_layer=None))
            self.layer_blocks.append(Conv2dNormActivation(
                out_channels, out_channels, kernel_size=3, norm_layer=norm_layer,
                activation_layer=None))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if extra_blocks is not None and not isinstance(extra_blocks, ExtraFPNBlock):
            raise TypeError(f"extra_blocks should be of type ExtraFPNBlock not {type(extra_blocks)}")
        self.extra_blocks = extra_blocks

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            n = len(self.inner_blocks)
            _rename_legacy_conv_keys(state_dict, prefix, [
                (f"{block}.{i}.", f"{block}.{i}.0.")
                for block in ("inner_blocks", "layer_blocks") for i in range(n)])
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def get_result_from_inner_blocks(self, x, idx):
        return self.inner_blocks[idx](x)

    def get_result_from_layer_blocks(self, x, idx):
        return self.layer_blocks[idx](x)

    def forward(self, x):
        names = list(x.keys())
        feats = list(x.values())
        last_inner = self.get_result_from_inner_blocks(feats[-1], -1)
        results = [self.get_result_from_layer_blocks(last_inner, -1)]
        for idx in range(len(feats) - 2, -1, -1):
            lateral = self.get_result_from_inner_blocks(feats[idx], idx)
            top_down = F.interpolate(last_inner, size=lateral.shape[-2:], mode="nearest")
            last_inner = lateral + top_down
            results.insert(0, self.get_result_from_layer_blocks(last_inner, idx))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, feats, names)
        return OrderedDict(zip(names, results))


class LastLevelMaxPool(ExtraFPNBlock):
    """Adds a "pool" level: the top FPN output subsampled by 2 (Faster R-CNN's P6)."""

    def forward(self, x, y, names):
        names.append("pool")
        x.append(F.max_pool2d(x[-1], kernel_size=1, stride=2, padding=0))
        return x, names


class LastLevelP6P7(ExtraFPNBlock):
    """Adds "p6" and "p7" (RetinaNet): p6 is a stride-2 conv of P5 (or of the backbone's C5
    when the channel counts differ), p7 a stride-2 conv of relu(p6)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in (self.p6, self.p7):
            nn.init.kaiming_uniform_(module.weight, a=1)
            nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(self, p, c, names):
        p6 = self.p6(p[-1] if self.use_P5 else c[-1])
        p7 = self.p7(F.relu(p6))
        p.extend([p6, p7])
        names.extend(["p6", "p7"])
        return p, names
