"""Random sampling: seeding and generators (same seed, same numbers; independent generators;
state round trips; fork_rng), the distributions' statistics, autograd behaviour of the
samplers, devices (the `fake_cuda` stand-in), parity of shapes, dtypes and errors, and
PyTorch's own numbers from the CPU samplers whose stream ember reproduces."""
import pickle
import re

import numpy as np
import pytest

import ember
from ember.random import fork_rng, generator_for


# ---- seeding and generators ------------------------------------------------------------------
def test_manual_seed_repeats_the_stream():
    ember.manual_seed(0)
    a = ember.rand(3)
    ember.manual_seed(0)
    b = ember.rand(3)
    assert a.tolist() == b.tolist()
    c = ember.rand(3)
    assert a.tolist() != c.tolist()


@pytest.mark.parametrize("draw", [
    lambda g: ember.rand(4, generator=g), lambda g: ember.randn(4, generator=g),
    lambda g: ember.randint(0, 10, (4,), generator=g), lambda g: ember.randperm(6, generator=g),
    lambda g: ember.normal(0.0, 1.0, (4,), generator=g),
    lambda g: ember.multinomial(ember.ones(5), 3, generator=g),
    lambda g: ember.bernoulli(ember.full((6,), 0.5), generator=g),
    lambda g: ember.poisson(ember.full((4,), 3.0), generator=g),
    lambda g: ember.empty(4).uniform_(generator=g), lambda g: ember.empty(4).normal_(generator=g),
    lambda g: ember.empty(4).exponential_(generator=g),
    lambda g: ember.empty(4).random_(0, 100, generator=g)])
def test_generator_argument_is_reproducible_and_independent(draw):
    g = ember.Generator().manual_seed(123)
    a = draw(g)
    ember.rand(10)  # the global stream moving does not touch g
    g.manual_seed(123)
    assert draw(g).tolist() == a.tolist()


def test_generator_does_not_advance_the_global_one():
    ember.manual_seed(5)
    ember.rand(2, generator=ember.Generator().manual_seed(1))
    a = ember.rand(3)
    ember.manual_seed(5)
    assert ember.rand(3).tolist() == a.tolist()


def test_get_state_set_state_round_trip():
    g = ember.Generator().manual_seed(7)
    state = g.get_state()
    assert state.dtype is ember.uint8 and state.dim() == 1
    a = ember.randn(5, generator=g)
    g.set_state(state)
    assert ember.randn(5, generator=g).tolist() == a.tolist()
    ember.manual_seed(3)
    s = ember.get_rng_state()
    x = ember.rand(4)
    ember.set_rng_state(s)
    assert ember.rand(4).tolist() == x.tolist()


@pytest.mark.parametrize("draw", [None, "rand1", "rand624", "rand700", "randn1", "randint"])
def test_cpu_state_is_pytorchs_bytes(torch, draw):
    """A CPU generator's state is PyTorch's 5056-byte layout, byte for byte, and a state
    taken from PyTorch resumes PyTorch's stream in ember."""
    draws = {"rand1": lambda t: t.rand(1), "rand624": lambda t: t.rand(624),
             "rand700": lambda t: t.rand(700), "randn1": lambda t: t.randn(1),
             "randint": lambda t: t.randint(0, 10, (5,))}
    states = []
    for lib in (torch, ember):
        lib.manual_seed(5)
        if draw:
            draws[draw](lib)
        states.append(lib.get_rng_state().numpy())
    assert states[1].shape == (5056,) and np.array_equal(states[0], states[1])
    ember.set_rng_state(ember.tensor(states[0]))
    torch.set_rng_state(torch.tensor(states[0]))
    assert ember.randn(3).tolist() == torch.randn(3).tolist()
    assert np.array_equal(ember.Generator().get_state().numpy(),
                          torch.Generator().get_state().numpy())


def test_cpu_state_checks_as_pytorch():
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but "
                                           "found the input RNG state size to be 10"):
        ember.set_rng_state(ember.zeros(10, dtype=ember.uint8))
    state = ember.get_rng_state()
    state[8:12] = 0  # `left` 0
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        ember.set_rng_state(state)


def test_a_state_ember_pickled_before_still_resumes():
    """Checkpoints written before the CPU state took PyTorch's layout hold ember's pickled
    (seed, Twister words, position, cached normal): they still load and resume the stream."""
    import pickle
    from ember.random import _capture
    g = ember.default_generator
    ember.manual_seed(3)
    ember.randn(5)
    old = pickle.dumps((g.initial_seed(), _capture(g.rng)))
    expected = ember.randn(4).tolist()
    ember.set_rng_state(ember.tensor(np.frombuffer(old, np.uint8).copy()))
    assert ember.randn(4).tolist() == expected


