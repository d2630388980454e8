"""Swin Transformer V1 and V2 (torchvision.models.swin_transformer): self-attention inside
non-overlapping windows, shifted by half a window in every other block, with a relative position
bias (a learned table in V1, a small MLP over log-spaced coordinates in V2 with cosine
attention). Channels-last ([B, H, W, C]) throughout, names as torchvision's."""
import math
from functools import partial
from typing import Optional

import numpy as np

from ... import cat, nn, roll, sigmoid, tensor, zeros, zeros_like
from ...autograd.grad_mode import no_grad
from ...nn import functional as F
from ..ops.misc import MLP, Permute
from ..ops.stochastic_depth import StochasticDepth
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, prepare_weights

__all__ = ["SwinTransformer", "Swin_T_Weights", "Swin_S_Weights", "Swin_B_Weights",
           "Swin_V2_T_Weights", "Swin_V2_S_Weights", "Swin_V2_B_Weights", "swin_t", "swin_s",
           "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b"]


def _patch_merging_pad(x):
    """[..., H, W, C] -> [..., H/2, W/2, 4C]: each 2x2 neighbourhood side by side (odd sizes
    padded with zeros), in the order (0,0), (1,0), (0,1), (1,1)."""
    h, w = x.shape[-3], x.shape[-2]
    x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2))
    return cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :],
                x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :]], -1)


def _get_relative_position_bias(relative_position_bias_table, relative_position_index,
                                window_size):
    """The per-head bias [1, heads, N, N] between the N positions of a window."""
    n = window_size[0] * window_size[1]
    bias = relative_position_bias_table[relative_position_index].view(n, n, -1)
    return bias.permute(2, 0, 1).contiguous().unsqueeze(0)


class PatchMerging(nn.Module):
    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    def forward(self, x):
        return self.reduction(self.norm(_patch_merging_pad(x)))


