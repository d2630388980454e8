"""FSDP2 (`fully_shard`): per layer and at the root, training with an optimizer over the
sharded parameters matches a plain model trained on the averaged gradient (two processes,
uneven shards, gradient accumulation without sync); in a world of one the module classes,
parameter types, state dict, mixed precision and errors are PyTorch's."""
import copy
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.distributed.fsdp import fully_shard
from ember.distributed.tensor import DTensor, Shard

from .test_distributed import _launch
from .test_dtensor import world_of_one  # noqa: F401  (a fixture)


@pytest.fixture(autouse=True)
def _collect_pytorchs_garbage():
    """FSDP modules sit in reference cycles (module, state, hooks): collect PyTorch's here,
    after its process group is gone, not in a later test's forked child, where freeing
    PyTorch's objects crashes it."""
    yield
    gc.collect()


def _model(lib=ember):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3),
                             lib.nn.Linear(3, 3, bias=False))


def _data():
    return np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)


def _shard(model, **kwargs):
    for layer in (model[0], model[2], model[3]):
        fully_shard(layer, **kwargs)
    return fully_shard(model, **kwargs)


def _fsdp(rank, world):
    model = _shard(_model())
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    x = ember.tensor(_data()[rank * 4:(rank + 1) * 4])
    unreduced = []
    for _ in range(3):
        opt.zero_grad()
        # two micro-batches: the first accumulates unreduced, the second reduces the sum
        for half, sync in ((x[:2], False), (x[2:], True)):
            model.set_requires_gradient_sync(sync)
            (model(half).pow(2).mean() / 2).backward()
            if not sync:
                unreduced.append(all(p.grad is None for p in model.parameters()))
        opt.step()
    params = list(model.parameters())
    ember.manual_seed(1)  # other weights, then the trained ones loaded over them
    again = _shard(ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(),
                                       ember.nn.Linear(8, 3),
                                       ember.nn.Linear(3, 3, bias=False)))
    again.load_state_dict(copy.deepcopy(model.state_dict()))
    return {"unreduced": all(unreduced),
            "reloaded": all(ember.equal(p.full_tensor(), q.full_tensor())
                            for p, q in zip(model.parameters(), again.parameters())),
            "full": [p.full_tensor().detach().numpy() for p in params],
            "local_rows": [p.to_local().shape[0] for p in params],
            "sharded": all(isinstance(p, DTensor) and p.placements == (Shard(0),)
                           for p in params),
            "grads": all(isinstance(p.grad, DTensor) for p in params),
            "state": {k: (type(v).__name__, tuple(v._shape), v.placements)
                      for k, v in model.state_dict().items()}}


def _plain(model, x, steps=3):
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    return [p.detach().numpy() for p in model.parameters()]


def test_fsdp_training_matches_a_plain_model():
    results = _launch(_fsdp)
    want = _plain(_model(), ember.tensor(_data()))  # the mean over all 8 rows
    for rank in (0, 1):
        got = results[rank]
        for full, ref in zip(got["full"], want):
            np.testing.assert_allclose(full, ref, rtol=1e-5, atol=1e-6)
        assert got["sharded"] and got["grads"] and got["reloaded"] and got["unreduced"]
        assert got["state"]["2.weight"] == ("DTensor", (3, 8), (Shard(0),))
    # chunked as torch.chunk: 8 rows 4 + 4, 3 rows 2 + 1
    assert results[0]["local_rows"] == [4, 4, 2, 2, 2]
    assert results[1]["local_rows"] == [4, 4, 1, 1, 1]


