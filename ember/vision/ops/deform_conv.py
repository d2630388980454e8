"""Deformable convolution v1/v2 (torchvision.ops.deform_conv2d, DeformConv2d).

Each kernel tap of each output pixel reads the input at its regular position plus a learned
(dy, dx) offset, by bilinear interpolation (zero outside the image), optionally scaled by a
modulation mask; the sampled columns are then multiplied by the weight as in im2col
convolution. Everything after the integer corner indices is written in ember ops, so the
gradients for input, offset, mask, weight and bias come from autograd, and they are the ones
torchvision's kernels compute (the bilinear weights are differentiated in the offsets)."""
import math

import numpy as np

from ... import nn, tensor, zeros
from ...nn import init

__all__ = ["deform_conv2d", "DeformConv2d"]


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _check(condition, message):
    if not condition:
        raise RuntimeError(message)


def _check_shapes(input, offset, weight, mask, n_offset_grps, n_weight_grps, out_hw, args):
    (stride_h, stride_w), (pad_h, pad_w), (dil_h, dil_w) = args
    kh, kw = weight.shape[-2:]
    _check(stride_h > 0 and stride_w > 0, f"stride_h: {stride_h} stride_w: {stride_w}")
    _check(pad_h >= 0 and pad_w >= 0, f"pad_h: {pad_h} pad_w: {pad_w}")
    _check(dil_h > 0 and dil_w > 0, f"dilation_h: {dil_h} dilation_w: {dil_w}")
    _check(weight.shape[1] * n_weight_grps == input.shape[1] and
           weight.shape[0] % n_weight_grps == 0,
           "the weight's shape does not divide the input channels into groups")
    _check(offset.shape[1] == n_offset_grps * 2 * kh * kw,
           f"offset.shape[1] is not valid: got: {offset.shape[1]} expected: "
           f"{n_offset_grps * 2 * kh * kw}")
    if mask is not None:
        _check(mask.shape[1] == n_offset_grps * kh * kw,
               f"mask.shape[1] is not valid: got: {mask.shape[1]} expected: "
               f"{n_offset_grps * kh * kw}")
    _check(input.shape[1] % n_offset_grps == 0,
           "the input channels are not a multiple of the offset groups")
    _check(offset.shape[0] == input.shape[0], "invalid batch size of offset")
    out_h, out_w = out_hw
    _check(tuple(offset.shape[2:]) == (out_h, out_w),
           f"offset output dims: ({offset.shape[2]}, {offset.shape[3]}) - computed output "
           f"dims: ({out_h}, {out_w})")
    if mask is not None:
        _check(mask.shape[0] == input.shape[0], "invalid batch size of mask")
        _check(tuple(mask.shape[2:]) == (out_h, out_w),
               f"mask output dims: ({mask.shape[2]}, {mask.shape[3]}) - computed output "
               f"dims: ({out_h}, {out_w})")
    _check(out_h > 0 and out_w > 0,
           f"Calculated output size too small - out_h: {out_h} out_w: {out_w}")


