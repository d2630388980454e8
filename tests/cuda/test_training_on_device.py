"""Whole training steps on 'cuda' under the strict CuPy stand-in (tests/_strict_cupy), each
against the same program on the CPU: same initial weights (through state_dict), same batch;
the losses, the updated parameters and buffers, and eval-mode outputs must agree.

Each step is also held to the device-to-host reads a PyTorch script makes: zero_grad, forward,
loss, backward, clip_grad_norm_ and optimizer.step() read nothing back; the script's one
`loss.item()` is the step's one transfer. GradScaler.step adds one read of its found-inf flag
(PyTorch's `_maybe_opt_step` reads it with `.item()` to decide whether to step): an AMP step
makes two.
"""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from tests._strict_cupy import REAL_CUDA, TRANSFERS, strict_cupy

STEPS = 3


# ---- the models -------------------------------------------------------------------------------
class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class SmallResNet(nn.Module):
    """A ResNet's shape in miniature: stem conv, BatchNorm, ReLU, max pool, a residual block,
    adaptive average pool, linear head."""

    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.block = BasicBlock(8)
        self.avg = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.stem(x))))
        return self.fc(ember.flatten(self.avg(self.block(x)), 1))


class GPTBlock(nn.Module):
    def __init__(self, width, heads, use_mha):
        super().__init__()
        self.heads, self.use_mha = heads, use_mha
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        if use_mha:
            self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        else:
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        B, T, D = x.shape
        y = self.ln1(x)
        if self.use_mha:
            causal = ember.triu(ember.ones(T, T, dtype=ember.bool, device=x.device), 1)
            y, _ = self.attn(y, y, y, attn_mask=causal, need_weights=False)
        else:
            q, k, v = (t.view(B, T, self.heads, D // self.heads).transpose(1, 2)
                       for t in self.qkv(y).split(D, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = self.proj(y.transpose(1, 2).contiguous().view(B, T, D))
        x = x + y
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyGPT(nn.Module):
    """Token and position embeddings, pre-norm blocks, the head tied to the token embedding."""

    def __init__(self, use_mha, vocab=17, width=16, block=8):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(block, width)
        self.blocks = nn.ModuleList([GPTBlock(width, 2, use_mha) for _ in range(2)])
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(ember.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


# ---- running a program on a device --------------------------------------------------------------
def _on(device, program, *args):
    """program(device, *args) on the CPU, or on 'cuda' under the stand-in."""
    if device == "cpu":
        return program(device, *args)
    with strict_cupy():
        return program(device, *args)


def _host_state(model):
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


# The stand-in computes as the CPU does, but for 2-d convolutions, which take the device's
# im2col kernels (`ops/conv/_device_columns.py`) and sum in their own order, as a GPU does. A
# GPU sums everything in other orders, and Adam turns the rounding noise of a gradient that is
# zero in exact arithmetic (a conv bias before BatchNorm, attention's key bias) into steps of
# size lr: there the losses must agree closely and the trained state loosely (a wrong op moves
# both by far more; float64 gradients, which rounding moves 1e9 times less, are held tightly
# in test_resnet18_float64_gradients_match_the_cpu).
LOSS_TOLERANCE = dict(rtol=5e-3, atol=1e-4) if REAL_CUDA else dict(rtol=1e-5, atol=1e-6)
GPU_STATE_TOLERANCE = dict(rtol=1e-2, atol=5e-2)
STATE_TOLERANCE = GPU_STATE_TOLERANCE if REAL_CUDA else dict(rtol=1e-5, atol=1e-6)


# GELU's erf is a different approximation on the CPU (a fitted rational) and on a device
# (cupyx's), both within an ulp of float32; AdamW turns that rounding difference in the key
# bias, whose gradient is zero in exact arithmetic, into lr-sized steps.
GPT_STATE_TOLERANCE = GPU_STATE_TOLERANCE
# the CPU's convolutions (Winograd, kept columns) and the device's (im2col kernels) sum in
# other orders, and 20 BatchNorms over 4 samples scale those roundings up: 4e-4 apart in a few
# stem weights after one step (the same step in float64 agrees to 1e-12)
RESNET18_STATE_TOLERANCE = STATE_TOLERANCE if REAL_CUDA else dict(rtol=1e-3, atol=5e-4)


def _assert_same_run(cpu, cuda, state_tolerance=None):
    """Losses, the state after training, and whatever else the program returned agree."""
    state_tolerance = state_tolerance or STATE_TOLERANCE
    np.testing.assert_allclose(cuda["losses"], cpu["losses"], **LOSS_TOLERANCE)
    assert cpu["state"].keys() == cuda["state"].keys()
    for name, c in cpu["state"].items():
        d = cuda["state"][name]
        assert d.dtype is c.dtype, name
        np.testing.assert_allclose(d.double().numpy(), c.double().numpy(), err_msg=name,
                                   **state_tolerance)
    for key in cpu.keys() - {"losses", "state", "transfers"}:  # (computed from the state)
        np.testing.assert_allclose(np.asarray(cuda[key]), np.asarray(cpu[key]), err_msg=key,
                                   **state_tolerance)


def _train(device, model_of, optimizer_of, batch, step, state):
    """STEPS steps of `step(model, optimizer, x, y) -> loss` on `device`, from `state`; the
    device-to-host reads each step made (the script's loss.item() included)."""
    model = model_of().to(device)
    model.load_state_dict(state)
    optimizer = optimizer_of(model)
    x, y = (t.to(device) for t in batch)
    losses, transfers = [], []
    for _ in range(STEPS):
        before = TRANSFERS.count
        losses.append(step(model, optimizer, x, y).item())
        transfers.append(TRANSFERS.count - before)
    return model, {"losses": losses, "state": _host_state(model), "transfers": transfers}


def _image_batch(classes=5):
    gen = ember.Generator().manual_seed(0)
    return (ember.randn(4, 3, 8, 8, generator=gen),
            ember.randint(0, classes, (4,), generator=gen))


def _token_batch(vocab=17, block=8):
    gen = ember.Generator().manual_seed(1)
    return (ember.randint(0, vocab, (2, block), generator=gen),
            ember.randint(0, vocab, (2, block), generator=gen))


def _initial_state(model_of):
    ember.manual_seed(0)
    return _host_state(model_of())


# ---- 1. a ResNet-style CNN ----------------------------------------------------------------------
def _classifier_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


OPTIMIZERS = {
    "sgd_momentum": lambda m: ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9,
                                              weight_decay=1e-4),
    "adam": lambda m: ember.optim.Adam(m.parameters(), lr=1e-2),
    "adamw": lambda m: ember.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1),
}


@pytest.mark.usefixtures("full_float32")  # held to the CPU's values
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_resnet_style_steps_and_eval_match_the_cpu(optimizer):
    state, batch = _initial_state(SmallResNet), _image_batch()

    def program(device):
        model, run = _train(device, SmallResNet, OPTIMIZERS[optimizer], batch,
                            _classifier_step, state)
        model.eval()
        with ember.no_grad():
            run["eval_logits"] = model(batch[0].to(device)).cpu().numpy()
        return run

    cpu, cuda = _on("cpu", program), _on("cuda", program)
    # Adam's steps from the stem bias's rounding noise (see STATE_TOLERANCE)
    _assert_same_run(cpu, cuda, GPU_STATE_TOLERANCE if optimizer != "sgd_momentum" else None)
    assert REAL_CUDA or cuda["transfers"] == [1] * STEPS  # the loss.item()


@pytest.mark.usefixtures("full_float32")  # held to the CPU's values
def test_torchvision_resnet18_step_matches_the_cpu():
    """The real ResNet-18 (ember.vision.models), one SGD-momentum step on a small batch."""
    from ember.vision.models import resnet18

    def model_of():
        return resnet18(num_classes=10)
    state = _initial_state(model_of)
    gen = ember.Generator().manual_seed(2)
    batch = ember.randn(4, 3, 16, 16, generator=gen), ember.tensor([1, 7, 3, 0])

    def program(device):
        model = model_of().to(device)
        model.load_state_dict(state)
        optimizer = OPTIMIZERS["sgd_momentum"](model)
        before = TRANSFERS.count
        loss = _classifier_step(model, optimizer, *(t.to(device) for t in batch)).item()
        transfers = TRANSFERS.count - before
        return {"losses": [loss], "state": _host_state(model), "transfers": transfers}

    cpu, cuda = _on("cpu", program), _on("cuda", program)
    _assert_same_run(cpu, cuda, RESNET18_STATE_TOLERANCE)
    assert REAL_CUDA or cuda["transfers"] == 1


def test_resnet18_float64_gradients_match_the_cpu():
    """The float64 gradients of the real ResNet-18 on a device equal the CPU's but for
    rounding (which its BatchNorms scale up 1e4-fold): the device's convolutions, forward and
    both gradients at every stride, padding and kernel of the model, are the CPU's."""
    from ember.vision.models import resnet18
    ember.manual_seed(0)
    state = _host_state(resnet18(num_classes=10).double())
    gen = ember.Generator().manual_seed(2)
    x, y = ember.randn(4, 3, 16, 16, generator=gen).double(), ember.tensor([1, 7, 3, 0])

    def program(device):
        model = resnet18(num_classes=10).double().to(device)
        model.load_state_dict(state)
        F.cross_entropy(model(x.to(device)), y.to(device)).backward()
        return {k: p.grad.cpu().numpy() for k, p in model.named_parameters()}
    cpu, cuda = _on("cpu", program), _on("cuda", program)
    for name, c in cpu.items():
        np.testing.assert_allclose(cuda[name], c, rtol=1e-9, atol=1e-9 * np.abs(c).max(),
                                   err_msg=name)


# ---- 2. a GPT-style step ------------------------------------------------------------------------
def _gpt_training(use_mha):
    def model_of():
        return TinyGPT(use_mha)

    def optimizer_of(model):
        optimizer = ember.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
        model.scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=5)
        return optimizer

    def step(model, optimizer, x, y):
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        model.scheduler.step()
        return loss
    return model_of, optimizer_of, step


@pytest.mark.parametrize("attention", ["sdpa_causal", "multihead_attention"])
def test_gpt_style_steps_match_the_cpu(attention):
    model_of, optimizer_of, step = _gpt_training(attention == "multihead_attention")
    state, batch = _initial_state(model_of), _token_batch()

    def program(device):
        model, run = _train(device, model_of, optimizer_of, batch, step, state)
        run["lr"] = model.scheduler.get_last_lr()
        assert model.head.weight is model.wte.weight  # still tied after .to(device)
        return run

    cpu, cuda = _on("cpu", program), _on("cuda", program)
    _assert_same_run(cpu, cuda, GPT_STATE_TOLERANCE)
    assert REAL_CUDA or cuda["transfers"] == [1] * STEPS


# ---- 3. mixed precision -------------------------------------------------------------------------
def _amp_fp16_program(device, state, batch):
    """fp16 autocast with GradScaler: scale, backward, unscale_, clip, step, update. The second
    step's loss is made infinite: its step must be skipped and the scale backed off."""
    model = SmallResNet().to(device)
    model.load_state_dict(state)
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = ember.amp.GradScaler(device, init_scale=2.0 ** 12, growth_interval=1)
    x, y = (t.to(device) for t in batch)
    losses, transfers, scales, skipped = [], [], [], []
    for i in range(STEPS):
        before = TRANSFERS.count
        optimizer.zero_grad()
        with ember.autocast(device, dtype=ember.float16):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        poisoned = loss * math.inf if i == 1 else loss
        scaler.scale(poisoned).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        weights = model.fc.weight.detach().clone()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
        transfers.append(TRANSFERS.count - before)
        skipped.append(bool(ember.equal(weights, model.fc.weight.detach())))
        scales.append(scaler.get_scale())  # a read of its own, outside the counted step
    assert logits.dtype is ember.float16
    return {"losses": losses, "state": _host_state(model), "transfers": transfers,
            "scales": scales, "skipped": skipped}


def test_amp_fp16_gradscaler_steps_match_the_cpu():
    state, batch = _initial_state(SmallResNet), _image_batch()
    cpu = _on("cpu", _amp_fp16_program, state, batch)
    cuda = _on("cuda", _amp_fp16_program, state, batch)
    _assert_same_run(cpu, cuda)
    assert cuda["skipped"] == [False, True, False]
    assert cuda["scales"] == [2.0 ** 13, 2.0 ** 12, 2.0 ** 13]
    # loss.item() and GradScaler.step's one read of found-inf (as PyTorch's _maybe_opt_step)
    assert REAL_CUDA or cuda["transfers"] == [2] * STEPS


def _bf16_step(model, optimizer, x, y):
    optimizer.zero_grad()
    with ember.autocast(x.device.type, dtype=ember.bfloat16):
        logits = model(x)
        assert logits.dtype is ember.bfloat16
        loss = F.cross_entropy(logits, y)
    loss.backward()
    optimizer.step()
    return loss


def test_amp_bfloat16_cnn_steps_match_the_cpu():
    state, batch = _initial_state(SmallResNet), _image_batch()

    def program(device):
        return _train(device, SmallResNet, OPTIMIZERS["sgd_momentum"], batch, _bf16_step,
                      state)[1]

    cpu, cuda = _on("cpu", program), _on("cuda", program)
    _assert_same_run(cpu, cuda)
    assert REAL_CUDA or cuda["transfers"] == [1] * STEPS


def test_max_pooling_in_bfloat16_matches_pytorch(torch):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    x[0, 0, 1, 1] = np.nan
    ours = ember.tensor(x).bfloat16().requires_grad_()
    theirs = torch.tensor(x).bfloat16().requires_grad_()
    out, idx = F.max_pool2d(ours, 3, stride=2, padding=1, return_indices=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(theirs, 3, stride=2, padding=1,
                                                  return_indices=True)
    assert out.dtype is ember.bfloat16
    np.testing.assert_array_equal(out.detach().float().numpy(), t_out.detach().float().numpy())
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    out.float().sum().backward()
    t_out.float().sum().backward()
    np.testing.assert_array_equal(ours.grad.float().numpy(), theirs.grad.float().numpy())
    pooled = F.adaptive_max_pool2d(ours.detach(), 2)
    t_pooled = torch.nn.functional.adaptive_max_pool2d(theirs.detach(), 2)
    np.testing.assert_array_equal(pooled.float().numpy(), t_pooled.float().numpy())


# ---- 4. the losses users train with -------------------------------------------------------------
_gen = np.random.default_rng(3)
_X = _gen.standard_normal((4, 5)).astype(np.float32)
_P = _gen.random((4, 5)).astype(np.float32)
_BITS = (_gen.random((4, 5)) > 0.5).astype(np.float32)
_SIGNS = np.where(_gen.random((4, 5)) > 0.5, 1.0, -1.0).astype(np.float32)
_CLASSES = np.array([1, 0, 3, 2])
_LOG_PROBS = np.log(np.random.default_rng(4).dirichlet(np.ones(4), (6, 2))).astype(np.float32)


def _t(a):
    return ember.tensor(a)


LOSSES = {
    "bce_with_logits": lambda g, d: F.binary_cross_entropy_with_logits(
        g(_X), d(_BITS), weight=d(_P[0]), pos_weight=d(_P[1] + 0.5)),
    "bce": lambda g, d: F.binary_cross_entropy(ember.sigmoid(g(_X)), d(_BITS), weight=d(_P)),
    "nll_ignore_index": lambda g, d: F.nll_loss(
        F.log_softmax(g(_X), 1), d(np.array([0, 4, -100, 2])), ignore_index=-100),
    "cross_entropy_ignore_smoothing": lambda g, d: F.cross_entropy(
        g(_X), d(np.array([0, 4, 7, 2])), ignore_index=7, label_smoothing=0.1),
    "smooth_l1": lambda g, d: F.smooth_l1_loss(g(_X), d(_P), beta=0.5),
    "huber": lambda g, d: F.huber_loss(g(_X), d(_P), delta=0.5),
    "hinge_embedding": lambda g, d: F.hinge_embedding_loss(g(_X), d(_SIGNS), margin=0.5),
    "soft_margin": lambda g, d: F.soft_margin_loss(g(_X), d(_SIGNS)),
    "margin_ranking": lambda g, d: F.margin_ranking_loss(
        g(_X[0]), g(_X[1]), d(_SIGNS[0]), margin=0.1),
    "multi_margin": lambda g, d: F.multi_margin_loss(g(_X), d(_CLASSES), p=2,
                                                     weight=d(_P[0] + 0.5)),
    "multilabel_margin": lambda g, d: F.multilabel_margin_loss(
        g(_X), d(np.array([[0, 3, -1, 0, 0], [1, -1, 0, 0, 0], [4, 2, 1, -1, 0],
                           [-1, 0, 0, 0, 0]]))),
    "multilabel_soft_margin": lambda g, d: F.multilabel_soft_margin_loss(g(_X), d(_BITS)),
    "cosine_embedding": lambda g, d: F.cosine_embedding_loss(g(_X), g(_P), d(_SIGNS[:, 0])),
    "triplet_margin": lambda g, d: F.triplet_margin_loss(g(_X), g(_P), d(_BITS)),
    "ctc": lambda g, d: F.ctc_loss(g(_LOG_PROBS), d(np.array([[1, 2, 2], [3, 1, 0]])),
                                   (6, 5), (3, 2)),
    "ctc_sum_zero_infinity": lambda g, d: F.ctc_loss(
        g(_LOG_PROBS), d(np.array([[1, 1, 1], [3, 1, 0]])), (4, 6), (3, 2),
        reduction="sum", zero_infinity=True),
}


def _loss_and_grads(device, name):
    leaves = []

    def grad_leaf(a):
        leaves.append(_t(a).to(device).requires_grad_())
        return leaves[-1]

    before = TRANSFERS.count
    loss = LOSSES[name](grad_leaf, lambda a: _t(a).to(device))
    loss.backward()
    transfers = TRANSFERS.count - before
    return loss.detach().cpu(), [leaf.grad.cpu() for leaf in leaves], transfers


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_forward_and_backward_on_the_device_match_the_cpu(name):
    loss, grads, _ = _on("cpu", _loss_and_grads, name)
    d_loss, d_grads, transfers = _on("cuda", _loss_and_grads, name)
    assert d_loss.dtype is loss.dtype
    np.testing.assert_allclose(d_loss.numpy(), loss.numpy(), rtol=1e-5, atol=1e-6)
    for c, d in zip(grads, d_grads):
        np.testing.assert_allclose(d.numpy(), c.numpy(), rtol=1e-5, atol=1e-6)
    assert REAL_CUDA or transfers == 0  # no host look inside the loss or its backward


def test_ctc_loss_with_length_tensors_reads_only_the_lengths():
    """PyTorch copies CTC's length tensors to the host; nothing else is read."""
    def program(device):
        log_probs = _t(_LOG_PROBS).to(device).requires_grad_()
        before = TRANSFERS.count
        loss = F.ctc_loss(log_probs, _t(np.array([[1, 2, 2], [3, 1, 0]])).to(device),
                          _t(np.array([6, 5])).to(device), _t(np.array([3, 2])).to(device))
        loss.backward()
        return loss.item(), TRANSFERS.count - before

    (cpu_loss, _), (cuda_loss, transfers) = _on("cpu", program), _on("cuda", program)
    assert cuda_loss == pytest.approx(cpu_loss, rel=1e-5)
    assert REAL_CUDA or transfers == 3  # input_lengths, target_lengths, the loss.item()
