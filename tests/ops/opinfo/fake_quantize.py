"""Op-table entries for fake quantization (ember/ops/fake_quantize.py). Its gradient is the
straight-through estimator, not the mathematical derivative (0 almost everywhere), so
gradcheck does not run; the gradient's parity with PyTorch does."""
from . import OpInfo, Sample, integers, randn, register


def _per_tensor(lib, x, scale, zero_point, quant_min, quant_max, tensors=False):
    if tensors:  # the overload with 0-dim tensor qparams (a node of its own name)
        scale, zero_point = lib.tensor(scale), lib.tensor(zero_point)
    return lib.fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max)


def _per_tensor_samples(rng):
    return [Sample((randn(rng, 4, 5), 0.1, 0, -8, 7)),
            Sample((randn(rng, 6), 0.25, 3, 0, 15), {"tensors": True}),
            Sample((randn(rng, 2, 3) * 40, 1.0, 0, -128, 127), noncontig=(0,)),
            Sample((randn(rng, 3), 0.1, 0, 5, 2), raises=RuntimeError),
            Sample((randn(rng, 3), 0.1, 300, 0, 255), raises=RuntimeError),
            Sample((integers(rng, 3), 0.1, 0, 0, 255), grad=(), raises=NotImplementedError)]


def _per_channel(lib, x, scale, zero_point, axis, quant_min, quant_max, zero_dtype="int32"):
    return lib.fake_quantize_per_channel_affine(
        x, lib.tensor(scale, dtype=lib.float32), lib.tensor(zero_point,
                                                            dtype=getattr(lib, zero_dtype)),
        axis, quant_min, quant_max)


def _per_channel_samples(rng):
    return [Sample((randn(rng, 4, 3) * 0.4, [0.1, 0.05, 0.2], [0, 1, -1], 1, -8, 7)),
            Sample((randn(rng, 2, 3, 4), [0.1, 0.3], [2, -2], 0, -8, 7)),
            # floating zero points: added before rounding
            Sample((randn(rng, 4, 3) * 0.4, [0.1, 0.05, 0.2], [0.0, 1.5, -1.0], 1, -8, 7),
                   {"zero_dtype": "float32"}),
            Sample((randn(rng, 4, 3), [0.1, 0.05, 0.2], [0, 1, -1], -1, -8, 7),
                   raises=RuntimeError),  # no axis counted from the end
            Sample((randn(rng, 4, 3), [0.1, 0.05, 0.2], [0, 1, -1], 1, -8, 7),
                   {"zero_dtype": "int64"}, raises=RuntimeError),
            Sample((randn(rng, 4, 3), [0.1, 0.05], [0, 1], 1, -8, 7), raises=RuntimeError),
            Sample((randn(rng, 4, 3), [0.1, 0.05, 0.2], [0, 9, -1], 1, -8, 7),
                   raises=RuntimeError),
            Sample((randn(rng, 4, 3), [0.1, 0.05, 0.2], [0, 1, -1], 2, -8, 7), raises=IndexError)]


register(OpInfo("fake_quantize_per_tensor_affine", _per_tensor, _per_tensor_samples,
                grad=False, gradgrad=False),
         OpInfo("fake_quantize_per_channel_affine", _per_channel, _per_channel_samples,
                grad=False, gradgrad=False))
