"""Mask R-CNN (ember.vision.models.detection.mask_rcnn) against torchvision 0.28: the builders'
state_dicts load torchvision's with strict=True, and with torchvision's weights the mask
branch computes what torchvision's does (mask logits and probabilities per detection, the
training loss, masks pasted back into the image). torchvision's compiled roi_align and nms
are replaced by its Python reference, as in test_detection."""
import numpy as np
import pytest

import ember
from ember.vision.models import detection as D
from ember.vision.models.detection import roi_heads as RH

from .test_detection import (_close, _images, _np, _pair, _skip_ember_init, _to_ember,  # noqa: F401
                             tv, tv_python_kernels)


@pytest.mark.parametrize("name", ["maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2"])
def test_state_dict_and_repr_match_torchvision(tv, name, monkeypatch):
    _skip_ember_init(monkeypatch)
    theirs = getattr(tv.models.detection, name)(weights=None, weights_backbone=None,
                                                num_classes=4)
    ours = getattr(D, name)(weights=None, weights_backbone=None, num_classes=4)
    want = {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
    assert list(got) == list(want) and got == want
    assert repr(ours) == repr(theirs)
    ours.load_state_dict(_to_ember(dict(theirs.state_dict())), strict=True)


def test_weights_enums_and_legacy_mask_head_keys(tv):
    for name in ("MaskRCNN_ResNet50_FPN_Weights", "MaskRCNN_ResNet50_FPN_V2_Weights"):
        ours, theirs = getattr(D, name), getattr(tv.models.detection, name)
        assert [w.name for w in ours] == [w.name for w in theirs]
        assert ours.DEFAULT.url == theirs.DEFAULT.url
        assert ours.DEFAULT.meta["categories"] == theirs.DEFAULT.meta["categories"]
    from collections import OrderedDict
    head = D.MaskRCNNHeads(8, (4, 4), 1)
    old = OrderedDict([("mask_fcn1.weight", ember.ones(4, 8, 3, 3)),
                       ("mask_fcn1.bias", ember.zeros(4)),
                       ("mask_fcn2.weight", ember.ones(4, 4, 3, 3)),
                       ("mask_fcn2.bias", ember.zeros(4))])
    old._metadata = OrderedDict([("", {"version": 1})])  # a checkpoint from before version 2
    head.load_state_dict(old, strict=True)
    assert float(head[0][0].weight.detach().sum()) == 4 * 8 * 9


def test_mask_branch_matches_torchvision(tv_python_kernels):
    import torch
    tv, _ = tv_python_kernels
    theirs, ours = _pair(tv, "maskrcnn_resnet50_fpn", rpn_pre_nms_top_n_test=300,
                         rpn_post_nms_top_n_test=40, box_score_thresh=0.0,
                         box_detections_per_img=12)
    images = _images()
    with torch.no_grad(), ember.no_grad():
        t_list, _ = theirs.transform([torch.from_numpy(i) for i in images])
        t_feats = theirs.backbone(t_list.tensors)
        t_props, _ = theirs.rpn(t_list, t_feats)
        t_props = [p[((p[:, 2:] - p[:, :2]) >= 8).all(1)] for p in t_props]  # see test_detection
        t_dets, _ = theirs.roi_heads(t_feats, t_props, t_list.image_sizes)
        e_dets, _ = ours.roi_heads(_to_ember(t_feats), _to_ember(t_props), t_list.image_sizes)
        for a, b in zip(e_dets, t_dets):
            assert set(a) == set(b) == {"boxes", "labels", "scores", "masks"}
            np.testing.assert_array_equal(_np(a["labels"]), _np(b["labels"]))
            assert tuple(a["masks"].shape) == tuple(b["masks"].shape)
            assert b["masks"].shape[1:] == (1, 28, 28)
            # the logits pass five float32 convolutions of large activations (kaiming-initialised,
            # untrained): a few probabilities differ in the fourth decimal
            _close(a["masks"], b["masks"], atol=1e-3)
        sizes = [(128, 160), (100, 150)]
        e_post = ours.transform.postprocess(_to_ember(t_dets), t_list.image_sizes, sizes)
        t_post = theirs.transform.postprocess(t_dets, t_list.image_sizes, sizes)
        for a, b, size in zip(e_post, t_post, sizes):
            assert tuple(a["masks"].shape)[1:] == (1,) + size
            _close(a["masks"], b["masks"], atol=1e-3)


def test_maskrcnn_loss_matches_torchvision(tv_python_kernels, monkeypatch):
    import torch
    import torchvision.models.detection.roi_heads as TRH
    tv, roi_align = tv_python_kernels
    monkeypatch.setattr(TRH, "roi_align", roi_align)
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((5, 3, 28, 28)).astype(np.float32)
    proposals = [np.array([[2, 3, 30, 40], [10, 5, 50, 25.5]], np.float32),
                 np.array([[0, 0, 20, 20], [5, 6, 40, 39], [1, 1, 3, 4]], np.float32)]
    masks = [(rng.random((2, 48, 64)) > 0.5).astype(np.uint8),
             (rng.random((1, 48, 64)) > 0.5).astype(np.uint8)]
    labels = [np.array([1, 2]), np.array([2])]
    matched = [np.array([1, 0]), np.array([0, 0, 0])]
    want = TRH.maskrcnn_loss(torch.tensor(logits), *[[torch.tensor(x) for x in xs]
                                                     for xs in (proposals, masks, labels,
                                                                matched)])
    x = ember.tensor(logits, requires_grad=True)
    got = RH.maskrcnn_loss(x, *[[ember.tensor(v) for v in xs]
                                for xs in (proposals, masks, labels, matched)])
    _close(got, want, atol=1e-6)
    got.backward()
    assert x.grad is not None and x.grad.shape == x.shape
    empty = RH.maskrcnn_loss(x, [ember.zeros(0, 4)], [ember.zeros(0, 48, 64)],
                             [ember.zeros(0, dtype=ember.int64)], [ember.zeros(0, dtype=ember.int64)])
    assert float(empty.detach()) == 0.0


def test_paste_masks_in_image_matches_torchvision(tv):
    import torch
    from torchvision.models.detection.roi_heads import paste_masks_in_image
    rng = np.random.default_rng(2)
    masks = rng.random((4, 1, 28, 28)).astype(np.float32)
    boxes = np.array([[3.2, 4.9, 40.1, 33.3], [-5, -5, 20, 70], [50, 30, 90, 61], [10, 10, 11, 11]],
                     np.float32)
    got = RH.paste_masks_in_image(ember.tensor(masks), ember.tensor(boxes), (60, 80))
    want = paste_masks_in_image(torch.tensor(masks), torch.tensor(boxes), (60, 80))
    _close(got, want, atol=1e-6)
    assert tuple(RH.paste_masks_in_image(ember.zeros(0, 1, 28, 28), ember.zeros(0, 4),
                                         (6, 8)).shape) == (0, 1, 6, 8)


def test_mask_rcnn_trains_and_predicts():
    ember.manual_seed(0)
    model = D.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=3,
                                    min_size=64, max_size=80, box_detections_per_img=5,
                                    rpn_post_nms_top_n_train=100, box_batch_size_per_image=32,
                                    rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_test=20)
    mask = ember.zeros(1, 60, 70, dtype=ember.uint8)
    mask[0, 10:40, 20:50] = 1
    targets = [{"boxes": ember.tensor([[20.0, 10, 49, 39]]), "labels": ember.tensor([1]),
                "masks": mask}]
    images = [ember.rand(3, 60, 70)]
    losses = model(images, targets)
    assert set(losses) == {"loss_classifier", "loss_box_reg", "loss_mask", "loss_objectness",
                           "loss_rpn_box_reg"}
    sum(losses.values()).backward()
    assert model.roi_heads.mask_predictor.mask_fcn_logits.weight.grad is not None
    model.eval()
    with ember.no_grad():
        out = model(images)[0]
    n = out["boxes"].shape[0]
    assert tuple(out["masks"].shape) == (n, 1, 60, 70) and out["masks"].dtype == ember.float32
    with pytest.raises(ValueError, match="num_classes should be None when mask_predictor"):
        D.MaskRCNN(model.backbone, num_classes=3,
                   mask_predictor=D.MaskRCNNPredictor(256, 256, 3))
