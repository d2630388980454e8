"""The meta device (`device("meta")`): tensors with a shape, dtype and strides and no data, as
PyTorch has them, each behaviour held against PyTorch's: creation, printing, moving, modules
built on meta then materialised (`to_empty`, `load_state_dict(assign=True)`), a forward and
backward on meta, reading data (PyTorch's exceptions), saving and loading, and a model of
10^10 parameters that costs no memory. The op table's sweep on meta is tests/ops/test_ops_meta.py."""
import io
import tracemalloc
import warnings

import numpy as np
import pytest

import ember


def _described(t):
    return (tuple(t.shape), str(t.dtype).split(".")[-1], t.device.type, tuple(t.stride()),
            t.requires_grad, t.is_meta)


def _both(torch, make):
    """`make(lib)` with PyTorch and with ember: (theirs, ours)."""
    return make(torch), make(ember)


def _raised(f):
    try:
        f()
    except Exception as e:
        return type(e), str(e)
    return None


CREATIONS = {
    "empty": lambda lib: lib.empty(2, 3, device="meta"),
    "zeros": lambda lib: lib.zeros(2, 3, device="meta", dtype=lib.float16),
    "ones": lambda lib: lib.ones((4,), device="meta", dtype=lib.int32),
    "full": lambda lib: lib.full((2, 2), 7, device="meta"),
    "full_bool": lambda lib: lib.full((2,), True, device="meta"),
    "rand": lambda lib: lib.rand(2, 3, device="meta"),
    "randn": lambda lib: lib.randn(5, device="meta", dtype=lib.float64, requires_grad=True),
    "randint": lambda lib: lib.randint(0, 10, (2, 3), device="meta"),
    "randperm": lambda lib: lib.randperm(6, device="meta"),
    "arange": lambda lib: lib.arange(10, device="meta"),
    "arange_float": lambda lib: lib.arange(0, 1, 0.1, device="meta"),
    "linspace": lambda lib: lib.linspace(0, 1, 7, device="meta"),
    "eye": lambda lib: lib.eye(3, 4, device="meta"),
    "empty_strided": lambda lib: lib.empty_strided((2, 3), (1, 2), device="meta"),
    "tensor": lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]], device="meta"),
    "tensor_int": lambda lib: lib.tensor([1, 2, 3], device="meta"),
    "scalar": lambda lib: lib.tensor(3.5, device="meta"),
    "empty_like": lambda lib: lib.empty_like(lib.ones(2, 3), device="meta"),
    "zeros_like": lambda lib: lib.zeros_like(lib.empty(2, 3, device="meta")),
    "ones_like": lambda lib: lib.ones_like(lib.empty(2, 3, device="meta").t()),
    "full_like": lambda lib: lib.full_like(lib.empty(2, 3, device="meta"), 3),
    "rand_like": lambda lib: lib.rand_like(lib.empty(2, 3, device="meta")),
    "randn_like": lambda lib: lib.randn_like(lib.empty(2, 3, device="meta")),
    "randint_like": lambda lib: lib.randint_like(lib.empty(2, 3, device="meta"), 5),
    "new_zeros": lambda lib: lib.empty(2, device="meta").new_zeros(4, 5),
    "new_ones": lambda lib: lib.empty(2, device="meta", dtype=lib.int64).new_ones(3),
    "new_empty": lambda lib: lib.empty(2, device="meta").new_empty((1, 2)),
    "new_full": lambda lib: lib.empty(2, device="meta").new_full((4,), 2.0),
    "new_tensor": lambda lib: lib.empty(2, device="meta").new_tensor([1, 2, 3]),
    "to_meta": lambda lib: lib.ones(2, 3).to("meta"),
    "to_meta_view": lambda lib: lib.ones(4, 3).t().to("meta"),
    "meta_to_meta": lambda lib: lib.empty(2, device="meta").to("meta"),
    "meta_index": lambda lib: lib.empty(2, device="meta:0"),
    "to_dtype": lambda lib: lib.empty(2, 3, device="meta").to(lib.float64),
}


@pytest.mark.parametrize("name", sorted(CREATIONS))
def test_creation_on_meta(torch, name):
    theirs, ours = _both(torch, CREATIONS[name])
    assert _described(ours) == _described(theirs)
    assert repr(ours) == repr(theirs)
    assert ours.numel() == theirs.numel() and ours.device == ember.device("meta")


