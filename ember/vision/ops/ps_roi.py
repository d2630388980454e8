"""Position-sensitive RoI pooling (torchvision.ops.ps_roi_align / ps_roi_pool, R-FCN).

The input has C = C_out * ph * pw channels; output bin (i, j) of output channel c reads only
input channel (c * ph + i) * pw + j. Both are computed as the ordinary pooling over every
channel followed by that diagonal selection, so the sampling (and its gradient, through
ember's gather) is shared with roi_align: ps_roi_align samples as roi_align(aligned=True)
does, ps_roi_pool averages integer bins as torchvision's CPU kernel (its bins are clipped to
height - 1 and width - 1, so the last row and column are never read)."""
import numpy as np

from ... import nn
from .roi import _assert, _gather, _pair, _roi_align_samples, _rois

__all__ = ["ps_roi_align", "PSRoIAlign", "ps_roi_pool", "PSRoIPool"]


def _check_channels(input, ph, pw):
    _assert(input.shape[1] % (ph * pw) == 0,
            "input channels must be a multiple of pooling height * pooling width")


def _select_position_channels(pooled, ph, pw):
    """(K, C, ph, pw) pooled over every channel -> (K, C / (ph pw), ph, pw)."""
    K, C = pooled.shape[:2]
    bins = ph * pw
    per_bin = pooled.reshape(K, C // bins, bins, bins)  # (k, c_out, channel bin, output bin)
    return per_bin.diagonal(dim1=-2, dim2=-1).reshape(K, C // bins, ph, pw)


def ps_roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1):
    ph, pw = _pair(output_size)
    _check_channels(input, ph, pw)
    rois = _rois(input, boxes)
    samples = _roi_align_samples(rois, input, ph, pw, spatial_scale, sampling_ratio, True)
    return _select_position_channels(_gather(input, *samples, (ph, pw)), ph, pw)


def _round_half_away(v):
    return int(np.sign(v) * np.floor(abs(v) + 0.5))


def ps_roi_pool(input, boxes, output_size, spatial_scale=1.0):
    ph, pw = _pair(output_size)
    _check_channels(input, ph, pw)
    rois = _rois(input, boxes)
    height, width = input.shape[-2:]
    ft = input.dtype.np.type
    windows = []
    for r in rois.astype(input.dtype.np):
        sw, sh = (_round_half_away(v * ft(spatial_scale)) for v in (r[1], r[2]))
        ew, eh = (_round_half_away(v * ft(spatial_scale)) for v in (r[3], r[4]))
        bin_h = ft(max(eh - sh, 1)) / ft(ph)
        bin_w = ft(max(ew - sw, 1)) / ft(pw)
        cells = []
        for i in range(ph):
            hs = min(max(int(np.floor(ft(i) * bin_h)) + sh, 0), height - 1)
            he = min(max(int(np.ceil(ft(i + 1) * bin_h)) + sh, 0), height - 1)
            for j in range(pw):
                ws = min(max(int(np.floor(ft(j) * bin_w)) + sw, 0), width - 1)
                we = min(max(int(np.ceil(ft(j + 1) * bin_w)) + sw, 0), width - 1)
                cells.append((hs, he, ws, we))
        windows.append((int(r[0]), cells))
    K = len(windows)
    S = max([1] + [(he - hs) * (we - ws) for _, cells in windows
                   for hs, he, ws, we in cells if he > hs and we > ws])
    bi = np.zeros((K, ph, pw, S), np.int64)
    yi = np.zeros((K, ph, pw, S), np.int64)
    xi = np.zeros((K, ph, pw, S), np.int64)
    wt = np.zeros((K, ph, pw, S), input.dtype.np)
    for k, (b, cells) in enumerate(windows):
        bi[k] = b
        for n, (hs, he, ws, we) in enumerate(cells):
            if he <= hs or we <= ws:
                continue  # an empty bin pools to 0
            ys, xs = np.meshgrid(np.arange(hs, he), np.arange(ws, we), indexing="ij")
            area = ys.size
            i, j = divmod(n, pw)
            yi[k, i, j, :area] = ys.ravel()
            xi[k, i, j, :area] = xs.ravel()
            wt[k, i, j, :area] = 1.0 / ft(area)
    return _select_position_channels(_gather(input, bi, yi, xi, wt, (ph, pw)), ph, pw)


class PSRoIAlign(nn.Module):
    def __init__(self, output_size, spatial_scale, sampling_ratio):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio

    def forward(self, input, rois):
        return ps_roi_align(input, rois, self.output_size, self.spatial_scale,
                            self.sampling_ratio)

    def __repr__(self):
        return (f"{type(self).__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio})")


class PSRoIPool(nn.Module):
    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return ps_roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return (f"{type(self).__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale})")
