"""FSDP1 (`FullyShardedDataParallel`): two processes training under each sharding strategy,
with and without `use_orig_params`, reach the parameters, gradient norms and optimizer state
of a plain model trained on the whole batch; full and sharded (through DCP) state dicts and
optimizer state dicts round trip; `ShardedGradScaler` skips a step every rank takes when one
rank sees inf; meta-device initialisation. In a world of one, names, printing, values,
warnings and errors are PyTorch's; the local shapes of two ranks are PyTorch 2.13's."""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.distributed.checkpoint as dcp
from ember.distributed.fsdp import FullyShardedDataParallel as FSDP
from ember.distributed.fsdp import ShardingStrategy, StateDictType
from ember.distributed.fsdp.wrap import ModuleWrapPolicy

from .test_distributed import _launch
from .test_dtensor import world_of_one  # noqa: F401  (a fixture)

CPU = {"device_id": "cpu"}
STRATEGIES = ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD")


@pytest.fixture(autouse=True)
def _collect_pytorchs_garbage():
    yield
    gc.collect()  # PyTorch's FSDP objects, before a later test forks


def _model(lib=ember, seed=0):
    """A root parameter and a layer in the root unit, a nested unit (the Sequential)."""
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(3, 4)
            self.norm = lib.nn.LayerNorm(4)
            self.b = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))
            self.p = lib.nn.Parameter(lib.ones(3))

        def forward(self, x):
            return self.b(self.norm(self.a(x * self.p)))
    lib.manual_seed(seed)
    return M()


def _text(message):
    """A message without the library's name (class paths differ only in it)."""
    return message.replace("torch.", "").replace("ember.", "")


def _data():
    return np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)


def _wrap(model, lib=ember, **kwargs):
    fsdp = __import__(lib.__name__ + ".distributed.fsdp", fromlist=["wrap"])
    policy = fsdp.wrap.ModuleWrapPolicy({lib.nn.Sequential})
    return fsdp.FullyShardedDataParallel(model, auto_wrap_policy=policy,
                                         device_id=lib.device("cpu"), **kwargs)


def _train(f, x, opt, steps=3):
    """Two micro-batches a step, the first under no_sync; clip to 0.5. The norms."""
    norms = []
    for _ in range(steps):
        opt.zero_grad()
        with f.no_sync():
            (f(x[:2]).pow(2).mean() / 2).backward()
        (f(x[2:]).pow(2).mean() / 2).backward()
        norms.append(float(f.clip_grad_norm_(0.5)))
        opt.step()
    return norms


def _fsdp(rank, world):
    out = {}
    x = ember.tensor(_data()[rank * 4:(rank + 1) * 4])
    for use_orig in (False, True):
        for name in STRATEGIES:
            f = _wrap(_model(), sharding_strategy=ShardingStrategy[name],
                      use_orig_params=use_orig)
            opt = ember.optim.Adam(f.parameters(), lr=0.01)
            norms = _train(f, x, opt)
            osd = FSDP.optim_state_dict(f, opt)
            out[use_orig, name] = {
                "shapes": [(n, tuple(p.shape), None if p.grad is None else tuple(p.grad.shape))
                           for n, p in f.named_parameters()],
                "norms": norms,
                "full": {k: v.numpy() for k, v in f.state_dict().items()},
                "optim": {k: {s: v.numpy() for s, v in st.items()}
                          for k, st in osd["state"].items()},
                "groups": osd["param_groups"][0]["params"]}
    try:
        _wrap(_model(), sharding_strategy="FULL_SHARD")
    except KeyError as e:
        out["bad strategy"] = repr(e)
    return out


