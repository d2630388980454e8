"""ember.vision.ops: box utilities, NMS, RoI align/pool, focal loss, stochastic depth and the
misc blocks. Expected values were computed with torchvision 0.28 (its Python roi_align
reference for RoIs inside the image; the compiled kernel also zeroes samples that fall more
than one pixel outside the image, checked here by reasoning on an all-outside RoI)."""
import math

import numpy as np
import pytest

import ember
import ember.vision.ops as O
from ember.autograd import gradcheck, gradgradcheck

B1 = [[0., 0, 4, 3], [1, 2, 5, 7], [2.5, 1, 6, 2.5]]
B2 = [[0.5, 0.2, 3, 5], [3, 1.5, 8, 4]]
PAIRWISE = {
    "box_iou": [[0.411765, 0.065217], [0.230769, 0.140351], [0.045455, 0.20339]],
    "generalized_box_iou": [[0.261765, -0.216033], [0.080442, -0.119389],
                            [-0.329546, 0.097329]],
    "distance_box_iou": [[0.380728, -0.107439], [0.152976, 0.022843], [-0.085386, 0.138103]],
    "complete_box_iou": [[0.370919, -0.10762], [0.152676, 0.016704], [-0.117102, 0.13810]],
}


@pytest.mark.parametrize("name", sorted(PAIRWISE))
def test_pairwise_box_metrics(name):
    got = getattr(O, name)(ember.tensor(B1), ember.tensor(B2))
    assert got.dtype == ember.float32 and tuple(got.shape) == (3, 2)
    np.testing.assert_allclose(got.numpy(), PAIRWISE[name], atol=2e-6)


@pytest.mark.parametrize("name", ["box_iou", "generalized_box_iou", "distance_box_iou"])
def test_pairwise_box_metrics_are_differentiable(name):
    b1 = ember.tensor(B1, dtype=ember.float64, requires_grad=True)
    b2 = ember.tensor(B2, dtype=ember.float64, requires_grad=True)
    assert gradcheck(getattr(O, name), (b1, b2))


def test_complete_box_iou_gradient_treats_alpha_as_constant():
    # as torchvision: the aspect-ratio weight alpha is computed under no_grad
    b1 = ember.tensor(B1, dtype=ember.float64, requires_grad=True)
    b2 = ember.tensor(B2, dtype=ember.float64)
    (g,) = ember.autograd.grad(O.complete_box_iou(b1, b2).sum(), b1)
    w1, h1 = b1[:, None, 2] - b1[:, None, 0], b1[:, None, 3] - b1[:, None, 1]
    w2, h2 = b2[:, 2] - b2[:, 0], b2[:, 3] - b2[:, 1]
    v = (4 / math.pi ** 2) * (w1.div(h1).atan() - w2.div(h2).atan()) ** 2
    iou = O.box_iou(b1, b2)
    alpha = (v / (1 - iou + v + 1e-7)).detach()
    (ref,) = ember.autograd.grad((O.distance_box_iou(b1, b2) - alpha * v).sum(), b1)
    np.testing.assert_allclose(g.numpy(), ref.numpy(), atol=1e-12)


def test_box_formats_round_trip_and_areas():
    b = ember.tensor(B1)
    for fmt in ("xywh", "cxcywh"):
        conv = O.box_convert(b, "xyxy", fmt)
        np.testing.assert_allclose(O.box_convert(conv, fmt, "xyxy").numpy(), B1, atol=1e-6)
        np.testing.assert_allclose(O.box_area(conv, fmt).numpy(), O.box_area(b).numpy())
        np.testing.assert_allclose(O.box_iou(conv, O.box_convert(ember.tensor(B2), "xyxy", fmt),
                                             fmt).numpy(), PAIRWISE["box_iou"], atol=2e-6)
    np.testing.assert_allclose(O.box_convert(b, "xyxy", "cxcywh").numpy()[1], [3, 4.5, 4, 5])
    np.testing.assert_allclose(O.box_convert(b, "xywh", "cxcywh").numpy()[0], [2, 1.5, 4, 3])
    bi = ember.tensor([[0, 0, 2, 2], [1, 1, 3, 4]], dtype=ember.int32)
    assert O.box_area(bi).dtype == ember.int32 and O.box_area(bi).tolist() == [4, 6]
    assert O.box_area(b.half()).dtype == ember.float32
    assert O.box_convert(bi, "xyxy", "cxcywh").dtype == ember.float32
    assert O.box_convert(bi, "xyxy", "xywh").dtype == ember.int32
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions for given "
                                         "in_fmt foo and out_fmt xyxy"):
        O.box_convert(b, "foo", "xyxy")
    with pytest.raises(ValueError, match="Unsupported Bounding Box area for given format foo"):
        O.box_area(b, "foo")
    with pytest.raises(ValueError, match="Unsupported format 'foo'"):
        O.box_iou(b, b, "foo")


