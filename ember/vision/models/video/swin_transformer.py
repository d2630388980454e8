"""Video Swin Transformer (torchvision.models.video.swin_transformer): the image Swin's blocks
and patch merging with 3D (time, height, width) shifted windows and a 3D relative position
bias, over (B, C, T, H, W) clips; names as torchvision's."""
from functools import partial
from typing import Optional

import numpy as np

from .... import nn, roll, tensor, zeros
from ....nn import functional as F
from .._api import register_model, weights_enum
from .._utils import handle_legacy_interface, load_weights, prepare_weights
from ..swin_transformer import PatchMerging, SwinTransformerBlock

__all__ = ["SwinTransformer3d", "Swin3D_T_Weights", "Swin3D_S_Weights", "Swin3D_B_Weights",
           "swin3d_t", "swin3d_s", "swin3d_b"]


def _get_window_and_shift_size(shift_size, size_dhw, window_size):
    """A window no larger than the input along each axis, and no shift where it covers it."""
    for i in range(3):
        if size_dhw[i] <= window_size[i]:
            window_size[i] = size_dhw[i]
            shift_size[i] = 0
    return window_size, shift_size


def _get_relative_position_bias(relative_position_bias_table, relative_position_index,
                                window_size):
    """[1, heads, V, V] for a window of V = Wd*Wh*Ww positions (a shrunken window uses the
    top-left corner of the full window's index)."""
    volume = window_size[0] * window_size[1] * window_size[2]
    bias = relative_position_bias_table[relative_position_index[:volume, :volume].flatten()]
    return bias.view(volume, volume, -1).permute(2, 0, 1).contiguous().unsqueeze(0)


def _compute_pad_size_3d(size_dhw, patch_size):
    return tuple((patch_size[i] - size_dhw[i] % patch_size[i]) % patch_size[i] for i in range(3))