def _plain():
    m = _model()
    opt = ember.optim.Adam(m.parameters(), lr=0.01)
    x, norms = ember.tensor(_data()), []
    for _ in range(3):
        opt.zero_grad()
        m(x).pow(2).mean().backward()
        norms.append(float(ember.nn.utils.clip_grad_norm_(m.parameters(), 0.5)))
        opt.step()
    names = dict(zip(map(id, m.parameters()), (n for n, _ in m.named_parameters())))
    optim = {names[id(p)]: {k: v.numpy() for k, v in st.items()} for p, st in opt.state.items()}
    return norms, {k: v.numpy() for k, v in m.state_dict().items()}, optim


# PyTorch 2.13, two ranks, use_orig_params=True: each original parameter holds its part of
# the rank's flat shard (each parameter starting 16-byte aligned), 1-d; no gradient if empty
TORCH_ORIG_SHAPES = {
    0: [(3,), (10,), (0,), (0,), (0,), (20,), (1,), (0,), (0,)],
    1: [(0,), (2,), (4,), (4,), (4,), (0,), (4,), (10,), (2,)],
}


def test_training_matches_a_plain_model_under_every_strategy():
    results = _launch(_fsdp)
    norms, want, want_optim = _plain()
    for rank in (0, 1):
        for use_orig in (False, True):
            for name in STRATEGIES:
                got = results[rank][use_orig, name]
                np.testing.assert_allclose(got["norms"], norms, rtol=1e-5)
                assert list(got["full"]) == list(want)
                for k in want:
                    np.testing.assert_allclose(got["full"][k], want[k], rtol=1e-5, atol=1e-6)
                assert got["groups"] == list(want)
                assert set(got["optim"]) == set(want_optim)
                for k, st in want_optim.items():
                    for s, v in st.items():
                        np.testing.assert_allclose(got["optim"][k][s], v, rtol=1e-5,
                                                   atol=1e-7)
        flat = results[rank][False, "FULL_SHARD"]["shapes"]
        assert flat == [("_fsdp_wrapped_module._flat_param", (14,), (14,)),
                        ("_fsdp_wrapped_module.b._fsdp_wrapped_module._flat_param", (19,),
                         (19,))]
        orig = results[rank][True, "FULL_SHARD"]["shapes"]
        assert [s for _, s, _ in orig] == TORCH_ORIG_SHAPES[rank]
        assert [g for _, s, g in orig] == [s if s != (0,) else None for s in
                                           TORCH_ORIG_SHAPES[rank]]
        assert [s for _, s, _ in results[rank][True, "NO_SHARD"]["shapes"]] == \
            [(3,), (4, 3), (4,), (4,), (4,), (5, 4), (5,), (2, 5), (2,)]
        assert results[rank]["bad strategy"] == "KeyError('FULL_SHARD')"


def _state_dicts(rank, world, path):
    x = ember.tensor(_data()[rank * 4:(rank + 1) * 4])
    out = {}
    for use_orig in (False, True):
        f = _wrap(_model(), use_orig_params=use_orig)
        opt = ember.optim.Adam(f.parameters(), lr=0.01)
        _train(f, x, opt, steps=2)
        full = f.state_dict()
        osd = FSDP.optim_state_dict(f, opt)
        with FSDP.state_dict_type(f, StateDictType.SHARDED_STATE_DICT):
            sharded = f.state_dict()
        out["sharded types"] = {k: (type(v).__name__, tuple(v.shape) if type(v).__name__ ==
                                    "Tensor" else tuple(v._shape), repr(getattr(v, "placements",
                                                                                None)))
                                for k, v in sharded.items()}
        dcp.save(sharded, checkpoint_id=os.path.join(path, str(use_orig)))
        # full: into other weights; sharded: through DCP into other weights
        g = _wrap(_model(seed=1), use_orig_params=use_orig)
        g.load_state_dict(full)
        h = _wrap(_model(seed=2), use_orig_params=use_orig)
        with FSDP.state_dict_type(h, StateDictType.SHARDED_STATE_DICT):
            target = h.state_dict()
            dcp.load(target, checkpoint_id=os.path.join(path, str(use_orig)))
            h.load_state_dict(target)
        opt_g = ember.optim.Adam(g.parameters(), lr=0.01)
        opt_g.load_state_dict(FSDP.optim_state_dict_to_load(g, opt_g, osd))
        for model, o in ((f, opt), (g, opt_g)):  # one more step each: the same numbers
            _train(model, x, o, steps=1)
        same = [all(np.array_equal(a.numpy(), b.numpy()) for a, b in
                    zip(m.state_dict().values(), f.state_dict().values())) for m in (g,)]
        out[use_orig] = {"full loaded": same[0],
                         "sharded loaded": all(np.array_equal(a.numpy(), b.numpy()) for a, b in
                                               zip(h.state_dict().values(), full.values())),
                         "keys": list(full)}
    with FSDP.state_dict_type(f, StateDictType.FULL_STATE_DICT,
                              ember.distributed.fsdp.FullStateDictConfig(rank0_only=True)):
        out["rank0_only"] = list(f.state_dict())
    return out


