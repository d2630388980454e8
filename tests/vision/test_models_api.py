"""torchvision's weights API (ember.vision.models._api): enums built from the shipped data
against torchvision 0.28's own, the registry, `weights=` resolution and the hub cache."""
import copy
import functools
import pickle

import pytest

import ember
from ember.vision.models import _api
from ember.vision.models._api import Weights, WeightsEnum, weights_enum
from ember.vision.transforms import _presets
from ember.vision.transforms.functional import InterpolationMode
from tests._torchvision_oracle import import_torchvision


def _data_enum_names():
    return sorted(_api._weights_data()["enums"])


def _preset_signature(transforms):
    """(preset class name, keyword arguments with enums as their values) of either library."""
    if isinstance(transforms, functools.partial):
        name, kwargs = transforms.func.__name__, dict(transforms.keywords)
    else:
        name, kwargs = transforms.__name__, {}
    return name, {k: getattr(v, "value", v) for k, v in kwargs.items()}


def _comparable(value):
    """NaN (VGG16's feature-only weights have NaN accuracies) as a string, so == works."""
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_comparable(v) for v in value)
    return "nan" if isinstance(value, float) and value != value else value


@pytest.mark.parametrize("enum_name", _data_enum_names())
def test_enum_data_equals_torchvision(enum_name):
    tv = import_torchvision()
    entry = _api._weights_data()["enums"][enum_name]
    module = __import__(f"torchvision.models.{entry['module']}",
                        fromlist=[enum_name])
    theirs = getattr(module, enum_name)
    ours = weights_enum(enum_name, "ember.vision.models.test")
    assert list(ours.__members__) == list(theirs.__members__)
    assert ours.DEFAULT.name == theirs.DEFAULT.name
    for name, member in theirs.__members__.items():
        mine = ours[name]
        assert mine.url == member.url
        assert _comparable(mine.meta) == _comparable(member.meta), name
        assert _preset_signature(mine.transforms) == _preset_signature(member.transforms)
    assert tv.__version__.startswith("0.28")


def test_enum_behaviour():
    E = weights_enum("ResNet50_Weights", __name__)
    assert issubclass(E, WeightsEnum) and E.__name__ == "ResNet50_Weights"
    assert E.DEFAULT is E.IMAGENET1K_V2 and list(E) == [E.IMAGENET1K_V1, E.IMAGENET1K_V2]
    assert repr(E.DEFAULT) == "ResNet50_Weights.IMAGENET1K_V2"
    assert E.IMAGENET1K_V1.url.rsplit("/", 1)[1] == "resnet50-0676ba61.pth"
    assert E.verify("DEFAULT") is E.IMAGENET1K_V2
    assert E.verify("ResNet50_Weights.IMAGENET1K_V1") is E.IMAGENET1K_V1
    assert E.verify(None) is None
    with pytest.raises(KeyError):
        E.verify("IMAGENET1K_V9")
    other = weights_enum("ResNet18_Weights", __name__)
    with pytest.raises(TypeError, match="Invalid Weight class provided; expected "
                       "ResNet50_Weights but received ResNet18_Weights."):
        E.verify(other.DEFAULT)
    meta = E.DEFAULT.meta
    assert len(meta["categories"]) == 1000 and meta["categories"][0] == "tench"
    assert meta["num_params"] == 25557032 and meta["min_size"] == (1, 1)
    assert meta["_metrics"]["ImageNet-1K"]["acc@1"] == 80.858
    assert copy.deepcopy(E.DEFAULT) is E.DEFAULT
    value = E.DEFAULT.value
    assert isinstance(value, Weights) and copy.deepcopy(value) == value