def _compute_attention_mask_3d(size_dhw, window_size, shift_size):
    """[windows, V, V] as a NumPy array: -100 between positions the cyclic shift brought
    together from opposite edges, 0 elsewhere."""
    region = np.zeros(size_dhw, dtype=np.float32)
    slices = [((0, -window_size[i]), (-window_size[i], -shift_size[i]), (-shift_size[i], None))
              for i in range(3)]
    label = 0
    for d0, d1 in slices[0]:
        for h0, h1 in slices[1]:
            for w0, w1 in slices[2]:
                region[d0:d1, h0:h1, w0:w1] = label
                label += 1
    region = region.reshape(size_dhw[0] // window_size[0], window_size[0],
                            size_dhw[1] // window_size[1], window_size[1],
                            size_dhw[2] // window_size[2], window_size[2])
    region = region.transpose(0, 2, 4, 1, 3, 5).reshape(-1, int(np.prod(window_size)))
    differs = region[:, None, :] - region[:, :, None]
    return np.where(differs != 0, np.float32(-100.0), np.float32(0.0))


def shifted_window_attention_3d(input, qkv_weight, proj_weight, relative_position_bias,
                                window_size, num_heads, shift_size, attention_dropout=0.0,
                                dropout=0.0, qkv_bias=None, proj_bias=None, training=True):
    """Windowed multi-head self-attention on [B, T, H, W, C], shifted when shift_size > 0."""
    b, t, h, w, c = input.shape
    pad = _compute_pad_size_3d((t, h, w), window_size)
    x = F.pad(input, (0, 0, 0, pad[2], 0, pad[1], 0, pad[0]))
    _, tp, hp, wp, _ = x.shape
    shifted = sum(shift_size) > 0
    if shifted:
        x = roll(x, shifts=(-shift_size[0], -shift_size[1], -shift_size[2]), dims=(1, 2, 3))
    counts = (tp // window_size[0], hp // window_size[1], wp // window_size[2])
    num_windows = counts[0] * counts[1] * counts[2]
    volume = window_size[0] * window_size[1] * window_size[2]
    x = x.view(b, counts[0], window_size[0], counts[1], window_size[1], counts[2],
               window_size[2], c)
    x = x.permute(0, 1, 3, 5, 2, 4, 6, 7).reshape(b * num_windows, volume, c)
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(x.size(0), volume, 3, num_heads, c // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    attn = (q * (c // num_heads) ** -0.5).matmul(k.transpose(-2, -1)) + relative_position_bias
    if shifted:
        mask = tensor(_compute_attention_mask_3d((tp, hp, wp), window_size, shift_size),
                      device=attn.device, dtype=attn.dtype)
        attn = attn.view(b, num_windows, num_heads, volume, volume) + \
            mask.unsqueeze(1).unsqueeze(0)
        attn = attn.view(-1, num_heads, volume, volume)
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = attn.matmul(v).transpose(1, 2).reshape(x.size(0), volume, c)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = x.view(b, counts[0], counts[1], counts[2], window_size[0], window_size[1],
               window_size[2], c)
    x = x.permute(0, 1, 4, 2, 5, 3, 6, 7).reshape(b, tp, hp, wp, c)
    if shifted:
        x = roll(x, shifts=(shift_size[0], shift_size[1], shift_size[2]), dims=(1, 2, 3))
    return x[:, :t, :h, :w, :].contiguous()


class ShiftedWindowAttention3d(nn.Module):
    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__()
        if len(window_size) != 3 or len(shift_size) != 3:
            # torchvision's message says 2 here too
            raise ValueError("window_size and shift_size must be of length 2")
        self.window_size = window_size
        self.shift_size = shift_size
        self.num_heads = num_heads
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.define_relative_position_bias_table()
        self.define_relative_position_index()

    def define_relative_position_bias_table(self):
        wd, wh, ww = self.window_size
        self.relative_position_bias_table = nn.Parameter(
            zeros((2 * wd - 1) * (2 * wh - 1) * (2 * ww - 1), self.num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def define_relative_position_index(self):
        wd, wh, ww = self.window_size
        coords = np.stack(np.meshgrid(np.arange(wd), np.arange(wh), np.arange(ww),
                                      indexing="ij")).reshape(3, -1)
        rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)
        rel[:, :, 0] += wd - 1
        rel[:, :, 1] += wh - 1
        rel[:, :, 2] += ww - 1
        rel[:, :, 0] *= (2 * wh - 1) * (2 * ww - 1)
        rel[:, :, 1] *= 2 * ww - 1
        self.register_buffer("relative_position_index", tensor(rel.sum(-1).astype(np.int64)))

    def get_relative_position_bias(self, window_size):
        return _get_relative_position_bias(self.relative_position_bias_table,
                                           self.relative_position_index, window_size)

    def forward(self, x):
        _, t, h, w, _ = x.shape
        window_size, shift_size = _get_window_and_shift_size(
            list(self.shift_size), [t, h, w], list(self.window_size))
        return shifted_window_attention_3d(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(window_size),
            window_size, self.num_heads, shift_size=shift_size,
            attention_dropout=self.attention_dropout, dropout=self.dropout,
            qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, training=self.training)


class PatchEmbed3d(nn.Module):
    """Non-overlapping 3D patches (the clip zero-padded to whole patches), channels last."""

    def __init__(self, patch_size, in_channels=3, embed_dim=96, norm_layer=None):
        super().__init__()
        self.tuple_patch_size = (patch_size[0], patch_size[1], patch_size[2])
        self.proj = nn.Conv3d(in_channels, embed_dim, kernel_size=self.tuple_patch_size,
                              stride=self.tuple_patch_size)
        self.norm = norm_layer(embed_dim) if norm_layer is not None else nn.Identity()

    def forward(self, x):
        _, _, t, h, w = x.size()
        pad = _compute_pad_size_3d((t, h, w), self.tuple_patch_size)
        x = self.proj(F.pad(x, (0, pad[2], 0, pad[1], 0, pad[0])))
        return self.norm(x.permute(0, 2, 3, 4, 1))


class SwinTransformer3d(nn.Module):
    def __init__(self, patch_size, embed_dim, depths, num_heads, window_size, mlp_ratio=4.0,
                 dropout=0.0, attention_dropout=0.0, stochastic_depth_prob=0.1,
                 num_classes=400, norm_layer=None, block=None, downsample_layer=PatchMerging,
                 patch_embed=None):
        super().__init__()
        self.num_classes = num_classes
        block = block or partial(SwinTransformerBlock, attn_layer=ShiftedWindowAttention3d)
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        patch_embed = patch_embed or PatchEmbed3d
        self.patch_embed = patch_embed(patch_size=patch_size, embed_dim=embed_dim,
                                       norm_layer=norm_layer)
        self.pos_drop = nn.Dropout(p=dropout)
        layers = []
        total = sum(depths)
        block_id = 0
        for i_stage, depth in enumerate(depths):
            dim = embed_dim * 2 ** i_stage
            stage = []
            for i_layer in range(depth):
                stage.append(block(
                    dim, num_heads[i_stage], window_size=window_size,
                    shift_size=[0 if i_layer % 2 == 0 else w // 2 for w in window_size],
                    mlp_ratio=mlp_ratio, dropout=dropout, attention_dropout=attention_dropout,
                    stochastic_depth_prob=stochastic_depth_prob * float(block_id) / (total - 1),
                    norm_layer=norm_layer, attn_layer=ShiftedWindowAttention3d))
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if i_stage < len(depths) - 1:
                layers.append(downsample_layer(dim, norm_layer))
        self.features = nn.Sequential(*layers)
        self.num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm_layer(self.num_features)
        self.avgpool = nn.AdaptiveAvgPool3d(1)
        self.head = nn.Linear(self.num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.norm(self.features(self.pos_drop(self.patch_embed(x))))
        x = self.avgpool(x.permute(0, 4, 1, 2, 3))
        return self.head(x.flatten(1))


def _swin_transformer3d(weights_enum, weights, progress, kwargs, **config):
    weights = prepare_weights(weights_enum, weights, kwargs)
    return load_weights(SwinTransformer3d(**config, **kwargs), weights, progress)


Swin3D_T_Weights = weights_enum("Swin3D_T_Weights", __name__)
Swin3D_S_Weights = weights_enum("Swin3D_S_Weights", __name__)
Swin3D_B_Weights = weights_enum("Swin3D_B_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin3D_T_Weights.KINETICS400_V1))
def swin3d_t(*, weights: Optional[Swin3D_T_Weights] = None, progress=True, **kwargs):
    return _swin_transformer3d(Swin3D_T_Weights, weights, progress, kwargs,
                               patch_size=[2, 4, 4], embed_dim=96, depths=[2, 2, 6, 2],
                               num_heads=[3, 6, 12, 24], window_size=[8, 7, 7],
                               stochastic_depth_prob=0.1)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin3D_S_Weights.KINETICS400_V1))
def swin3d_s(*, weights: Optional[Swin3D_S_Weights] = None, progress=True, **kwargs):
    return _swin_transformer3d(Swin3D_S_Weights, weights, progress, kwargs,
                               patch_size=[2, 4, 4], embed_dim=96, depths=[2, 2, 18, 2],
                               num_heads=[3, 6, 12, 24], window_size=[8, 7, 7],
                               stochastic_depth_prob=0.1)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin3D_B_Weights.KINETICS400_V1))
def swin3d_b(*, weights: Optional[Swin3D_B_Weights] = None, progress=True, **kwargs):
    return _swin_transformer3d(Swin3D_B_Weights, weights, progress, kwargs,
                               patch_size=[2, 4, 4], embed_dim=128, depths=[2, 2, 18, 2],
                               num_heads=[4, 8, 16, 32], window_size=[8, 7, 7],
                               stochastic_depth_prob=0.1)