def test_clip_and_remove_small():
    b = ember.tensor([[-1., 2, 9, 9], [1, 1, 3, 2.5]])
    assert O.clip_boxes_to_image(b, (5, 7)).tolist() == [[0, 2, 7, 5], [1, 1, 3, 2.5]]
    assert O.remove_small_boxes(b, 1.5).tolist() == [0, 1]  # 2 x 1.5 is not too small
    assert O.remove_small_boxes(b, 1.6).tolist() == [0]
    assert O.remove_small_boxes(b, 1.5).dtype == ember.int64


def test_nms_and_batched_nms():
    b = ember.tensor([[0., 0, 10, 10], [1, 1, 11, 11], [0, 0, 10, 10], [20, 20, 30, 30],
                      [21, 21, 29, 29]])
    s = ember.tensor([0.9, 0.8, 0.95, 0.5, 0.6])
    keep = O.nms(b, s, 0.5)
    assert keep.dtype == ember.int64 and keep.tolist() == [2, 4]
    # IoU(0, 1) = 81 / 119 = 0.68 and IoU(3, 4) = 0.64: both kept at a higher threshold;
    # the exact duplicate (IoU 1) never is
    assert O.nms(b, s, 0.7).tolist() == [2, 1, 4, 3]
    idxs = ember.tensor([0, 1, 0, 1, 1])
    assert O.batched_nms(b, s, idxs, 0.5).tolist() == [2, 1, 4]
    # the per-category path used for big inputs gives the same answer
    from ember.vision.ops.boxes import _batched_nms_vanilla
    assert _batched_nms_vanilla(b, s, idxs, 0.5).tolist() == [2, 1, 4]
    assert O.nms(ember.zeros(0, 4), ember.zeros(0), 0.5).tolist() == []
    with pytest.raises(RuntimeError, match="boxes should have 4 elements in dimension 1, got 3"):
        O.nms(ember.zeros(2, 3), ember.zeros(2), 0.5)
    with pytest.raises(RuntimeError, match="same number of elements in dimension 0, got 2 and 3"):
        O.nms(ember.zeros(2, 4), ember.zeros(3), 0.5)


X = ember.arange(2 * 2 * 7 * 8, dtype=ember.float64).sin().reshape(2, 2, 7, 8)
ROIS = [[0, 1.2, 0.7, 5.3, 6.1], [1, 0.5, 2, 7.5, 5.5], [0, 3, 3, 3.2, 3.1]]
RA_ADAPTIVE = [  # output_size 2, spatial_scale 1, sampling_ratio -1, aligned False
    [[[-0.0982803429, 0.2330031946], [-0.1625349716, -0.0425150765]],
     [[-0.1935061117, 0.204448319], [-0.0692249803, -0.1441640929]]],
    [[[-0.069804676, -0.0487247465], [0.1173404961, 0.0236892604]],
     [[-0.1975515544, 0.1028989865], [0.2615380993, -0.1567984125]]],
    [[[0.4464858662, 0.1189850406], [-0.2305591883, -0.5275915248]],
     [[0.6533342235, 0.4544622229], [0.1408608188, -0.2205810419]]]]
