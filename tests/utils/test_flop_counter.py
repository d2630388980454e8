"""torch.utils.flop_counter.FlopCounterMode: the FLOPs of products and convolutions, forward
and backward, by module and ATen operator, equal to PyTorch's (an MLP, a CNN, attention
layers, matmul's dispatch, einsum's contractions); the table it prints; formulas registered
for custom operators. torch.utils.module_tracker.ModuleTracker, which names the modules."""
import contextlib
import importlib.util
import io

import numpy as np
import pytest

import ember
from ember.utils.flop_counter import FlopCounterMode, register_flop_formula
from ember.utils.module_tracker import ModuleTracker


def _counts(counter):
    return {k: {str(op): n for op, n in v.items()} for k, v in counter.get_flop_counts().items()}


def _run(lib, build, inputs, display=False, depth=2, backward=True):
    from importlib import import_module
    FC = import_module(f"{lib.__name__}.utils.flop_counter").FlopCounterMode
    lib.manual_seed(0)
    model = build(lib)
    xs = [lib.tensor(a, requires_grad=rg) for a, rg in inputs]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        with FC(display=display, depth=depth) as counter:
            out = model(*xs)
            out = out[0] if isinstance(out, tuple) else out
            if backward:
                out.sum().backward()
    return counter, printed.getvalue()


_RNG = np.random.default_rng(0)


def _a(*shape):
    return _RNG.standard_normal(shape).astype(np.float32)


MODELS = {
    "mlp": (lambda lib: lib.nn.Sequential(lib.nn.Linear(16, 32), lib.nn.ReLU(),
                                          lib.nn.Linear(32, 8)), [(_a(4, 16), False)]),
    "cnn": (lambda lib: lib.nn.Sequential(
        lib.nn.Conv2d(3, 8, 3, padding=1), lib.nn.ReLU(), lib.nn.Conv2d(8, 4, 3, stride=2),
        lib.nn.Flatten(), lib.nn.Linear(36, 10)), [(_a(2, 3, 8, 8), False)]),
    "conv_transpose_groups": (lambda lib: lib.nn.Sequential(
        lib.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2),
        lib.nn.Conv1d(6, 4, 2) if False else lib.nn.Conv2d(6, 4, 3, groups=2, bias=False)),
        [(_a(2, 4, 5, 5), True)]),
    "attention": (lambda lib: lib.nn.MultiheadAttention(16, 2, batch_first=True),
                  [(_a(2, 5, 16), True)] * 3),
    "encoder_layer": (lambda lib: lib.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0,
                                                                 batch_first=True),
                      [(_a(2, 5, 16), True)]),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_counts_equal_pytorchs(torch, name):
    build, inputs = MODELS[name]
    ours, _ = _run(ember, build, inputs)
    theirs, _ = _run(torch, build, inputs)
    assert _counts(ours) == _counts(theirs)
    assert ours.get_total_flops() == theirs.get_total_flops() > 0


def test_mlp_values_and_operator_keys():
    counter, _ = _run(ember, *MODELS["mlp"])
    assert counter.get_total_flops() == 14336
    counts = counter.get_flop_counts()
    assert counts["Sequential.0"] == {ember.ops.aten.addmm: 4096, ember.ops.aten.mm: 4096}
    assert counts["Sequential.2"] == {ember.ops.aten.addmm: 2048, ember.ops.aten.mm: 4096}
    assert repr(next(iter(counts["Global"]))) == "<OpOverloadPacket(op='aten.addmm')>"


@pytest.mark.parametrize("name", ["mlp", "cnn", "attention", "encoder_layer"])
@pytest.mark.parametrize("depth", [1, 2, None])
def test_printed_table_equals_pytorchs(torch, name, depth):
    if importlib.util.find_spec("tabulate") is None:
        pytest.skip("PyTorch's FlopCounterMode needs the tabulate package to print")
    build, inputs = MODELS[name]
    _, ours = _run(ember, build, inputs, display=True, depth=depth)
    _, theirs = _run(torch, build, inputs, display=True, depth=depth)
    assert ours == theirs


