"""SEEDS.md, "Modules, training, evaluation" and "Images", written as a PyTorch user would
(`import ember as torch`), plus the parity of those steps with PyTorch itself."""
import math

import numpy as np
import pytest

import ember as torch
import ember.nn as nn
import ember.nn.functional as F


class Simple(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
        x = self.drop(x.view(x.size(0), -1))
        return self.fc(x)


def test_module_basics_and_conv_repr():
    model = Simple()
    assert repr(model.conv1) == ("Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), "
                                 "padding=(1, 1), bias=False)")
    names = [n for n, _ in model.named_parameters()]
    assert names == ["conv1.weight", "bn.weight", "bn.bias", "fc.weight", "fc.bias"]
    assert len(list(model.parameters())) == 5
    out = model(torch.randn(2, 3, 8, 8))
    assert out.shape == torch.Size([2, 10]) and out.requires_grad


def test_eval_and_train_switch_dropout_and_batchnorm_independently_of_no_grad():
    torch.manual_seed(0)
    model = Simple()
    x = torch.randn(4, 3, 8, 8)
    model.train()
    a, b = model(x), model(x)
    assert not torch.equal(a, b)  # dropout and batch statistics differ per call
    model.eval()
    c, d = model(x), model(x)
    assert torch.equal(c, d)  # no dropout; running statistics
    with torch.no_grad():
        e = model(x)
    assert torch.equal(c, e) and not e.requires_grad and c.requires_grad
    before = model.bn.running_mean.clone()
    model.train()
    with torch.no_grad():
        model(x)  # no_grad does not stop BatchNorm from updating in train mode
    assert not torch.equal(before, model.bn.running_mean)


def test_training_step_lr_one_and_zero_grad_forms():
    torch.manual_seed(0)
    model = Simple()
    for m in model.parameters():
        m.data.fill_(0.1)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    images, targets = torch.randn(4, 3, 8, 8), torch.tensor([1, 0, 3, 9])
    model.eval()  # deterministic forward: compare the step with "old - grad" exactly
    loss = criterion(model(images), targets)
    loss.backward()
    old = [p.detach().clone() for p in model.parameters()]
    grads = [p.grad.clone() for p in model.parameters()]
    optimizer.step()
    for p, o, g in zip(model.parameters(), old, grads):
        assert torch.equal(p.detach(), o - g)
    optimizer.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    criterion(model(images), targets).backward()
    model.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in model.parameters())


def test_gradients_match_torch_with_parameters_filled():
    real = pytest.importorskip("torch")
    outs = []
    for lib in (torch, real):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3, 1, padding=1, bias=False),
                                lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 5))
        for m in net.parameters():
            m.data.fill_(0.1)
        x = lib.tensor(np.linspace(-1, 1, 2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4))
        loss = lib.nn.CrossEntropyLoss()(net(x), lib.tensor([1, 3]))
        loss.backward()
        outs.append([p.grad.numpy().copy() for p in net.parameters()] + [loss.item()])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_transfer_learning_freeze_replace_fc_and_local_weights(tmp_path):
    from ember.vision import models
    source = models.resnet18()
    path = tmp_path / "resnet18.pth"
    torch.save(source.state_dict(), path)
    model = models.resnet18(weights=str(path))  # "pretrained" from a local file
    for p, q in zip(model.parameters(), source.parameters()):
        assert torch.equal(p, q)
    for p in model.parameters():
        p.requires_grad = False
    model.fc = nn.Linear(512, 100)
    assert all(p.requires_grad for p in model.fc.parameters())
    optimizer = torch.optim.SGD(model.fc.parameters(), lr=1e-2, momentum=0.9)
    frozen = model.conv1.weight.clone()
    out = model(torch.randn(2, 3, 32, 32))
    nn.CrossEntropyLoss()(out, torch.tensor([3, 7])).backward()
    optimizer.step()
    assert model.conv1.weight.grad is None and torch.equal(model.conv1.weight, frozen)
    with pytest.raises(RuntimeError, match="download"):
        models.resnet18(weights="IMAGENET1K_V1")


def test_all_parameters_frozen_gives_output_without_grad():
    model = nn.Linear(3, 2)
    for p in model.parameters():
        p.requires_grad = False
    assert not model(torch.randn(1, 3)).requires_grad


@pytest.mark.parametrize("shape", [(64, 32), (16, 8, 3, 3)])
def test_init_formulas(shape):
    torch.manual_seed(0)
    w = torch.empty(*shape)
    fan_in = shape[1] * (math.prod(shape[2:]) if len(shape) > 2 else 1)
    fan_out = shape[0] * (math.prod(shape[2:]) if len(shape) > 2 else 1)
    gain = nn.init.calculate_gain("relu")
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    nn.init.xavier_uniform_(w, gain=gain)
    assert float(w.abs().max()) <= a and float(w.abs().max()) > 0.8 * a
    nn.init.kaiming_uniform_(w, mode="fan_in", nonlinearity="relu")
    bound = gain * math.sqrt(3.0 / fan_in)
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.8 * bound
    big = torch.empty(400, 300)
    nn.init.xavier_normal_(big, gain=2.0)
    assert abs(float(big.std()) - 2.0 * math.sqrt(2.0 / 700)) < 0.05 * 2.0 * math.sqrt(2.0 / 700)
    nn.init.kaiming_normal_(big, mode="fan_out", nonlinearity="relu")
    assert abs(float(big.std()) - gain / math.sqrt(400)) < 0.05 * gain / math.sqrt(400)


def test_default_layer_init_bounds():
    lin = nn.Linear(50, 20)
    bound = 1 / math.sqrt(50)  # kaiming_uniform_(a=sqrt(5)) gives 1/sqrt(fan_in)
    assert float(lin.weight.detach().abs().max()) <= bound
    assert float(lin.bias.detach().abs().max()) <= bound
    conv = nn.Conv2d(4, 6, 3)
    bound = 1 / math.sqrt(4 * 9)
    assert float(conv.weight.detach().abs().max()) <= bound
    assert float(conv.bias.detach().abs().max()) <= bound


def test_images_to_tensor_and_back():
    from PIL import Image
    from ember.vision import transforms
    arr = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3) * 10  # HxWxC in [0, 255]
    t = transforms.ToTensor()(arr)
    assert t.dtype is torch.float32 and t.shape == torch.Size([3, 2, 3])
    assert float(t.max()) <= 1.0 and np.allclose(t.numpy(), arr.transpose(2, 0, 1) / 255)
    img = transforms.ToPILImage()(t)
    assert isinstance(img, Image.Image) and np.array(img).shape == (2, 3, 3)
    np.testing.assert_array_equal(np.array(img), arr)


def test_dataloader_batches_do_not_require_grad():
    from ember.utils.data import DataLoader, TensorDataset
    data = TensorDataset(torch.randn(6, 3), torch.arange(6))
    for x, y in DataLoader(data, batch_size=4):
        assert not x.requires_grad and not y.requires_grad