def test_state_dicts_round_trip(tmp_path):
    results = _launch(lambda rank, world: _state_dicts(rank, world, str(tmp_path)))
    keys = ["p", "a.weight", "a.bias", "norm.weight", "norm.bias", "b.0.weight", "b.0.bias",
            "b.2.weight", "b.2.bias"]
    for rank in (0, 1):
        for use_orig in (False, True):
            got = results[rank][use_orig]
            assert got["keys"] == keys
            assert got["full loaded"] and got["sharded loaded"], got
        assert results[rank]["sharded types"]["a.weight"] == ("DTensor", (4, 3),
                                                              "(Shard(dim=0),)")
    assert results[0]["rank0_only"] == keys and results[1]["rank0_only"] == []


def _scaler(rank, world):
    from ember.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
    model = ember.nn.Linear(2, 1)
    before = [p.detach().clone() for p in model.parameters()]
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    scaler = ShardedGradScaler(device="cpu", init_scale=4.0)
    scaler.scale(model(ember.ones(1, 2)).sum()).backward()
    if rank == 1:
        model.weight.grad[0, 0] = float("inf")
    scaler.step(opt)
    scaler.update()
    skipped = all(ember.equal(p, q) for p, q in zip(model.parameters(), before))
    opt.zero_grad()
    scaler.scale(model(ember.ones(1, 2)).sum()).backward()
    scaler.step(opt)
    return skipped, scaler.get_scale(), all(not ember.equal(p, q) for p, q in
                                            zip(model.parameters(), before))


def test_sharded_grad_scaler_skips_on_every_rank_when_one_sees_inf():
    results = _launch(_scaler)
    assert results[0] == results[1] == (True, 2.0, True)


def _deferred(rank, world):
    """accelerate's low-memory loading: rank 0 holds the weights, the others build on the
    meta device and take rank 0's (sync_module_states)."""
    if rank == 0:
        model = _model(seed=3)
    else:
        with ember.device("meta"):
            model = _model(seed=4)
    f = _wrap(model, sync_module_states=True,
              param_init_fn=lambda m: m.to_empty(device="cpu", recurse=False))
    return {k: v.numpy() for k, v in f.state_dict().items()}


def test_meta_modules_take_rank_zeros_weights():
    results = _launch(_deferred)
    want = {k: v.numpy() for k, v in _model(seed=3).state_dict().items()}
    for rank in (0, 1):
        assert list(results[rank]) == list(want)
        for k in want:
            np.testing.assert_array_equal(results[rank][k], want[k])