def test_default_device_meta(torch):
    def made(lib):
        with lib.device("meta"):
            inside = [lib.ones(3), lib.arange(4), lib.tensor([1.0]), lib.nn.Linear(2, 3).weight]
        lib.set_default_device("meta")
        try:
            default = [lib.zeros(2, 2), lib.nn.Linear(2, 2).bias]
        finally:
            lib.set_default_device(None)
        return [_described(t) for t in inside + default] + [str(lib.ones(1).device)]
    theirs, ours = _both(torch, made)
    assert ours == theirs


@pytest.mark.parametrize("make", [
    lambda lib: lib.empty(2, 3, device="meta"),
    lambda lib: lib.zeros((), device="meta", dtype=lib.complex64),
    lambda lib: lib.zeros(0, 3, device="meta", dtype=lib.bool),
    lambda lib: lib.ones(2, device="meta", requires_grad=True) * 2,
    lambda lib: lib.nn.Parameter(lib.empty(3, 1, device="meta")),
    lambda lib: [lib.empty(2, device="meta"), lib.empty(1, device="meta")],
])
def test_printing(torch, make):
    theirs, ours = _both(torch, make)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


DATA_READS = {
    "item": lambda lib: lib.empty(1, device="meta").item(),
    "item_many": lambda lib: lib.empty(2, 3, device="meta").item(),
    "tolist": lambda lib: lib.empty(2, device="meta").tolist(),
    "numpy": lambda lib: lib.empty(2, device="meta").numpy(),
    "bool": lambda lib: bool(lib.empty((), device="meta")),
    "float": lambda lib: float(lib.empty((), device="meta")),
    "int": lambda lib: int(lib.empty((), device="meta", dtype=lib.int64)),
    "index": lambda lib: [1, 2][lib.tensor(1, device="meta")],
    "format": lambda lib: f"{lib.empty((), device='meta'):.3f}",
    "cpu": lambda lib: lib.empty(2, device="meta").cpu(),
    "to_cpu": lambda lib: lib.empty(2, device="meta").to("cpu"),
    "copy_to_cpu": lambda lib: lib.empty(2).copy_(lib.empty(2, device="meta")),
    "mask": lambda lib: (lambda t: t[t > 0])(lib.empty(2, 3, device="meta")),
    "nonzero": lambda lib: lib.empty(3, device="meta").nonzero(),
    "argwhere": lambda lib: lib.argwhere(lib.empty(3, device="meta")),
    "masked_select": lambda lib: (lambda t: t.masked_select(t > 0))(lib.empty(3, device="meta")),
    "unique": lambda lib: lib.empty(3, device="meta").unique(),
    "unique_dim": lambda lib: lib.empty(3, 2, device="meta").unique(dim=0),
    "unique_consecutive": lambda lib: lib.empty(3, device="meta").unique_consecutive(),
    "bincount": lambda lib: lib.bincount(lib.ones(3, dtype=lib.int64, device="meta")),
    "equal": lambda lib: lib.equal(lib.empty(3, device="meta"), lib.empty(3, device="meta")),
    "allclose": lambda lib: lib.allclose(lib.empty(3, device="meta"), lib.empty(3, device="meta")),
    "any_bool": lambda lib: bool(lib.empty(3, device="meta").any()),
    "histogram": lambda lib: lib.histogram(lib.empty(4, device="meta"), 3),
    "repeat_interleave": lambda lib: lib.repeat_interleave(
        lib.ones(2, dtype=lib.int64, device="meta")),
    "add_cpu": lambda lib: lib.empty(2, device="meta") + lib.ones(2),
    "cpu_add_meta": lambda lib: lib.ones(2) + lib.empty(2, device="meta"),
}


@pytest.mark.parametrize("name", sorted(DATA_READS))
def test_reading_data_raises_as_pytorch(torch, name):
    theirs, ours = _both(torch, lambda lib: _raised(lambda: DATA_READS[name](lib)))
    assert theirs is not None
    assert ours == theirs


