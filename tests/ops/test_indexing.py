"""Advanced indexing and the gather/scatter family: behaviour beyond the op table (graphs of
in-place writes, gradients of repeated indices, double backward, versions, devices, the
accumulation paths), checked against PyTorch where it is installed."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def _t(lib, arr, grad=False):
    t = lib.from_numpy(np.array(arr, copy=True))
    return t.requires_grad_() if grad else t


# ---- results and graphs, beside PyTorch -----------------------------------------------------------
INDEXES = [
    lambda lib: (lib.tensor([0, 2, 0, -1]),),
    lambda lib: (slice(None), lib.tensor([[1, 1], [0, 3]])),
    lambda lib: (lib.tensor([0, 1]), slice(None), lib.tensor([4, 4])),
    lambda lib: (1, slice(None), lib.tensor([0, 4, 0])),
    lambda lib: (lib.tensor([[0], [2]]), lib.tensor([1, 3, 3])),
    lambda lib: (Ellipsis, lib.tensor([3, 3])),
    lambda lib: (None, lib.tensor([2, 2]), None),
    lambda lib: (lib.tensor([[True, False, True, True]] * 3),),
    lambda lib: (lib.tensor(True),),
    lambda lib: (True, lib.tensor([0, 1])),
    lambda lib: (lib.tensor([True, False, True]), slice(1, 3), lib.tensor([0, 4])),
]


@pytest.mark.parametrize("k", range(len(INDEXES)))
def test_getitem_values_and_gradients(torch, k):
    x = np.random.default_rng(k).standard_normal((3, 4, 5))
    outs = []
    for lib in (ember, torch):
        t = _t(lib, x, grad=True)
        y = t[INDEXES[k](lib)]
        w = _t(lib, np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        outs.append((y.detach().numpy(), t.grad.numpy(), type(y.grad_fn).__name__))
    np.testing.assert_allclose(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1])
    assert outs[0][2] == outs[1][2] == "IndexBackward0"


@pytest.mark.parametrize("k", range(len(INDEXES)))
def test_setitem_gradients_of_both(torch, k):
    """A grad-requiring value written into part of a tensor: gradients of both."""
    rng = np.random.default_rng(k)
    x = rng.standard_normal((3, 4, 5))
    shape = tuple(torch.zeros(3, 4, 5)[INDEXES[k](torch)].shape)
    v = rng.standard_normal(shape)
    w_arr = rng.standard_normal((3, 4, 5))
    outs = []
    for lib in (ember, torch):
        a, b = _t(lib, x, grad=True), _t(lib, v, grad=True)
        y = a * 2
        y[INDEXES[k](lib)] = b
        w = _t(lib, w_arr)
        (y * w).sum().backward()
        outs.append((y.detach().numpy(), a.grad.numpy(), b.grad.numpy(), type(y.grad_fn).__name__))
    for e, t in zip(outs[0][:3], outs[1][:3]):
        np.testing.assert_allclose(e, t)
    assert outs[0][3] == outs[1][3]


def test_setitem_grad_fn_names(torch):
    for lib in (ember, torch):
        a = lib.randn(3, 4, requires_grad=True).clone()
        a[[0, 1]] = 1.0
        assert type(a.grad_fn).__name__ == "IndexPutBackward0"
        b = lib.randn(3, 4, requires_grad=True).clone()
        b[0, [0, 1]] = 1.0
        assert type(b.grad_fn).__name__ == "CopySlices"
        c = lib.randn(3, 4, requires_grad=True).clone()
        c[:, [0, 1]] = 1.0
        assert type(c.grad_fn).__name__ == "IndexPutBackward0"


def test_setitem_value_enters_graph_of_plain_tensor():
    x = ember.zeros(4, 3)
    v = ember.randn(2, 3, dtype=ember.float64).float().requires_grad_()
    x[[1, 3]] = v
    assert x.requires_grad and type(x.grad_fn).__name__ == "IndexPutBackward0"
    (x * ember.arange(12.0).reshape(4, 3)).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), np.arange(12.0).reshape(4, 3)[[1, 3]])


def test_setitem_through_view_writes_base():
    base = ember.zeros(3, 4)
    view = base[1:]
    view[[0, 1], [2, 3]] = 5.0
    assert base[1, 2].item() == 5.0 and base[2, 3].item() == 5.0
    assert base._version == view._version == 1


def test_setitem_on_leaf_raises():
    a = ember.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a[[0]] = 1.0


def test_saved_index_result_modified_inplace_raises():
    a = ember.randn(3, 4, requires_grad=True)
    y = a[[0, 1]].exp()
    y[[0]] = 0.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---- gradients ---------------------------------------------------------------------------------------
def test_repeated_indices_accumulate():
    a = ember.zeros(5, dtype=ember.float64, requires_grad=True)
    a[[1, 1, 1, 4, -1]].sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0, 3, 0, 0, 2])


@pytest.mark.parametrize("index", [
    lambda: (ember.tensor([0, 2, 2, -1]),),
    lambda: (slice(None), ember.tensor([[1, 1], [0, 3]])),
    lambda: (ember.tensor([0, 1]), slice(None), ember.tensor([3, 3])),
    lambda: (ember.tensor([[True, False, True, True]] * 3),),
])
def test_gradcheck_and_gradgradcheck(index):
    x = ember.randn(3, 4, 4, dtype=ember.float64, requires_grad=True)
    f = lambda t: (t[index()] ** 2)  # noqa: E731  (nonlinear: second derivatives are nonzero)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_index_put_double_backward():
    x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    v = ember.randn(3, dtype=ember.float64, requires_grad=True)
    idx = (ember.tensor([0, 2, 0]),)
    f = lambda a, b: ember.index_put(a, idx, b, accumulate=True) ** 2  # noqa: E731
    assert gradcheck(f, (x, v)) and gradgradcheck(f, (x, v))


def test_gather_scatter_double_backward():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    src = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)
    idx = ember.tensor(np.random.default_rng(0).integers(0, 3, (5, 4)))
    f = lambda a, s: (a.scatter_add(0, idx, s) ** 2).gather(0, idx) * s  # noqa: E731
    assert gradcheck(f, (x, src)) and gradgradcheck(f, (x, src))


# ---- the accumulation paths (bincount, sort + reduceat) ---------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "complex64"])
@pytest.mark.parametrize("n_index", [3, 400])  # sort path (few positions) and bincount path
def test_accumulate_matches_add_at(dtype, n_index):
    rng = np.random.default_rng(n_index)
    base = (rng.standard_normal((50, 4)) * 10).astype(dtype)
    idx = rng.integers(-50, 50, n_index)
    vals = (rng.standard_normal((n_index, 4)) * 10).astype(dtype)
    expected = base.copy()
    np.add.at(expected, idx, vals)
    out = ember.from_numpy(base.copy()).index_put_((ember.tensor(idx),), ember.from_numpy(vals),
                                                   accumulate=True)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-4)


def test_index_put_accumulate_noncontiguous_self():
    x = ember.zeros(4, 3).t()
    x.index_put_((ember.tensor([0, 0, 2]),), ember.ones(4), accumulate=True)
    np.testing.assert_array_equal(x.numpy()[0], [2, 2, 2, 2])
    np.testing.assert_array_equal(x.numpy()[2], [1, 1, 1, 1])


# ---- errors and warnings ----------------------------------------------------------------------------
def test_error_messages(torch):
    cases = [
        lambda lib: lib.zeros(3)[lib.tensor([5])],
        lambda lib: lib.zeros(3, 4)[[1, 0], [0, 9]],
        lambda lib: lib.zeros(3, 4)[lib.tensor([True, False])],
        lambda lib: lib.zeros(3, 4)[lib.tensor([0, 1]), lib.tensor([0, 1, 2])],
        lambda lib: lib.zeros(3, 4)[lib.tensor([0.0])],
        lambda lib: lib.zeros(3, 4)[0, 0, 0],
        lambda lib: lib.zeros(3, 4).gather(0, lib.tensor([[0, 1]], dtype=lib.int16)),
        lambda lib: lib.zeros(3, 4).index_put_((lib.tensor([0]),), lib.ones(4, dtype=lib.float64)),
    ]
    for case in cases:
        errors = []
        for lib in (ember, torch):
            with pytest.raises(Exception) as info:
                case(lib)
            errors.append(info.value)
        assert type(errors[0]).__name__ == type(errors[1]).__name__
        assert str(errors[0]) == str(errors[1])


def test_list_of_sequences_is_a_tuple_with_warning():
    x = ember.arange(12).reshape(3, 4)
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        y = x[[[0, 1], [1, 2]]]
    assert y.tolist() == [1, 6]


def test_uint8_mask_warns():
    x = ember.arange(3)
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        y = x[ember.tensor([1, 0, 1], dtype=ember.uint8)]
    assert y.tolist() == [0, 2]


def test_no_warning_for_plain_lists():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.arange(5)[[0, 4]].tolist() == [0, 4]


# ---- nonzero and devices ---------------------------------------------------------------------------
def test_nonzero_shapes(torch):
    for arr in (np.array(5), np.array(0), np.zeros((0, 3)), np.array([[1, 0], [0, 2]])):
        e, t = ember.nonzero(ember.tensor(arr)), torch.nonzero(torch.tensor(arr))
        assert tuple(e.shape) == tuple(t.shape) and e.dtype == ember.int64
        et, tt = ember.nonzero(ember.tensor(arr), as_tuple=True), \
            torch.nonzero(torch.tensor(arr), as_tuple=True)
        assert [x.tolist() for x in et] == [x.tolist() for x in tt]


def test_cpu_index_on_device_tensor(fake_cuda):
    x = ember.arange(6.0, device=fake_cuda).reshape(2, 3)
    y = x[ember.tensor([1, 1])]
    assert y.device == fake_cuda and y.tolist() == [[3, 4, 5], [3, 4, 5]]
    x[ember.tensor([0])] = 7.0
    assert x.tolist()[0] == [7, 7, 7]


def test_device_index_on_cpu_tensor_raises(fake_cuda):
    idx = ember.tensor([0], device=fake_cuda)
    with pytest.raises(RuntimeError, match="indices should be either on cpu"):
        ember.zeros(3)[idx]


def _puts_of_host_values(lib, device):
    """index_put(_) of a 0-dim host value (PyTorch moves it to the tensor's device) and of a
    one-element host value through a mask (a masked fill reads it as a number)."""
    x = lib.arange(6.0, device=device)
    idx, mask = lib.tensor([0, 2, 2], device=device), lib.tensor([True, False] * 3, device=device)
    w = lib.tensor([1.0, -2.0, 3.0], device=device, requires_grad=True)
    y = (w * 2).index_put_((lib.tensor([1], device=device),), lib.tensor(5.0))
    return (x.index_put((idx,), lib.tensor(9.0)), x.clone().index_put_((idx,), lib.tensor(1.5), True),
            lib.index_put(x, (mask,), lib.tensor([4.0])), x.index_put_((mask,), lib.tensor(-1.0)),
            y.detach(), lib.autograd.grad(y.sum(), w)[0])


def test_index_put_takes_a_host_scalar_on_the_device(fake_cuda, torch):
    expected = _puts_of_host_values(torch, "cpu")
    assert [e.tolist() for e in _puts_of_host_values(ember, "cpu")] == \
        [e.tolist() for e in expected]
    got = _puts_of_host_values(ember, fake_cuda)
    assert all(g.device == fake_cuda for g in got)
    assert [g.cpu().tolist() for g in got] == [e.tolist() for e in expected]
    x = ember.zeros(3, device=fake_cuda)
    with pytest.raises(RuntimeError, match="expected device cuda:0 but got device cpu for value"):
        x.index_put_((ember.tensor([0, 1], device=fake_cuda),), ember.tensor([1.0, 2.0]))


def test_mask_assignment_of_a_number_is_a_masked_fill(torch):
    """PyTorch's index_put_ hands `t[mask] = number` to masked_fill_: writing into expanded
    memory warns for both; the graph still records IndexPutBackward0."""
    for lib in (torch, ember):
        expanded = lib.zeros(1).expand(3)
        with pytest.warns(UserWarning) as caught:
            expanded[lib.tensor([True, False, True])] = 1.0
        assert [str(w.message).split(" on expanded")[0] for w in caught] == \
            ["Use of index_put_", "Use of masked_fill_"]
        assert all(w.filename == __file__ for w in caught)
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True) * 1
        x[x > 0] = 5.0
        assert x.grad_fn.name() == "IndexPutBackward0" and x.tolist() == [5.0, -2.0, 5.0]


@pytest.mark.parametrize("statement", [
    "t[m] = 1+2j", "t[0] = 1+2j", "t[:] = 1+2j", "t[lib.tensor([0])] = 1+2j",
    "t.masked_fill_(m, 1+2j)", "t[m] = 1+0j", "i[0] = 300", "i[m] = 300",
    "i[lib.tensor([0, 1])] = 300", "i.masked_fill_(m, 300)", "i.masked_fill_(m, 2.7)",
    "i[0] = -1.9", "u[0] = -1", "h[0] = 1e6", "h[m] = 1e6", "h[:] = 70000",
    "h.masked_fill_(m, 1e6)", "h[m] = float('inf')", "b[0] = 5"])
def test_a_number_written_into_a_tensor_is_checked_as_pytorch_checks_it(torch, statement):
    """NumPy would drop the imaginary part (masked_fill_ did, silently), wrap the integer or
    raise its own TypeError; PyTorch raises 'value cannot be converted ... without overflow'."""
    results = []
    for lib in (torch, ember):
        t, i = lib.zeros(3), lib.zeros(3, dtype=lib.int8)
        u, h, b = lib.zeros(3, dtype=lib.uint8), lib.zeros(3, dtype=lib.float16), lib.zeros(3, dtype=lib.bool)
        m = lib.tensor([True, False, True])
        try:
            exec(statement)
        except Exception as e:  # noqa: BLE001 (the exception is what is compared)
            results.append((type(e).__name__, str(e)))
        else:
            results.append([x.tolist() for x in (t, i, u, h, b)])
    assert results[0] == results[1]
