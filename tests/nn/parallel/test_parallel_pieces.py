"""torch.nn.parallel's pieces (comm, scatter_gather, replicate, parallel_apply, data_parallel):
PyTorch's errors on a CPU-only machine, and the real work on the NumPy stand-in for CUDA
(one device, used twice where two replicas are wanted)."""
import collections
import importlib

import numpy as np
import pytest

import ember
from ember.nn.parallel import comm, data_parallel, gather, scatter
from ember.nn.parallel.scatter_gather import scatter_kwargs

parallel_apply_mod = importlib.import_module("ember.nn.parallel.parallel_apply")
replicate_mod = importlib.import_module("ember.nn.parallel.replicate")

Pair = collections.namedtuple("Pair", "a b")


@pytest.mark.parametrize("name", ["comm", "parallel_apply", "replicate", "scatter_gather",
                                  "data_parallel", "distributed"])
def test_submodules_exist_with_torchs_public_names(torch, name):
    theirs = importlib.import_module(f"torch.nn.parallel.{name}")
    ours = importlib.import_module(f"ember.nn.parallel.{name}")
    public = getattr(theirs, "__all__", None) or [
        n for n, v in vars(theirs).items() if not n.startswith("_") and callable(v)
        and getattr(v, "__module__", None) == theirs.__name__]
    assert [n for n in public if not hasattr(ours, n)] == []


def test_package_names_match_torch(torch):
    assert ember.nn.parallel.__all__ == torch.nn.parallel.__all__
    assert callable(ember.nn.parallel.parallel_apply) and callable(ember.nn.parallel.replicate)


def test_cpu_only_behaviour_matches_torch(torch):
    lin = ember.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        data_parallel(lin, ember.ones(1, 2))
    with pytest.raises(AssertionError, match="Gather function not implemented for CPU tensors"):
        gather([ember.ones(2), ember.ones(2)], "cpu")
    with pytest.raises(AssertionError, match="reduce_add expects all inputs to be on GPUs, but "
                                             "input 0 is on CPU"):
        comm.reduce_add([ember.ones(2), ember.ones(2)], 0)
    with pytest.raises(RuntimeError, match="Exactly one of 'devices' and 'out' must be "
                                           "specified, but got devices=None and out=None"):
        comm.broadcast(ember.ones(2))
    # non-tensors are repeated per device, as torch does without touching a GPU
    structure = (1, [2], {"a": 3})
    assert scatter(structure, [0, 1]) == torch.nn.parallel.scatter(structure, [0, 1])
    assert scatter_kwargs((1,), {"a": 3}, [0, 1]) == \
        torch.nn.parallel.scatter_gather.scatter_kwargs((1,), {"a": 3}, [0, 1])
    assert gather([None, None], "cpu") is None


def test_parallel_apply_on_cpu_modules_and_reraises_with_the_replica():
    a, b = ember.nn.Linear(2, 3), ember.nn.Linear(2, 3)
    x, y = ember.randn(4, 2), ember.randn(1, 2)
    outs = parallel_apply_mod.parallel_apply([a, b], [x, (y,)], ({}, {}))
    assert ember.equal(outs[0], a(x)) and ember.equal(outs[1], b(y))
    assert outs[0].grad_fn is not None  # grad mode carried into the worker threads
    with ember.no_grad():
        assert parallel_apply_mod.parallel_apply([a, b], [x, y])[0].grad_fn is None
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert all(o.dtype == ember.bfloat16
                   for o in parallel_apply_mod.parallel_apply([a, b], [x, y]))
    with pytest.raises(RuntimeError, match="Caught RuntimeError in replica 1 on device -1"):
        parallel_apply_mod.parallel_apply([a, b], [x, ember.ones(3, 5)])
    with pytest.raises(AssertionError, match="The number of modules 2 is not equal to the "
                                             "number of inputs 1"):
        parallel_apply_mod.parallel_apply([a, b], [x])
    assert parallel_apply_mod.get_a_var([1, {"k": x}]) is x