RA_FIXED = [  # output_size (2, 3), spatial_scale 0.5, sampling_ratio 2, aligned True
    [[[0.5620992102, 0.5443613747, 0.2363417091], [-0.2779031095, -0.542306088, -0.5448753928]],
     [[0.4145875914, 0.6048037119, 0.4928628833], [0.0105799999, -0.3549341197, -0.5677435787]]],
    [[[0.507032978, 0.5894430357, -0.0507218515], [0.4582667151, -0.2959505071, -0.6873736874]],
     [[0.2035757538, 0.6576803803, 0.3055605954], [0.6591114032, 0.0653606705, -0.6085131276]]],
    [[[0.3792569068, 0.3478716494, 0.3164863919], [0.3454050698, 0.3149919372, 0.2845788047]],
     [[0.7939242171, 0.7657053083, 0.7374863995], [0.7565612869, 0.7287965493, 0.7010318118]]]]


def test_roi_align_values():
    rois = ember.tensor(ROIS, dtype=ember.float64)
    np.testing.assert_allclose(O.roi_align(X, rois, 2).numpy(), RA_ADAPTIVE, atol=1e-9)
    np.testing.assert_allclose(O.roi_align(X, rois, (2, 3), 0.5, 2, True).numpy(), RA_FIXED,
                               atol=1e-9)
    # a list of per-image boxes is the same as the (K, 5) form
    as_list = [ember.tensor([r[1:] for r in ROIS if r[0] == i], dtype=ember.float64)
               for i in range(2)]
    got = O.roi_align(X, as_list, 2).numpy()
    np.testing.assert_allclose(got, np.asarray(RA_ADAPTIVE)[[0, 2, 1]], atol=1e-9)
    out32 = O.roi_align(X.float(), rois.float(), 2)
    assert out32.dtype == ember.float32
    np.testing.assert_allclose(out32.numpy(), RA_ADAPTIVE, atol=1e-6)
    # every sample more than a pixel outside the image contributes zero
    far = ember.tensor([[0, -9., -9, -4, -3]], dtype=ember.float64)
    assert not O.roi_align(X, far, 2).numpy().any()
    assert tuple(O.roi_align(X, ember.zeros(0, 5, dtype=ember.float64), 3).shape) == (0, 2, 3, 3)
    m = O.RoIAlign((2, 3), 0.5, 2, aligned=True)
    assert repr(m) == "RoIAlign(output_size=(2, 3), spatial_scale=0.5, sampling_ratio=2, " \
                      "aligned=True)"
    np.testing.assert_allclose(m(X, rois).numpy(), RA_FIXED, atol=1e-9)
    with pytest.raises(AssertionError, match=r"not correct as Tensor\[K, 5\]"):
        O.roi_align(X, ember.zeros(2, 4, dtype=ember.float64), 2)


def test_roi_align_and_roi_pool_gradients():
    x = ember.randn(1, 2, 5, 6, dtype=ember.float64, requires_grad=True)
    rois = ember.tensor([[0, 0.3, 0.2, 4.1, 3.7], [0, 1, 1, 2, 2.5]], dtype=ember.float64)
    assert gradcheck(lambda t: O.roi_align(t, rois, 2, 1.0, -1, True), (x,))
    assert gradgradcheck(lambda t: O.roi_align(t, rois, 2, 1.0, 2, False), (x,))
    assert gradcheck(lambda t: O.roi_pool(t, rois, 2, 1.0), (x,))


def test_roi_pool_values():
    x = ember.arange(2 * 1 * 6 * 6.).reshape(2, 1, 6, 6)
    rois = ember.tensor([[0, 0, 0, 3, 3], [1, 1.4, 0.6, 4.6, 2.5]])
    # roi 1 rounds to columns 1..5, rows 1..3: bins of 2.5 columns and 1.5 rows
    expected = [[[[7, 9], [19, 21]]], [[[51, 53], [57, 59]]]]
    assert O.roi_pool(x, rois, 2).tolist() == expected
    assert O.roi_pool(x, [rois[:1, 1:], rois[1:, 1:]], (2, 2)).tolist() == expected
    assert O.RoIPool(2, 1.0)(x, rois).tolist() == expected
    assert repr(O.RoIPool(2, 0.5)) == "RoIPool(output_size=2, spatial_scale=0.5)"
    # a bin entirely outside the image is 0
    assert O.roi_pool(x, ember.tensor([[0, 7., 7, 9, 9]]), 1).tolist() == [[[[0.0]]]]


