"""timm's models on ember through `python -m ember.compat` (skipped when timm is not installed,
as in CI): a ResNet, a ViT, a ConvNeXt, an EfficientNet, a MobileNetV3, a RegNet and a Swin
transformer, built by `timm.create_model` from the same weights as in PyTorch, each run a
training-mode forward and backward; losses and gradient sums must agree. Stochastic depth is
off (its random draws are not PyTorch's stream).

Under PyTorch the installed torchvision wheel's compiled ops do not load on the CPU build of
torch; the script stubs its one failing module as tests/_torchvision_oracle.py does."""
import importlib.util
import json
import numpy as np
import pytest

from tests.compat._script_result import script_result

pytestmark = pytest.mark.skipif(importlib.util.find_spec("timm") is None,
                                reason="timm is not installed")

# (name, keyword arguments, input size): small inputs keep each model to about a second
MODELS = [
    ("resnet18", {}, 64),
    ("vit_tiny_patch16_224", {"img_size": 64}, 64),
    ("convnext_atto", {}, 64),
    ("efficientnet_b0", {}, 64),
    ("mobilenetv3_small_100", {}, 64),
    ("regnetx_002", {}, 64),
    ("swin_tiny_patch4_window7_224", {"img_size": 112}, 112),
]

SCRIPT = r'''
import json, os, sys, types
import numpy as np
if "torch" not in sys.modules:  # PyTorch: see the test's docstring
    name = "torchvision._meta_registrations"
    sys.modules[name] = types.ModuleType(name)
import torch, timm
weights, models = sys.argv[1], json.loads(sys.argv[2])
out = {}
for name, kwargs, size in models:
    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, num_classes=10, drop_path_rate=0.0,
                              **kwargs)
    path = os.path.join(weights, name + ".npz")
    if os.path.exists(path):
        saved = np.load(path)
        model.load_state_dict({k: torch.tensor(saved[k]) for k in saved.files})
    else:
        np.savez(path, **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    model.train()
    x = torch.tensor(np.random.RandomState(0).randn(2, 3, size, size).astype(np.float32))
    loss = (model(x) * torch.arange(10.0)).sum()
    loss.backward()
    grads = sum(p.grad.double().abs().sum().item() for p in model.parameters()
                if p.grad is not None)
    out[name] = [loss.item(), grads]
print("RESULT " + json.dumps(out))
'''


def _run(tmp_path, *launcher):
    return script_result(tmp_path / "models.py", [tmp_path, json.dumps(MODELS)], *launcher)


def test_timm_models_forward_and_backward_as_in_pytorch(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "models.py").write_text(SCRIPT)
    theirs = _run(tmp_path)  # PyTorch first: it writes the weights both runs load
    ours = _run(tmp_path, "-m", "ember.compat")
    assert set(ours) == set(theirs)
    for name in theirs:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-4, err_msg=name)