MLP_TABLE = """\
Module             FLOP    % Total
--------------  -------  ---------
Sequential      14.336K    100.00%
 - aten.addmm    6.144K     42.86%
 - aten.mm       8.192K     57.14%
 Sequential.0    8.192K     57.14%
  - aten.addmm   4.096K     28.57%
  - aten.mm      4.096K     28.57%
 Sequential.2    6.144K     42.86%
  - aten.addmm   2.048K     14.29%
  - aten.mm      4.096K     28.57%
"""


def test_the_table_without_tabulate(monkeypatch):
    """ember's own layout: tabulate's "simple" table, indented as PyTorch asks."""
    import sys
    monkeypatch.setitem(sys.modules, "tabulate", None)  # (import tabulate then fails)
    _, printed = _run(ember, *MODELS["mlp"], display=True)
    assert printed == MLP_TABLE
    with FlopCounterMode(display=False) as counter:
        ember.randn(3, 4) @ ember.randn(4, 5)
        ember.randn(2, 3, 4) @ ember.randn(2, 4, 5)
    assert counter.get_table() == ("Module         FLOP    % Total\n"
                                   "-----------  ------  ---------\n"
                                   "Global          360    100.00%\n"
                                   " - aten.mm      120     33.33%\n"
                                   " - aten.bmm     240     66.67%")
    with FlopCounterMode(display=False) as counter:
        pass
    assert counter.get_table() == ("Module      FLOP    % Total\n"
                                   "--------  ------  ---------\n"
                                   "Global         0         0%")


def _matmuls(lib, a, b):
    return a @ b