# ---- a world of one, beside PyTorch ----------------------------------------------------------
def _surface(lib, use_orig):
    import warnings
    fsdp = __import__(lib.__name__ + ".distributed.fsdp", fromlist=["wrap"])
    FSDP_ = fsdp.FullyShardedDataParallel
    model = _model(lib)
    if lib is not ember:  # ember's starting weights
        with lib.no_grad():
            for p, q in zip(model.parameters(), _model().parameters()):
                p.copy_(lib.tensor(q.detach().numpy()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = _wrap(model, lib, use_orig_params=use_orig)
    seen = [[str(w.message) for w in caught], repr(f), type(f.module).__name__,
            f.module is model, str(f.sharding_strategy), _text(repr(f.mixed_precision)),
            [(n, type(p).__name__, tuple(p.shape)) for n, p in f.named_parameters()],
            len(FSDP_.fsdp_modules(f)), list(f.state_dict())]
    opt = lib.optim.SGD(f.parameters(), lr=0.1, momentum=0.9)
    x = lib.tensor(_data())
    seen.append([round(n, 5) for n in _train(f, x, opt)])
    seen.append({k: np.round(v.numpy(), 5).tolist() for k, v in f.state_dict().items()})
    with FSDP_.summon_full_params(f):
        seen.append([(n, tuple(p.shape)) for n, p in f.named_parameters()])
        with lib.no_grad():
            f.module.p.fill_(2.0)
    seen.append(f.state_dict()["p"].tolist())  # written back
    if use_orig:
        with FSDP_.summon_full_params(f, with_grads=True):
            seen.append([(n, np.round(p.grad.numpy(), 5).tolist())
                         for n, p in f.named_parameters()])
    osd = FSDP_.optim_state_dict(f, opt)
    seen.append({k: {s: np.round(v.numpy(), 5).tolist() for s, v in st.items()}
                 for k, st in sorted(osd["state"].items())})
    seen.append(repr(FSDP_.get_state_dict_type(f)))
    return seen


@pytest.mark.parametrize("use_orig", [False, True])
def test_world_of_one_is_pytorchs(torch, world_of_one, use_orig):
    assert _surface(ember, use_orig) == _surface(torch, use_orig)


def _errors(lib):
    fsdp = __import__(lib.__name__ + ".distributed.fsdp", fromlist=["wrap"])
    FSDP_, cpu = fsdp.FullyShardedDataParallel, lib.device("cpu")
    nn = lib.nn
    f = FSDP_(nn.Linear(2, 2), device_id=cpu)
    calls = [
        lambda: FSDP_(nn.Linear(2, 2), device_id=cpu, ignored_modules=[3]),
        lambda: FSDP_(nn.Linear(2, 2), device_id=cpu, auto_wrap_policy=3),
        lambda: FSDP_(nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2).double()), device_id=cpu),
        lambda: FSDP_(nn.Linear(2, 2), device_id=cpu,
                      sharding_strategy=fsdp.ShardingStrategy.HYBRID_SHARD),
        lambda: FSDP_(nn.Linear(2, 2)),  # no accelerator and no device_id
        lambda: FSDP_.set_state_dict_type(f, "full"),
        lambda: FSDP_.set_state_dict_type(f, fsdp.StateDictType.FULL_STATE_DICT,
                                          fsdp.ShardedStateDictConfig()),
        lambda: FSDP_.summon_full_params(f, rank0_only=True).__enter__(),
        lambda: FSDP_.summon_full_params(f, with_grads=True).__enter__(),
        lambda: FSDP_(nn.Sequential(FSDP_(nn.Linear(2, 2), device_id=cpu)), device_id=cpu,
                      auto_wrap_policy=fsdp.wrap.ModuleWrapPolicy({nn.Linear})),
    ]
    seen = []
    for call in calls:
        with pytest.raises(Exception) as info:
            call()
        seen.append((type(info.value).__name__, _text(str(info.value))))
    return seen


def test_bad_input_raises_pytorchs_errors(torch, world_of_one):
    got, want = _errors(ember), _errors(torch)
    for (g_type, g_msg), (w_type, w_msg) in zip(got, want):
        assert g_type == w_type, (g_msg, w_msg)
        if "FullyShardedDataParallel(" not in w_msg:  # reprs of modules differ in classes
            assert g_msg.split("\n")[0] == w_msg.split("\n")[0]


