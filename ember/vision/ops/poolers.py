"""MultiScaleRoIAlign (torchvision.ops.poolers): RoIAlign over a feature pyramid, each box
pooled from the level that suits its size (the FPN paper's heuristic, LevelMapper)."""
import numpy as np

from ... import cat, floor, full, log2, nn, sqrt, tensor, where, zeros
from .boxes import box_area
from .roi import roi_align

__all__ = ["MultiScaleRoIAlign", "LevelMapper", "initLevelMapper"]


class LevelMapper:
    """Maps boxes to pyramid levels: level = floor(canonical_level + log2(sqrt(area) /
    canonical_scale)), clamped to [k_min, k_max] and returned counted from k_min."""

    def __init__(self, k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists):
        from ... import int64
        s = sqrt(cat([box_area(boxes) for boxes in boxlists]))
        levels = floor(self.lvl0 + log2(s / self.s0) + tensor(self.eps, dtype=s.dtype))
        levels = levels.clamp(min=self.k_min, max=self.k_max)
        return levels.to(int64) - self.k_min


def initLevelMapper(k_min, k_max, canonical_scale=224, canonical_level=4, eps=1e-6):
    return LevelMapper(k_min, k_max, canonical_scale, canonical_level, eps)


def _convert_to_roi_format(boxes):
    concat = cat(boxes, dim=0)
    ids = cat([full((b.shape[0], 1), i, dtype=concat.dtype, device=concat.device)
               for i, b in enumerate(boxes)], dim=0)
    return cat([ids, concat], dim=1)


def _infer_scale(feature, original_size):
    # the feature's stride is a power of two; the ratio is rounded to the nearest one, in
    # float32 as torchvision computes it
    ratio = np.float32(float(feature.shape[-2]) / float(original_size[0]))
    return 2 ** float(np.round(np.log2(ratio)))


def _setup_scales(features, image_shapes, canonical_scale, canonical_level):
    if not image_shapes:
        raise ValueError("images list should not be empty")
    max_h = max(int(s[0]) for s in image_shapes)
    max_w = max(int(s[1]) for s in image_shapes)
    scales = [_infer_scale(f, (max_h, max_w)) for f in features]
    lvl_min = -float(np.log2(np.float32(scales[0])))
    lvl_max = -float(np.log2(np.float32(scales[-1])))
    mapper = initLevelMapper(int(lvl_min), int(lvl_max), canonical_scale=canonical_scale,
                             canonical_level=canonical_level)
    return scales, mapper


def _filter_input(x, featmap_names):
    return [v for k, v in x.items() if k in featmap_names]


def _multiscale_roi_align(x_filtered, boxes, output_size, sampling_ratio, scales, mapper):
    if scales is None or mapper is None:
        raise ValueError("scales and mapper should not be None")
    rois = _convert_to_roi_format(boxes)
    if len(x_filtered) == 1:
        return roi_align(x_filtered[0], rois, output_size=output_size, spatial_scale=scales[0],
                         sampling_ratio=sampling_ratio)
    levels = mapper(boxes)
    first = x_filtered[0]
    result = zeros((rois.shape[0], first.shape[1]) + tuple(output_size), dtype=first.dtype,
                   device=first.device)
    for level, (feature, scale) in enumerate(zip(x_filtered, scales)):
        idx_in_level = where(levels == level)[0]
        if idx_in_level.numel() == 0:
            continue
        pooled = roi_align(feature, rois[idx_in_level], output_size=output_size,
                           spatial_scale=scale, sampling_ratio=sampling_ratio)
        result[idx_in_level] = pooled.to(result.dtype)
    return result


class MultiScaleRoIAlign(nn.Module):
    """RoIAlign on the feature maps named `featmap_names` of an ordered dict of features.
    The level scales are inferred from the first batch seen and kept, as torchvision does."""

    def __init__(self, featmap_names, output_size, sampling_ratio, *, canonical_scale=224,
                 canonical_level=4):
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.map_levels = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def forward(self, x, boxes, image_shapes):
        x_filtered = _filter_input(x, self.featmap_names)
        if self.scales is None or self.map_levels is None:
            self.scales, self.map_levels = _setup_scales(
                x_filtered, image_shapes, self.canonical_scale, self.canonical_level)
        return _multiscale_roi_align(x_filtered, boxes, self.output_size, self.sampling_ratio,
                                     self.scales, self.map_levels)

    def __repr__(self):
        return (f"{self.__class__.__name__}(featmap_names={self.featmap_names}, "
                f"output_size={self.output_size}, sampling_ratio={self.sampling_ratio})")