def test_set_state_rejects_other_tensors():
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        ember.Generator().set_state(ember.zeros(3))


def test_seed_values():
    g = ember.Generator()
    assert g.initial_seed() == 67280421310721
    assert ember.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    assert ember.initial_seed() == 2 ** 64 - 1
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        ember.manual_seed(2 ** 64)
    s = ember.seed()
    assert ember.initial_seed() == s


def test_fork_rng_restores_the_stream():
    ember.manual_seed(11)
    with fork_rng():
        inside = ember.rand(3)
    after = ember.rand(3)
    assert inside.tolist() == after.tolist()

    @fork_rng()
    def draw():
        return ember.rand(2)
    ember.manual_seed(2)
    draw()
    b = ember.rand(2)
    ember.manual_seed(2)
    assert ember.rand(2).tolist() == b.tolist()


def test_generator_device_must_match(fake_cuda):
    g = ember.Generator("cpu")
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        ember.rand(2, device="cuda", generator=g)


def test_cuda_draws_come_from_the_cuda_generator(fake_cuda):
    ember.manual_seed(4)
    a = ember.rand(3, device="cuda")
    assert a.device == fake_cuda
    ember.manual_seed(4)
    b = ember.rand(3, device="cuda")
    assert a.tolist() == b.tolist()
    gen = generator_for(fake_cuda)
    assert gen is generator_for(fake_cuda) and gen is not ember.default_generator
    t = ember.zeros(4, device="cuda").normal_()
    assert t.device == fake_cuda
    assert ember.randn_like(t).device == fake_cuda
    assert ember.multinomial(ember.ones(3, device="cuda"), 2).device == fake_cuda


# ---- distributions ------------------------------------------------------------------------------
N = 20000


def _np(t):
    return t.detach().double().numpy()


def test_rand_and_randn_moments():
    ember.manual_seed(0)
    u = _np(ember.rand(N))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    z = _np(ember.randn(N, dtype=ember.float64))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    c = ember.randn(N, dtype=ember.complex64).numpy()
    assert abs(c.var() - 1) < 0.05 and abs(c.real.var() - 0.5) < 0.03


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_uniform_stays_below_one(dtype):
    u = _np(ember.rand(N, dtype=getattr(ember, dtype)))
    assert u.min() >= 0 and u.max() < 1


def test_randint_and_randperm():
    x = ember.randint(-3, 4, (N,)).numpy()
    assert x.min() == -3 and x.max() == 3
    p = ember.randperm(50).numpy()
    assert sorted(p.tolist()) == list(range(50))
    assert ember.randint(5, (2, 3), dtype=ember.float32).dtype is ember.float32


def test_normal_overloads_broadcast_and_scale():
    m = ember.tensor([0.0, 100.0])
    out = _np(ember.normal(m.expand(N, 2), ember.tensor([1.0, 0.0])))
    assert abs(out[:, 0].mean()) < 0.05 and (out[:, 1] == 100).all()
    x = _np(ember.normal(5.0, 2.0, (N,)))
    assert abs(x.mean() - 5) < 0.1 and abs(x.std() - 2) < 0.1


def test_inplace_sampler_statistics():
    assert abs(_np(ember.empty(N).uniform_(-2, 3)).mean() - 0.5) < 0.05
    assert abs(_np(ember.empty(N).normal_(1, 2)).std() - 2) < 0.1
    assert abs(_np(ember.empty(N).exponential_(4.0)).mean() - 0.25) < 0.02
    g = _np(ember.empty(N).geometric_(0.25))
    assert g.min() >= 1 and abs(g.mean() - 4) < 0.2 and (g == np.round(g)).all()
    ln = np.log(_np(ember.empty(N).log_normal_(0.5, 0.25)))
    assert abs(ln.mean() - 0.5) < 0.02 and abs(ln.std() - 0.25) < 0.02
    assert abs(np.median(_np(ember.empty(N).cauchy_(3.0, 1.0))) - 3) < 0.1
    assert abs(_np(ember.empty(N).bernoulli_(0.3)).mean() - 0.3) < 0.02
    assert abs(_np(ember.poisson(ember.full((N,), 3.0))).mean() - 3) < 0.1


def _fused(u, scale, shift):
    """float32 u * scale + shift rounded once (scale and shift rounded to float32 first)."""
    f = np.float32
    return (u.astype(np.float64) * f(scale) + f(shift)).astype(np.float32)