def _sample_columns(input, y, x, n_offset_grps):
    """Bilinear samples of input (N, C, H, W) at y, x (N, G, K, L): (N, C, K, L)."""
    N, C, H, W = input.shape
    _, G, K, L = y.shape
    dtype = input.dtype
    inside = ((y > -1) & (y < H) & (x > -1) & (x < W)).detach()
    y0 = y.detach().floor()
    x0 = x.detach().floor()
    ly, lx = y - y0, x - x0  # the fractional parts carry the offsets' gradient
    y0, x0 = y0.long(), x0.long()
    per_group = input.reshape(N, G, C // G, H * W)
    columns = 0
    for dy, wy in ((0, 1 - ly), (1, ly)):
        for dx, wx in ((0, 1 - lx), (1, lx)):
            yy, xx = y0 + dy, x0 + dx
            valid = inside & (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
            flat = (yy.clamp(0, H - 1) * W + xx.clamp(0, W - 1)).reshape(N, G, 1, K * L)
            values = per_group.gather(3, flat.expand(N, G, C // G, K * L))
            weights = (wy * wx * valid.to(dtype)).reshape(N, G, 1, K * L)
            columns = columns + values * weights
    return columns.reshape(N, C, K, L)


def deform_conv2d(input, offset, weight, bias=None, stride=(1, 1), padding=(0, 0),
                  dilation=(1, 1), mask=None):
    kh, kw = weight.shape[-2:]
    n_offset_grps = offset.shape[1] // (2 * kh * kw)
    n_weight_grps = input.shape[1] // weight.shape[1]
    if n_offset_grps == 0:
        raise RuntimeError(
            "the shape of the offset tensor at dimension 1 is not valid. It should be a "
            "multiple of 2 * weight.size[2] * weight.size[3].\n"
            f"Got offset.shape[1]={offset.shape[1]}, while 2 * weight.size[2] * "
            f"weight.size[3]={2 * kh * kw}")
    for t in (input, offset, weight) + (() if mask is None else (mask,)):
        _check(t.ndim == 4, "Expected input, offset, weight and mask to be 4-dimensional")
    args = (_pair(stride), _pair(padding), _pair(dilation))
    (sh, sw), (ph, pw), (dh, dw) = args
    N, C, H, W = input.shape
    out_h = (H + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    out_w = (W + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    _check_shapes(input, offset, weight, mask, n_offset_grps, n_weight_grps, (out_h, out_w),
                  args)
    O = weight.shape[0]
    if N == 0:
        out = zeros((0, O, out_h, out_w), dtype=input.dtype, device=input.device)
        return out if bias is None else out + bias.view(1, O, 1, 1)
    K, L = kh * kw, out_h * out_w
    # the regular sampling grid of every tap (K, L), in the input's dtype
    ft = input.dtype.np
    tap_y = np.repeat(np.arange(kh) * dh, kw).astype(ft)[:, None, None]
    tap_x = np.tile(np.arange(kw) * dw, kh).astype(ft)[:, None, None]
    base_y = tap_y + (np.arange(out_h) * sh - ph).astype(ft)[None, :, None]
    base_x = tap_x + (np.arange(out_w) * sw - pw).astype(ft)[None, None, :]
    base_y = tensor(np.broadcast_to(base_y, (K, out_h, out_w)).reshape(K, L),
                    device=input.device)
    base_x = tensor(np.broadcast_to(base_x, (K, out_h, out_w)).reshape(K, L),
                    device=input.device)
    off = offset.reshape(N, n_offset_grps, K, 2, L)
    y = base_y + off[:, :, :, 0]
    x = base_x + off[:, :, :, 1]
    columns = _sample_columns(input, y, x, n_offset_grps)  # (N, C, K, L)
    if mask is not None:
        cpg = C // n_offset_grps
        columns = (columns.reshape(N, n_offset_grps, cpg, K, L)
                   * mask.reshape(N, n_offset_grps, 1, K, L)).reshape(N, C, K, L)
    G = n_weight_grps
    columns = columns.reshape(N, G, (C // G) * K, L)
    out = weight.reshape(1, G, O // G, (C // G) * K).matmul(columns)
    out = out.reshape(N, O, out_h, out_w)
    return out if bias is None else out + bias.view(1, O, 1, 1)


class DeformConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        from ... import empty
        self.weight = nn.Parameter(empty(out_channels, in_channels // groups,
                                         self.kernel_size[0], self.kernel_size[1]))
        if bias:
            self.bias = nn.Parameter(empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # the same initialisation as nn.Conv2d
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input, offset, mask=None):
        return deform_conv2d(input, offset, self.weight, self.bias, stride=self.stride,
                             padding=self.padding, dilation=self.dilation, mask=mask)

    def __repr__(self):
        s = (f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
             f"kernel_size={self.kernel_size}, stride={self.stride}")
        s += f", padding={self.padding}" if self.padding != (0, 0) else ""
        s += f", dilation={self.dilation}" if self.dilation != (1, 1) else ""
        s += f", groups={self.groups}" if self.groups != 1 else ""
        s += ", bias=False" if self.bias is None else ""
        return s + ")"
