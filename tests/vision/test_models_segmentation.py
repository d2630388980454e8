"""ember.vision.models.segmentation against torchvision 0.28: every builder's state_dict has
torchvision's keys and shapes (so torchvision's checkpoints load with strict=True), and with
torchvision's random weights copied in, eval-mode outputs ('out', 'aux') agree."""
import numpy as np
import pytest

import ember
import ember.nn.init as einit
from ember.vision.models import segmentation as S
from tests._torchvision_oracle import import_torchvision

BUILDERS = ["fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
            "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
# forwards through the ResNet-101 models take seconds on CPU: their keys are enough
FORWARD = [("fcn_resnet50", True), ("deeplabv3_resnet50", False),
           ("deeplabv3_mobilenet_v3_large", True), ("lraspp_mobilenet_v3_large", None)]


@pytest.fixture
def fast_init(monkeypatch):
    """Skip ember's weight initialisation: torchvision's weights are copied in afterwards."""
    for name in ("kaiming_uniform_", "kaiming_normal_", "uniform_", "normal_", "constant_",
                 "zeros_", "ones_"):
        monkeypatch.setattr(einit, name, lambda t, *a, **k: t)


def _kwargs(aux):
    kwargs = {"weights": None, "weights_backbone": None}
    if aux is not None:
        kwargs["aux_loss"] = aux
    return kwargs


def _to_ember(state):
    return {k: ember.tensor(v.detach().cpu().numpy()) for k, v in state.items()}


@pytest.mark.parametrize("name", BUILDERS)
def test_state_dict_matches_torchvision(name, fast_init, torch):
    tv = import_torchvision()
    aux = None if name.startswith("lraspp") else True
    theirs = getattr(tv.models.segmentation, name)(**_kwargs(aux)).state_dict()
    ours = getattr(S, name)(**_kwargs(aux))
    assert list(ours.state_dict()) == list(theirs)
    for key, value in ours.state_dict().items():
        assert tuple(value.shape) == tuple(theirs[key].shape), key
    result = ours.load_state_dict(_to_ember(theirs), strict=True)
    assert not result.missing_keys and not result.unexpected_keys


@pytest.mark.parametrize("name,aux", FORWARD)
def test_eval_outputs_match_torchvision(name, aux, fast_init, torch):
    tv = import_torchvision()
    torch.manual_seed(0)
    theirs = getattr(tv.models.segmentation, name)(**_kwargs(aux))
    # running statistics away from (0, 1), so batch norm's eval path is exercised
    for module in theirs.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
    theirs.eval()
    ours = getattr(S, name)(**_kwargs(aux))
    ours.load_state_dict(_to_ember(theirs.state_dict()))
    ours.eval()
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
    with torch.no_grad():
        want = theirs(torch.tensor(x))
    with ember.no_grad():
        got = ours(ember.tensor(x))
    assert list(got) == list(want) == (["out", "aux"] if aux else ["out"])
    for key in want:
        expected = want[key].numpy()
        assert tuple(got[key].shape) == expected.shape == (1, 21, 64, 64)
        scale = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(got[key].numpy(), expected, rtol=1e-4, atol=1e-4 * scale)


def test_builder_arguments(fast_init):
    model = S.fcn_resnet50(weights=None, weights_backbone=None, num_classes=5)
    assert model.aux_classifier is None and model.classifier[4].out_channels == 5
    assert isinstance(model, S.FCN)
    layer4 = model.backbone.layer4  # dilated instead of strided: output stride 8
    assert (layer4[0].conv2.stride, layer4[0].conv2.dilation) == ((1, 1), (2, 2))
    assert layer4[1].conv2.dilation == (4, 4)
    assert set(dict(model.backbone.named_children())) == {
        "conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"}
    with pytest.raises(NotImplementedError, match="This model does not use auxiliary loss"):
        S.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=True)
    with pytest.raises(ValueError, match="The parameter 'num_classes' expected value 21 but "
                       "got 5 instead."):
        S.deeplabv3_resnet50(weights="DEFAULT", num_classes=5)
    with pytest.raises(TypeError, match="expected ResNet50_Weights but received "
                       "ResNet101_Weights"):
        S.fcn_resnet50(weights=None, weights_backbone=S.fcn.ResNet101_Weights.DEFAULT)


def test_named_weights_from_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    weights = S.LRASPP_MobileNet_V3_Large_Weights.DEFAULT
    assert len(weights.meta["categories"]) == 21 and weights.meta["categories"][0] == \
        "__background__"
    source = S.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)
    with pytest.raises(RuntimeError, match="lraspp_mobilenet_v3_large-d234d4ea.pth"):
        S.lraspp_mobilenet_v3_large(weights="DEFAULT")
    checkpoints = tmp_path / "hub" / "checkpoints"
    checkpoints.mkdir(parents=True)
    ember.save(source.state_dict(), str(checkpoints / weights.url.rsplit("/", 1)[1]))
    with pytest.warns(UserWarning, match="'pretrained' is deprecated"):
        loaded = S.lraspp_mobilenet_v3_large(pretrained=True)
    for key, value in source.state_dict().items():
        assert ember.equal(loaded.state_dict()[key], value), key
    transforms = weights.transforms()
    assert transforms.resize_size == [520]


def test_intermediate_layer_getter(fast_init):
    from ember.vision.models import resnet18
    from ember.vision.models._utils import IntermediateLayerGetter
    getter = IntermediateLayerGetter(resnet18(), {"layer1": "feat1", "layer3": "feat2"})
    assert list(dict(getter.named_children())) == [
        "conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3"]
    with ember.no_grad():
        out = getter(ember.randn(1, 3, 64, 64))
    assert [(k, tuple(v.shape)) for k, v in out.items()] == [
        ("feat1", (1, 64, 16, 16)), ("feat2", (1, 256, 4, 4))]
    with pytest.raises(ValueError, match="return_layers are not present in model"):
        IntermediateLayerGetter(resnet18(), {"layer9": "x"})
