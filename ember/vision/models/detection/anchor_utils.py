"""AnchorGenerator (torchvision.models.detection.anchor_utils): the reference boxes of the
detectors, sizes x aspect ratios at every position of every feature map."""
from .... import arange, as_tensor, cat, float32, int64, meshgrid, nn, sqrt, stack

__all__ = ["AnchorGenerator"]


class AnchorGenerator(nn.Module):
    """For feature map i, len(sizes[i]) * len(aspect_ratios[i]) anchors centred on each
    position (aspect ratio = height / width), laid out position-major as the heads' outputs
    are; forward returns one (sum of H*W*A, 4) tensor of xyxy anchors per image."""

    def __init__(self, sizes=((128, 256, 512),), aspect_ratios=((0.5, 1.0, 2.0),)):
        super().__init__()
        if not isinstance(sizes[0], (list, tuple)):
            sizes = tuple((s,) for s in sizes)
        if not isinstance(aspect_ratios[0], (list, tuple)):
            aspect_ratios = (aspect_ratios,) * len(sizes)
        self.sizes = sizes
        self.aspect_ratios = aspect_ratios
        self.cell_anchors = [self.generate_anchors(size, ratios)
                             for size, ratios in zip(sizes, aspect_ratios)]

    def generate_anchors(self, scales, aspect_ratios, dtype=float32, device="cpu"):
        """Zero-centred anchors (x1, y1, x2, y2), rounded to whole pixels."""
        scales = as_tensor(scales, dtype=dtype, device=device)
        aspect_ratios = as_tensor(aspect_ratios, dtype=dtype, device=device)
        h_ratios = sqrt(aspect_ratios)
        w_ratios = 1 / h_ratios
        ws = (w_ratios[:, None] * scales[None, :]).view(-1)
        hs = (h_ratios[:, None] * scales[None, :]).view(-1)
        return (stack([-ws, -hs, ws, hs], dim=1) / 2).round()

    def set_cell_anchors(self, dtype, device):
        self.cell_anchors = [a.to(dtype=dtype, device=device) for a in self.cell_anchors]

    def num_anchors_per_location(self):
        return [len(s) * len(a) for s, a in zip(self.sizes, self.aspect_ratios)]

    def grid_anchors(self, grid_sizes, strides):
        if not (len(grid_sizes) == len(strides) == len(self.cell_anchors)):
            raise AssertionError(
                "Anchors should be Tuple[Tuple[int]] because each feature map could potentially "
                "have different sizes and aspect ratios. There needs to be a match between the "
                "number of feature maps passed and the number of sizes / aspect ratios specified.")
        anchors = []
        for (grid_h, grid_w), (stride_h, stride_w), base in zip(grid_sizes, strides,
                                                               self.cell_anchors):
            shifts_x = arange(0, int(grid_w), dtype=int64, device=base.device) * int(stride_w)
            shifts_y = arange(0, int(grid_h), dtype=int64, device=base.device) * int(stride_h)
            shift_y, shift_x = meshgrid(shifts_y, shifts_x, indexing="ij")
            shift_x, shift_y = shift_x.reshape(-1), shift_y.reshape(-1)
            shifts = stack((shift_x, shift_y, shift_x, shift_y), dim=1)
            anchors.append((shifts.view(-1, 1, 4) + base.view(1, -1, 4)).reshape(-1, 4))
        return anchors

    def forward(self, image_list, feature_maps):
        grid_sizes = [tuple(f.shape[-2:]) for f in feature_maps]
        image_h, image_w = image_list.tensors.shape[-2:]
        strides = [(image_h // g[0], image_w // g[1]) for g in grid_sizes]
        self.set_cell_anchors(feature_maps[0].dtype, feature_maps[0].device)
        per_level = self.grid_anchors(grid_sizes, strides)
        return [cat(per_level) for _ in image_list.image_sizes]
