"""ember.vision.models, the newer architectures: state_dict keys, shapes and parameter counts
equal torchvision 0.28's (facts read off torchvision: the key count, the parameter count and a
digest of the "key:shape" lines), strict loading of saved files, and builder behaviour."""
import hashlib
import warnings

import numpy as np
import pytest

import ember
import ember.nn.init as einit
import ember.vision.models as M

# name: (number of state_dict entries, number of parameters, sha256("key:shape" lines)[:16])
TORCHVISION = {
    "resnext50_32x4d": (320, 25028904, "7140c3dbddac5382"),
    "resnext101_32x8d": (626, 88791336, "d8d4f6f347fc1097"),
    "wide_resnet50_2": (320, 68883240, "31ec3ad967f7b3b9"),
    "densenet121": (727, 7978856, "604b78c2bbed70c0"),
    "densenet161": (967, 28681000, "3f911412d51f2ecc"),
    "mobilenet_v3_small": (244, 2542856, "45e84af7b7bba021"),
    "mobilenet_v3_large": (312, 5483032, "9cb349b03a916ada"),
    "efficientnet_b0": (360, 5288548, "e1f159b97ca4b202"),
    "convnext_tiny": (182, 28589128, "5c1934c7e7f217f7"),
    "vit_b_16": (152, 86567656, "c10467b1a130b99c"),
    "googlenet": (364, 13004888, "563d3cdadc5f3358"),
    "inception_v3": (580, 27161264, "f17cfe285ae35639"),
}


@pytest.fixture
def fast_init(monkeypatch):
    """Skip weight initialisation: only names and shapes are under test where this is used."""
    for name in ("kaiming_uniform_", "kaiming_normal_", "uniform_", "normal_", "trunc_normal_",
                 "constant_", "zeros_", "ones_", "xavier_uniform_"):
        monkeypatch.setattr(einit, name, lambda t, *a, **k: t)


def _digest(sd):
    text = "\n".join(f"{k}:{tuple(v.shape)}" for k, v in sd.items())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_state_dict_matches_torchvision(name, fast_init):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # googlenet's/inception's init notice
        model = getattr(M, name)()
    sd = model.state_dict()
    got = (len(sd), sum(p.numel() for p in model.parameters()), _digest(sd))
    assert got == TORCHVISION[name]


def test_known_keys(fast_init):
    assert "features.denseblock1.denselayer1.norm1.running_var" in M.densenet121().state_dict()
    assert "features.1.0.block.1.fc1.weight" in M.efficientnet_b0().state_dict()
    sd = M.vit_b_16().state_dict()
    assert tuple(sd["encoder.pos_embedding"].shape) == (1, 197, 768)
    assert tuple(sd["encoder.layers.encoder_layer_11.self_attention.in_proj_weight"].shape) \
        == (2304, 768)
    assert tuple(M.convnext_tiny().state_dict()["features.1.0.layer_scale"].shape) == (96, 1, 1)


def test_fixed_hyper_parameters_refuse_other_values(fast_init):
    with pytest.raises(ValueError, match="The parameter 'groups' expected value 32 but got 8"):
        M.resnext50_32x4d(groups=8)


def _tiny_state(model, seed=0):
    rng = np.random.default_rng(seed)
    return {k: ember.tensor(rng.standard_normal(tuple(v.shape)).astype(np.float32) * 0.1)
            if v.dtype == ember.float32 else v for k, v in model.state_dict().items()}


def test_densenet_loads_legacy_key_names(tmp_path, fast_init):
    model = M.densenet121(num_classes=3)
    sd = _tiny_state(model)
    # the published files predate num_batches_tracked and spell norm1 as norm.1
    legacy = {k.replace("norm1.", "norm.1.").replace("conv2.", "conv.2."): v
              for k, v in sd.items() if not k.endswith("num_batches_tracked")}
    assert "features.denseblock1.denselayer1.norm.1.weight" in legacy
    ember.save(legacy, tmp_path / "d.pth")
    loaded = M.densenet121(num_classes=3, weights=str(tmp_path / "d.pth"))
    for k, v in loaded.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        assert np.array_equal(v.numpy(), sd[k].numpy()), k