@pytest.mark.parametrize("n", [5, 1000, 40_000])  # 40 000: over one fused chunk, not a multiple
def test_float32_samplers_round_once_as_pytorch(torch, n):
    """The in-place samplers scale and shift the same draw that rand/randn give, rounding the
    result once (fused multiply-add), so a layer's initialisation matches PyTorch's bit for
    bit when the draws do. PyTorch's normal_ draws below 16 values in float64: sizes >= 16."""
    for lib in (torch, ember):
        def draw(make):
            return make(lib.Generator().manual_seed(3)).numpy()
        u = draw(lambda g: lib.rand(n, generator=g))
        for lo, hi in [(-0.1, 0.1), (2.0, 5.0), (-0.3, 0.7)]:
            got = draw(lambda g: lib.empty(n).uniform_(lo, hi, generator=g))
            assert np.array_equal(got, _fused(u, np.float32(hi) - np.float32(lo), lo)), lib
        if n < 16:
            continue
        z = draw(lambda g: lib.randn(n, generator=g))
        for mean, std in [(1.0, 0.3), (0.0, 0.01)]:
            got = draw(lambda g: lib.empty(n).normal_(mean, std, generator=g))
            assert np.array_equal(got, _fused(z, std, mean)), lib
            got = draw(lambda g: lib.normal(mean, std, (n,), generator=g))
            assert np.array_equal(got, _fused(z, std, mean)), lib


def test_random_ranges_follow_the_dtype():
    assert _np(ember.zeros(N, dtype=ember.int8).random_()).max() <= 127
    assert _np(ember.zeros(N, dtype=ember.int8).random_()).min() >= 0
    assert set(ember.zeros(100, dtype=ember.bool).random_().tolist()) == {False, True}
    assert _np(ember.zeros(N).random_(5)).max() == 4
    x = _np(ember.zeros(N).random_(2, 5))
    assert x.min() == 2 and x.max() == 4


def test_bernoulli_probabilities():
    p = ember.tensor([0.0, 1.0, 0.5]).expand(N, 3)
    b = _np(ember.bernoulli(p))
    assert (b[:, 0] == 0).all() and (b[:, 1] == 1).all() and abs(b[:, 2].mean() - 0.5) < 0.02


def test_multinomial_with_replacement_frequencies():
    p = ember.tensor([[0.1, 0.2, 0.7], [0.0, 0.5, 0.5]])
    draws = ember.multinomial(p, N, replacement=True).numpy()
    freq = np.stack([np.bincount(r, minlength=3) / N for r in draws])
    np.testing.assert_allclose(freq, p.numpy(), atol=0.02)


def test_multinomial_without_replacement():
    rows = ember.multinomial(ember.ones(100, 6), 6).numpy()
    assert all(sorted(r) == list(range(6)) for r in rows)
    # zero-probability categories come only after every positive one
    firsts = ember.multinomial(ember.tensor([0.0, 1.0, 0.0, 3.0]).expand(500, 4), 2).numpy()
    assert set(map(tuple, np.sort(firsts, axis=1))) == {(1, 3)}
    # sequential sampling: the second draw's law given the first
    second = np.stack([ember.multinomial(ember.tensor([0.1, 0.2, 0.7]), 2).numpy()
                       for _ in range(3000)])[:, 1]
    np.testing.assert_allclose(np.bincount(second, minlength=3) / 3000,
                               [0.2 * 0.1 / 0.8 + 0.7 * 0.1 / 0.3, 0.1 * 0.2 / 0.9 + 0.7 * 0.2 / 0.3,
                                0.1 * 0.7 / 0.9 + 0.2 * 0.7 / 0.8], atol=0.03)


# ---- autograd ----------------------------------------------------------------------------------
def test_leaf_requiring_grad_is_refused_outside_no_grad():
    w = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.uniform_()
    with ember.no_grad():  # as nn.init does
        w.uniform_(-1, 1)
        w.normal_()
    assert w.requires_grad and w.grad_fn is None


@pytest.mark.parametrize("call, name", [
    (lambda y: y.uniform_(), "UniformBackward0"), (lambda y: y.normal_(), "NormalBackward0"),
    (lambda y: y.bernoulli_(0.5), "BernoulliBackward2"),
    (lambda y: y.bernoulli_(ember.ones(3)), "BernoulliBackward1"),
    (lambda y: y.random_(), "RandomBackward2"), (lambda y: y.random_(5), "RandomBackward1"),
    (lambda y: y.random_(1, 5), "RandomBackward0"),
    (lambda y: y.exponential_(), "ExponentialBackward0"),
    (lambda y: y.geometric_(0.5), "GeometricBackward0"),
    (lambda y: y.log_normal_(), "LogNormalBackward0"), (lambda y: y.cauchy_(), "CauchyBackward0")])