def _mixed(lib):
    fsdp = __import__(lib.__name__ + ".distributed.fsdp", fromlist=["wrap"])

    class BN(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(4, 3)
            self.bn = lib.nn.BatchNorm1d(3)
            self.register_buffer("buf", lib.ones(2))

        def forward(self, x):
            self.seen = (str(x.dtype), str(self.buf.dtype))
            return self.bn(self.lin(x))
    lib.manual_seed(0)
    mp = fsdp.MixedPrecision(param_dtype=lib.bfloat16, reduce_dtype=lib.float32,
                             buffer_dtype=lib.bfloat16)
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = fsdp.FullyShardedDataParallel(
            BN(), device_id=lib.device("cpu"), mixed_precision=mp,
            auto_wrap_policy=fsdp.wrap.ModuleWrapPolicy({lib.nn.Linear}))
    out = f(lib.ones(5, 4))
    out.float().sum().backward()
    return [repr(f), [_text(str(w.message)) for w in caught if "mixed precision" in
                      str(w.message)],
            str(out.dtype), f.module.seen,
            [(n, str(p.dtype), str(p.grad.dtype)) for n, p in f.named_parameters()],
            {k: str(v.dtype) for k, v in f.state_dict().items()}]


def test_mixed_precision_is_pytorchs(torch, world_of_one):
    assert _mixed(ember) == _mixed(torch)


def test_fsdp1_import_paths_resolve_through_compat():
    code = ("import ember.compat; ember.compat.install(); import torch; "
            "from torch.distributed.fsdp import (FullyShardedDataParallel, StateDictType, "
            "ShardingStrategy, MixedPrecision, CPUOffload, BackwardPrefetch, "
            "FullStateDictConfig, ShardedStateDictConfig, FullOptimStateDictConfig, "
            "ShardedOptimStateDictConfig); "
            "from torch.distributed.fsdp.wrap import (transformer_auto_wrap_policy, "
            "size_based_auto_wrap_policy, lambda_auto_wrap_policy, ModuleWrapPolicy, "
            "enable_wrap, wrap); "
            "from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler; "
            "import torch.distributed.fsdp.fully_sharded_data_parallel as m; "
            "import ember.distributed.fsdp as e; "
            "assert m.FullyShardedDataParallel is FullyShardedDataParallel "
            "is e.FullyShardedDataParallel; "
            "print(m.__name__)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ember.distributed.fsdp.fully_sharded_data_parallel"


def test_wrap_policies():
    """Which modules each policy wraps (no process group needed: the policies only pick)."""
    from ember.distributed.fsdp.wrap import (enable_wrap, lambda_auto_wrap_policy,
                                             policy_targets, size_based_auto_wrap_policy,
                                             transformer_auto_wrap_policy, wrap)
    import functools
    m = _model()
    picked = {
        "transformer": functools.partial(transformer_auto_wrap_policy,
                                         transformer_layer_cls={ember.nn.Linear}),
        "lambda": functools.partial(lambda_auto_wrap_policy,
                                    lambda_fn=lambda mod: isinstance(mod, ember.nn.LayerNorm)),
        "size": functools.partial(size_based_auto_wrap_policy, min_num_params=30),
        "module": ModuleWrapPolicy({ember.nn.Sequential}),
    }
    names = {id(mod): n for n, mod in m.named_modules()}
    got = {k: sorted(names[id(mod)] for mod in policy_targets(p, m, set(), set(), {}))
           for k, p in picked.items()}
    assert got == {"transformer": ["a", "b.0", "b.2"], "lambda": ["norm"], "size": ["b"],
                   "module": ["b"]}
    with enable_wrap(wrapper_cls=lambda mod, **kw: ("wrapped", mod, kw), flag=1):
        assert wrap(m.a, other=2) == ("wrapped", m.a, {"flag": 1, "other": 2})
    assert wrap(m.a) is m.a
