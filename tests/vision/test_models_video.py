"""ember.vision.models.video: the video ResNets' state_dict keys, shapes and parameter counts
equal torchvision 0.28's (facts from tests/_torchvision_oracle.py), outputs equal torchvision's
with its weights loaded strictly, and the VideoClassification preset of their weights."""
import numpy as np
import pytest

import ember
from ember.vision.models import video
from tests._torchvision_oracle import import_torchvision
from tests.vision.test_models_families import _to_ember_state
from tests.vision.test_models_more import _digest, fast_init  # noqa: F401 (a fixture)

# name: (number of state_dict entries, number of parameters, sha256("key:shape" lines)[:16])
TORCHVISION = {
    "r3d_18": (122, 33371472, "9430f9be6806e282"),
    "mc3_18": (122, 11695440, "16b5afdc069bb8a6"),
    "r2plus1d_18": (224, 31505325, "247afa1fbd50f74b"),
    "s3d": (464, 8320048, "0996e6e1cfa7771d"),
    "swin3d_t": (185, 28158070, "64e2a646de6ab72e"),
    "swin3d_s": (353, 49816678, "198bebb7b606c2d5"),
    "swin3d_b": (353, 88048984, "7ba215a795b3d2f0"),
}


@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_state_dict_matches_torchvision(name, fast_init):
    model = getattr(video, name)()
    sd = model.state_dict()
    got = (len(sd), sum(p.numel() for p in model.parameters()), _digest(sd))
    assert got == TORCHVISION[name]


def test_registry_and_weights():
    from ember.vision import models as M
    assert M.list_models(module=video) == ["mc3_18", "r2plus1d_18", "r3d_18", "s3d",
                                                "swin3d_b", "swin3d_s", "swin3d_t"]
    weights = M.get_model_weights("r3d_18").DEFAULT
    assert weights is video.R3D_18_Weights.KINETICS400_V1
    assert len(weights.meta["categories"]) == 400 and weights.meta["num_params"] == 33371472


def test_r2plus1d_eval_output_matches_torchvision():
    tv = import_torchvision()
    import torch
    torch.manual_seed(0)
    theirs = tv.models.video.r2plus1d_18(num_classes=6).eval()
    with torch.no_grad():
        for m in theirs.modules():
            if isinstance(m, torch.nn.BatchNorm3d):
                m.running_var.uniform_(0.5, 1.5)
                m.running_mean.normal_(0, 0.1)
    ours = video.r2plus1d_18(num_classes=6).eval()
    ours.load_state_dict(_to_ember_state(theirs.state_dict()), strict=True)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 24, 24)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours(ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_s3d_features_match_torchvision():
    """S3D's head needs 16x224x224 clips (too slow here): its first seven feature layers
    (separable convolutions, max-pools, two inception blocks) with torchvision's weights."""
    tv = import_torchvision()
    import torch
    torch.manual_seed(0)
    theirs = tv.models.video.s3d(num_classes=4).eval()
    with torch.no_grad():
        for m in theirs.modules():
            if isinstance(m, torch.nn.BatchNorm3d):
                m.running_var.uniform_(0.5, 1.5)
                m.running_mean.normal_(0, 0.1)
    ours = video.s3d(num_classes=4).eval()
    ours.load_state_dict(_to_ember_state(theirs.state_dict()), strict=True)
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 32, 32)).astype(np.float32)
    with torch.no_grad():
        expected = theirs.features[:7](torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours.features[:7](ember.tensor(x)).numpy()
    assert got.shape == (1, 480, 2, 4, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_conv3d_norm_activation():
    from ember.vision.ops import Conv3dNormActivation
    from ember.vision.ops.misc import ConvNormActivation
    layer = Conv3dNormActivation(2, 4, kernel_size=(1, 3, 3))
    assert [type(m).__name__ for m in layer] == ["Conv3d", "BatchNorm3d", "ReLU"]
    assert layer[0].padding == (0, 1, 1) and layer[0].bias is None and layer.out_channels == 4
    with pytest.warns(UserWarning, match="Don't use ConvNormActivation directly"):
        ConvNormActivation(2, 4)


def test_mc3_train_forward_and_backward():
    ember.manual_seed(0)
    model = video.mc3_18(num_classes=3).train()
    out = model(ember.randn(2, 3, 2, 16, 16))
    assert tuple(out.shape) == (2, 3)
    out.sum().backward()
    assert model.stem[0].weight.grad is not None
    assert tuple(model.layer2[0].conv1[0].weight.shape) == (128, 64, 1, 3, 3)  # no temporal


def test_video_classification_preset_matches_torchvision():
    tv = import_torchvision()
    import torch
    from ember.vision.transforms._presets import VideoClassification
    # float frames: on uint8 ones ember's bilinear resize without antialiasing rounds ~1% of the
    # values one level away from torch's (a transforms.functional.resize matter, not the preset's)
    frames = np.random.default_rng(0).random((2, 5, 3, 20, 26), dtype=np.float32)
    kwargs = dict(crop_size=(12, 12), resize_size=(16, 18))
    expected = tv.transforms._presets.VideoClassification(**kwargs)(torch.from_numpy(frames))
    ours = VideoClassification(**kwargs)
    got = ours(ember.tensor(frames))
    assert tuple(got.shape) == (2, 3, 5, 12, 12)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    single = ours(ember.tensor(frames[0]))
    assert tuple(single.shape) == (3, 5, 12, 12)
    assert repr(ours) == repr(tv.transforms._presets.VideoClassification(**kwargs))


_SMALL_SWIN3D = dict(patch_size=[2, 4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                     window_size=[2, 3, 3], stochastic_depth_prob=0.1, num_classes=5)


def test_swin3d_eval_output_matches_torchvision():
    """A small video Swin: a (6, 24, 20) clip gives (3, 6, 5) patches, padded to whole
    (2, 3, 3) windows and shifted; after merging, the window shrinks to the 3-high map."""
    tv = import_torchvision()
    import torch
    torch.manual_seed(0)
    theirs = tv.models.video.SwinTransformer3d(**_SMALL_SWIN3D).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    ours = video.SwinTransformer3d(**_SMALL_SWIN3D).eval()
    ours.load_state_dict(_to_ember_state(theirs.state_dict()), strict=True)
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 24, 20)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours(ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_swin3d_train_forward_and_backward():
    ember.manual_seed(0)
    model = video.SwinTransformer3d(**_SMALL_SWIN3D).train()
    out = model(ember.randn(1, 3, 4, 16, 16))
    assert tuple(out.shape) == (1, 5)
    out.sum().backward()
    assert model.features[0][1].attn.relative_position_bias_table.grad is not None