def test_inplace_samplers_give_zero_gradient(call, name):
    x = ember.ones(3, requires_grad=True)
    y = call(x * 2)
    assert type(y.grad_fn).__name__ == name
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_normal_and_bernoulli_nodes_match_pytorch(torch):
    for lib in (torch, ember):
        m = lib.zeros(3, requires_grad=True)
        s = lib.ones(3, requires_grad=True)
        names = [type(lib.normal(m, s).grad_fn).__name__, type(lib.normal(m, 2.0).grad_fn).__name__,
                 type(lib.normal(1.0, s).grad_fn).__name__,
                 type(lib.bernoulli(lib.full((3,), 0.5, requires_grad=True)).grad_fn).__name__,
                 type(lib.poisson(s).grad_fn).__name__]
        assert names == ["NormalBackward3", "NormalBackward1", "NormalBackward2",
                         "BernoulliBackward0", "PoissonBackward0"]
        y = lib.normal(m, s)
        y.sum().backward()
        assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3


def test_inplace_sampler_bumps_version_and_writes_through_views():
    base = ember.zeros(4, 4)
    v = base[1]
    before = base._version
    v.fill_(0).uniform_(5, 6)
    assert base._version > before
    assert (base.numpy()[1] >= 5).all() and (base.numpy()[0] == 0).all()