WORKS = {  # what needs no data works on meta, in both
    "setitem_mask": lambda lib: (lambda t: t.__setitem__(t > 0, 1.0) or t)(
        lib.empty(2, 3, device="meta")),
    "copy_from_cpu": lambda lib: lib.empty(2, 3, device="meta").copy_(lib.ones(2, 3)),
    "add_cpu_scalar": lambda lib: lib.empty(2, device="meta") + lib.tensor(1.0),
    "histc": lambda lib: lib.histc(lib.empty(5, device="meta"), 4),
    "multinomial": lambda lib: lib.multinomial(lib.ones(3, device="meta"), 2),
    "repeat_interleave_sized": lambda lib: lib.repeat_interleave(
        lib.empty(2, device="meta"), lib.ones(2, dtype=lib.int64, device="meta"),
        output_size=5),
    "nonzero_static": lambda lib: lib.nonzero_static(lib.empty(2, 3, device="meta"), size=4),
    "matmul": lambda lib: lib.empty(4, 2, 3, device="meta") @ lib.empty(3, 5, device="meta"),
    "softmax_t": lambda lib: lib.empty(2, 3, device="meta").t().softmax(-1),
    "sum": lambda lib: lib.empty(2, 3, device="meta", dtype=lib.int32).sum(1),
    "transpose_add": lambda lib: lib.empty(3, 4, device="meta").t() + 1,
    "index_tensor": lambda lib: lib.empty(4, 3, device="meta")[
        lib.tensor([0, 2, 2], device="meta")],
    "slice_view": lambda lib: lib.empty(4, 6, device="meta")[1:, ::2],
    "reshape_copy": lambda lib: lib.empty(3, 4, device="meta").t().reshape(12),
    "cat": lambda lib: lib.cat([lib.empty(2, 3, device="meta"), lib.empty(1, 3, device="meta")]),
    "einsum": lambda lib: lib.einsum("bij,bjk->bik", lib.empty(2, 3, 4, device="meta"),
                                     lib.empty(2, 4, 5, device="meta")),
    "conv2d": lambda lib: lib.nn.functional.conv2d(lib.empty(1, 3, 8, 8, device="meta"),
                                                   lib.empty(4, 3, 3, 3, device="meta"),
                                                   padding=1, stride=2),
    "erfinv": lambda lib: lib.special.erfinv(lib.empty(3, device="meta")),
    "igamma": lambda lib: lib.igamma(lib.empty(3, device="meta"), lib.empty(3, device="meta")),
    "inverse": lambda lib: lib.linalg.inv(lib.empty(2, 3, 3, device="meta")),
    "cholesky": lambda lib: lib.linalg.cholesky(lib.empty(3, 3, device="meta")),
    "storage_offset": lambda lib: lib.tensor(lib.empty(4, 6, device="meta")[2:].storage_offset()),
}


# strides compared too: views, and elementwise results laid out as their inputs (elsewhere
# ember's strides are its CPU's, which the op-table sweep on meta checks)
STRIDED = {"slice_view", "transpose_add", "reshape_copy", "matmul", "cat", "sum", "conv2d"}


@pytest.mark.parametrize("name", sorted(WORKS))
def test_ops_without_data_work(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = _both(torch, lambda lib: WORKS[name](lib))
    assert ours.device.type == theirs.device.type
    if name in STRIDED:
        assert _described(ours) == _described(theirs)
    else:
        assert _described(ours)[:3] == _described(theirs)[:3]


# ---- modules ------------------------------------------------------------------------------
MODULES = {
    "Linear": lambda nn: nn.Linear(4, 3),
    "Conv2d": lambda nn: nn.Conv2d(3, 8, 3),
    "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(3, 4, 3),
    "Embedding": lambda nn: nn.Embedding(10, 4, padding_idx=0),
    "LayerNorm": lambda nn: nn.LayerNorm(4),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(3),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 4),
    "RMSNorm": lambda nn: nn.RMSNorm(4),
    "LSTM": lambda nn: nn.LSTM(4, 5, 2),
    "GRU": lambda nn: nn.GRU(4, 5, bidirectional=True),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(8, 2),
    "Transformer": lambda nn: nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
                                             num_decoder_layers=1, dim_feedforward=16),
    "Bilinear": lambda nn: nn.Bilinear(3, 4, 5),
    "PReLU": lambda nn: nn.PReLU(),
}