def test_sigmoid_focal_loss():
    lg = ember.tensor([[0.3, -1.2, 2.0], [0.0, 0.7, -0.4]])
    tg = ember.tensor([[1., 0, 1], [0, 1, 0]])
    np.testing.assert_allclose(
        O.sigmoid_focal_loss(lg, tg).numpy(),
        [[0.0250983, 0.0105802, 0.0004509], [0.1299651, 0.0110976, 0.0619664]], atol=1e-7)
    assert math.isclose(O.sigmoid_focal_loss(lg, tg, alpha=-1, gamma=1.5, reduction="sum").item(),
                        0.6409903168678284, rel_tol=1e-6)
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction': 'x"):
        O.sigmoid_focal_loss(lg, tg, reduction="x")
    lg64 = lg.double().requires_grad_()
    assert gradcheck(lambda t: O.sigmoid_focal_loss(t, tg.double(), reduction="mean"), (lg64,))


def test_stochastic_depth():
    x = ember.ones(1000, 3)
    assert O.stochastic_depth(x, 0.3, "row", training=False) is x
    ember.manual_seed(0)
    y = O.stochastic_depth(x, 0.25, "row")
    rows = y[:, 0].numpy().astype(np.float64)
    assert np.isin(rows.round(5), [0.0, round(1 / 0.75, 5)]).all()
    assert (y.numpy() == rows[:, None]).all()  # one decision per row
    assert 0.65 < (rows > 0).mean() < 0.85
    z = O.stochastic_depth(x, 0.5, "batch").numpy()
    assert len(np.unique(z)) == 1
    assert O.stochastic_depth(x, 1.0, "row").numpy().sum() == 0
    with pytest.raises(ValueError, match="drop probability has to be between 0 and 1, but got 2"):
        O.stochastic_depth(x, 2, "row")
    with pytest.raises(ValueError, match="mode has to be either 'batch' or 'row', but got col"):
        O.stochastic_depth(x, 0.2, "col")
    assert repr(O.StochasticDepth(0.2, "row")) == "StochasticDepth(p=0.2, mode=row)"


def test_misc_blocks():
    torch = pytest.importorskip("torch")
    bn = O.FrozenBatchNorm2d(3)
    assert repr(bn) == "FrozenBatchNorm2d(3, eps=1e-05)"
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var"]
    assert not list(bn.parameters())
    ref = torch.nn.BatchNorm2d(3).eval()
    with torch.no_grad():
        for t in (ref.weight, ref.bias, ref.running_mean):
            t.uniform_(-1, 1)
        ref.running_var.uniform_(0.5, 2)
    bn.load_state_dict({k: ember.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(bn(ember.tensor(x)).numpy(),
                               ref(torch.tensor(x)).detach().numpy(), atol=1e-6)
    mlp = O.MLP(4, [8, 8, 2], norm_layer=ember.nn.LayerNorm, dropout=0.1)
    assert [type(m).__name__ for m in mlp] == ["Linear", "LayerNorm", "ReLU", "Dropout",
                                               "Linear", "LayerNorm", "ReLU", "Dropout",
                                               "Linear", "Dropout"]
    se = O.SqueezeExcitation(6, 2)
    assert list(se.state_dict()) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    x = ember.randn(2, 6, 3, 3)
    gate = se.fc2(se.fc1(x.mean((2, 3), keepdim=True)).relu()).sigmoid()
    np.testing.assert_allclose(se(x).detach().numpy(), (gate * x).detach().numpy(), atol=1e-6)
    assert tuple(O.Permute([0, 2, 3, 1])(x).shape) == (2, 3, 3, 6)
    c = O.Conv2dNormActivation(3, 4, kernel_size=(3, 5), dilation=(1, 2))
    assert c[0].padding == (1, 4)