def test_factory_requires_grad_and_out():
    t = ember.rand(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    out = ember.empty(5)
    r = ember.randn(3, out=out)
    assert r is out and out.shape == (3,)
    out64 = ember.empty(3, dtype=ember.float64)
    assert ember.rand(3, out=out64).dtype is ember.float64
    with pytest.raises(RuntimeError, match="dtype Double does not match dtype of out parameter"):
        ember.rand(3, dtype=ember.float64, out=ember.empty(3))


# ---- parity: shapes, dtypes and messages ----------------------------------------------------
PARITY_CASES = [
    "L.rand(2, 3)", "L.rand((2, 3), dtype=L.float64)", "L.rand(2, dtype=L.float16)",
    "L.randn(4, dtype=L.complex64)", "L.randint(5, (3,))", "L.randint(2, 5, (3, 2))",
    "L.randint(5, (3,), dtype=L.float32)", "L.randperm(7)", "L.randperm(3, dtype=L.float64)",
    "L.normal(L.zeros(3, 1), L.ones(2))", "L.normal(L.zeros(3, dtype=L.float64), 1.)",
    "L.normal(0, 1, (2,))", "L.normal(2., L.ones(3, dtype=L.float64))",
    "L.bernoulli(L.ones(3, dtype=L.int64), 0.3)", "L.multinomial(L.ones(2, 5), 3)",
    "L.multinomial(L.ones(0, 5), 2)", "L.poisson(L.ones(3, dtype=L.float64))",
    "L.randint_like(L.ones(3, dtype=L.int32), 5)", "L.rand_like(L.ones(2, 2), dtype=L.float64)",
    "L.ones(3, dtype=L.int64).geometric_(0.5)", "L.ones(3, dtype=L.uint8).random_()",
    "L.rand(3, out=L.empty(2))", "L.randint(3, (3,), out=L.empty(3))",
    # errors
    "L.rand(2, dtype=L.int64)", "L.randn(2, dtype=L.int32)", "L.randint(5, 5, (3,))",
    "L.randint(300, (3,), dtype=L.uint8)", "L.randint(5, (3,), dtype=L.bool)", "L.randint(5, 3)",
    "L.randperm(-1)", "L.randperm(300, dtype=L.uint8)", "L.normal(L.zeros(3), L.ones(2))",
    "L.normal(L.zeros(3), -1.)", "L.normal(0., -L.ones(3))", "L.normal(0., 1.)",
    "L.bernoulli(L.full((3,), 1.5))", "L.bernoulli(L.ones(3), 1.5)",
    "L.multinomial(L.ones(5), 6)", "L.multinomial(L.ones(2, 2, 5), 3)",
    "L.multinomial(-L.ones(5), 1)", "L.multinomial(L.zeros(5), 1)",
    "L.multinomial(L.ones(5, dtype=L.int64), 1)", "L.multinomial(L.ones(5), 0)",
    "L.poisson(-L.ones(3))", "L.ones(3).uniform_(1, 0)", "L.ones(3).uniform_(0, float('inf'))",
    "L.ones(3).normal_(0, -1)", "L.ones(3).bernoulli_(L.full((2,), 0.5))",
    "L.ones(3).random_(5, 2)", "L.ones(3, dtype=L.uint8).random_(300)",
    "L.ones(3).exponential_(0)", "L.ones(3, dtype=L.int64).exponential_()",
    "L.ones(3).geometric_(1.5)", "L.ones(3).log_normal_(1, 0)", "L.ones(3).cauchy_(0, -1)",
    "L.ones(3, dtype=L.int64).cauchy_()", "L.rand(3, dtype=L.float64, out=L.empty(3))",
    "L.randint(5, (3,), requires_grad=True)",
]


def _outcome(lib, src):
    try:
        r = eval(src, {"L": lib})
    except Exception as e:  # the outcome compared is the error itself
        return ("error", type(e).__name__, str(e).split("\n")[0])
    return ("tensor", str(r.dtype).split(".")[-1], tuple(r.shape), r.requires_grad)


@pytest.mark.parametrize("src", PARITY_CASES)
def test_parity_meta_and_errors(torch, src):
    assert _outcome(ember, src) == _outcome(torch, src)


@pytest.mark.parametrize("rows", [[[1.0, float("inf")], [-1.0, 2.0]], [[1.0, float("nan")]],
                                  [[0.0, 0.0], [-1.0, 2.0]], [[2.0, float("inf"), -1.0]]])
def test_multinomial_repeated_draws_check_rows_as_pytorchs_kernel(rows, torch):
    """Repeated draws are checked inside PyTorch's kernel, row by row, with messages of their
    own (one draw, or draws without repeats, are checked before it)."""
    with pytest.raises(RuntimeError) as theirs:
        torch.multinomial(torch.tensor(rows), 3, replacement=True)
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
        ember.multinomial(ember.tensor(rows), 3, replacement=True)


def test_a_cuda_generator_without_cuda_is_refused_as_pytorch_refuses_it():
    if ember.cuda.is_available():
        pytest.skip("a CUDA backend is present (a GPU or the stand-in)")
    with pytest.raises(RuntimeError, match="Cannot get CUDA generator without ATen_cuda"):
        ember.Generator(device="cuda")
    ember.cuda.manual_seed_all(3)  # seeding is still taken (PyTorch queues it)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        ember.cuda.get_rng_state()
    # and checkpointing, which keeps the generators' states, still works after it
    x = ember.ones(3, requires_grad=True)
    ember.utils.checkpoint.checkpoint(ember.sin, x, use_reentrant=False).sum().backward()
    assert x.grad.tolist() == pytest.approx([0.5403023] * 3)


# ---- PyTorch's CPU stream -------------------------------------------------------------------
_SAME_AS_PYTORCH = {
    "rand": lambda L, g: L.rand(5, 7, generator=g),
    "rand float64": lambda L, g: L.rand(9, dtype=L.float64, generator=g),
    "rand float16": lambda L, g: L.rand(5000, dtype=L.float16, generator=g),
    "rand bfloat16": lambda L, g: L.rand(5000, dtype=L.bfloat16, generator=g),
    "rand complex64": lambda L, g: L.rand(6, dtype=L.complex64, generator=g),
    "uniform_": lambda L, g: L.empty(1000).uniform_(-0.3, 0.7, generator=g),
    "uniform_ half": lambda L, g: L.empty(3000, dtype=L.float16).uniform_(-1, 3, generator=g),
    "randn 3": lambda L, g: L.randn(3, generator=g),
    "randn 16": lambda L, g: L.randn(16, generator=g),
    "randn 1000": lambda L, g: L.randn(10, 100, generator=g),
    "randn 37 float64": lambda L, g: L.randn(37, dtype=L.float64, generator=g),
    "normal_": lambda L, g: L.empty(99).normal_(0.5, 2.0, generator=g),
    "normal small then large": lambda L, g: L.cat([L.randn(3, generator=g),
                                                   L.randn(40, generator=g)]),
    "normal(mean, std, size)": lambda L, g: L.normal(1.0, 0.1, (50,), generator=g),
    "randint": lambda L, g: L.randint(-5, 17, (40,), generator=g),
    "randint 2^40": lambda L, g: L.randint(0, 1 << 40, (9,), generator=g),
    "random_ int32": lambda L, g: L.empty(9, dtype=L.int32).random_(generator=g),
    "random_ int64": lambda L, g: L.empty(9, dtype=L.int64).random_(generator=g),
    "random_ float": lambda L, g: L.empty(9).random_(generator=g),
    "randperm": lambda L, g: L.randperm(1000, generator=g),
    "exponential_": lambda L, g: L.empty(20).exponential_(generator=g),
    "bernoulli_(p)": lambda L, g: L.empty(300).bernoulli_(0.3, generator=g),
    "bernoulli(x, p) float64": lambda L, g: L.bernoulli(L.ones(40, dtype=L.float64), 0.7,
                                                        generator=g),
    # probabilities of float64 draw 53-bit uniforms, the others 24-bit ones
    "bernoulli(probs)": lambda L, g: L.bernoulli(L.linspace(0, 1, 300), generator=g),
    "bernoulli(probs) float64": lambda L, g: L.bernoulli(L.linspace(0, 1, 300, dtype=L.float64),
                                                         generator=g),
    "bernoulli(probs) float16": lambda L, g: L.bernoulli(L.rand(300, generator=g).half(),
                                                         generator=g),
    "bernoulli_(probs)": lambda L, g: L.zeros(5, 8).bernoulli_(L.linspace(0, 1, 8), generator=g),
    # float64 scalings are fused as in PyTorch's kernels, and the init bounds rounded in its order
    "uniform_ float64": lambda L, g: L.empty(500, dtype=L.float64).uniform_(-0.1, 0.3, generator=g),
    "normal_ float64": lambda L, g: L.empty(101, dtype=L.float64).normal_(0.5, 2.1, generator=g),
    "normal_ float64 small": lambda L, g: L.empty(7, dtype=L.float64).normal_(-1.5, 0.3,
                                                                            generator=g),
    "kaiming_uniform_ float64": lambda L, g: L.nn.init.kaiming_uniform_(
        L.empty(30, 40, dtype=L.float64), a=0.3, generator=g),
    "xavier_uniform_ float64": lambda L, g: L.nn.init.xavier_uniform_(
        L.empty(30, 40, dtype=L.float64), generator=g),
    # PyTorch 2.13's rejection samplers: normal draws (most of the mass inside [a, b]) or
    # uniform proposals (little of it)
    "trunc_normal_": lambda L, g: L.nn.init.trunc_normal_(L.empty(3000), std=0.5, generator=g),
    "trunc_normal_ narrow": lambda L, g: L.nn.init.trunc_normal_(
        L.empty(3000, dtype=L.float64), std=0.5, a=-0.1, b=0.1, generator=g),
    "poisson": lambda L, g: L.poisson(L.linspace(0, 40, 500), generator=g),
    "geometric_": lambda L, g: L.empty(500).geometric_(0.3, generator=g),
    "log_normal_ then randn": lambda L, g: L.cat([
        L.empty(301, dtype=L.float64).log_normal_(0.5, 0.3, generator=g),
        L.randn(3, dtype=L.float64, generator=g)]),
    "multinomial one draw": lambda L, g: L.multinomial(L.rand(4, 9, generator=g), 1, generator=g),
    "multinomial without replacement": lambda L, g: L.multinomial(
        L.rand(3, 40, dtype=L.float64, generator=g), 25, generator=g),
    "multinomial with replacement": lambda L, g: L.multinomial(
        L.rand(3, 500, generator=g) * (L.rand(3, 500, generator=g) > 0.3), 300, True,
        generator=g),
}


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "dropout2d", "dropout3d",
                                  "alpha_dropout", "feature_alpha_dropout"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_seeded_dropout_drops_pytorchs_elements(torch, name, dtype):
    """Dropout's mask is PyTorch's `bernoulli_(1 - p)` on its stream, and its scaling PyTorch's
    in the input's dtype: a seeded run drops the same elements with the same values."""
    def run(lib):
        lib.manual_seed(11)
        shape = {"dropout1d": (4, 6, 9), "dropout3d": (3, 4, 2, 3, 5)}.get(name, (4, 6, 5, 5))
        x = lib.linspace(-3, 3, int(np.prod(shape))).reshape(shape).to(getattr(lib, dtype))
        ys = [getattr(lib.nn.functional, name)(x, 0.3, training=True) for _ in range(2)]
        return [y.float().numpy() for y in ys]
    assert all(np.array_equal(a, b) for a, b in zip(run(torch), run(ember)))


@pytest.mark.parametrize("name", list(_SAME_AS_PYTORCH))
def test_cpu_samplers_give_pytorchs_numbers(torch, name):
    """The same seed gives PyTorch's values, bit for bit, on the CPU: uniform, normal,
    integer and permutation draws (so layers' initial weights and samplers' orders too)."""
    make = _SAME_AS_PYTORCH[name]
    want = make(torch, torch.Generator().manual_seed(7))
    got = make(ember, ember.Generator().manual_seed(7))
    assert str(got.dtype) == str(want.dtype)
    assert np.array_equal(got.float().numpy() if got.dtype is ember.bfloat16 else got.numpy(),
                          want.float().numpy() if want.dtype is torch.bfloat16 else want.numpy())


def test_seeded_programs_start_as_pytorchs(torch):
    """torch.manual_seed(s) then building a model, shuffling a DataLoader, splitting a
    dataset: PyTorch's weights and orders (the default generator; its Box-Muller value is
    carried between calls as PyTorch's is)."""
    def run(lib):
        lib.manual_seed(3)
        model = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.Linear(4, 3),
                                  lib.nn.Embedding(5, 2), lib.nn.LSTM(2, 3))
        weights = [p.detach().numpy().copy() for p in model.parameters()]
        small = [lib.randn(3).tolist() for _ in range(3)]
        order = [b.tolist() for b in lib.utils.data.DataLoader(list(range(10)), batch_size=4,
                                                               shuffle=True)]
        split = [list(s.indices) for s in lib.utils.data.random_split(range(10), [0.3, 0.7])]
        return weights, small, order, split
    (w1, *rest1), (w2, *rest2) = run(torch), run(ember)
    assert all(np.array_equal(a, b) for a, b in zip(w1, w2)) and rest1 == rest2