def _state(module):
    return [(name, _described(t)) for name, t in module.state_dict(keep_vars=True).items()]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_built_on_meta(torch, name):
    def built(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.device("meta"):
                return _state(MODULES[name](lib.nn))
    assert _both(torch, built)[1] == _both(torch, built)[0]


def test_module_device_keyword(torch):
    def built(lib):
        return _state(lib.nn.Linear(3, 2, device="meta")) + \
            _state(lib.nn.Conv1d(2, 3, 3, device="meta", dtype=lib.float64))
    theirs, ours = _both(torch, built)
    assert ours == theirs


@pytest.mark.parametrize("init", ["uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_",
                                  "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                                  "kaiming_normal_", "trunc_normal_", "orthogonal_", "sparse_"])
def test_init_on_meta_keeps_the_tensor(torch, init):
    def run(lib):
        p = lib.nn.Parameter(lib.empty(5, 4, device="meta"))
        args = (0.5,) if init in ("constant_", "sparse_") else ()
        out = getattr(lib.nn.init, init)(p, *args)
        return out is p, _described(out), repr(p)
    theirs, ours = _both(torch, run)
    assert ours == theirs


def test_to_empty_then_real_init(torch):
    def run(lib):
        with lib.device("meta"):
            model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.BatchNorm1d(8))
        out = model.to_empty(device="cpu")
        for m in model:
            m.reset_parameters()
        return out is model, _state(model), model[1].running_var.tolist(), \
            model[1].num_batches_tracked.item()
    theirs, ours = _both(torch, run)
    assert ours == theirs


def test_load_state_dict_assign_fills_a_meta_model(torch):
    source = torch.nn.Linear(4, 3)
    weights = {k: v.detach().numpy() for k, v in source.state_dict().items()}
    x = np.random.RandomState(0).randn(2, 4).astype(np.float32)

    def run(lib):
        with lib.device("meta"):
            model = lib.nn.Linear(4, 3)
        result = model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()},
                                       assign=True)
        y = model(lib.tensor(x))
        return str(result), _state(model), type(model.weight).__name__, y.detach().numpy()
    (t_res, t_state, t_kind, t_y), (e_res, e_state, e_kind, e_y) = _both(torch, run)
    assert (e_res, e_state, e_kind) == (t_res, t_state, t_kind)
    np.testing.assert_allclose(e_y, t_y, rtol=1e-5, atol=1e-6)


def test_load_state_dict_without_assign_warns_and_stays_meta(torch):
    def run(lib):
        with lib.device("meta"):
            model = lib.nn.Linear(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = model.load_state_dict(lib.nn.Linear(2, 3).state_dict())
        return str(result), [(w.category.__name__, str(w.message)) for w in caught], \
            _state(model)
    theirs, ours = _both(torch, run)
    assert ours == theirs


def test_forward_and_backward_on_meta(torch):
    def run(lib):
        nn = lib.nn
        with lib.device("meta"):
            model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                                  nn.Linear(4 * 6 * 6, 10))
            x, y = lib.randn(2, 3, 8, 8), lib.randint(0, 10, (2,))
        loss = nn.functional.cross_entropy(model(x), y, label_smoothing=0.1)
        loss.backward()
        return repr(loss), [(name, _described(p.grad)) for name, p in model.named_parameters()]
    theirs, ours = _both(torch, run)
    assert ours == theirs


def test_recurrent_and_transformer_forward_on_meta(torch):
    def run(lib):
        nn = lib.nn
        with warnings.catch_warnings(), lib.device("meta"):
            warnings.simplefilter("ignore")
            lstm = nn.LSTM(4, 5, 2, batch_first=True)
            out, (h, c) = lstm(lib.randn(3, 7, 4))
            tr = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                dim_feedforward=16)
            z = tr(lib.randn(5, 2, 8), lib.randn(4, 2, 8))
        return [_described(t) for t in (out, h, c, z)]
    theirs, ours = _both(torch, run)
    assert ours == theirs


# ---- saving and loading -------------------------------------------------------------------
def _saved(lib):
    buf = io.BytesIO()
    lib.save({"t": lib.empty(3, 4, device="meta")[1:], "p": lib.nn.Parameter(
        lib.empty(2, device="meta", dtype=lib.float64)),
        "sd": lib.nn.Linear(2, 3, device="meta").state_dict()}, buf)
    return buf.getvalue()


def _loaded(lib, data):
    out = lib.load(io.BytesIO(data))
    return {"t": _described(out["t"]), "p": (type(out["p"]).__name__, _described(out["p"])),
            "sd": {k: _described(v) for k, v in out["sd"].items()}}


def test_save_and_load_meta_tensors_both_ways(torch):
    theirs_file, ours_file = _saved(torch), _saved(ember)
    expected = _loaded(torch, theirs_file)
    assert _loaded(ember, ours_file) == expected  # ember's file, read by ember
    assert _loaded(torch, ours_file) == expected  # ember's file, read by PyTorch
    assert _loaded(ember, theirs_file) == expected  # PyTorch's file, read by ember


# ---- memory --------------------------------------------------------------------------------
def test_a_huge_meta_model_costs_no_memory():
    tracemalloc.start()
    try:
        with ember.device("meta"):
            model = ember.nn.Linear(100_000, 100_000)  # 10^10 parameters: 40 GB on the CPU
            out = model(ember.empty(8, 100_000))
            out.sum().backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert model.weight.numel() == 10 ** 10 and model.weight.grad.shape == (100_000, 100_000)
    assert model.weight.nbytes == 4 * 10 ** 10
    assert peak < 20 * 2 ** 20, f"{peak} bytes traced"  # loosely: nothing near data-sized
