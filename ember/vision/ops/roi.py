"""RoI pooling (torchvision.ops.roi_align / roi_pool) and sigmoid_focal_loss.

roi_align and roi_pool are linear in `input` (bilinear weights / a max's position do not
depend on the values once chosen): the sampling positions and weights are worked out on the
host from the boxes, then the output is gathered from `input` with ember indexing ops, so the
gradient with respect to `input` (and its derivatives) come from those ops. As in torchvision,
no gradient flows to the boxes."""
import math

import numpy as np

from ... import cat, full, nn, tensor
from ...nn import functional as F

__all__ = ["roi_align", "RoIAlign", "roi_pool", "RoIPool", "sigmoid_focal_loss"]


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _assert(condition, message):
    if not condition:
        raise AssertionError(message)


def _check_roi_boxes_shape(boxes):
    if isinstance(boxes, (list, tuple)):
        for t in boxes:
            _assert(t.size(1) == 4,
                    "The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]")
    elif hasattr(boxes, "size"):
        _assert(boxes.size(1) == 5, "The boxes tensor shape is not correct as Tensor[K, 5]")
    else:
        _assert(False, "boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def _convert_boxes_to_roi_format(boxes):
    concat = cat(list(boxes), dim=0)
    ids = cat([full((len(b), 1), i, dtype=concat.dtype, device=concat.device)
               for i, b in enumerate(boxes)], dim=0)
    return cat([ids, concat], dim=1)


def _rois(input, boxes):
    _check_roi_boxes_shape(boxes)
    rois = boxes
    if not hasattr(rois, "size"):
        rois = _convert_boxes_to_roi_format(rois)
    return rois.detach().cpu().numpy()


def _gather(input, b, y, x, weights, shape):
    """sum over the last axis of weights * input[b, :, y, x], laid out as (K, C, *shape).

    The input is seen as a (N*H*W, C) matrix of pixel rows, and the weighted sum is taken
    one sample position at a time: each step gathers whole rows (whose gradient is a sorted
    row-wise add) and holds only (K * cells, C) values, never (K * cells * samples, C)."""
    dev = input.device
    N, C, H, W = input.shape
    if b.size == 0:
        return input.new_zeros((0, C) + shape)
    rows_of = input.permute(0, 2, 3, 1).reshape(N * H * W, C)
    flat = ((b * H + y) * W + x).reshape(-1, b.shape[-1])  # (K * cells, samples)
    w = weights.reshape(-1, weights.shape[-1])
    out = None
    for s in range(flat.shape[1]):
        if s > 0 and not w[:, s].any():  # padding of the smaller sampling grids
            continue
        term = rows_of[tensor(flat[:, s], device=dev)] * tensor(w[:, s:s + 1], dtype=input.dtype,
                                                                 device=dev)
        out = term if out is None else out + term
    return out.reshape(b.shape[:-1] + (C,)).movedim(-1, 1)


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    ph, pw = _pair(output_size)
    rois = _rois(input, boxes)
    return _gather(input, *_roi_align_samples(rois, input, ph, pw, spatial_scale,
                                              sampling_ratio, aligned), (ph, pw))


def _roi_align_samples(rois, input, ph, pw, spatial_scale, sampling_ratio, aligned):
    """(batch, y, x, weight) arrays (K, ph, pw, samples): RoIAlign's bilinear taps."""
    dt = input.dtype.np  # positions and weights are computed in the input's precision
    height, width = input.shape[-2], input.shape[-1]
    offset = 0.5 if aligned else 0.0
    grids = []
    for r in rois.astype(dt):
        sw, sh = r[1] * dt.type(spatial_scale) - offset, r[2] * dt.type(spatial_scale) - offset
        ew, eh = r[3] * dt.type(spatial_scale) - offset, r[4] * dt.type(spatial_scale) - offset
        rw, rh = ew - sw, eh - sh
        if not aligned:  # legacy: tiny RoIs are stretched to one pixel
            rw, rh = max(rw, dt.type(1.0)), max(rh, dt.type(1.0))
        bh, bw = rh / dt.type(ph), rw / dt.type(pw)
        gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / ph))
        gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / pw))
        grids.append((int(r[0]), sh, sw, bh, bw, gh, gw))
    # every RoI is padded to the largest sampling grid, with zero weights for the padding
    GH = max([g[5] for g in grids] + [1])
    GW = max([g[6] for g in grids] + [1])
    K = len(grids)
    S = GH * GW * 4
    bi = np.zeros((K, ph, pw, S), np.int64)
    yi = np.zeros((K, ph, pw, S), np.int64)
    xi = np.zeros((K, ph, pw, S), np.int64)
    wt = np.zeros((K, ph, pw, S), dt)
    for k, (b, sh, sw, bh, bw, gh, gw) in enumerate(grids):
        count = dt.type(max(gh * gw, 1))
        iy = np.arange(gh, dtype=dt)
        ix = np.arange(gw, dtype=dt)
        y = (sh + np.arange(ph, dtype=dt)[:, None] * bh
             + (iy[None, :] + dt.type(0.5)) * bh / dt.type(gh)).astype(dt)  # (ph, gh)
        x = (sw + np.arange(pw, dtype=dt)[:, None] * bw
             + (ix[None, :] + dt.type(0.5)) * bw / dt.type(gw)).astype(dt)  # (pw, gw)
        y = np.broadcast_to(y[:, None, :, None], (ph, pw, gh, gw))
        x = np.broadcast_to(x[None, :, None, :], (ph, pw, gh, gw))
        outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
        y = np.where(y <= 0, dt.type(0), y)
        x = np.where(x <= 0, dt.type(0), x)
        y_low = y.astype(np.int64)
        x_low = x.astype(np.int64)
        y_edge = y_low >= height - 1
        x_edge = x_low >= width - 1
        y_low = np.where(y_edge, height - 1, y_low)
        x_low = np.where(x_edge, width - 1, x_low)
        y_high = np.where(y_edge, height - 1, y_low + 1)
        x_high = np.where(x_edge, width - 1, x_low + 1)
        y = np.where(y_edge, y_low.astype(dt), y)
        x = np.where(x_edge, x_low.astype(dt), x)
        ly = (y - y_low).astype(dt)
        lx = (x - x_low).astype(dt)
        hy, hx = dt.type(1) - ly, dt.type(1) - lx
        keep = (~outside).astype(dt)
        corners = [(y_low, x_low, hy * hx), (y_low, x_high, hy * lx),
                   (y_high, x_low, ly * hx), (y_high, x_high, ly * lx)]
        n = gh * gw
        for c, (yy, xx, ww) in enumerate(corners):
            sl = slice(c * GH * GW, c * GH * GW + n)
            yi[k, :, :, sl] = yy.reshape(ph, pw, n)
            xi[k, :, :, sl] = xx.reshape(ph, pw, n)
            wt[k, :, :, sl] = (ww * keep / count).reshape(ph, pw, n)
        bi[k] = b
    return bi, yi, xi, wt


