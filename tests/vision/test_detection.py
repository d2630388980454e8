"""ember.vision.models.detection against torchvision 0.28's detectors: every builder's
state_dict has torchvision's keys and shapes (so torchvision's checkpoints load with
strict=True), and with torchvision's weights copied in each stage computes what torchvision's
does: the transform, backbone + FPN, RPN head, anchors, proposals, RoI heads and RetinaNet's
losses. torchvision's compiled nms and roi_align cannot load here, so its modules are given
pure-PyTorch stand-ins: a greedy NMS written out below and torchvision's own Python
roi_align reference (`ops.roi_align._roi_align`)."""
import numpy as np
import pytest

import ember
import ember.nn.init as einit
from ember.vision.models import detection as D
from ember.vision.ops import roi_align as e_roi_align, nms as e_nms

from .._torchvision_oracle import import_torchvision

SMALL = dict(min_size=128, max_size=160)


@pytest.fixture(scope="module")
def tv():
    return import_torchvision()


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _to_ember(x):
    if isinstance(x, dict):
        return {k: _to_ember(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_to_ember(v) for v in x)
    return ember.tensor(_np(x)) if hasattr(x, "detach") else x


def _torch_nms(torch, box_iou):
    def nms(boxes, scores, iou_threshold):
        order = scores.argsort(descending=True, stable=True).tolist()
        iou = box_iou(boxes, boxes)
        suppressed = torch.zeros(len(order), dtype=torch.bool)
        keep = []
        for i in order:
            if not suppressed[i]:
                keep.append(i)
                suppressed |= iou[i] > iou_threshold
        return torch.tensor(keep, dtype=torch.int64)
    return nms


@pytest.fixture
def tv_python_kernels(tv, monkeypatch):
    """torchvision with its nms and roi_align swapped for pure-PyTorch versions."""
    import torch
    from torchvision.ops import boxes as tv_boxes, poolers as tv_poolers
    from torchvision.ops.roi_align import _roi_align
    reference = _roi_align.__wrapped__  # the Python body, without the lazy torch.compile

    def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1,
                  aligned=False):
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        if isinstance(boxes, (list, tuple)):
            boxes = tv_poolers._convert_to_roi_format(boxes)
        return reference(input, boxes, spatial_scale, output_size[0], output_size[1],
                         sampling_ratio, aligned)

    monkeypatch.setattr(tv_boxes, "nms", _torch_nms(torch, tv_boxes.box_iou))
    monkeypatch.setattr(tv_poolers, "roi_align", roi_align)
    return tv, roi_align


BUILDERS = ["fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2",
            "fasterrcnn_mobilenet_v3_large_fpn", "fasterrcnn_mobilenet_v3_large_320_fpn",
            "retinanet_resnet50_fpn", "retinanet_resnet50_fpn_v2"]


