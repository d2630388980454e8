"""ember.vision.ops: deform_conv2d / DeformConv2d, ps_roi_align / ps_roi_pool, DropBlock,
masks_to_boxes and Conv3dNormActivation. torchvision's compiled kernels cannot load here, so
the deformable and position-sensitive ops are held against plain-loop transcriptions of the
kernels' math (bilinear taps, integer bins), hand-worked cases and gradcheck; the pure-Python
ones (masks_to_boxes, drop_block, the modules) against torchvision itself."""
import math

import numpy as np
import pytest

import ember
import ember.vision.ops as O
from ember.autograd import gradcheck
from tests._torchvision_oracle import import_torchvision

RNG = np.random.default_rng(7)


# ---- deform_conv2d -----------------------------------------------------------------------
def _bilinear(img, y, x):
    h, w = img.shape
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    ly, lx = y - y0, x - x0
    total = 0.0
    for yy, wy in ((y0, 1 - ly), (y0 + 1, ly)):
        for xx, wx in ((x0, 1 - lx), (x0 + 1, lx)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * img[yy, xx]
    return total


def _deform_reference(x, offset, weight, bias, stride, pad, dil, mask):
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    oh, ow = offset.shape[2:]
    offg = offset.shape[1] // (2 * kh * kw)
    groups = c // cg
    out = np.zeros((n, o, oh, ow))
    for b in range(n):
        for oc in range(o):
            g = oc // (o // groups)
            for i in range(oh):
                for j in range(ow):
                    acc = bias[oc] if bias is not None else 0.0
                    for ci in range(cg):
                        cin = g * cg + ci
                        og = cin // (c // offg)
                        for p in range(kh):
                            for q in range(kw):
                                k = p * kw + q
                                dy = offset[b, og * 2 * kh * kw + 2 * k, i, j]
                                dx = offset[b, og * 2 * kh * kw + 2 * k + 1, i, j]
                                y = i * stride[0] - pad[0] + p * dil[0] + dy
                                xx = j * stride[1] - pad[1] + q * dil[1] + dx
                                m = 1.0 if mask is None else mask[b, og * kh * kw + k, i, j]
                                acc += weight[oc, ci, p, q] * m * _bilinear(x[b, cin], y, xx)
                    out[b, oc, i, j] = acc
    return out


@pytest.mark.parametrize("groups,offg,stride,pad,dil,use_mask", [
    (1, 1, (1, 1), (0, 0), (1, 1), False), (2, 2, (2, 1), (1, 2), (1, 2), True),
    (1, 2, (1, 2), (1, 1), (2, 1), True)])
def test_deform_conv2d_matches_the_kernel_math(groups, offg, stride, pad, dil, use_mask):
    n, c, h, w, o = 2, 4, 6, 7, 4
    x = RNG.standard_normal((n, c, h, w))
    weight = RNG.standard_normal((o, c // groups, 3, 2))
    bias = RNG.standard_normal(o)
    oh = (h + 2 * pad[0] - (dil[0] * 2 + 1)) // stride[0] + 1
    ow = (w + 2 * pad[1] - (dil[1] * 1 + 1)) // stride[1] + 1
    offset = RNG.uniform(-2.5, 2.5, (n, offg * 2 * 6, oh, ow))
    mask = RNG.uniform(0, 1, (n, offg * 6, oh, ow)) if use_mask else None
    got = O.deform_conv2d(ember.tensor(x), ember.tensor(offset), ember.tensor(weight),
                          ember.tensor(bias), stride, pad, dil,
                          None if mask is None else ember.tensor(mask))
    ref = _deform_reference(x, offset, weight, bias, stride, pad, dil, mask)
    np.testing.assert_allclose(got.numpy(), ref, atol=1e-10)


def test_deform_conv2d_with_zero_offsets_is_conv2d():
    x = ember.randn(2, 4, 9, 8)
    w = ember.randn(6, 2, 3, 3)
    b = ember.randn(6)
    off = ember.zeros(2, 18, 5, 3)
    got = O.deform_conv2d(x, off, w, b, stride=2, padding=1, dilation=(1, 2))
    ref = ember.nn.functional.conv2d(x, w, b, stride=2, padding=1, dilation=(1, 2), groups=2)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-5)


def test_deform_conv2d_hand_computed_tap():
    # one 1x1 tap moved by (0.5, 0.25) reads 0.5*0.75*1 + 0.5*0.25*2 + 0.5*0.75*3 + ... of
    # the 2x2 image [[1, 2], [3, 4]]
    x = ember.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    off = ember.tensor([0.5, 0.25]).reshape(1, 2, 1, 1).expand(1, 2, 2, 2).contiguous()
    out = O.deform_conv2d(x, off, ember.ones(1, 1, 1, 1))
    assert out[0, 0, 0, 0].item() == pytest.approx(0.375 * 1 + 0.125 * 2 + 0.375 * 3
                                                   + 0.125 * 4)
    # (0, 1) moves to x = 1.25: its right neighbours fall outside and count as zero
    assert out[0, 0, 0, 1].item() == pytest.approx(0.5 * 0.75 * 2 + 0.5 * 0.75 * 4)


def test_deform_conv2d_gradients():
    x = ember.randn(1, 2, 4, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(2, 2, 2, 2, dtype=ember.float64, requires_grad=True)
    b = ember.randn(2, dtype=ember.float64, requires_grad=True)
    # offsets away from integers, where the bilinear form is differentiable
    off = ember.tensor(RNG.uniform(-1.4, 1.4, (1, 8, 5, 5)).round(1) + 0.05,
                       requires_grad=True)
    mask = ember.tensor(RNG.uniform(0, 1, (1, 4, 5, 5)), requires_grad=True)
    assert gradcheck(lambda *a: O.deform_conv2d(a[0], a[1], a[2], a[3], padding=1,
                                                mask=a[4]), (x, off, w, b, mask))


def test_deform_conv2d_errors():
    x, w = ember.randn(1, 2, 5, 5), ember.randn(2, 2, 3, 3)
    with pytest.raises(RuntimeError, match="the shape of the offset tensor at dimension 1"):
        O.deform_conv2d(x, ember.zeros(1, 4, 3, 3), w)
    with pytest.raises(RuntimeError, match=r"offset output dims: \(4, 4\) - computed output "
                                           r"dims: \(3, 3\)"):
        O.deform_conv2d(x, ember.zeros(1, 18, 4, 4), w)
    with pytest.raises(RuntimeError, match="mask.shape\\[1\\] is not valid: got: 3 expected: 9"):
        O.deform_conv2d(x, ember.zeros(1, 18, 3, 3), w, mask=ember.zeros(1, 3, 3, 3))


def test_deform_conv2d_module_matches_torchvision():
    import_torchvision()
    import torchvision.ops as TO
    for kwargs in ({}, dict(stride=2, padding=1, dilation=2, groups=2, bias=False)):
        ours, ref = O.DeformConv2d(4, 6, 3, **kwargs), TO.DeformConv2d(4, 6, 3, **kwargs)
        assert repr(ours) == repr(ref)
        assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
            {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    m = O.DeformConv2d(2, 3, 3, padding=1)
    x = ember.randn(1, 2, 4, 4)
    off = ember.randn(1, 18, 4, 4)
    out = m(x, off)
    out.sum().backward()
    assert out.shape == (1, 3, 4, 4) and m.weight.grad is not None


# ---- position-sensitive RoI pooling ------------------------------------------------------
def _ps_align_reference(x, rois, ph, pw, scale, ratio):
    k_out = x.shape[1] // (ph * pw)
    h, w = x.shape[2:]
    out = np.zeros((len(rois), k_out, ph, pw))
    for n, r in enumerate(rois):
        sw, sh, ew, eh = (v * scale - 0.5 for v in r[1:])
        bh, bw = (eh - sh) / ph, (ew - sw) / pw
        gh = ratio if ratio > 0 else math.ceil((eh - sh) / ph)
        gw = ratio if ratio > 0 else math.ceil((ew - sw) / pw)
        for c in range(k_out):
            for i in range(ph):
                for j in range(pw):
                    img = x[int(r[0]), (c * ph + i) * pw + j]
                    total = 0.0
                    for iy in range(gh):
                        y = sh + i * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            xx = sw + j * bw + (ix + 0.5) * bw / gw
                            if not (-1 <= y <= h and -1 <= xx <= w):
                                continue
                            yc, xc = max(y, 0.0), max(xx, 0.0)
                            y0, x0 = int(yc), int(xc)
                            if y0 >= h - 1:
                                y0 = y1 = h - 1
                                yc = float(y0)
                            else:
                                y1 = y0 + 1
                            if x0 >= w - 1:
                                x0 = x1 = w - 1
                                xc = float(x0)
                            else:
                                x1 = x0 + 1
                            ly, lx = yc - y0, xc - x0
                            total += ((1 - ly) * (1 - lx) * img[y0, x0] + (1 - ly) * lx
                                      * img[y0, x1] + ly * (1 - lx) * img[y1, x0]
                                      + ly * lx * img[y1, x1])
                    out[n, c, i, j] = total / (gh * gw)
    return out


def _ps_pool_reference(x, rois, ph, pw, scale):
    k_out = x.shape[1] // (ph * pw)
    h, w = x.shape[2:]
    rnd = lambda v: int(math.copysign(math.floor(abs(v) + 0.5), v))  # noqa: E731
    out = np.zeros((len(rois), k_out, ph, pw))
    for n, r in enumerate(rois):
        sw, sh, ew, eh = (rnd(v * scale) for v in r[1:])
        bh, bw = max(eh - sh, 1) / ph, max(ew - sw, 1) / pw
        for c in range(k_out):
            for i in range(ph):
                hs = min(max(math.floor(i * bh) + sh, 0), h - 1)
                he = min(max(math.ceil((i + 1) * bh) + sh, 0), h - 1)
                for j in range(pw):
                    ws = min(max(math.floor(j * bw) + sw, 0), w - 1)
                    we = min(max(math.ceil((j + 1) * bw) + sw, 0), w - 1)
                    if he > hs and we > ws:
                        patch = x[int(r[0]), (c * ph + i) * pw + j, hs:he, ws:we]
                        out[n, c, i, j] = patch.mean()
    return out


ROIS = np.array([[0, 1.0, 1.5, 9.0, 7.0], [1, 0.0, 0.0, 11.0, 9.0], [0, 4.2, 2.7, 6.1, 3.3],
                 [1, -3.0, -2.0, 5.0, 12.0]])


@pytest.mark.parametrize("ratio", [-1, 2])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_ps_roi_align_matches_the_kernel_math(ratio, scale):
    x = RNG.standard_normal((2, 2 * 3 * 2, 10, 12))
    got = O.ps_roi_align(ember.tensor(x), ember.tensor(ROIS), (3, 2), scale, ratio)
    np.testing.assert_allclose(got.numpy(), _ps_align_reference(x, ROIS, 3, 2, scale, ratio),
                               atol=1e-10)
    boxes = [ember.tensor(ROIS[ROIS[:, 0] == b][:, 1:]) for b in (0, 1)]
    listed = O.PSRoIAlign((3, 2), scale, ratio)(ember.tensor(x), boxes)
    order = np.argsort(ROIS[:, 0], kind="stable")
    np.testing.assert_allclose(listed.numpy(), got.numpy()[order], atol=1e-10)


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_ps_roi_pool_matches_the_kernel_math(scale):
    x = RNG.standard_normal((2, 3 * 2 * 2, 10, 12))
    got = O.ps_roi_pool(ember.tensor(x), ember.tensor(ROIS), 2, scale)
    np.testing.assert_allclose(got.numpy(), _ps_pool_reference(x, ROIS, 2, 2, scale),
                               atol=1e-10)
    assert got.shape == (4, 3, 2, 2)


def test_ps_roi_gradients_and_errors():
    x = ember.randn(2, 4, 4, 5, dtype=ember.float64, requires_grad=True)
    rois = ember.tensor([[0, 0.5, 1.0, 3.0, 3.5], [1, 1.0, 0.0, 4.0, 3.0]], dtype=ember.float64)
    assert gradcheck(lambda t: O.ps_roi_align(t, rois, 2, 1.0, 2), (x,))
    assert gradcheck(lambda t: O.ps_roi_pool(t, rois, 2, 1.0), (x,))
    with pytest.raises(AssertionError, match="input channels must be a multiple of pooling"):
        O.ps_roi_align(ember.randn(1, 6, 5, 5), ember.tensor([[0, 0, 0, 3, 3.0]]), 2)


def test_ps_roi_modules_repr_match_torchvision():
    import_torchvision()
    import torchvision.ops as TO
    assert repr(O.PSRoIAlign(7, 0.25, 2)) == repr(TO.PSRoIAlign(7, 0.25, 2))
    assert repr(O.PSRoIPool((3, 5), 0.5)) == repr(TO.PSRoIPool((3, 5), 0.5))


# ---- masks_to_boxes, DropBlock, Conv3dNormActivation -------------------------------------
def test_masks_to_boxes_matches_torchvision():
    import_torchvision()
    import torch
    import torchvision.ops as TO
    masks = RNG.random((5, 9, 11)) > 0.9
    masks[2] = False
    ours = O.masks_to_boxes(ember.tensor(masks))
    ref = TO.masks_to_boxes(torch.tensor(masks))
    assert ours.dtype == ember.float32
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    assert tuple(O.masks_to_boxes(ember.zeros(0, 4, 4)).shape) == (0, 4)


@pytest.mark.parametrize("dims", [2, 3])
def test_drop_block_matches_torchvision_given_the_same_seeds(dims, monkeypatch):
    import_torchvision()
    import torch
    import torchvision.ops as TO
    shape = (2, 3) + (7, 8, 6)[:dims] if dims == 3 else (2, 3, 9, 8)
    x = RNG.standard_normal(shape).astype(np.float32)
    block = 3
    seeds = (RNG.random(tuple(shape[:2]) + tuple(s - block + 1 for s in shape[2:])) < 0.08)
    monkeypatch.setattr(ember.Tensor, "bernoulli_",
                        lambda self, p=0.5, **kw: self.copy_(ember.tensor(seeds.astype(
                            np.float32))))
    monkeypatch.setattr(torch.Tensor, "bernoulli_",
                        lambda self, p=0.5, **kw: self.copy_(torch.tensor(seeds.astype(
                            np.float32))))
    name = f"drop_block{dims}d"
    ours = getattr(O, name)(ember.tensor(x), 0.3, block)
    ref = getattr(TO, name)(torch.tensor(x), 0.3, block)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
    assert (ours.numpy() == 0).any()


def test_drop_block_modules_and_errors():
    import_torchvision()
    import torchvision.ops as TO
    x = ember.randn(2, 3, 8, 8)
    m = O.DropBlock2d(0.5, 3)
    assert repr(m) == repr(TO.DropBlock2d(0.5, 3))
    assert repr(O.DropBlock3d(0.1, 5, True)) == repr(TO.DropBlock3d(0.1, 5, True))
    m.eval()
    assert m(x) is x
    m.train()
    ember.manual_seed(0)
    a = m(x)
    ember.manual_seed(0)
    assert a.equal(m(x))
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1, but "
                                         "got 1.5."):
        O.drop_block2d(x, 1.5, 3)
    with pytest.raises(ValueError, match="input should be 5 dimensional. Got 4 dimensions."):
        O.drop_block3d(x, 0.1, 3)
    with pytest.raises(ValueError, match="block size should be odd. Got 4 which is even."):
        O.drop_block2d(x, 0.1, 4)


def test_conv3d_norm_activation_matches_torchvision():
    import_torchvision()
    import torch
    import torchvision.ops as TO
    ours = O.Conv3dNormActivation(2, 4, kernel_size=(3, 1, 3), stride=(1, 2, 1))
    ref = TO.Conv3dNormActivation(2, 4, kernel_size=(3, 1, 3), stride=(1, 2, 1))
    assert repr(ours) == repr(ref)
    state = {k: v.detach().numpy() for k, v in ref.state_dict().items()}
    ours.load_state_dict({k: ember.tensor(v) for k, v in state.items()}, strict=True)
    x = RNG.standard_normal((2, 2, 4, 5, 6)).astype(np.float32)
    ours.eval()
    ref.eval()
    np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(),
                               ref(torch.tensor(x)).detach().numpy(), atol=1e-5)