def test_googlenet_weights_drop_aux_heads(tmp_path):
    model = M.googlenet(init_weights=False, num_classes=5)
    ember.save(model.state_dict(), tmp_path / "g.pth")
    loaded = M.googlenet(weights=str(tmp_path / "g.pth"), num_classes=5)
    assert loaded.aux1 is None and loaded.aux2 is None and not loaded.aux_logits
    assert loaded.transform_input  # as torchvision sets it for pretrained weights
    with pytest.raises(ValueError, match="'aux_logits' expected value True but got False"):
        M.googlenet(weights=str(tmp_path / "g.pth"), aux_logits=False)
    # a file without the auxiliary heads loads too
    ember.save(loaded.state_dict(), tmp_path / "g2.pth")
    again = M.googlenet(weights=str(tmp_path / "g2.pth"), num_classes=5)
    assert again.aux1 is None


def test_googlenet_outputs_and_shapes():
    ember.manual_seed(0)
    model = M.googlenet(init_weights=False, num_classes=7)
    x = ember.randn(2, 3, 64, 64)
    out = model.train()(x)
    assert type(out).__name__ == "GoogLeNetOutputs"
    assert out._fields == ("logits", "aux_logits2", "aux_logits1")
    assert [tuple(t.shape) for t in out] == [(2, 7)] * 3
    with ember.no_grad():
        assert tuple(model.eval()(x).shape) == (2, 7)


@pytest.mark.parametrize("name", ["mobilenet_v3_small", "efficientnet_b0", "convnext_tiny"])
def test_small_forward_and_backward(name):
    ember.manual_seed(0)
    model = getattr(M, name)(num_classes=4)
    x = ember.randn(2, 3, 32, 32)
    out = model.train()(x)
    assert tuple(out.shape) == (2, 4)
    out.sum().backward()
    assert model.features[0][0].weight.grad is not None


def test_vit_rejects_wrong_image_size(fast_init):
    model = M.vit_b_16(num_classes=2)
    with pytest.raises(AssertionError, match="Wrong image height! Expected 224 but got 32!"):
        model(ember.zeros(1, 3, 32, 224))


def test_inception_v3_computes_torchvisions_outputs(torch):
    from tests._torchvision_oracle import import_torchvision
    import_torchvision()
    import torchvision.models as theirs
    torch.manual_seed(0)
    reference = theirs.inception_v3(init_weights=False, num_classes=10).eval()
    model = M.inception_v3(init_weights=False, num_classes=10).eval()
    model.load_state_dict({k: ember.tensor(v.numpy()) for k, v in
                           reference.state_dict().items()}, strict=True)
    x = np.random.default_rng(0).standard_normal((1, 3, 75, 75)).astype(np.float32)
    with torch.no_grad():
        expected = reference(torch.tensor(x)).numpy()
        grid = np.random.default_rng(1).standard_normal((2, 768, 17, 17)).astype(np.float32)
        expected_aux = reference.AuxLogits(torch.tensor(grid)).numpy()
    np.testing.assert_allclose(model(ember.tensor(x)).detach().numpy(), expected,
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(model.AuxLogits(ember.tensor(grid)).detach().numpy(),
                               expected_aux, rtol=1e-4, atol=1e-4)
    model.train()
    out = model.eager_outputs(ember.ones(2, 10), ember.zeros(2, 10))
    assert type(out).__name__ == "InceptionOutputs" and out.aux_logits.shape == (2, 10)


def test_inception_v3_builder_rules(tmp_path, fast_init):
    with pytest.warns(FutureWarning, match="default weight initialization of inception_v3"):
        M.Inception3(num_classes=3, aux_logits=False)
    with pytest.raises(ValueError, match="length of inception_blocks should be 7 instead of 2"):
        M.Inception3(inception_blocks=[1, 2], init_weights=False)
    model = M.inception_v3(init_weights=False, num_classes=4)
    ember.save(model.state_dict(), tmp_path / "i.pth")
    loaded = M.inception_v3(weights=str(tmp_path / "i.pth"), num_classes=4)
    assert loaded.AuxLogits is not None and loaded.transform_input
    with pytest.raises(ValueError, match="'aux_logits' expected value True but got False"):
        M.inception_v3(weights=str(tmp_path / "i.pth"), num_classes=4, aux_logits=False)
    assert M.get_model_weights("inception_v3") is M.Inception_V3_Weights