OPS = [
    ("mm", _matmuls, [(3, 4), (4, 5)]),
    ("folded 3d@2d", _matmuls, [(2, 3, 4), (4, 5)]),
    ("2d@3d", _matmuls, [(3, 4), (2, 4, 5)]),
    ("bmm", _matmuls, [(2, 3, 4), (2, 4, 5)]),
    ("broadcast", _matmuls, [(2, 1, 3, 4), (5, 4, 6)]),
    ("vector@matrix", _matmuls, [(4,), (4, 5)]),
    ("mv, uncounted", _matmuls, [(3, 4), (4,)]),
    ("strided 3d@2d", lambda lib, a, b: a.transpose(0, 1) @ b, [(3, 2, 4), (4, 5)]),
    ("baddbmm", lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.5),
     [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    ("conv1d", lambda lib, x, w: lib.nn.functional.conv1d(x, w, stride=2, padding=1),
     [(2, 3, 9), (4, 3, 3)]),
    ("conv3d", lambda lib, x, w: lib.nn.functional.conv3d(x, w, dilation=2),
     [(1, 2, 6, 6, 6), (3, 2, 2, 2, 2)]),
    ("conv_transpose1d", lambda lib, x, w: lib.nn.functional.conv_transpose1d(x, w, stride=3),
     [(2, 4, 5), (4, 2, 3)]),
    ("sdpa fused: uncounted", lambda lib, q, k, v:
     lib.nn.functional.scaled_dot_product_attention(q, k, v), [(2, 2, 5, 8)] * 3),
    ("sdpa math path", lambda lib, q, k, v:
     lib.nn.functional.scaled_dot_product_attention(q, k, v), [(2, 5, 8)] * 3),
    ("bilinear: uncounted", lambda lib, x, y, w: lib.nn.functional.bilinear(x, y, w),
     [(3, 4), (3, 5), (2, 4, 5)]),
    ("einsum batched", lambda lib, a, b: lib.einsum("bhqd,bhkd->bhqk", a, b),
     [(2, 2, 5, 8), (2, 2, 6, 8)]),
    ("einsum product: uncounted", lambda lib, a, b: lib.einsum("ij,kj->ikj", a, b),
     [(3, 4), (5, 4)]),
    ("einsum diagonal", lambda lib, a, b: lib.einsum("ii,ij->j", a, b), [(3, 3), (3, 4)]),
    ("einsum broadcast", lambda lib, a, b: lib.einsum("ab,ab->", a, b), [(1, 4), (3, 4)]),
    ("einsum chain", lambda lib, a, b, c, d: lib.einsum("ij,jk,kl,lm->im", a, b, c, d),
     [(2, 3), (3, 4), (4, 5), (5, 6)]),
]


@pytest.mark.parametrize("name, fn, shapes", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("grad", ["none", "all", "first"])
def test_op_counts_equal_pytorchs(torch, name, fn, shapes, grad):
    arrays = [_a(*s) for s in shapes]
    results = []
    for lib in (ember, torch):
        counter_class = importlib.import_module(f"{lib.__name__}.utils.flop_counter")
        ts = [lib.tensor(a, requires_grad=grad == "all" or (grad == "first" and i == 0))
              for i, a in enumerate(arrays)]
        with counter_class.FlopCounterMode(display=False) as counter:
            out = fn(lib, *ts)
            if grad != "none":
                out.sum().backward()
        results.append(_counts(counter))
    assert results[0] == results[1]


def test_counts_under_no_grad_and_nested_counters():
    model = ember.nn.Linear(8, 4)
    with FlopCounterMode(display=False) as outer:
        with ember.no_grad(), FlopCounterMode(display=False) as inner:
            model(ember.randn(2, 8))
        ember.randn(2, 3) @ ember.randn(3, 4)
    assert inner.get_total_flops() == 2 * 2 * 8 * 4
    assert outer.get_total_flops() == 2 * 2 * 8 * 4 + 2 * 2 * 3 * 4
    assert ember._state.flop_counter.active is None
    with FlopCounterMode(display=False) as counter:
        pass
    ember.randn(2, 3) @ ember.randn(3, 4)  # after the block: not counted
    assert counter.get_flop_counts() == {}


def test_backward_formulas_are_counted_as_their_products():
    x = ember.randn(4, 8, requires_grad=True)
    w = ember.randn(8, 3, requires_grad=True)
    with FlopCounterMode(display=False) as counter:
        (x @ w).sum().backward()
    assert counter.get_flop_counts()["Global"] == {ember.ops.aten.mm: 3 * 2 * 4 * 8 * 3}


def test_custom_mapping_and_registered_formulas():
    with pytest.warns(UserWarning, match="mods argument is not needed anymore"):
        FlopCounterMode(ember.nn.Linear(2, 2), display=False)
    mapping = {ember.ops.aten.mm: lambda a, b, out_shape=None, **kw: a[0] * 1000 + out_shape[1]}
    with FlopCounterMode(display=False, custom_mapping=mapping) as counter:
        ember.randn(2, 3) @ ember.randn(3, 4)
    assert counter.get_total_flops() == 2004

    @ember.library.custom_op("flopstest::mymm", mutates_args=())
    def mymm(a: ember.Tensor, b: ember.Tensor) -> ember.Tensor:
        return a @ b  # (not counted: the custom operator is one call)

    @register_flop_formula(ember.ops.flopstest.mymm)
    def mymm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
        return 7 * a_shape[0]
    with FlopCounterMode(display=False) as counter:
        mymm(ember.randn(2, 3), ember.randn(3, 4))
    assert _counts(counter) == {"Global": {"flopstest.mymm": 14}}
    with pytest.raises(RuntimeError, match="duplicate registrations for flopstest.mymm"):
        register_flop_formula(ember.ops.flopstest.mymm)(mymm_flop)
    with pytest.raises(ValueError, match=r"register_flop_formula\(targets\): expected each "
                                         r"target to be OpOverloadPacket \(i.e. torch.ops."
                                         r"mylib.foo\), JitFunction, or HigherOrderOperator, "
                                         r"got .* which is of type <class 'function'>"):
        register_flop_formula(ember.mm)(mymm_flop)


def test_convolution_backward_is_atens(torch):
    x, w, g = _a(2, 3, 7, 7), _a(4, 3, 3, 3), _a(2, 4, 4, 4)
    args = ([4], [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])
    ours = ember.ops.aten.convolution_backward(ember.tensor(g), ember.tensor(x),
                                               ember.tensor(w), *args)
    theirs = torch.ops.aten.convolution_backward(torch.tensor(g), torch.tensor(x),
                                                 torch.tensor(w), *args)
    for a, b in zip(ours, theirs):
        assert np.allclose(a.numpy(), b.numpy(), atol=1e-4)
    none = ember.ops.aten.convolution_backward(ember.tensor(g), ember.tensor(x),
                                               ember.tensor(w), *args[:-1], [False, True, False])
    assert none[0] is None and none[2] is None and none[1].shape == (4, 3, 3, 3)


def test_module_tracker_names_forward_and_backward():
    model = ember.nn.Sequential(ember.nn.Linear(3, 3), ember.nn.Sequential(ember.nn.ReLU()))
    seen = []
    with ModuleTracker() as tracker:
        def look(module, args):
            seen.append((type(module).__name__, sorted(tracker.parents), tracker.is_bw))
        handle = model[1][0].register_forward_pre_hook(look)
        out = model(ember.randn(2, 3, requires_grad=True))
        out.register_hook(lambda g: seen.append(("grad", sorted(tracker.parents),
                                                 tracker.is_bw)))
        out.sum().backward()
        handle.remove()
        assert tracker.parents == {"Global"} and not tracker.is_bw
    assert seen[0] == ("ReLU", ["Global", "Sequential", "Sequential.1", "Sequential.1.0"],
                       False)
    assert seen[1] == ("grad", ["Global", "Sequential", "Sequential.1", "Sequential.1.0"], True)


RECURRENT = [
    ("lstm: one oneDNN kernel in PyTorch, uncounted", lambda lib: lib.nn.LSTM(4, 6), "float32",
     False),
    ("lstm float64", lambda lib: lib.nn.LSTM(4, 6), "float64", False),
    ("lstm projections", lambda lib: lib.nn.LSTM(4, 6, proj_size=3), "float32", False),
    ("lstm packed", lambda lib: lib.nn.LSTM(4, 6), "float32", True),
    ("gru", lambda lib: lib.nn.GRU(4, 6, num_layers=2), "float32", False),
    ("gru bidirectional packed", lambda lib: lib.nn.GRU(4, 6, bidirectional=True), "float32",
     True),
    ("rnn relu", lambda lib: lib.nn.RNN(4, 6, nonlinearity="relu"), "float64", False),
]


@pytest.mark.parametrize("name, build, dtype, packed", RECURRENT, ids=[r[0] for r in RECURRENT])
def test_recurrent_layers_count_as_pytorchs(torch, name, build, dtype, packed):
    """PyTorch runs these cell by cell (an LSTM of float32 as one uncounted kernel): the
    totals agree. (Which module a product is counted under can differ for the last weight
    gradient of a sequence: ember's engine runs ready nodes in another valid order.)"""
    results = []
    for lib in (ember, torch):
        counter_class = importlib.import_module(f"{lib.__name__}.utils.flop_counter")
        lib.manual_seed(0)
        model = build(lib).to(getattr(lib, dtype))
        x = lib.tensor(_a(3, 2, 4), dtype=getattr(lib, dtype), requires_grad=True)
        inputs = lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2]) if packed else x
        with counter_class.FlopCounterMode(display=False) as counter:
            out = model(inputs)[0]
            (out.data if packed else out).sum().backward()
        results.append(_counts(counter).get("Global", {}))
    assert results[0] == results[1]


def test_a_counter_counts_its_own_threads_ops():
    import threading
    with FlopCounterMode(display=False) as counter:
        worker = threading.Thread(target=lambda: ember.randn(2, 3) @ ember.randn(3, 4))
        worker.start()
        worker.join()
        ember.randn(2, 5) @ ember.randn(5, 4)
    assert counter.get_total_flops() == 2 * 2 * 5 * 4