def test_transforms_preset_values():
    E = weights_enum("ResNet50_Weights", __name__)
    preset = E.IMAGENET1K_V2.transforms()
    assert isinstance(preset, _presets.ImageClassification)
    assert (preset.crop_size, preset.resize_size) == ([224], [232])
    assert preset.interpolation is InterpolationMode.BILINEAR
    assert E.IMAGENET1K_V1.transforms().resize_size == [256]
    b3 = weights_enum("EfficientNet_B3_Weights", __name__).DEFAULT.transforms()
    assert b3.interpolation is InterpolationMode.BICUBIC and b3.crop_size == [300]
    img = ember.randint(0, 256, (3, 300, 280), dtype=ember.uint8)
    out = preset(img)
    assert out.shape == (3, 224, 224) and out.dtype == ember.float32


def test_transforms_preset_matches_torchvision(torch):
    import_torchvision()
    import numpy as np
    from PIL import Image
    from torchvision.transforms import InterpolationMode as TVMode
    from torchvision.transforms._presets import ImageClassification, SemanticSegmentation
    arr = np.random.default_rng(0).integers(0, 256, (3, 70, 90), dtype=np.uint8)
    pil = Image.fromarray(arr.transpose(1, 2, 0))
    for ours, theirs in [
            (_presets.ImageClassification(crop_size=48, resize_size=56),
             ImageClassification(crop_size=48, resize_size=56)),
            (_presets.ImageClassification(crop_size=40, resize_size=50,
                                          interpolation=InterpolationMode.BICUBIC),
             ImageClassification(crop_size=40, resize_size=50, interpolation=TVMode.BICUBIC)),
            (_presets.SemanticSegmentation(resize_size=52),
             SemanticSegmentation(resize_size=52))]:
        assert repr(ours) == repr(theirs)
        np.testing.assert_array_equal(ours(pil).numpy(), theirs(pil).numpy())
        floats = arr.astype(np.float32) / 255
        np.testing.assert_allclose(ours(ember.tensor(floats)).numpy(),
                                   theirs(torch.tensor(floats)).numpy(), atol=1e-5)
        # uint8 tensors: torch resizes them in fixed point, so a pixel may differ by one level
        # (1/255, divided by the smallest std)
        np.testing.assert_allclose(ours(ember.tensor(arr)).numpy(),
                                   theirs(torch.tensor(arr)).numpy(), atol=1 / 255 / 0.224)


def test_registry_functions():
    names = _api.list_models()
    assert names == sorted(names)
    assert _api.list_models(include="resnet1*") == [n for n in names if n.startswith("resnet1")]
    with pytest.raises(ValueError, match="Unknown model foo"):
        _api.get_model_builder("FOO")
    with pytest.raises(ValueError, match="Invalid weight name provided: 'ResNet50'."):
        _api.get_weight("ResNet50")
    with pytest.raises(ValueError, match="couldn't be retrieved"):
        _api.get_weight("Nope_Weights.DEFAULT")