class PatchMergingV2(nn.Module):
    """V2 normalises after the reduction (post-norm)."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x):
        return self.norm(self.reduction(_patch_merging_pad(x)))


def _shift_mask(pad_h, pad_w, window_size, shift_size):
    """[windows, N, N]: 0 between positions that were neighbours before the cyclic shift, -100
    between positions the shift brought together from opposite edges."""
    region = np.zeros((pad_h, pad_w), dtype=np.float32)
    h_slices = ((0, -window_size[0]), (-window_size[0], -shift_size[0]), (-shift_size[0], None))
    w_slices = ((0, -window_size[1]), (-window_size[1], -shift_size[1]), (-shift_size[1], None))
    label = 0
    for h0, h1 in h_slices:
        for w0, w1 in w_slices:
            region[h0:h1, w0:w1] = label
            label += 1
    region = region.reshape(pad_h // window_size[0], window_size[0], pad_w // window_size[1],
                            window_size[1]).transpose(0, 2, 1, 3)
    region = region.reshape(-1, window_size[0] * window_size[1])
    differs = region[:, None, :] - region[:, :, None]
    return np.where(differs != 0, np.float32(-100.0), np.float32(0.0))


def shifted_window_attention(input, qkv_weight, proj_weight, relative_position_bias,
                             window_size, num_heads, shift_size, attention_dropout=0.0,
                             dropout=0.0, qkv_bias=None, proj_bias=None, logit_scale=None,
                             training=True):
    """Windowed multi-head self-attention on [B, H, W, C] (shifted when shift_size > 0);
    with `logit_scale`, V2's scaled cosine attention (and no key bias)."""
    b, h, w, c = input.shape
    pad_r = (window_size[1] - w % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - h % window_size[0]) % window_size[0]
    x = F.pad(input, (0, 0, 0, pad_r, 0, pad_b))
    _, pad_h, pad_w, _ = x.shape
    shift_size = list(shift_size)
    # a window that covers the whole map has nothing to shift
    if window_size[0] >= pad_h:
        shift_size[0] = 0
    if window_size[1] >= pad_w:
        shift_size[1] = 0
    shifted = sum(shift_size) > 0
    if shifted:
        x = roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))
    rows, cols = pad_h // window_size[0], pad_w // window_size[1]
    num_windows = rows * cols
    n = window_size[0] * window_size[1]
    x = x.view(b, rows, window_size[0], cols, window_size[1], c)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(b * num_windows, n, c)
    if logit_scale is not None and qkv_bias is not None:
        third = qkv_bias.numel() // 3
        qkv_bias = cat([qkv_bias[:third], zeros_like(qkv_bias[third:2 * third]),
                        qkv_bias[2 * third:]])
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(x.size(0), n, 3, num_heads, c // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if logit_scale is not None:
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        attn = attn * logit_scale.clamp(max=math.log(100.0)).exp()
    else:
        attn = (q * (c // num_heads) ** -0.5).matmul(k.transpose(-2, -1))
    attn = attn + relative_position_bias
    if shifted:
        mask = tensor(_shift_mask(pad_h, pad_w, window_size, shift_size), device=attn.device,
                      dtype=attn.dtype)
        attn = attn.view(b, num_windows, num_heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
        attn = attn.view(-1, num_heads, n, n)
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = attn.matmul(v).transpose(1, 2).reshape(x.size(0), n, c)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = x.view(b, rows, cols, window_size[0], window_size[1], c)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(b, pad_h, pad_w, c)
    if shifted:
        x = roll(x, shifts=(shift_size[0], shift_size[1]), dims=(1, 2))
    return x[:, :h, :w, :].contiguous()


def _relative_position_index(window_size):
    """index[i * N + j] of the (dy, dx) offset between window positions i and j, in a table of
    (2*Wh-1) * (2*Ww-1) offsets."""
    coords = np.stack(np.meshgrid(np.arange(window_size[0]), np.arange(window_size[1]),
                                  indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)
    rel[:, :, 0] += window_size[0] - 1
    rel[:, :, 1] += window_size[1] - 1
    rel[:, :, 0] *= 2 * window_size[1] - 1
    return tensor(rel.sum(-1).reshape(-1).astype(np.int64))


class ShiftedWindowAttention(nn.Module):
    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__()
        if len(window_size) != 2 or len(shift_size) != 2:
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
        size = (2 * self.window_size[0] - 1) * (2 * self.window_size[1] - 1)
        self.relative_position_bias_table = nn.Parameter(zeros(size, self.num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def define_relative_position_index(self):
        self.register_buffer("relative_position_index",
                             _relative_position_index(self.window_size))

    def get_relative_position_bias(self):
        return _get_relative_position_bias(self.relative_position_bias_table,
                                           self.relative_position_index, self.window_size)

    def forward(self, x):
        return shifted_window_attention(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(),
            self.window_size, self.num_heads, shift_size=self.shift_size,
            attention_dropout=self.attention_dropout, dropout=self.dropout,
            qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, training=self.training)


class ShiftedWindowAttentionV2(ShiftedWindowAttention):
    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__(dim, window_size, shift_size, num_heads, qkv_bias=qkv_bias,
                         proj_bias=proj_bias, attention_dropout=attention_dropout,
                         dropout=dropout)
        self.logit_scale = nn.Parameter(tensor(np.full((num_heads, 1, 1), math.log(10.0),
                                                       dtype=np.float32)))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        if qkv_bias:
            third = self.qkv.bias.numel() // 3
            with no_grad():
                self.qkv.bias[third:2 * third] = 0.0

    def define_relative_position_bias_table(self):
        # every (dy, dx) offset, scaled to [-8, 8] and log-spaced: the input of cpb_mlp
        dh = np.arange(-(self.window_size[0] - 1), self.window_size[0], dtype=np.float32)
        dw = np.arange(-(self.window_size[1] - 1), self.window_size[1], dtype=np.float32)
        table = np.stack(np.meshgrid(dh, dw, indexing="ij")).transpose(1, 2, 0)[None].copy()
        table[..., 0] /= np.float32(self.window_size[0] - 1)
        table[..., 1] /= np.float32(self.window_size[1] - 1)
        table *= np.float32(8)
        table = np.sign(table) * np.log2(np.abs(table) + np.float32(1.0)) / np.float32(3.0)
        self.register_buffer("relative_coords_table", tensor(table.astype(np.float32)))

    def get_relative_position_bias(self):
        bias = _get_relative_position_bias(
            self.cpb_mlp(self.relative_coords_table).view(-1, self.num_heads),
            self.relative_position_index, self.window_size)
        return 16 * sigmoid(bias)

    def forward(self, x):
        return shifted_window_attention(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(),
            self.window_size, self.num_heads, shift_size=self.shift_size,
            attention_dropout=self.attention_dropout, dropout=self.dropout,
            qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, logit_scale=self.logit_scale,
            training=self.training)


class SwinTransformerBlock(nn.Module):
    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0,
                 attention_dropout=0.0, stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm,
                 attn_layer=ShiftedWindowAttention):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = attn_layer(dim, window_size, shift_size, num_heads,
                               attention_dropout=attention_dropout, dropout=dropout)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.norm2 = norm_layer(dim)
        self.mlp = MLP(dim, [int(dim * mlp_ratio), dim], activation_layer=nn.GELU, inplace=None,
                       dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x):
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class SwinTransformerBlockV2(SwinTransformerBlock):
    """V2 normalises each branch's output (res-post-norm)."""

    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0,
                 attention_dropout=0.0, stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm,
                 attn_layer=ShiftedWindowAttentionV2):
        super().__init__(dim, num_heads, window_size, shift_size, mlp_ratio=mlp_ratio,
                         dropout=dropout, attention_dropout=attention_dropout,
                         stochastic_depth_prob=stochastic_depth_prob, norm_layer=norm_layer,
                         attn_layer=attn_layer)

    def forward(self, x):
        x = x + self.stochastic_depth(self.norm1(self.attn(x)))
        return x + self.stochastic_depth(self.norm2(self.mlp(x)))


class SwinTransformer(nn.Module):
    def __init__(self, patch_size, embed_dim, depths, num_heads, window_size, mlp_ratio=4.0,
                 dropout=0.0, attention_dropout=0.0, stochastic_depth_prob=0.1,
                 num_classes=1000, norm_layer=None, block=None, downsample_layer=PatchMerging):
        super().__init__()
        self.num_classes = num_classes
        block = block or SwinTransformerBlock
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        layers = [nn.Sequential(
            nn.Conv2d(3, embed_dim, kernel_size=(patch_size[0], patch_size[1]),
                      stride=(patch_size[0], patch_size[1])),
            Permute([0, 2, 3, 1]), norm_layer(embed_dim))]
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
                    norm_layer=norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if i_stage < len(depths) - 1:
                layers.append(downsample_layer(dim, norm_layer))
        self.features = nn.Sequential(*layers)
        num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm_layer(num_features)
        self.permute = Permute([0, 3, 1, 2])  # B H W C -> B C H W
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))


def _swin_transformer(weights_enum, weights, progress, kwargs, **config):
    weights = prepare_weights(weights_enum, weights, kwargs)
    return load_weights(SwinTransformer(**config, **kwargs), weights, progress)


Swin_T_Weights = weights_enum("Swin_T_Weights", __name__)
Swin_S_Weights = weights_enum("Swin_S_Weights", __name__)
Swin_B_Weights = weights_enum("Swin_B_Weights", __name__)
Swin_V2_T_Weights = weights_enum("Swin_V2_T_Weights", __name__)
Swin_V2_S_Weights = weights_enum("Swin_V2_S_Weights", __name__)
Swin_V2_B_Weights = weights_enum("Swin_V2_B_Weights", __name__)
_V2 = dict(window_size=[8, 8], block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_T_Weights.IMAGENET1K_V1))
def swin_t(*, weights: Optional[Swin_T_Weights] = None, progress=True, **kwargs):
    return _swin_transformer(Swin_T_Weights, weights, progress, kwargs, patch_size=[4, 4],
                             embed_dim=96, depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24],
                             window_size=[7, 7], stochastic_depth_prob=0.2)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_S_Weights.IMAGENET1K_V1))