def _surface(lib):
    from importlib import import_module
    fsdp = import_module(lib.__name__ + ".distributed.fsdp")
    model = _model(lib)
    for layer in (model[0], model[2]):
        fsdp.fully_shard(layer)
    assert fsdp.fully_shard(model) is model
    seen = [type(model).__name__, type(model[0]).__name__, repr(model),
            isinstance(model, fsdp.FSDPModule), isinstance(model[1], fsdp.FSDPModule),
            [(k, type(v).__name__, repr(v.placements)) for k, v in model.state_dict().items()],
            repr(fsdp.MixedPrecisionPolicy()), repr(fsdp.CPUOffloadPolicy(pin_memory=False))]
    w = model[0].weight
    seen += [type(w).__name__, isinstance(w, lib.nn.Parameter), w.requires_grad, w.grad,
             repr(w.device_mesh), w.to_local().shape[0]]
    x = lib.tensor(_data())
    out = model(x)
    seen.append(type(model[3].weight).__name__)  # the root keeps its gathered parameters
    out.pow(2).mean().backward()
    seen += [type(model[3].weight).__name__, type(w.grad).__name__, repr(w.grad.placements),
             w.grad.to_local().shape[0]]
    with lib.no_grad():
        model(x)
    # the root keeps its gathered parameters; state_dict saves the sharded ones
    seen += [type(model[3].weight).__name__,
             [type(v).__name__ for v in model.state_dict().values()],
             type(model[3].weight).__name__]
    model.unshard()
    seen.append(type(model[0].weight).__name__)
    model.reshard()
    seen.append(type(model[0].weight).__name__)
    model.double()  # converts the sharded parameters
    seen += [(type(p).__name__, str(p.dtype)) for p in model.parameters()]
    with lib.device("meta"):  # deferred initialisation: sharded on meta, then made real
        late = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
    fsdp.fully_shard(late[0])
    fsdp.fully_shard(late)
    seen.append([(type(t).__name__, str(t.device)) for t in late.state_dict().values()])
    late.to_empty(device="cpu")
    seen += [[(type(t).__name__, str(t.device)) for t in late.state_dict().values()],
             tuple(late(lib.ones(4, 3)).shape)]
    class Head(lib.nn.Linear):
        def head(self, x):
            return type(self.weight).__name__, tuple(self.weight.shape)
    head = fsdp.fully_shard(Head(2, 2), reshard_after_forward=True)
    fsdp.register_fsdp_forward_method(head, "head")  # gathers around head() as forward
    seen += [head.head(lib.ones(2)), type(head.weight).__name__]
    half = lib.nn.Linear(2, 2)
    policy = fsdp.MixedPrecisionPolicy(param_dtype=lib.bfloat16, reduce_dtype=lib.float32)
    fsdp.fully_shard(half, mp_policy=policy)
    y = half(lib.ones(1, 2))
    y.float().sum().backward()
    seen += [str(y.dtype), str(half.weight.dtype), str(half.weight.grad.dtype)]

    class Scalar(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.p = lib.nn.Parameter(lib.ones(()))
    for call in (lambda: fsdp.fully_shard(model), lambda: copy.deepcopy(model),
                 lambda: fsdp.fully_shard(Scalar()),
                 lambda: fsdp.fully_shard(lib.nn.Linear(2, 2), reshard_after_forward=3),
                 lambda: fsdp.fully_shard(lib.nn.Linear(2, 2),
                                          offload_policy=fsdp.CPUOffloadPolicy())):
        with pytest.raises(Exception) as info:
            call()
        seen.append((type(info.value).__name__, str(info.value)))
    return seen


def test_fully_shard_in_a_world_of_one_is_pytorchs(torch, world_of_one):
    assert _surface(ember) == _surface(torch)


@pytest.mark.parametrize("mixed", [False, True])
def test_world_of_one_trains_as_pytorch(torch, world_of_one, mixed):
    results = []
    for lib in (ember, torch):
        from importlib import import_module
        fsdp = import_module(lib.__name__ + ".distributed.fsdp")
        model = _model(lib)
        if lib is torch:  # the same starting weights
            with torch.no_grad():
                for p, q in zip(model.parameters(), _model().parameters()):
                    p.copy_(torch.tensor(q.detach().numpy()))
        policy = fsdp.MixedPrecisionPolicy(
            param_dtype=lib.bfloat16, reduce_dtype=lib.float32, output_dtype=lib.float32) \
            if mixed else fsdp.MixedPrecisionPolicy()
        for layer in (model[0], model[2], model[3]):
            fsdp.fully_shard(layer, reshard_after_forward=True, mp_policy=policy)
        fsdp.fully_shard(model, mp_policy=policy)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = lib.tensor(_data())
        for _ in range(3):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            if lib is ember:  # resharded: the gathered memory is freed until backward
                assert model[0]._fsdp_state.params[0].unsharded.numel() == 0
            loss.backward()
            opt.step()
        results.append([(str(p.dtype), p.full_tensor().detach().float().numpy())
                         for p in model.parameters()])
    for (dtype, got), (want_dtype, want) in zip(*results):
        assert dtype == want_dtype == "torch.float32"
        # tight: bfloat16 compute moves the weights by ~3e-5 from float32's
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_fsdp_import_paths_resolve_through_compat():
    code = ("import ember.compat; ember.compat.install(); import torch; "
            "from torch.distributed.fsdp import fully_shard, FSDPModule, MixedPrecisionPolicy, "
            "CPUOffloadPolicy, OffloadPolicy; "
            "from torch.distributed._composable.fsdp import fully_shard as f2; "
            "import ember.distributed.fsdp as e; "
            "assert fully_shard is f2 is e.fully_shard and FSDPModule is e.FSDPModule; "
            "print(torch.distributed.fsdp.__name__)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ember.distributed.fsdp"


# ---- gradient clipping over sharded gradients -------------------------------------------------
def _clipped(rank, world):
    """nn.utils.clip_grad_norm_ over FSDP2's sharded gradients: the norm of all ranks'
    shards, every shard scaled alike."""
    model = _shard(_model())
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x = ember.tensor(_data()[rank * 4:(rank + 1) * 4])
    norms = []
    for norm_type in (2.0, 1.0, float("inf")):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        norm = ember.nn.utils.clip_grad_norm_(model.parameters(), 0.05, norm_type=norm_type)
        norms.append((type(norm).__name__, repr(norm.placements), norm.item(),
                      norm.full_tensor().item()))
        opt.step()
    total = ember.nn.utils.get_total_norm([p.grad for p in model.parameters()])
    return {"norms": norms, "total": total.full_tensor().item(),
            "full": [p.full_tensor().detach().numpy() for p in model.parameters()]}


def test_clip_grad_norm_of_sharded_gradients_is_the_global_norm():
    results = _launch(_clipped)
    model = _model()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x, norms = ember.tensor(_data()), []
    for norm_type in (2.0, 1.0, float("inf")):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        norms.append(ember.nn.utils.clip_grad_norm_(model.parameters(), 0.05,
                                                    norm_type=norm_type).item())
        opt.step()
    total = ember.nn.utils.get_total_norm([p.grad for p in model.parameters()]).item()
    for rank in (0, 1):
        got = results[rank]
        assert [n[:2] for n in got["norms"]] == [("DTensor", "(Replicate(),)")] * 2 + \
            [("DTensor", "(Partial(max),)")]
        np.testing.assert_allclose([n[2] for n in got["norms"]], norms, rtol=1e-5)
        np.testing.assert_allclose([n[3] for n in got["norms"]], norms, rtol=1e-5)
        np.testing.assert_allclose(got["total"], total, rtol=1e-5)
        for full, ref in zip(got["full"], model.parameters()):
            np.testing.assert_allclose(full, ref.detach().numpy(), rtol=1e-5, atol=1e-6)


def _clip_surface(lib):
    from importlib import import_module
    fsdp = import_module(lib.__name__ + ".distributed.fsdp")
    model = _model(lib)
    if lib is not ember:
        with lib.no_grad():
            for p, q in zip(model.parameters(), _model().parameters()):
                p.copy_(lib.tensor(q.detach().numpy()))
    for layer in (model[0], model[2]):
        fsdp.fully_shard(layer)
    fsdp.fully_shard(model)
    model(lib.tensor(_data())).pow(2).mean().backward()
    seen = []
    for norm_type in (2.0, 1, "inf"):
        n = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5, norm_type=norm_type)
        seen.append((type(n).__name__, repr(n.placements), str(n.dtype), tuple(n.shape),
                     round(n.full_tensor().item(), 5)))
    total = lib.nn.utils.get_total_norm([p.grad for p in model.parameters()])
    seen += [(type(total).__name__, round(total.full_tensor().item(), 5)),
             lib.nn.utils.clip_grad_value_(model.parameters(), 0.01),
             [np.round(p.grad.full_tensor().numpy(), 5).tolist() for p in model.parameters()]]
    plain = lib.nn.Parameter(lib.ones(3))
    plain.grad = lib.ones(3)
    with pytest.raises(RuntimeError) as info:
        lib.nn.utils.clip_grad_norm_([plain, model[0].weight], 0.5)
    return seen + [str(info.value)]


def test_clip_grad_norm_in_a_world_of_one_is_pytorchs(torch, world_of_one):
    assert _clip_surface(ember) == _clip_surface(torch)
