"""DropBlock (torchvision.ops.drop_block): drop whole square (cubic) blocks of a feature map
instead of single activations, then rescale so the expected sum is unchanged."""
from ... import nn
from ...nn import functional as F

__all__ = ["drop_block2d", "drop_block3d", "DropBlock2d", "DropBlock3d"]


def _drop_block(input, p, block_size, inplace, eps, training, dims):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}.")
    if input.ndim != dims + 2:
        raise ValueError(f"input should be {dims + 2} dimensional. Got {input.ndim} "
                         "dimensions.")
    if not training or p == 0.0:
        return input
    sizes = list(input.shape[2:])
    block_size = min([block_size] + sizes)
    if block_size % 2 == 0:
        raise ValueError(f"block size should be odd. Got {block_size} which is even.")
    # the seed rate: blocks of block_size**dims that drop a fraction p of the area in all
    valid = 1
    area = 1
    for s in sizes:
        valid *= s - block_size + 1
        area *= s
    gamma = (p * area) / ((block_size ** dims) * valid)
    noise = input.new_empty([input.shape[0], input.shape[1]] +
                            [s - block_size + 1 for s in sizes])
    noise.bernoulli_(gamma)
    noise = F.pad(noise, [block_size // 2] * (2 * dims), value=0)
    pool = F.max_pool2d if dims == 2 else F.max_pool3d
    noise = pool(noise, stride=(1,) * dims, kernel_size=(block_size,) * dims,
                 padding=block_size // 2)
    noise = 1 - noise
    normalize_scale = noise.numel() / (eps + noise.sum())
    if inplace:
        return input.mul_(noise).mul_(normalize_scale)
    return input * noise * normalize_scale


def drop_block2d(input, p, block_size, inplace=False, eps=1e-06, training=True):
    return _drop_block(input, p, block_size, inplace, eps, training, 2)


def drop_block3d(input, p, block_size, inplace=False, eps=1e-06, training=True):
    return _drop_block(input, p, block_size, inplace, eps, training, 3)


class DropBlock2d(nn.Module):
    def __init__(self, p, block_size, inplace=False, eps=1e-06):
        super().__init__()
        self.p = p
        self.block_size = block_size
        self.inplace = inplace
        self.eps = eps

    def forward(self, input):
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps,
                            self.training)

    def __repr__(self):
        return (f"{type(self).__name__}(p={self.p}, block_size={self.block_size}, "
                f"inplace={self.inplace})")


class DropBlock3d(DropBlock2d):
    def __init__(self, p, block_size, inplace=False, eps=1e-06):
        super().__init__(p, block_size, inplace, eps)

    def forward(self, input):
        return drop_block3d(input, self.p, self.block_size, self.inplace, self.eps,
                            self.training)
