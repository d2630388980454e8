"""ember.vision.models, the ShuffleNetV2, MNASNet, RegNet, Swin and MaxViT families (and the
torchvision.models.mobilenet re-export): state_dict keys, shapes and parameter counts equal
torchvision 0.28's (facts computed with tests/_torchvision_oracle.py as in test_models_more),
and eval-mode outputs equal torchvision's with the same (random) weights loaded strictly."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.vision.models as M
from tests._torchvision_oracle import import_torchvision
from tests.vision.test_models_more import _digest, fast_init  # noqa: F401 (a fixture)

# name: (number of state_dict entries, number of parameters, sha256("key:shape" lines)[:16])
TORCHVISION = {
    "shufflenet_v2_x0_5": (338, 1366792, "fdb33b2f61579b76"),
    "shufflenet_v2_x1_0": (338, 2278604, "9bd21e2f90c0ee03"),
    "shufflenet_v2_x1_5": (338, 3503624, "9bbadb73bc97932a"),
    "shufflenet_v2_x2_0": (338, 7393996, "55c87ba782b47d6e"),
    "mnasnet0_5": (314, 2218512, "76925572e4a8dcad"),
    "mnasnet0_75": (314, 3170208, "4ad44252e688cda5"),
    "mnasnet1_0": (314, 4383312, "b168e491e6cb97c0"),
    "mnasnet1_3": (314, 6282256, "5d46cd13f984e97a"),
    "regnet_y_400mf": (384, 4344144, "d9b18837689a85e8"),
    "regnet_y_800mf": (340, 6432512, "fe97f3de8f480703"),
    "regnet_y_1_6gf": (626, 11202430, "cb1384eb3381d76a"),
    "regnet_y_3_2gf": (494, 19436338, "c60979b5bdf9d0d5"),
    "regnet_y_8gf": (406, 39381472, "b073548c9ee2f200"),
    "regnet_y_16gf": (428, 83590140, "4647354f6be278b8"),
    "regnet_y_32gf": (472, 145046770, "6ce534b7fa9c08e0"),
    "regnet_y_128gf": (626, 644812894, "7dfa1c5be240ee54"),
    "regnet_x_400mf": (428, 5495976, "c5218b26738897ed"),
    "regnet_x_800mf": (320, 7259656, "6eaf36711ba317b3"),
    "regnet_x_1_6gf": (356, 9190136, "1ae188772cf65e7f"),
    "regnet_x_3_2gf": (482, 15296552, "80874d24d0b36f82"),
    "regnet_x_8gf": (446, 39572648, "bd522f40cf47a0a1"),
    "regnet_x_16gf": (428, 54278536, "8f7eafbae085f169"),
    "regnet_x_32gf": (446, 107811560, "bfaa4c188f3aa255"),
    "swin_t": (185, 28288354, "eacc56dc7fb6367e"),
    "swin_s": (353, 49606258, "b42c245374abfe17"),
    "swin_b": (353, 87768224, "a1f9c9c2656c3bbe"),
    "swin_v2_t": (233, 28351570, "d3a01ce99350b891"),
    "swin_v2_s": (449, 49737442, "161a8bfcebc5097e"),
    "swin_v2_b": (449, 87930848, "8bc3fe93edeef7e1"),
    "maxvit_t": (582, 30919624, "e1d9d787c64c101a"),
}


@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_state_dict_matches_torchvision(name, fast_init):
    model = getattr(M, name)()
    sd = model.state_dict()
    got = (len(sd), sum(p.numel() for p in model.parameters()), _digest(sd))
    assert got == TORCHVISION[name]


def test_mobilenet_module_reexports_both_versions():
    from ember.vision.models import mobilenet
    assert mobilenet.mobilenet_v2 is M.mobilenet_v2
    assert mobilenet.MobileNetV3 is M.MobileNetV3
    assert "mobilenet_v3_small" in mobilenet.__all__ and "MobileNetV2" in mobilenet.__all__


def test_builders_are_registered_with_their_weights():
    assert {"shufflenet_v2_x0_5", "mnasnet1_3", "regnet_y_128gf"} <= set(M.list_models())
    assert M.get_model_weights("regnet_x_400mf") is M.RegNet_X_400MF_Weights
    assert M.get_model_weights("mnasnet0_75") is M.MNASNet0_75_Weights
    assert M.RegNet_Y_128GF_Weights.DEFAULT.meta["num_params"] == 644812894
    with pytest.raises(ValueError, match="No weights available for model regnet_y_128gf"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            M.regnet_y_128gf(pretrained=True)


def _to_ember_state(torch_sd):
    """torchvision's state_dict as ember tensors, its per-module metadata (versions) kept."""
    out = OrderedDict((k, ember.tensor(v.detach().numpy().copy())) for k, v in torch_sd.items())
    out._metadata = getattr(torch_sd, "_metadata", None)
    return out


def _randomise_batchnorm_stats(torch_model, torch):
    gen = torch.Generator().manual_seed(1)
    for m in torch_model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)


@pytest.mark.parametrize("name, size", [("shufflenet_v2_x0_5", 32), ("mnasnet0_5", 32),
                                        ("regnet_y_400mf", 32)])
