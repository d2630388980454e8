"""Vision Transformer (torchvision.models.vision_transformer): patch embedding, class token,
pre-norm encoder blocks; named conv_proj, encoder.layers.encoder_layer_N.*, heads.head."""
from typing import Optional

import math
from collections import OrderedDict
from functools import partial
from typing import Callable, NamedTuple

from ... import cat, empty, nn, zeros
from ..ops.misc import MLP, Conv2dNormActivation
from ._api import WeightsEnum, register_model, weights_enum
from ._utils import (handle_legacy_interface, load_weights, overwrite_named_param,
                     prepare_weights)

__all__ = ["VisionTransformer", "ConvStemConfig", "vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32",
           "vit_h_14", "ViT_B_16_Weights", "ViT_B_32_Weights", "ViT_H_14_Weights",
           "ViT_L_16_Weights", "ViT_L_32_Weights"]


class ConvStemConfig(NamedTuple):
    out_channels: int
    kernel_size: int
    stride: int
    norm_layer: Callable = nn.BatchNorm2d
    activation_layer: Callable = nn.ReLU


def _assert(condition, message):
    if not condition:
        raise AssertionError(message)


class MLPBlock(MLP):
    _version = 2

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None,
                         dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None) if local_metadata else None
        if version is None or version < 2:
            # files from before torchvision 0.14 name the two Linears linear_1 / linear_2
            for i in range(2):
                for t in ("weight", "bias"):
                    old = f"{prefix}linear_{i + 1}.{t}"
                    if old in state_dict:
                        state_dict[f"{prefix}{3 * i}.{t}"] = state_dict.pop(old)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        _assert(input.dim() == 3,
                f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                 attention_dropout, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.pos_embedding = nn.Parameter(empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout,
                                                attention_dropout, norm_layer))
            for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        _assert(input.dim() == 3,
                f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        input = input + self.pos_embedding
        return self.ln(self.layers(self.dropout(input)))


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim,
                 dropout=0.0, attention_dropout=0.0, num_classes=1000, representation_size=None,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), conv_stem_configs=None):
        super().__init__()
        _assert(image_size % patch_size == 0, "Input shape indivisible by patch size!")
        self.image_size, self.patch_size = image_size, patch_size
        self.hidden_dim, self.mlp_dim = hidden_dim, mlp_dim
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.num_classes, self.representation_size = num_classes, representation_size
        self.norm_layer = norm_layer
        if conv_stem_configs is not None:  # a convolutional stem instead of one patch conv
            stem, prev = nn.Sequential(), 3
            for i, cfg in enumerate(conv_stem_configs):
                stem.add_module(f"conv_bn_relu_{i}", Conv2dNormActivation(
                    in_channels=prev, out_channels=cfg.out_channels,
                    kernel_size=cfg.kernel_size, stride=cfg.stride, norm_layer=cfg.norm_layer,
                    activation_layer=cfg.activation_layer))
                prev = cfg.out_channels
            stem.add_module("conv_last", nn.Conv2d(prev, hidden_dim, kernel_size=1))
            self.conv_proj = stem
        else:
            self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size,
                                       stride=patch_size)
        seq_length = (image_size // patch_size) ** 2
        self.class_token = nn.Parameter(zeros(1, 1, hidden_dim))
        seq_length += 1
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout, norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        if isinstance(self.conv_proj, nn.Conv2d):
            fan_in = self.conv_proj.in_channels * patch_size * patch_size
            nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(self.conv_proj.bias)
        else:
            last = self.conv_proj.conv_last
            nn.init.normal_(last.weight, mean=0.0, std=math.sqrt(2.0 / last.out_channels))
            nn.init.zeros_(last.bias)
        if representation_size is not None:
            nn.init.trunc_normal_(self.heads.pre_logits.weight,
                                  std=math.sqrt(1 / self.heads.pre_logits.in_features))
            nn.init.zeros_(self.heads.pre_logits.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        p = self.patch_size
        _assert(h == self.image_size,
                f"Wrong image height! Expected {self.image_size} but got {h}!")
        _assert(w == self.image_size,
                f"Wrong image width! Expected {self.image_size} but got {w}!")
        x = self.conv_proj(x)
        x = x.reshape(n, self.hidden_dim, (h // p) * (w // p))
        return x.permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        n = x.shape[0]
        x = cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])


def _vit(name, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights, progress,
         kwargs):
    if isinstance(weights, WeightsEnum):
        width, height = weights.meta["min_size"]
        overwrite_named_param(kwargs, "image_size", width)  # trained at that size only
    image_size = kwargs.pop("image_size", 224)
    model = VisionTransformer(image_size=image_size, patch_size=patch_size,
                              num_layers=num_layers, num_heads=num_heads,
                              hidden_dim=hidden_dim, mlp_dim=mlp_dim, **kwargs)
    return load_weights(model, weights, progress)


ViT_B_16_Weights = weights_enum("ViT_B_16_Weights", __name__)
ViT_B_32_Weights = weights_enum("ViT_B_32_Weights", __name__)
ViT_H_14_Weights = weights_enum("ViT_H_14_Weights", __name__)
ViT_L_16_Weights = weights_enum("ViT_L_16_Weights", __name__)
ViT_L_32_Weights = weights_enum("ViT_L_32_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_B_16_Weights.IMAGENET1K_V1))
def vit_b_16(*, weights: Optional[ViT_B_16_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ViT_B_16_Weights, weights, kwargs)
    return _vit("vit_b_16", 16, 12, 12, 768, 3072, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_B_32_Weights.IMAGENET1K_V1))
def vit_b_32(*, weights: Optional[ViT_B_32_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ViT_B_32_Weights, weights, kwargs)
    return _vit("vit_b_32", 32, 12, 12, 768, 3072, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_L_16_Weights.IMAGENET1K_V1))
def vit_l_16(*, weights: Optional[ViT_L_16_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ViT_L_16_Weights, weights, kwargs)
    return _vit("vit_l_16", 16, 24, 16, 1024, 4096, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_L_32_Weights.IMAGENET1K_V1))
def vit_l_32(*, weights: Optional[ViT_L_32_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ViT_L_32_Weights, weights, kwargs)
    return _vit("vit_l_32", 32, 24, 16, 1024, 4096, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", None))
def vit_h_14(*, weights: Optional[ViT_H_14_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ViT_H_14_Weights, weights, kwargs)
    return _vit("vit_h_14", 14, 32, 16, 1280, 5120, weights, progress, kwargs)
