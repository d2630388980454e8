"""ember.vision.models: state_dict keys and shapes equal torchvision's (checked against
torchvision-equivalent models written here in torch), strict loading, forwards on tiny inputs,
and the weights= argument."""
import numpy as np
import pytest

import ember
import ember.nn.init as einit
import ember.vision.models as M

torch = pytest.importorskip("torch")
tnn = torch.nn


@pytest.fixture
def fast_init(monkeypatch):
    """Skip weight initialisation (big Linear layers take seconds to fill); only shapes and
    names are under test where this is used."""
    for name in ("kaiming_uniform_", "kaiming_normal_", "uniform_", "normal_", "constant_",
                 "zeros_", "ones_"):
        monkeypatch.setattr(einit, name, lambda t, *a, **k: t)


# ---- torchvision-equivalent references, in torch ------------------------------------------
class TBasic(tnn.Module):
    expansion = 1

    def __init__(self, inp, planes, stride=1, down=None):
        super().__init__()
        self.conv1 = tnn.Conv2d(inp, planes, 3, stride, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(planes)
        self.relu = tnn.ReLU(inplace=True)
        self.conv2 = tnn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(planes)
        self.downsample = down

    def forward(self, x):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class TBottle(tnn.Module):
    expansion = 4

    def __init__(self, inp, planes, stride=1, down=None):
        super().__init__()
        self.conv1 = tnn.Conv2d(inp, planes, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(planes)
        self.conv2 = tnn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(planes)
        self.conv3 = tnn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = tnn.BatchNorm2d(planes * 4)
        self.relu = tnn.ReLU(inplace=True)
        self.downsample = down


class TResNet(tnn.Module):
    def __init__(self, block, layers, num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = tnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = tnn.BatchNorm2d(64)
        self.relu = tnn.ReLU(inplace=True)
        self.maxpool = tnn.MaxPool2d(3, 2, 1)
        for i, (planes, n) in enumerate(zip((64, 128, 256, 512), layers)):
            stride = 1 if i == 0 else 2
            down = None
            if stride != 1 or self.inplanes != planes * block.expansion:
                down = tnn.Sequential(tnn.Conv2d(self.inplanes, planes * block.expansion, 1,
                                                 stride, bias=False),
                                      tnn.BatchNorm2d(planes * block.expansion))
            blocks = [block(self.inplanes, planes, stride, down)]
            self.inplanes = planes * block.expansion
            blocks += [block(self.inplanes, planes) for _ in range(1, n)]
            setattr(self, f"layer{i + 1}", tnn.Sequential(*blocks))
        self.avgpool = tnn.AdaptiveAvgPool2d((1, 1))
        self.fc = tnn.Linear(512 * block.expansion, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def t_vgg11(bn):
    layers, c = [], 3
    for v in [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]:
        if v == "M":
            layers.append(tnn.MaxPool2d(2, 2))
        else:
            layers += [tnn.Conv2d(c, v, 3, padding=1)] + ([tnn.BatchNorm2d(v)] if bn else [])
            layers.append(tnn.ReLU(True))
            c = v
    m = tnn.Module()
    m.features = tnn.Sequential(*layers)
    m.avgpool = tnn.AdaptiveAvgPool2d(7)
    m.classifier = tnn.Sequential(tnn.Linear(25088, 4096), tnn.ReLU(), tnn.Dropout(),
                                  tnn.Linear(4096, 4096), tnn.ReLU(), tnn.Dropout(),
                                  tnn.Linear(4096, 1000))
    return m


def t_alexnet():
    m = tnn.Module()
    m.features = tnn.Sequential(
        tnn.Conv2d(3, 64, 11, 4, 2), tnn.ReLU(), tnn.MaxPool2d(3, 2),
        tnn.Conv2d(64, 192, 5, padding=2), tnn.ReLU(), tnn.MaxPool2d(3, 2),
        tnn.Conv2d(192, 384, 3, padding=1), tnn.ReLU(), tnn.Conv2d(384, 256, 3, padding=1),
        tnn.ReLU(), tnn.Conv2d(256, 256, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(3, 2))
    m.avgpool = tnn.AdaptiveAvgPool2d(6)
    m.classifier = tnn.Sequential(tnn.Dropout(), tnn.Linear(9216, 4096), tnn.ReLU(),
                                  tnn.Dropout(), tnn.Linear(4096, 4096), tnn.ReLU(),
                                  tnn.Linear(4096, 1000))
    return m


def t_squeezenet1_1():
    def fire(i, s, e1, e3):
        f = tnn.Module()
        f.squeeze, f.squeeze_activation = tnn.Conv2d(i, s, 1), tnn.ReLU()
        f.expand1x1, f.expand1x1_activation = tnn.Conv2d(s, e1, 1), tnn.ReLU()
        f.expand3x3, f.expand3x3_activation = tnn.Conv2d(s, e3, 3, padding=1), tnn.ReLU()
        return f
    m = tnn.Module()
    pool = lambda: tnn.MaxPool2d(3, 2, ceil_mode=True)  # noqa: E731
    m.features = tnn.Sequential(
        tnn.Conv2d(3, 64, 3, 2), tnn.ReLU(), pool(), fire(64, 16, 64, 64),
        fire(128, 16, 64, 64), pool(), fire(128, 32, 128, 128), fire(256, 32, 128, 128),
        pool(), fire(256, 48, 192, 192), fire(384, 48, 192, 192), fire(384, 64, 256, 256),
        fire(512, 64, 256, 256))
    m.classifier = tnn.Sequential(tnn.Dropout(), tnn.Conv2d(512, 1000, 1), tnn.ReLU(),
                                  tnn.AdaptiveAvgPool2d(1))
    return m


def t_mobilenet_v2():
    def cna(i, o, k=3, s=1, g=1):
        return tnn.Sequential(tnn.Conv2d(i, o, k, s, (k - 1) // 2, groups=g, bias=False),
                              tnn.BatchNorm2d(o), tnn.ReLU6())
    feats, c = [cna(3, 32, s=2)], 32
    for t, o, n, s in [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                       [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]:
        for i in range(n):
            hid = c * t
            block = tnn.Module()
            layers = ([cna(c, hid, 1)] if t != 1 else []) + [
                cna(hid, hid, s=s if i == 0 else 1, g=hid), tnn.Conv2d(hid, o, 1, bias=False),
                tnn.BatchNorm2d(o)]
            block.conv = tnn.Sequential(*layers)
            feats.append(block)
            c = o
    feats.append(cna(c, 1280, 1))
    m = tnn.Module()
    m.features = tnn.Sequential(*feats)
    m.classifier = tnn.Sequential(tnn.Dropout(0.2), tnn.Linear(1280, 1000))
    return m


REFERENCES = {
    "resnet18": lambda: TResNet(TBasic, [2, 2, 2, 2]),
    "resnet34": lambda: TResNet(TBasic, [3, 4, 6, 3]),
    "resnet50": lambda: TResNet(TBottle, [3, 4, 6, 3]),
    "vgg11": lambda: t_vgg11(False),
    "vgg11_bn": lambda: t_vgg11(True),
    "alexnet": t_alexnet,
    "squeezenet1_1": t_squeezenet1_1,
    "mobilenet_v2": t_mobilenet_v2,
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_state_dict_keys_and_shapes_match_torchvision(name, fast_init):
    with torch.device("meta"):
        ref = REFERENCES[name]().state_dict()
    ours = getattr(M, name)().state_dict()
    assert list(ours) == list(ref)
    assert [tuple(v.shape) for v in ours.values()] == [tuple(v.shape) for v in ref.values()]


def test_resnet18_known_keys_and_forward_parity(fast_init):
    torch.manual_seed(0)
    ref = TResNet(TBasic, [2, 2, 2, 2]).eval()
    for m in ref.modules():  # non-trivial running statistics
        if isinstance(m, tnn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model = M.resnet18()
    sd = model.state_dict()
    for key in ("conv1.weight", "bn1.running_mean", "bn1.num_batches_tracked",
                "layer1.0.conv1.weight", "layer2.0.downsample.0.weight",
                "layer4.1.bn2.bias", "fc.weight", "fc.bias"):
        assert key in sd
    assert len(sd) == 122 and tuple(sd["fc.weight"].shape) == (1000, 512)
    result = model.load_state_dict(
        {k: ember.tensor(v.numpy()) for k, v in ref.state_dict().items()}, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
    model.eval()
    with ember.no_grad():
        out = model(ember.tensor(x))
    assert out.shape == (1, 1000)
    with torch.no_grad():
        expected = ref(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name,shape", [("mobilenet_v2", (1, 3, 32, 32)),
                                        ("squeezenet1_1", (1, 3, 64, 64)),
                                        ("lenet", (2, 1, 28, 28)),
                                        ("resnet50", (1, 3, 32, 32))])
def test_forward_shapes(name, shape):
    model = getattr(M, name)(num_classes=7).eval()
    with ember.no_grad():
        out = model(ember.randn(*shape))
    assert out.shape == (shape[0], 7) and bool(ember.isfinite(out).all())


def test_big_models_forward_shape(fast_init):
    for name in ("alexnet", "vgg11_bn"):
        model = getattr(M, name)(num_classes=5).eval()
        for p in model.parameters():  # uninitialised memory could hold anything
            p.data.zero_()
        with ember.no_grad():
            assert model(ember.randn(1, 3, 64, 64)).shape == (1, 5)


def test_training_step_lenet():
    model = M.lenet()
    x, y = ember.randn(4, 1, 28, 28), ember.tensor([0, 1, 2, 3])
    loss = ember.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    assert model.conv1.weight.grad is not None


def test_weights_argument(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))  # an empty hub cache
    with pytest.raises(RuntimeError, match="not in the cache, and ember does not download"):
        M.squeezenet1_1(weights="IMAGENET1K_V1")
    with pytest.warns(UserWarning, match="'pretrained' is deprecated"), \
            pytest.raises(RuntimeError, match="squeezenet1_1-b8a52dc0.pth"):
        M.squeezenet1_1(pretrained=True)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        M.lenet(weights=str(tmp_path / "missing.pth"))
    src = M.lenet()
    path = str(tmp_path / "lenet.pth")
    ember.save(src.state_dict(), path)
    loaded = M.lenet(weights=path)
    assert ember.equal(loaded.fc3.weight, src.fc3.weight)


def test_reprs_use_torchvision_class_names():
    text = repr(M.mobilenet_v2())
    assert "(0): Conv2dNormActivation(" in text and "InvertedResidual(" in text
    assert repr(M.squeezenet1_1().features[3]).startswith("Fire(")


def test_resnet_forward_annotations_show_in_traced_code():
    """torchvision annotates ResNet's forward (x: Tensor) -> Tensor; fx writes that into the
    traced code, which the FX conv-bn fuser tutorial prints."""
    code = ember.fx.symbolic_trace(M.resnet18().eval()).code
    assert "def forward(self, x : torch.Tensor) -> torch.Tensor:" in code