def swin_s(*, weights: Optional[Swin_S_Weights] = None, progress=True, **kwargs):
    return _swin_transformer(Swin_S_Weights, weights, progress, kwargs, patch_size=[4, 4],
                             embed_dim=96, depths=[2, 2, 18, 2], num_heads=[3, 6, 12, 24],
                             window_size=[7, 7], stochastic_depth_prob=0.3)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_B_Weights.IMAGENET1K_V1))
def swin_b(*, weights: Optional[Swin_B_Weights] = None, progress=True, **kwargs):
    return _swin_transformer(Swin_B_Weights, weights, progress, kwargs, patch_size=[4, 4],
                             embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32],
                             window_size=[7, 7], stochastic_depth_prob=0.5)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_T_Weights.IMAGENET1K_V1))
def swin_v2_t(*, weights: Optional[Swin_V2_T_Weights] = None, progress=True, **kwargs):
    return _swin_transformer(Swin_V2_T_Weights, weights, progress, kwargs, patch_size=[4, 4],
                             embed_dim=96, depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24],
                             stochastic_depth_prob=0.2, **_V2)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_S_Weights.IMAGENET1K_V1))
def swin_v2_s(*, weights: Optional[Swin_V2_S_Weights] = None, progress=True, **kwargs):
    return _swin_transformer(Swin_V2_S_Weights, weights, progress, kwargs, patch_size=[4, 4],
                             embed_dim=96, depths=[2, 2, 18, 2], num_heads=[3, 6, 12, 24],
                             stochastic_depth_prob=0.3, **_V2)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_B_Weights.IMAGENET1K_V1))
def swin_v2_b(*, weights: Optional[Swin_V2_B_Weights] = None, progress=True, **kwargs):
    return _swin_transformer(Swin_V2_B_Weights, weights, progress, kwargs, patch_size=[4, 4],
                             embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32],
                             stochastic_depth_prob=0.5, **_V2)
