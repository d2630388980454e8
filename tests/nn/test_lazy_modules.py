"""Lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*)
against PyTorch: reprs and state dicts before and after the first call, the class they become,
inferred shapes and dtypes, default initialisation, outputs and gradients with the same
weights, loading a checkpoint into a lazy module, and the errors."""
import math

import numpy as np
import pytest

import ember

CASES = [
    ("LazyLinear", (3,), {}, (4, 5)),
    ("LazyLinear", (3,), dict(bias=False), (2, 4, 5)),
    ("LazyConv1d", (4, 3), dict(stride=2, padding=1), (2, 3, 9)),
    ("LazyConv2d", (4, 3), dict(groups=2, padding_mode="reflect", padding=1), (2, 6, 7, 7)),
    ("LazyConv2d", (4, 3), dict(bias=False), (3, 7, 7)),
    ("LazyConv3d", (2, 2), {}, (1, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), dict(stride=2, output_padding=1), (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), dict(groups=2, dilation=2), (2, 4, 5, 5)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), dict(affine=False, momentum=None), (4, 3, 5)),
    ("LazyBatchNorm2d", (), dict(track_running_stats=False), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), dict(bias=False), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), dict(affine=False, track_running_stats=False), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 3, 2)),
]


def _sd(mod):
    return {k: (repr(v) if type(v).__name__.startswith("Uninitialized") else
                (tuple(v.shape), str(v.dtype)))
            for k, v in mod.state_dict().items()}


@pytest.mark.parametrize("name,args,kwargs,shape", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_lazy_module_matches_torch(torch, name, args, kwargs, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    mods, before = [], []
    for lib in (ember, torch):
        mod = getattr(lib.nn, name)(*args, **kwargs).double()
        before.append((repr(mod), _sd(mod), mod.has_uninitialized_params()))
        mod(lib.tensor(x))  # the dry run
        mods.append(mod)
    assert before[0] == before[1]
    e_mod, t_mod = mods
    assert type(e_mod).__name__ == type(t_mod).__name__ == name[4:]
    assert repr(e_mod) == repr(t_mod)
    assert _sd(e_mod) == _sd(t_mod)
    assert not hasattr(e_mod, "_initialize_hook")
    assert all(type(p) is ember.nn.Parameter for p in e_mod.parameters())
    with torch.no_grad():
        for k, v in t_mod.state_dict().items():
            v.copy_(torch.from_numpy(e_mod.state_dict()[k].numpy().copy()))
    outs = []
    for lib, mod in ((ember, e_mod), (torch, t_mod)):
        xt = lib.tensor(x, requires_grad=True)
        out = mod(xt)
        (out * out).sum().backward()
        outs.append([out.detach().numpy(), xt.grad.numpy()] +
                    [p.grad.numpy() for p in mod.parameters()] +
                    [b.numpy() for b in mod.buffers()])
    for ours, theirs in zip(*outs):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,args,shape", [("LazyLinear", (50,), (2, 40)),
                                             ("LazyConv2d", (30, 3), (1, 8, 5, 5)),
                                             ("LazyConvTranspose1d", (30, 3), (1, 8, 5))])
def test_lazy_default_init_is_torch_distribution(name, args, shape):
    mod = getattr(ember.nn, name)(*args)
    mod(ember.zeros(shape))
    w = mod.weight.detach().numpy()
    fan_in = w.shape[1] * int(np.prod(w.shape[2:]))  # torch's fan_in: dim 1 x receptive field
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
    b = mod.bias.detach().numpy()
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0


def test_lazy_batchnorm_initialises_as_torch():
    bn = ember.nn.LazyBatchNorm2d()
    bn.eval()
    bn(ember.ones(1, 4, 2, 2))
    np.testing.assert_array_equal(bn.weight.detach().numpy(), np.ones(4, np.float32))
    np.testing.assert_array_equal(bn.bias.detach().numpy(), np.zeros(4, np.float32))
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(4, np.float32))
    np.testing.assert_array_equal(bn.running_var.numpy(), np.ones(4, np.float32))


def test_checkpoint_loads_into_lazy_module(torch):
    for lib in (ember, torch):
        full = lib.nn.Conv2d(3, 4, 3)
        lazy = lib.nn.LazyConv2d(4, 3)
        lazy.load_state_dict(full.state_dict())
        assert type(lazy).__name__ == "LazyConv2d"
        assert tuple(lazy.weight.shape) == (4, 3, 3, 3)
        np.testing.assert_array_equal(lazy.weight.detach().numpy(), full.weight.detach().numpy())
        lazy(lib.zeros(1, 3, 5, 5))
        assert type(lazy) is lib.nn.Conv2d
        np.testing.assert_array_equal(lazy.weight.detach().numpy(), full.weight.detach().numpy())
        # an uninitialized checkpoint loads into an uninitialized module
        other = lib.nn.LazyConv2d(4, 3)
        other.load_state_dict(lib.nn.LazyConv2d(4, 3).state_dict())
        assert other.has_uninitialized_params()