@pytest.mark.parametrize("name", BUILDERS)
def test_state_dict_and_repr_match_torchvision_and_load_strictly(tv, name, monkeypatch):
    import torch
    _skip_ember_init(monkeypatch)  # names and shapes are under test here, not values
    theirs = getattr(tv.models.detection, name)(weights=None, weights_backbone=None,
                                                num_classes=5)
    ours = getattr(D, name)(weights=None, weights_backbone=None, num_classes=5)
    want = {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
    assert list(got) == list(want)
    assert got == want
    assert repr(ours) == repr(theirs)  # what print(model) shows
    ours.load_state_dict(_to_ember(dict(theirs.state_dict())), strict=True)
    assert [n for n, p in ours.named_parameters() if not p.requires_grad] == \
        [n for n, p in theirs.named_parameters() if not p.requires_grad]
    with torch.no_grad():
        sample = next(iter(theirs.state_dict().values()))
    np.testing.assert_array_equal(_np(next(iter(ours.state_dict().values()))), _np(sample))


_INITS = ("kaiming_uniform_", "kaiming_normal_", "uniform_", "normal_", "constant_", "zeros_",
          "ones_")


def _skip_ember_init(monkeypatch):
    for init in _INITS:
        monkeypatch.setattr(einit, init, lambda t, *a, **k: t)


def _pair(tv, name, **kwargs):
    """torchvision's model and ember's, holding torchvision's weights."""
    import torch
    torch.manual_seed(0)
    kwargs = {**SMALL, **kwargs}
    theirs = getattr(tv.models.detection, name)(weights=None, weights_backbone=None,
                                                num_classes=5, **kwargs).eval()
    with pytest.MonkeyPatch.context() as mp:
        _skip_ember_init(mp)  # the weights are overwritten below
        ours = getattr(D, name)(weights=None, weights_backbone=None, num_classes=5,
                                **kwargs).eval()
    ours.load_state_dict(_to_ember(dict(theirs.state_dict())))
    return theirs, ours


def _images(scale=1):
    rng = np.random.default_rng(0)
    return [rng.random((3, 128 // scale, 160 // scale), dtype=np.float32),
            rng.random((3, 100 // scale, 150 // scale), dtype=np.float32)]


def _close(a, b, rtol=1e-4, atol=1e-4):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def test_faster_rcnn_stages_match_torchvision(tv_python_kernels):
    import torch
    tv, _ = tv_python_kernels
    theirs, ours = _pair(tv, "fasterrcnn_resnet50_fpn", rpn_pre_nms_top_n_test=300,
                         rpn_post_nms_top_n_test=40)
    images = _images()
    with torch.no_grad(), ember.no_grad():
        t_list, _ = theirs.transform([torch.from_numpy(i) for i in images])
        e_list, _ = ours.transform([ember.tensor(i) for i in images])
        assert e_list.image_sizes == [tuple(s) for s in t_list.image_sizes] == \
            [(128, 160), (106, 160)]
        _close(e_list.tensors, t_list.tensors, atol=1e-5)

        t_feats = theirs.backbone(t_list.tensors)
        e_feats = ours.backbone(ember.tensor(_np(t_list.tensors)))
        assert list(e_feats) == list(t_feats) == ["0", "1", "2", "3", "pool"]
        for k in t_feats:  # activations reach ~200: compare relative to the scale
            _close(e_feats[k], t_feats[k], atol=1e-5 * float(t_feats[k].abs().max()))

        # from here on both sides get torchvision's features, so each stage is compared alone
        feats = _to_ember(t_feats)
        t_obj, t_deltas = theirs.rpn.head(list(t_feats.values()))
        e_obj, e_deltas = ours.rpn.head(list(feats.values()))
        for a, b in zip(e_obj + e_deltas, t_obj + t_deltas):
            _close(a, b, atol=5e-5)  # float32 sums of 256 channels x 3x3, in another order
        t_anchors = theirs.rpn.anchor_generator(t_list, list(t_feats.values()))
        e_anchors = ours.rpn.anchor_generator(e_list, list(feats.values()))
        for a, b in zip(e_anchors, t_anchors):
            np.testing.assert_array_equal(_np(a), _np(b))

        t_props, _ = theirs.rpn(t_list, t_feats)
        e_props, _ = ours.rpn(e_list, feats)
        for a, b in zip(e_props, t_props):
            assert tuple(a.shape) == tuple(b.shape) == (40, 4)
            _close(a, b, atol=1e-3)

        # torchvision's Python roi_align lacks its kernels' rule that a sample more than a
        # pixel outside the map reads zero (ember keeps the rule): only a box thinner than a
        # feature pixel, stretched past the right or bottom edge, can tell them apart
        t_props = [p[((p[:, 2:] - p[:, :2]) >= 8).all(1)] for p in t_props]
        t_dets, _ = theirs.roi_heads(t_feats, t_props, t_list.image_sizes)
        e_dets, _ = ours.roi_heads(feats, _to_ember(t_props), e_list.image_sizes)
        for a, b in zip(e_dets, t_dets):
            assert set(a) == set(b) == {"boxes", "labels", "scores"}
            np.testing.assert_array_equal(_np(a["labels"]), _np(b["labels"]))
            _close(a["scores"], b["scores"], atol=1e-5)
            _close(a["boxes"], b["boxes"], atol=1e-3)
            assert a["labels"].dtype == ember.int64 and a["boxes"].dtype == ember.float32

        # back to the input sizes (postprocess rewrites the dicts it is given)
        e_post = ours.transform.postprocess(_to_ember(t_dets), e_list.image_sizes,
                                            [(128, 160), (100, 150)])
        t_post = theirs.transform.postprocess(t_dets, t_list.image_sizes, [(128, 160), (100, 150)])
        for a, b in zip(e_post, t_post):
            _close(a["boxes"], b["boxes"], atol=1e-4)


def test_training_targets_and_losses_match_torchvision(tv_python_kernels):
    """The deterministic parts of training: anchor labels and matched boxes, regression
    targets, proposal labels, and fastrcnn_loss on the same inputs (the samplers draw
    from each library's own generator, so whole-model losses differ by their draws)."""
    import torch
    from torchvision.models.detection.roi_heads import fastrcnn_loss as tv_fastrcnn_loss
    from ember.vision.models.detection.roi_heads import fastrcnn_loss
    tv, _ = tv_python_kernels
    theirs, ours = _pair(tv, "fasterrcnn_mobilenet_v3_large_320_fpn")
    t_targets = [{"boxes": torch.tensor(b), "labels": torch.tensor(l)} for b, l in (
        ([[10., 20., 60., 90.], [70., 5., 150., 60.]], [1, 3]), ([[30., 30., 90., 100.]], [2]))]
    e_targets = _to_ember(t_targets)
    images = _images()
    with torch.no_grad(), ember.no_grad():
        t_list, t_tg = theirs.transform([torch.from_numpy(i) for i in images], t_targets)
        e_list, e_tg = ours.transform([ember.tensor(i) for i in images], e_targets)
        for a, b in zip(e_tg, t_tg):
            _close(a["boxes"], b["boxes"], atol=1e-4)
        assert e_targets[0]["boxes"] is not e_tg[0]["boxes"]  # the caller's dicts untouched
        t_feats = theirs.backbone(t_list.tensors)
        t_anchors = theirs.rpn.anchor_generator(t_list, list(t_feats.values()))
        t_labels, t_matched = theirs.rpn.assign_targets_to_anchors(t_anchors, t_tg)
        e_labels, e_matched = ours.rpn.assign_targets_to_anchors(_to_ember(t_anchors),
                                                                 _to_ember(t_tg))
        for a, b in zip(e_labels + e_matched, t_labels + t_matched):
            np.testing.assert_array_equal(_np(a), _np(b))
        t_reg = theirs.rpn.box_coder.encode(t_matched, t_anchors)
        e_reg = ours.rpn.box_coder.encode(_to_ember(t_matched), _to_ember(t_anchors))
        for a, b in zip(e_reg, t_reg):
            _close(a, b, atol=1e-5)

        proposals = [a[::97] for a in t_anchors]
        gt_boxes = [t["boxes"] for t in t_tg]
        t_idx, t_lab = theirs.roi_heads.assign_targets_to_proposals(
            proposals, gt_boxes, [t["labels"] for t in t_tg])
        e_idx, e_lab = ours.roi_heads.assign_targets_to_proposals(
            _to_ember(proposals), _to_ember(gt_boxes), [_to_ember(t["labels"]) for t in t_tg])
        for a, b in zip(e_idx + e_lab, t_idx + t_lab):
            np.testing.assert_array_equal(_np(a), _np(b))

    rng = np.random.default_rng(1)
    logits, deltas = rng.standard_normal((12, 5)), rng.standard_normal((12, 20))
    labels = [np.array([0, 2, 1, 0, 4, 0]), np.array([3, 0, 0, 1, 0, 0])]
    targets = [rng.standard_normal((6, 4)), rng.standard_normal((6, 4))]
    want = tv_fastrcnn_loss(torch.tensor(logits), torch.tensor(deltas),
                            [torch.tensor(x) for x in labels], [torch.tensor(x) for x in targets])
    got = fastrcnn_loss(ember.tensor(logits), ember.tensor(deltas),
                        [ember.tensor(x) for x in labels], [ember.tensor(x) for x in targets])
    for a, b in zip(got, want):
        _close(a, b, rtol=1e-10, atol=1e-12)


def test_retinanet_matches_torchvision(tv_python_kernels):
    import torch
    tv, _ = tv_python_kernels
    # half the size of the Faster R-CNN test: P7 is then 1x1, still every level
    theirs, ours = _pair(tv, "retinanet_resnet50_fpn", min_size=64, max_size=80)
    images = _images(scale=2)
    t_targets = [{"boxes": torch.tensor([[5., 10., 30., 45.], [35., 2., 75., 30.]]),
                  "labels": torch.tensor([1, 3])},
                 {"boxes": torch.tensor([[15., 15., 45., 50.]]), "labels": torch.tensor([2])}]
    with torch.no_grad(), ember.no_grad():
        t_list, t_tg = theirs.transform([torch.from_numpy(i) for i in images], t_targets)
        t_feats = list(theirs.backbone(t_list.tensors).values())
        e_feats = list(ours.backbone(ember.tensor(_np(t_list.tensors))).values())
        assert len(e_feats) == len(t_feats) == 5  # P3-P7
        for a, b in zip(e_feats, t_feats):
            _close(a, b, atol=1e-5 * float(b.abs().max()))
        feats = _to_ember(t_feats)
        t_out = theirs.head(t_feats)
        e_out = ours.head(feats)
        for k in ("cls_logits", "bbox_regression"):
            _close(e_out[k], t_out[k], atol=1e-5)
        t_anchors = theirs.anchor_generator(t_list, t_feats)
        e_list, _ = ours.transform([ember.tensor(i) for i in images])
        e_anchors = ours.anchor_generator(e_list, feats)
        for a, b in zip(e_anchors, t_anchors):
            np.testing.assert_array_equal(_np(a), _np(b))
        # the losses have no random sampling: they match outright
        t_losses = theirs.compute_loss(t_tg, t_out, t_anchors)
        e_losses = ours.compute_loss(_to_ember(t_tg), _to_ember(t_out), e_anchors)
        assert set(e_losses) == set(t_losses) == {"classification", "bbox_regression"}
        for k in t_losses:
            _close(e_losses[k], t_losses[k], rtol=1e-4, atol=1e-6)

        # detections from the same head outputs, split per level as forward does
        per_level = [f.shape[2] * f.shape[3] * 9 for f in t_feats]
        t_split = {k: list(v.split(per_level, dim=1)) for k, v in t_out.items()}
        t_split_anchors = [list(a.split(per_level)) for a in t_anchors]
        for model in (theirs, ours):
            model.score_thresh, model.detections_per_img = 0.0, 50
        t_dets = theirs.postprocess_detections(t_split, t_split_anchors, t_list.image_sizes)
        e_dets = ours.postprocess_detections(_to_ember(t_split), _to_ember(t_split_anchors),
                                             e_list.image_sizes)
    for a, b in zip(e_dets, t_dets):
        assert set(a) == set(b) == {"boxes", "labels", "scores"}
        assert tuple(a["boxes"].shape) == tuple(b["boxes"].shape) == (50, 4)
        assert a["labels"].dtype == ember.int64
        np.testing.assert_array_equal(_np(a["labels"]), _np(b["labels"]))
        _close(a["scores"], b["scores"], atol=1e-6)
        _close(a["boxes"], b["boxes"], atol=1e-3)


def test_nms_and_roi_align_match_the_python_references(tv_python_kernels):
    import torch
    from torchvision.ops import boxes as tv_boxes
    tv, tv_roi_align = tv_python_kernels
    rng = np.random.default_rng(2)
    xy = rng.uniform(0, 50, (200, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(1, 30, (200, 2))], 1).astype(np.float32)
    scores = rng.random(200).astype(np.float32)
    for thr in (0.3, 0.5, 0.7):
        want = tv_boxes.nms(torch.from_numpy(boxes), torch.from_numpy(scores), thr)
        got = e_nms(ember.tensor(boxes), ember.tensor(scores), thr)
        np.testing.assert_array_equal(_np(got), _np(want))
    x = rng.standard_normal((2, 3, 20, 24)).astype(np.float32)
    # boxes inside the map, in map pixels (see above: the Python reference has no
    # outside-the-map rule); each case scales them to its spatial_scale
    x1y1 = rng.uniform(0, 12, (30, 2))
    x2y2 = np.minimum(x1y1 + rng.uniform(0.3, 12, (30, 2)), [22, 18])
    batch = rng.integers(0, 2, (30, 1))
    for size, scale, ratio, aligned in [(7, 0.5, 2, False), ((3, 5), 0.25, -1, True),
                                        (2, 1.0, 0, False), (4, 0.125, -1, False)]:
        rois = np.concatenate([batch, np.concatenate([x1y1, x2y2], 1) / scale],
                              1).astype(np.float32)
        want = tv_roi_align(torch.from_numpy(x), torch.from_numpy(rois), size, scale, ratio,
                            aligned)
        got = e_roi_align(ember.tensor(x), ember.tensor(rois), size, scale, ratio, aligned)
        _close(got, want, rtol=1e-5, atol=1e-5)


def test_named_weights_load_from_the_hub_cache(tv, tmp_path, monkeypatch):
    from torchvision.models.detection import backbone_utils as tv_backbone_utils
    import torchvision.ops.misc as tv_misc
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    checkpoints = tmp_path / "hub" / "checkpoints"
    checkpoints.mkdir(parents=True)
    enum = D.FasterRCNN_MobileNet_V3_Large_320_FPN_Weights
    assert enum.DEFAULT is enum.COCO_V1 and len(enum.COCO_V1.meta["categories"]) == 91
    assert enum.COCO_V1.meta["categories"][:3] == ["__background__", "person", "bicycle"]
    source = D.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None)
    ember.save(source.state_dict(), str(checkpoints / enum.COCO_V1.url.rsplit("/", 1)[1]))

    model = D.fasterrcnn_mobilenet_v3_large_320_fpn(weights="DEFAULT")
    for k, v in model.state_dict().items():
        assert ember.equal(v, source.state_dict()[k]), k
    # trained weights: frozen batch norms and torchvision's default trainable stages
    assert any(isinstance(m, ember.vision.ops.FrozenBatchNorm2d) for m in model.modules())
    theirs = tv_backbone_utils._mobilenet_extractor(
        tv.models.mobilenet_v3_large(norm_layer=tv_misc.FrozenBatchNorm2d), True, 3)
    assert [n for n, p in model.backbone.named_parameters() if p.requires_grad] == \
        [n for n, p in theirs.named_parameters() if p.requires_grad]
    from ember.vision.models import get_model
    again = get_model("fasterrcnn_mobilenet_v3_large_320_fpn", weights=enum.COCO_V1)
    assert ember.equal(again.roi_heads.box_predictor.cls_score.weight,
                       source.roi_heads.box_predictor.cls_score.weight)
    with pytest.raises(ValueError, match="'num_classes' expected value 91 but got 3"):
        D.fasterrcnn_mobilenet_v3_large_320_fpn(weights="DEFAULT", num_classes=3)
    with pytest.warns(UserWarning) as record:
        D.fasterrcnn_mobilenet_v3_large_320_fpn(pretrained=True)
    assert [str(w.message)[:40] for w in record] == [
        "The parameter 'pretrained' is deprecated", "Arguments other than a weight enum or `N"]
    with pytest.raises(RuntimeError, match="not in the cache"):  # the ImageNet backbone
        D.fasterrcnn_mobilenet_v3_large_320_fpn(num_classes=3)


@pytest.mark.parametrize("loss_name", ["generalized_box_iou_loss", "distance_box_iou_loss",
                                       "complete_box_iou_loss"])
def test_box_iou_losses_match_torchvision(tv, loss_name):
    import torch
    import ember.vision.ops as O
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 20, (2, 40, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(0.5, 15, (2, 40, 2))], -1)
    boxes[0, :3] = boxes[1, :3] + [30, 0, 30, 0]  # disjoint pairs too
    theirs_fn, ours_fn = getattr(tv.ops, loss_name), getattr(O, loss_name)
    for reduction in ("none", "mean", "sum"):
        t1 = torch.tensor(boxes[0], requires_grad=True)
        e1 = ember.tensor(boxes[0], requires_grad=True)
        want = theirs_fn(t1, torch.tensor(boxes[1]), reduction=reduction)
        got = ours_fn(e1, ember.tensor(boxes[1]), reduction=reduction)
        _close(got, want, rtol=1e-10, atol=1e-12)
        want.sum().backward()
        got.sum().backward()
        _close(e1.grad, t1.grad, rtol=1e-8, atol=1e-10)
    half = ours_fn(ember.tensor(boxes[0]).half(), ember.tensor(boxes[1]).half())
    assert half.dtype == ember.float32  # upcast as torchvision
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction'"):
        ours_fn(ember.tensor(boxes[0]), ember.tensor(boxes[1]), reduction="max")


@pytest.mark.parametrize("kind", ["l1", "smooth_l1", "giou", "diou", "ciou"])
def test_detection_box_loss_matches_torchvision(tv, kind):
    import torch
    from torchvision.models.detection import _utils as tv_det_utils
    from ember.vision.models.detection import _utils as det_utils
    rng = np.random.default_rng(4)
    xy = rng.uniform(0, 50, (2, 30, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(4, 40, (2, 30, 2))], -1)
    deltas = rng.standard_normal((30, 4)) * 0.2
    cnf = {"beta": 0.5} if kind == "smooth_l1" else None
    want = tv_det_utils._box_loss(kind, tv_det_utils.BoxCoder((1.0, 1.0, 1.0, 1.0)),
                                  torch.tensor(boxes[0]), torch.tensor(boxes[1]),
                                  torch.tensor(deltas), cnf)
    got = det_utils._box_loss(kind, det_utils.BoxCoder((1.0, 1.0, 1.0, 1.0)),
                              ember.tensor(boxes[0]), ember.tensor(boxes[1]),
                              ember.tensor(deltas), cnf)
    _close(got, want, rtol=1e-10, atol=1e-10)
    with pytest.raises(AssertionError, match="Unsupported loss: l2"):
        det_utils._box_loss("l2", None, None, None, None)


def _tiny_faster_rcnn(lib_nn, detection, ops, **kwargs):
    backbone = lib_nn.Sequential(lib_nn.Conv2d(3, 8, 3, stride=4, padding=1), lib_nn.ReLU())
    backbone.out_channels = 8
    return detection.FasterRCNN(
        backbone, num_classes=3,
        rpn_anchor_generator=detection.anchor_utils.AnchorGenerator(((16, 32),),
                                                                    ((0.5, 1.0, 2.0),)),
        box_roi_pool=ops.MultiScaleRoIAlign(["0"], 7, 2), min_size=64, max_size=64, **kwargs)


def test_detectors_train_and_predict_on_cuda(fake_cuda):
    import ember.vision.ops as O
    ember.manual_seed(0)
    model = _tiny_faster_rcnn(ember.nn, D, O).to(fake_cuda)
    retina = D.RetinaNet(model.backbone, num_classes=3, min_size=64, max_size=64,
                         anchor_generator=D.anchor_utils.AnchorGenerator(((16, 32),),
                                                                         ((0.5, 1.0, 2.0),))
                         ).to(fake_cuda)
    images = [ember.rand(3, 64, 64, device=fake_cuda), ember.rand(3, 48, 64, device=fake_cuda)]
    targets = [{"boxes": ember.tensor([[5., 5., 30., 40.]], device=fake_cuda),
                "labels": ember.tensor([1], device=fake_cuda)}] * 2
    for detector, loss_names in ((model, {"loss_classifier", "loss_box_reg", "loss_objectness",
                                          "loss_rpn_box_reg"}),
                                 (retina, {"classification", "bbox_regression"})):
        detector.train()
        losses = detector(images, targets)
        assert set(losses) == loss_names
        sum(losses.values()).backward()
        assert all(v.device == fake_cuda for v in losses.values())
        detector.eval()
        with ember.no_grad():
            out = detector(images)
        assert len(out) == 2 and all(v.device == fake_cuda for v in out[0].values())
        assert out[1]["boxes"].numel() == 0 or float(out[1]["boxes"][:, 3].max()) <= 48


def test_bad_inputs_raise_torchvisions_errors(tv_python_kernels):
    import torch
    import ember.vision.ops as O
    tv, _ = tv_python_kernels
    theirs = _tiny_faster_rcnn(torch.nn, tv.models.detection, tv.ops)
    ours = _tiny_faster_rcnn(ember.nn, D, O)
    box = [[5., 5., 30., 40.]]
    cases = [  # (images, targets) as nested lists, or a callable building them per library
        lambda lib: ([lib.rand(3, 64, 64)], None),
        lambda lib: ([lib.rand(3, 64, 64)], [{"boxes": lib.tensor([[5., 5., 5., 40.]]),
                                              "labels": lib.tensor([1])}]),
        lambda lib: ([lib.rand(3, 64, 64)], [{"boxes": lib.tensor([1., 2., 3., 4.]),
                                              "labels": lib.tensor([1])}]),
        lambda lib: ([lib.zeros(3, 64, 64, dtype=lib.uint8)], [{"boxes": lib.tensor(box),
                                                                 "labels": lib.tensor([1])}]),
        lambda lib: ([lib.rand(64, 64)], [{"boxes": lib.tensor(box), "labels": lib.tensor([1])}]),
        lambda lib: ([lib.rand(3, 64, 64)], [{"boxes": lib.tensor(box),
                                              "labels": lib.tensor([1], dtype=lib.int32)}]),
    ]
    for make in cases:
        errors = []
        for lib, model in ((torch, theirs), (ember, ours)):
            model.train()
            with pytest.raises(Exception) as info:
                model(*make(lib))
            errors.append((type(info.value), str(info.value)))
        assert errors[1] == errors[0]
    with pytest.raises(ValueError, match="num_classes should be None when box_predictor"):
        D.FasterRCNN(ours.backbone, num_classes=3, box_predictor=D.FastRCNNPredictor(8, 3))
    with pytest.raises(ValueError, match="backbone should contain an attribute out_channels"):
        D.FasterRCNN(ember.nn.ReLU(), num_classes=3)


def test_images_without_objects_and_no_proposals():
    import ember.vision.ops as O
    ember.manual_seed(0)
    nothing = {"boxes": ember.zeros(0, 4), "labels": ember.zeros(0, dtype=ember.int64)}
    one = {"boxes": ember.tensor([[5., 5., 30., 40.]]), "labels": ember.tensor([1])}
    model = _tiny_faster_rcnn(ember.nn, D, O)
    losses = model([ember.rand(3, 64, 64), ember.rand(3, 64, 64)], [nothing, one])
    assert all(bool(ember.isfinite(v)) for v in losses.values())
    sum(losses.values()).backward()  # an image of background only is a valid sample
    retina = D.RetinaNet(model.backbone, num_classes=3, min_size=64, max_size=64,
                         anchor_generator=D.anchor_utils.AnchorGenerator(((16, 32),),
                                                                         ((0.5, 1.0, 2.0),)))
    losses = retina([ember.rand(3, 64, 64)], [nothing])
    assert losses["bbox_regression"].item() == 0.0 and losses["classification"].item() > 0
    # the v2 head: GroupNorm towers and the GIoU box loss
    from functools import partial
    retina.head = D.RetinaNetHead(8, 6, 3, norm_layer=partial(ember.nn.GroupNorm, 4))
    retina.head.regression_head._loss_type = "giou"
    losses = retina([ember.rand(3, 64, 64)], [one])
    sum(losses.values()).backward()
    assert retina.head.regression_head.conv[0][1].weight.grad is not None
    # no proposal survives the RPN's score threshold: empty, well-formed detections
    model = _tiny_faster_rcnn(ember.nn, D, O, rpn_score_thresh=1.0).eval()
    with ember.no_grad():
        (out,) = model([ember.rand(3, 64, 64)])
    assert tuple(out["boxes"].shape) == (0, 4) and out["labels"].dtype == ember.int64