def test_eval_output_matches_torchvision(name, size):
    tv = import_torchvision()
    import torch
    torch.manual_seed(0)
    theirs = getattr(tv.models, name)(num_classes=10).eval()
    with torch.no_grad():
        _randomise_batchnorm_stats(theirs, torch)
    ours = getattr(M, name)(num_classes=10).eval()
    ours.load_state_dict(_to_ember_state(theirs.state_dict()), strict=True)
    x = np.random.default_rng(0).standard_normal((2, 3, size, size)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours(ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["shufflenet_v2_x0_5", "mnasnet0_5", "regnet_y_400mf"])
def test_train_forward_and_backward(name):
    ember.manual_seed(0)
    model = getattr(M, name)(num_classes=4).train()
    out = model(ember.randn(2, 3, 32, 32))
    assert tuple(out.shape) == (2, 4)
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_mnasnet_refuses_state_without_version(fast_init):
    model = M.mnasnet0_5()
    plain = dict(model.state_dict())  # a plain dict has lost the version metadata
    with pytest.raises(ValueError, match="version should be set to 1 or 2 instead of None"):
        model.load_state_dict(plain)


def test_mnasnet_loads_version_1_checkpoints_with_the_old_stem():
    ember.manual_seed(0)
    old = M.mnasnet0_5(num_classes=3)
    # torchvision's first version: the stem kept alpha=1 widths (32, 16) whatever alpha was
    from ember.vision.models.mnasnet import _stem, _stack, _BN_MOMENTUM, _get_depths
    for i, layer in enumerate(_stem([32, 16]) + [
            _stack(16, _get_depths(0.5)[2], 3, 2, 3, 3, _BN_MOMENTUM)]):
        old.layers[i] = layer
    sd = old.state_dict()
    for meta in sd._metadata.values():
        meta["version"] = 1
    new = M.mnasnet0_5(num_classes=3)
    with pytest.warns(UserWarning, match="A new version of MNASNet model has been implemented"):
        new.load_state_dict(sd)
    assert tuple(new.layers[0].weight.shape) == (32, 3, 3, 3) and new._version == 1
    x = ember.randn(1, 3, 32, 32)
    with ember.no_grad():
        np.testing.assert_allclose(new.eval()(x).numpy(), old.eval()(x).numpy(), rtol=1e-5)


_SMALL_SWIN = dict(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                   window_size=[4, 4], stochastic_depth_prob=0.1, num_classes=5)


@pytest.mark.parametrize("version", [1, 2])
def test_swin_eval_output_matches_torchvision(version):
    """A small Swin (two stages, 4x4 windows) with torchvision's weights: shifted windows,
    padding to whole windows (36x44 input) and both relative position biases."""
    tv = import_torchvision()
    import torch
    from torchvision.models import swin_transformer as theirs_module
    from ember.vision.models import swin_transformer as ours_module

    def config(module):
        if version == 1:
            return _SMALL_SWIN
        return dict(_SMALL_SWIN, block=module.SwinTransformerBlockV2,
                    downsample_layer=module.PatchMergingV2)
    assert tv.models.swin_transformer is theirs_module
    torch.manual_seed(0)
    theirs = theirs_module.SwinTransformer(**config(theirs_module)).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    ours = ours_module.SwinTransformer(**config(ours_module)).eval()
    ours.load_state_dict(_to_ember_state(theirs.state_dict()), strict=True)
    for height, width in ((32, 40), (36, 44)):
        x = np.random.default_rng(0).standard_normal((2, 3, height, width)).astype(np.float32)
        with torch.no_grad():
            expected = theirs(torch.from_numpy(x)).numpy()
        with ember.no_grad():
            got = ours(ember.tensor(x)).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_swin_v2_train_forward_and_backward():
    from ember.vision.models import swin_transformer as S
    ember.manual_seed(0)
    model = S.SwinTransformer(**dict(_SMALL_SWIN, block=S.SwinTransformerBlockV2,
                                     downsample_layer=S.PatchMergingV2)).train()
    out = model(ember.randn(2, 3, 32, 32))
    assert tuple(out.shape) == (2, 5)
    out.sum().backward()
    attn = model.features[1][1].attn
    assert attn.logit_scale.grad is not None and attn.cpb_mlp[0].weight.grad is not None
    # the key bias takes no part in V2's attention, so it gets no gradient
    third = attn.qkv.bias.numel() // 3
    assert float(attn.qkv.bias.grad[third:2 * third].abs().sum()) == 0.0


_SMALL_MAXVIT = dict(input_size=(32, 32), stem_channels=8, partition_size=2, block_channels=[8, 16],
                     block_layers=[1, 2], head_dim=4, stochastic_depth_prob=0.2, num_classes=5)


def test_maxvit_eval_output_matches_torchvision():
    """A small MaxViT (2x2 windows and grids, two blocks) with torchvision's weights."""
    tv = import_torchvision()
    import torch
    from ember.vision.models.maxvit import MaxVit
    torch.manual_seed(0)
    theirs = tv.models.maxvit.MaxVit(**_SMALL_MAXVIT).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    ours = MaxVit(**_SMALL_MAXVIT).eval()
    ours.load_state_dict(_to_ember_state(theirs.state_dict()), strict=True)
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours(ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_maxvit_train_backward_and_size_check():
    from ember.vision.models.maxvit import MaxVit
    ember.manual_seed(0)
    model = MaxVit(**_SMALL_MAXVIT).train()
    out = model(ember.randn(2, 3, 32, 32))
    out.sum().backward()
    attn = model.blocks[1].layers[1].layers.grid_attention.attn_layer[1]
    assert attn.relative_position_bias_table.grad is not None
    assert tuple(attn.relative_position_index.shape) == (4, 4)
    with pytest.raises(ValueError, match=r"Input size \(5, 5\) of block 1 is not divisible"):
        MaxVit(**dict(_SMALL_MAXVIT, input_size=(40, 40)))


def test_mnasnet_loads_a_torchvision_checkpoint_file(tmp_path):
    """The saved file keeps the per-module versions MNASNet's loading needs."""
    tv = import_torchvision()
    import torch
    torch.save(tv.models.mnasnet0_5(num_classes=3).state_dict(), tmp_path / "m.pth")
    model = M.mnasnet0_5(weights=str(tmp_path / "m.pth"), num_classes=3)
    assert model._version == 2