def test_lazy_errors_match_torch(torch):
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) "
                                               r"input to LazyConv2d, but got input of size: "
                                               r"torch.Size\(\[2, 5, 5, 5, 5\]\)"):
            lib.nn.LazyConv2d(4, 3)(lib.zeros(2, 5, 5, 5, 5))
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            lib.nn.LazyConv2d(4, 3, groups=2)(lib.zeros(2, 3, 5, 5))
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized "
                                               "parameter or buffer."):
            lib.nn.LazyLinear(3).weight.shape
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                             'LazyConvTranspose2d'):
            lib.nn.LazyConvTranspose2d(3, 3, padding_mode="reflect")
        with pytest.raises(RuntimeError, match="size mismatch for weight"):
            lib.nn.Linear(2, 3).load_state_dict({"weight": lib.zeros(3, 4),
                                                 "bias": lib.zeros(3)})


def test_mixin_path_and_is_lazy(torch):
    from ember.nn.modules.lazy import LazyModuleMixin
    from ember.nn.parameter import is_lazy
    assert isinstance(ember.nn.LazyLinear(2), LazyModuleMixin)
    assert is_lazy(ember.nn.UninitializedBuffer()) and not is_lazy(ember.zeros(1))
    assert repr(ember.nn.UninitializedBuffer()) == repr(torch.nn.UninitializedBuffer())

    class Custom(LazyModuleMixin, ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = ember.nn.UninitializedParameter()

        def initialize_parameters(self, x, scale=1.0):
            self.w.materialize((x.shape[-1],))
            with ember.no_grad():
                self.w.fill_(scale)

        def forward(self, x, scale=1.0):
            return x * self.w

    m = Custom()
    out = m(ember.ones(2, 3), scale=2.0)
    assert type(m) is Custom and out.tolist() == [[2.0] * 3] * 2


_PLACEHOLDER_USES = {
    "numel": lambda p: p.numel(), "nelement": lambda p: p.nelement(), "sum": lambda p: p.sum(),
    "dim": lambda p: p.dim(), "add": lambda p: p + 1, "len": len, "eq": lambda p: p == p,
    "clone": lambda p: p.clone(), "detach": lambda p: p.detach(), "zero_": lambda p: p.zero_(),
    "data_ptr": lambda p: p.data_ptr(), "getitem": lambda p: p[0],
    "requires_grad_": lambda p: p.requires_grad_(False), "shape": lambda p: p.shape,
    # what may be asked of a placeholder: its kind, and moves
    "dtype": lambda p: str(p.dtype), "device": lambda p: str(p.device),
    "size": lambda p: tuple(p.size()), "is_floating_point": lambda p: p.is_floating_point(),
    "float": lambda p: type(p.float()).__name__, "to": lambda p: type(p.to("cpu")).__name__,
    "requires_grad": lambda p: p.requires_grad, "repr": repr, "hash": lambda p: type(hash(p)),
}


@pytest.mark.parametrize("use", sorted(_PLACEHOLDER_USES))
def test_uninitialized_parameter_refuses_tensor_use(torch, use):
    # an empty placeholder must not answer numel() with 0 (a parameter count before the
    # first forward): PyTorch refuses every use but its kind and moves
    def outcome(lib):
        try:
            return _PLACEHOLDER_USES[use](lib.nn.LazyLinear(3).weight)
        except (ValueError, RuntimeError) as exc:
            return type(exc), str(exc).split(" in <")[0]
    assert outcome(ember) == outcome(torch)


def test_uninitialized_parameter_copies_and_saves_as_placeholder(tmp_path):
    import copy
    m = ember.nn.LazyLinear(3)
    twin = copy.deepcopy(m)
    assert type(twin.weight) is ember.nn.UninitializedParameter and twin.weight.requires_grad
    assert twin.weight is not m.weight
    ember.save(m.state_dict(), tmp_path / "lazy.pt")
    loaded = ember.load(tmp_path / "lazy.pt", weights_only=False)
    assert {k: type(v).__name__ for k, v in loaded.items()} == {
        "weight": "UninitializedParameter", "bias": "UninitializedParameter"}
    m(ember.ones(2, 4))
    assert sum(p.numel() for p in m.parameters()) == 15 and type(m.weight) is ember.nn.Parameter