def roi_pool(input, boxes, output_size, spatial_scale=1.0):
    ph, pw = _pair(output_size)
    rois = _rois(input, boxes)
    height, width = input.shape[-2], input.shape[-1]
    K, C = len(rois), input.shape[1]
    if K == 0:
        return input.new_zeros((0, C, ph, pw))
    data = input.detach().cpu().numpy()
    arg = np.zeros((K, C, ph, pw), np.int64)  # flat index h * width + w of each bin's max
    valid = np.zeros((K, C, ph, pw), bool)
    rnd = lambda v: int(np.sign(v) * np.floor(abs(v) + 0.5))  # noqa: E731  (half away from 0)
    rois = rois.astype(data.dtype)
    for k, r in enumerate(rois):
        b = int(r[0])
        sw = rnd(r[1] * spatial_scale)
        sh = rnd(r[2] * spatial_scale)
        ew = rnd(r[3] * spatial_scale)
        eh = rnd(r[4] * spatial_scale)
        rw, rh = max(ew - sw + 1, 1), max(eh - sh + 1, 1)
        ft = data.dtype.type
        bh, bw = ft(rh) / ft(ph), ft(rw) / ft(pw)
        for i in range(ph):
            hs = min(max(int(np.floor(i * bh)) + sh, 0), height)
            he = min(max(int(np.ceil((i + 1) * bh)) + sh, 0), height)
            for j in range(pw):
                ws = min(max(int(np.floor(j * bw)) + sw, 0), width)
                we = min(max(int(np.ceil((j + 1) * bw)) + sw, 0), width)
                if he <= hs or we <= ws:
                    continue
                patch = data[b, :, hs:he, ws:we].reshape(C, -1)
                pos = patch.argmax(axis=1)  # the first maximum, as torchvision's scan keeps
                arg[k, :, i, j] = (hs + pos // (we - ws)) * width + ws + pos % (we - ws)
                valid[k, :, i, j] = True
    dev = input.device
    flat = input.flatten(-2)
    bidx = tensor(rois[:, 0].astype(np.int64), device=dev).reshape(K, 1, 1, 1)
    cidx = tensor(np.arange(C), device=dev).reshape(1, C, 1, 1)
    out = flat[bidx, cidx, tensor(arg, device=dev)]
    return out * tensor(valid, device=dev).to(input.dtype)


class RoIAlign(nn.Module):
    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale,
                         self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio}, "
                f"aligned={self.aligned})")


class RoIPool(nn.Module):
    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale})")


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
    p = inputs.sigmoid()
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction "
                     "modes: 'none', 'mean', 'sum'")