def test_generator_state_carries_the_normal_cache():
    g = ember.Generator().manual_seed(5)
    ember.randn(1, generator=g)  # leaves the pair's second value for the next draw
    state = g.get_state()
    first = ember.randn(3, generator=g).tolist()
    g.set_state(state)
    assert ember.randn(3, generator=g).tolist() == first
    twin = pickle.loads(pickle.dumps(g))
    assert ember.randn(5, generator=g).tolist() == ember.randn(5, generator=twin).tolist()


def test_gumbel_softmax_draws_pytorchs_noise(torch):
    """gumbel_softmax's noise is PyTorch's exponential_ then log in the logits' dtype: the same
    hard choices, soft values equal to softmax's last place."""
    def run(lib, hard):
        lib.manual_seed(4)
        x = lib.linspace(-2, 2, 60).reshape(6, 10)
        return lib.nn.functional.gumbel_softmax(x, tau=0.5, hard=hard).numpy()
    assert np.array_equal(run(ember, True), run(torch, True))
    np.testing.assert_allclose(run(ember, False), run(torch, False), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_rrelu_draws_pytorchs_slopes(torch, dtype):
    """Training rrelu draws a slope for each x <= 0 only, in order, from PyTorch's stream:
    the same outputs and gradients (the slope at x = 0 too), and the stream left where
    PyTorch leaves it."""
    def run(lib):
        lib.manual_seed(3)
        x = lib.linspace(-2, 2, 301).to(getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.rrelu(x, 0.01, 0.77, training=True)
        y.float().sum().backward()
        return y.detach().float().numpy(), x.grad.float().numpy(), lib.rand(3).numpy()
    assert all(np.array_equal(a, b) for a, b in zip(run(ember), run(torch)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_samples_are_pytorchs(torch, dtype):
    """Gamma draws follow PyTorch's Marsaglia-Tsang kernel on its stream (alpha < 1 boosted),
    and leave the stream where PyTorch leaves it."""
    def run(lib):
        lib.manual_seed(5)
        d = getattr(lib, dtype)
        g = lib.distributions.Gamma(lib.linspace(0.05, 6, 120, dtype=d), lib.full((120,), 2.0,
                                                                                dtype=d))
        return g.sample((2,)).numpy(), lib.rand(3).numpy()
    assert all(np.array_equal(a, b) for a, b in zip(run(ember), run(torch)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_and_beta_samples_are_pytorchs(torch, dtype):
    def run(lib):
        lib.manual_seed(5)
        c = lib.linspace(0.2, 3, 12, dtype=getattr(lib, dtype)).reshape(4, 3)
        x = lib.distributions.Dirichlet(c).sample((2,))
        b = lib.distributions.Beta(c[:, 0], c[:, 1]).sample()
        return x.numpy(), b.numpy(), lib.rand(2).numpy()
    assert all(np.array_equal(a, b) for a, b in zip(run(ember), run(torch)))


_FILLS = {
    "uniform_": lambda t, g: t.uniform_(-1, 2, generator=g),
    "normal_": lambda t, g: t.normal_(0.5, 2, generator=g),
    "bernoulli_": lambda t, g: t.bernoulli_(0.4, generator=g),
    "exponential_": lambda t, g: t.exponential_(generator=g),
    "random_": lambda t, g: t.random_(3, 50, generator=g),
}
_VIEWS = {
    "transposed": lambda L: L.empty(6, 40).t(),
    "permuted": lambda L: L.empty(3, 4, 5).permute(2, 0, 1),
    "strided": lambda L: L.empty(6, 40, dtype=L.float64)[:, ::2],
}


@pytest.mark.parametrize("view", list(_VIEWS))
@pytest.mark.parametrize("fill", list(_FILLS))
def test_samplers_fill_non_contiguous_tensors_as_pytorch(torch, fill, view):
    """An in-place sampler on a non-contiguous tensor draws in the order of its memory (and
    normal_ takes PyTorch's value-by-value path there): the same values land in the same
    places."""
    def run(lib):
        t = _VIEWS[view](lib)
        _FILLS[fill](t, lib.Generator().manual_seed(7))
        return t.numpy()
    assert np.array_equal(run(ember), run(torch))


def test_weighted_sampler_draws_pytorchs_indices(torch):
    def draw(lib):
        lib.manual_seed(3)
        return list(lib.utils.data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2, 1.0], 50))
    assert draw(ember) == draw(torch)


def test_seeded_training_with_dropout_follows_pytorch(torch):
    """A seeded training loop with dropout and a shuffling DataLoader (the main job's shape):
    the same initial weights, batches and masks as PyTorch, so the losses agree step by step
    to float32 rounding."""
    data = np.random.default_rng(0).standard_normal((96, 12)).astype(np.float32)
    labels = (data[:, 0] > 0).astype(np.int64)

    def run(lib):
        lib.manual_seed(5)
        model = lib.nn.Sequential(lib.nn.Linear(12, 32), lib.nn.ReLU(), lib.nn.Dropout(0.3),
                                  lib.nn.Linear(32, 2))
        opt = lib.optim.Adam(model.parameters(), lr=1e-2)
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(
            lib.tensor(data), lib.tensor(labels)), batch_size=16, shuffle=True)
        losses = []
        for _ in range(2):
            for x, y in loader:
                opt.zero_grad()
                loss = lib.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses
    assert run(ember) == pytest.approx(run(torch), rel=1e-5)


def test_seeded_transformer_training_with_dropout_follows_pytorch(torch):
    """A TransformerEncoder with dropout (its attention weights' and feed-forward's masks),
    trained a few AdamW steps from one seed: PyTorch's losses, to the optimizers' rounding."""
    data = np.random.default_rng(0).standard_normal((4, 10, 32)).astype(np.float32)

    def run(lib):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
        model = lib.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
        x, losses = lib.tensor(data), []
        for _ in range(4):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    assert run(ember) == pytest.approx(run(torch), rel=1e-4)


def _half_bits(lib, t):
    return t.contiguous().view(lib.int16).numpy().tolist()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_normal_draws_are_pytorchs(torch, dtype):
    """randn, normal_ and normal(mean, std, size) of float16 and bfloat16, bit for bit, and
    the stream left where PyTorch leaves it (the next draws equal): from 16 contiguous values
    the float32 kernel's values rounded, the last partial block drawn afresh (its places
    take no uniforms of their own first, as float32's do); under 16, or not contiguous, the
    double Box-Muller per value, rounded through float."""
    def run(lib, n, mean, std, form, seed):
        lib.manual_seed(seed)
        d = getattr(lib, dtype)
        if form == "randn":
            t = lib.randn(n, dtype=d)
        elif form == "normal":
            t = lib.normal(mean, std, (n,), dtype=d)
        elif form == "strided":
            t = lib.zeros(2 * n, dtype=d)[::2].normal_(mean, std)
        else:
            t = lib.empty(n, dtype=d).normal_(mean, std)
        return _half_bits(lib, t), lib.randn(20).tolist(), lib.rand(3).tolist()
    sizes = list(range(1, 50)) + [64, 100, 255, 256, 1000, 4099]
    forms = ["randn", "normal_", "normal", "strided"]
    params = [(0.0, 1.0), (0.3, 2.7), (-5.0, 0.1), (1e-3, 1e4), (2.0, 0.0)]
    for i, n in enumerate(sizes):
        mean, std = params[i % len(params)]
        args = (n, mean, std, forms[i % len(forms)], i * 7919)
        assert run(ember, *args) == run(torch, *args), args


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_normal_in_other_forms_is_pytorchs(torch, dtype):
    """A half tensor's other normal draws: shapes, a generator, randn_like, a transposed
    view, mean and std as tensors (a number std is applied inside the sampler, as
    normal_(0, std), then the mean tensor added)."""
    def run(lib):
        d = getattr(lib, dtype)
        g = lib.Generator().manual_seed(3)
        lib.manual_seed(11)
        grid = lib.linspace(-2, 2, 45, dtype=d)
        draws = [lib.randn(3, 7, 2, dtype=d), lib.randn(40, dtype=d, generator=g),
                 lib.randn_like(lib.zeros(37, dtype=d)),
                 lib.zeros(6, 5, dtype=d).t().normal_(0.5, 2.0),
                 lib.normal(grid, 0.7), lib.normal(grid[:5], 0.7), lib.normal(0.25, grid.abs()),
                 lib.normal(grid, grid.abs()), lib.randn(40, generator=g)]
        return [_half_bits(lib, t) if t.dtype == d else t.tolist() for t in draws]
    assert run(ember) == run(torch)