def test_comm_on_the_cuda_stand_in(fake_cuda):
    x = ember.arange(12.).reshape(6, 2)
    pieces = comm.scatter(x, [0, 0], dim=0)
    assert [p.device.type for p in pieces] == ["cuda", "cuda"]
    assert [p.tolist() for p in pieces] == [x[:3].tolist(), x[3:].tolist()]
    sized = comm.scatter(x, [0, 0], chunk_sizes=[1, 5])
    assert [p.shape[0] for p in sized] == [1, 5]
    back = comm.gather(pieces, 0, "cpu")
    assert back.device.type == "cpu" and back.tolist() == x.tolist()
    with pytest.warns(FutureWarning, match="Using -1 to represent CPU tensor is deprecated"):
        comm.gather(pieces, destination=-1)
    copies = comm.broadcast(x, [0, "cuda:0"])
    assert all(c.device.type == "cuda" and c.tolist() == x.tolist() for c in copies)
    total = comm.reduce_add([c * 2 for c in copies], 0)
    assert total.tolist() == (x * 4).tolist()
    with pytest.raises(ValueError, match="input 1 has invalid size: got 3, but expected 2"):
        comm.reduce_add([ember.ones(2, device="cuda"), ember.ones(3, device="cuda")], 0)
    coalesced = comm.reduce_add_coalesced([[copies[0], copies[0][0]], [copies[1], copies[1][0]]],
                                          0)
    assert coalesced[0].tolist() == (x * 2).tolist() and coalesced[1].tolist() == [0., 2.]


def test_scatter_gather_structures_and_gradients(fake_cuda):
    x = ember.randn(4, 3, requires_grad=True)
    parts = scatter((x, Pair(x, 5), {"k": x}), [0, 0])
    assert len(parts) == 2 and isinstance(parts[0][1], Pair) and parts[1][1].b == 5
    assert parts[0][2]["k"].shape == (2, 3)
    merged = gather([{"o": parts[0][0] * 2}, {"o": parts[1][0] * 3}], "cpu")
    merged["o"].sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2 + [[3.0] * 3] * 2
    with pytest.warns(UserWarning, match="all input tensors were scalars"):
        v = gather([ember.tensor(1., device="cuda"), ember.tensor(2., device="cuda")], "cpu")
    assert v.tolist() == [1.0, 2.0]


def test_replicate_shares_gradients_with_the_original(fake_cuda):
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4)).to("cuda")
    replicas = replicate_mod.replicate(model, [0, 0])
    assert len(replicas) == 2 and all(r is not model for r in replicas)
    assert list(dict(replicas[0].named_parameters())) == []  # plain tensors, as in PyTorch
    assert not isinstance(replicas[0][0].weight, ember.nn.Parameter)
    assert replicas[0][1].running_mean is not None
    x = ember.randn(5, 3, device="cuda")
    (replicas[0](x).sum() + replicas[1](x).sum()).backward()
    assert model[0].weight.grad is not None
    detached = replicate_mod.replicate(model, [0], detach=True)
    assert detached[0][0].weight is model[0].weight
    assert replicate_mod.replicate(model, []) == []


def test_data_parallel_matches_the_module_and_its_gradients(fake_cuda):
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2))
    model.to("cuda")
    x = ember.randn(6, 3, device="cuda")
    want = model(x)
    want.pow(2).sum().backward()
    want_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    got = data_parallel(model, x, device_ids=[0, 0], output_device="cpu")
    assert got.device.type == "cpu"
    np.testing.assert_allclose(got.detach().numpy(), want.detach().cpu().numpy(), rtol=1e-6)
    got.pow(2).sum().backward()
    for p, g in zip(model.parameters(), want_grads):
        np.testing.assert_allclose(p.grad.cpu().numpy(), g.cpu().numpy(), rtol=1e-5, atol=1e-6)
    on_cpu = ember.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on "
                                           r"device cuda:0 \(device_ids\[0\]\)"):
        data_parallel(on_cpu, ember.ones(2, 2, device="cuda"), device_ids=[0])


def test_data_parallel_module_over_two_replicas(fake_cuda):
    """Two replicas (the stand-in's one device, twice): each normalises its own share of the
    batch, as PyTorch's replicas do; gradients reach the original parameters. (Both replicas
    sit on the first device here, so both update its BatchNorm buffers: not checked.)"""
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    reference = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    reference.load_state_dict(model.state_dict())
    dp = ember.nn.DataParallel(model, device_ids=[0, 0])
    x = ember.randn(8, 3)
    out = dp(x)
    assert out.device.type == "cuda" and out.shape == (8, 4)
    first_half = reference.to("cuda")(x[:4].to("cuda"))
    np.testing.assert_allclose(out[:4].detach().cpu().numpy(),
                               first_half.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert model[0].weight.grad is not None and model[0].weight.grad.shape == (4, 3)
    model.eval()
    with ember.no_grad():  # eval: the replicas' halves together equal the whole batch
        np.testing.assert_allclose(dp(x).cpu().numpy(),
                                   model(x.to("cuda")).cpu().numpy(), rtol=1e-6)