# ---- weights= in the builders -------------------------------------------------------------
import ember.vision.models as M  # noqa: E402


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """An empty hub cache at $TORCH_HOME/hub/checkpoints."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    checkpoints = tmp_path / "hub" / "checkpoints"
    checkpoints.mkdir(parents=True)
    return checkpoints


def _cache_file(hub_cache, weights):
    return hub_cache / weights.url.rsplit("/", 1)[1]


def _same_parameters(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(ember.equal(sa[k], sb[k]) for k in sa)


def test_named_weights_load_from_hub_cache(hub_cache):
    source = M.squeezenet1_1()
    ember.save(source.state_dict(), str(_cache_file(hub_cache, M.SqueezeNet1_1_Weights.DEFAULT)))
    for weights in (M.SqueezeNet1_1_Weights.IMAGENET1K_V1, M.SqueezeNet1_1_Weights.DEFAULT,
                    "IMAGENET1K_V1", "DEFAULT", "SqueezeNet1_1_Weights.IMAGENET1K_V1"):
        assert _same_parameters(M.squeezenet1_1(weights=weights), source), weights
    assert _same_parameters(M.get_model("squeezenet1_1", weights="DEFAULT"), source)
    with pytest.warns(UserWarning, match="'pretrained' is deprecated since 0.13"):
        assert _same_parameters(M.squeezenet1_1(pretrained=True), source)
    with pytest.warns(UserWarning, match="as positional parameter"):
        assert _same_parameters(M.squeezenet1_1(True), source)
    with pytest.warns(UserWarning, match="equivalent to passing `weights=None`"):
        assert not _same_parameters(M.squeezenet1_1(pretrained=False), source)


def test_named_weights_saved_by_torch_load(hub_cache, torch):
    tv = import_torchvision()
    theirs = tv.models.mobilenet_v3_small()
    torch.save(theirs.state_dict(), _cache_file(hub_cache, M.MobileNet_V3_Small_Weights.DEFAULT))
    ours = M.mobilenet_v3_small(weights=M.MobileNet_V3_Small_Weights.DEFAULT)
    for name, value in theirs.state_dict().items():
        assert (ours.state_dict()[name].numpy() == value.numpy()).all(), name


def test_missing_weights_file_says_where_to_put_it(hub_cache):
    with pytest.raises(RuntimeError) as info:
        M.resnet18(weights="DEFAULT")
    message = str(info.value)
    assert "no network is reachable" in message
    assert str(hub_cache / "resnet18-f37072fd.pth") in message
    assert "https://download.pytorch.org/models/resnet18-f37072fd.pth" in message


def test_weights_errors_are_torchvisions(hub_cache):
    with pytest.raises(TypeError, match="Invalid Weight class provided; expected "
                       "ResNet18_Weights but received ResNet50_Weights."):
        M.resnet18(weights=M.ResNet50_Weights.DEFAULT)
    with pytest.raises(KeyError):
        M.resnet18(weights="IMAGENET1K_V7")
    with pytest.raises(ValueError, match="The parameter 'num_classes' expected value 1000 "
                       "but got 10 instead."):
        M.resnet18(weights="DEFAULT", num_classes=10)
    with pytest.raises(ValueError, match="No weights available for model vit_h_14"):
        M.vit_h_14(pretrained=True)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        M.resnet18(weights=str(hub_cache / "nothing.pth"))


def test_local_path_weights_still_work(tmp_path):
    source = M.squeezenet1_1()
    path = tmp_path / "mine.pth"
    ember.save(source.state_dict(), str(path))
    assert _same_parameters(M.squeezenet1_1(weights=str(path)), source)
    assert _same_parameters(M.squeezenet1_1(weights=path), source)


def test_registry_matches_torchvision():
    tv = import_torchvision()
    ours, theirs = M.list_models(), tv.models.list_models()
    assert set(ours) <= set(theirs)
    for name in ours:
        assert M.get_model_weights(name).__name__ == tv.models.get_model_weights(name).__name__
        builder = M.get_model_builder(name)
        assert M.get_model_weights(builder) is M.get_model_weights(name)
        for member in M.get_model_weights(name):
            assert M.get_weight(repr(member)) is member
    segmentation = M.list_models(module=M.segmentation)
    assert segmentation == sorted(tv.models.list_models(module=tv.models.segmentation))
    detection = M.list_models(module=M.detection)
    assert set(detection) <= set(tv.models.list_models(module=tv.models.detection))
    video = M.list_models(module=M.video)
    assert set(video) <= set(tv.models.list_models(module=tv.models.video))
    assert M.list_models(module=M) == [n for n in ours if n not in segmentation
                                       and n not in detection and n not in video]
    assert M.list_models(include=["vgg1*", "resnet5*"], exclude="*_bn") == [
        "resnet50", "vgg11", "vgg13", "vgg16", "vgg19"]


def test_weights_enum_pickles_by_name():
    member = M.ResNet50_Weights.IMAGENET1K_V2
    assert pickle.loads(pickle.dumps(member)) is member
    assert M.ResNet50_Weights.__module__ == "ember.vision.models.resnet"
