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
    tv = import_torchvision()
    import numpy as np
    from torchvision.transforms._presets import ImageClassification, SemanticSegmentation
    from torchvision.transforms import InterpolationMode as TVMode
    arr = np.random.default_rng(0).integers(0, 256, (3, 70, 90), dtype=np.uint8)
    for ours, theirs in [
            (_presets.ImageClassification(crop_size=48, resize_size=56),
             ImageClassification(crop_size=48, resize_size=56)),
            (_presets.ImageClassification(crop_size=40, resize_size=50,
                                          interpolation=InterpolationMode.BICUBIC),
             ImageClassification(crop_size=40, resize_size=50, interpolation=TVMode.BICUBIC)),
            (_presets.SemanticSegmentation(resize_size=52),
             SemanticSegmentation(resize_size=52))]:
        got = ours(ember.tensor(arr)).numpy()
        want = theirs(torch.tensor(arr)).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=2e-2)  # resize rounding on uint8
        assert repr(ours) == repr(theirs).replace("torchvision.", "")
    assert tv is not None


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
