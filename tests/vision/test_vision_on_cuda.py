"""The new vision kernels keep to the device's array module (under the strict CuPy
stand-in): photometric transforms, perspective/elastic warps, deform_conv2d, the
position-sensitive RoI pools, masks_to_boxes and drop_block give CUDA tensors, equal to
their CPU results."""
import numpy as np
import pytest

import ember
import ember.vision.ops as O
import ember.vision.transforms.functional as F

RNG = np.random.default_rng(12)


def _same(cpu, cuda, atol=1e-6):
    assert cuda.device.type == "cuda"
    np.testing.assert_allclose(cuda.detach().cpu().numpy(), cpu.detach().numpy(), atol=atol)


@pytest.mark.usefixtures("full_float32")  # held to the CPU's values
def test_photometric_and_warps_on_cuda(fake_cuda):
    u8 = ember.tensor(RNG.integers(0, 256, (2, 3, 9, 10), dtype=np.uint8))
    f32 = u8.float() / 255
    start, end = [[0, 0], [9, 0], [9, 8], [0, 8]], [[1, 1], [8, 0], [9, 7], [0, 8]]
    disp = ember.tensor((RNG.random((1, 9, 10, 2)).astype(np.float32) - 0.5) * 0.2)
    calls = [(F.equalize, u8, ()), (F.posterize, u8, (3,)), (F.solarize, u8, (100,)),
             (F.autocontrast, f32, ()), (F.adjust_sharpness, u8, (1.7,)),
             (F.adjust_gamma, f32, (0.6,)), (F.invert, f32, ()),
             (F.perspective, f32, (start, end)), (F.elastic_transform, f32, (disp,))]
    for fn, img, args in calls:
        cuda_args = tuple(a.to(fake_cuda) if isinstance(a, ember.Tensor) else a for a in args)
        _same(fn(img, *args), fn(img.to(fake_cuda), *cuda_args), atol=1e-5)


def test_ops_on_cuda(fake_cuda):
    x = ember.tensor(RNG.standard_normal((1, 4, 6, 7)).astype(np.float32))
    off = ember.tensor(RNG.uniform(-1, 1, (1, 18, 4, 5)).astype(np.float32))
    w = ember.tensor(RNG.standard_normal((2, 4, 3, 3)).astype(np.float32))
    mask = ember.tensor(RNG.random((1, 9, 4, 5)).astype(np.float32))
    cpu = O.deform_conv2d(x, off, w, mask=mask)
    xc = x.to(fake_cuda).requires_grad_()
    out = O.deform_conv2d(xc, off.to(fake_cuda), w.to(fake_cuda), mask=mask.to(fake_cuda))
    _same(cpu, out, atol=1e-5)
    out.sum().backward()
    assert xc.grad.device.type == "cuda"
    rois = ember.tensor([[0, 0.5, 1.0, 5.0, 4.5]])
    for fn in (O.ps_roi_align, O.ps_roi_pool):
        _same(fn(x, rois, 2), fn(x.to(fake_cuda), rois.to(fake_cuda), 2))
    masks = ember.tensor(RNG.random((3, 6, 7)) > 0.7)
    _same(O.masks_to_boxes(masks), O.masks_to_boxes(masks.to(fake_cuda)))
    ember.manual_seed(0)
    dropped = O.drop_block2d(x.to(fake_cuda), 0.3, 3)
    assert dropped.device.type == "cuda" and tuple(dropped.shape) == tuple(x.shape)
