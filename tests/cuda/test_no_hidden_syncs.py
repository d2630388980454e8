"""Ops that PyTorch's CUDA build runs without reading the device make no device-to-host
transfer on cuda either (the strict stand-in counts them), and give the CPU's values."""
import pytest

import ember
from tests._strict_cupy import REAL_CUDA, TRANSFERS, strict_cupy

pytestmark = pytest.mark.skipif(REAL_CUDA, reason="counts the stand-in's transfers")


def _fill_from_a_device_scalar(lib, device):
    x = lib.zeros(2, 3, device=device)
    x.fill_(lib.tensor(2.5, device=device))
    x[1].fill_(x[0, 1] * 2)  # a value inside the tensor it fills
    y = lib.zeros(3, dtype=lib.uint8, device=device).fill_(lib.tensor(300, device=device))
    return x, y


def _masked_scatter(lib, device):
    x = lib.arange(6.0, device=device).reshape(2, 3)
    mask = lib.tensor([True, False, True], device=device)
    return x.masked_scatter(mask, lib.tensor([10.0, 20.0, 30.0, 40.0], device=device))


def _searchsorted(lib, device):
    seq = lib.tensor([[1.0, 3.0, 5.0, 7.0, 9.0], [2.0, 4.0, 6.0, 8.0, 10.0]], device=device)
    vals = lib.tensor([[0.0, 3.0, 9.5], [10.0, 11.0, 4.0]], device=device)
    return lib.searchsorted(seq, vals), lib.searchsorted(seq, vals, right=True), \
        lib.bucketize(vals, seq[0])


def _coalesced_coo(lib, device):
    """Coalescing reads (the count of unique coordinates), in PyTorch too: done beforehand."""
    coo = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]], device=device),
                                lib.tensor([3.0, 4.0, 5.0], device=device), (2, 3))
    return coo.coalesce(), (coo * 2).coalesce()


def _sparse_add(lib, device, a, b):
    """PyTorch's CUDA add concatenates the coordinate lists (no merge, so no read)."""
    return (a + b)._values().sum(), (a + b).to_dense()


def _csr(lib, device, coo, _):
    """Built with its size given (no read of the largest index), from COO, and multiplied."""
    csr = lib.sparse_csr_tensor(lib.tensor([0, 1, 3], device=device),
                                lib.tensor([2, 0, 2], device=device),
                                lib.tensor([3.0, 4.0, 5.0], device=device), (2, 3))
    dense = lib.arange(6.0, device=device).reshape(3, 2)
    return csr @ dense, coo.to_sparse_csr().to_dense(), csr.to_dense()


def _scatter_products(lib, device):
    """Repeated positions multiply together (CuPy has no multiply.at)."""
    x = lib.arange(1.0, 13.0, device=device).reshape(3, 4)
    index = lib.tensor([[0, 1, 2, 0], [0, 0, 2, 1], [2, 1, 0, 0]], device=device)
    src = lib.arange(2.0, 14.0, device=device).reshape(3, 4) / 4
    ints = lib.arange(12, device=device).reshape(3, 4)
    return (x.scatter_reduce(0, index, src, "prod"),
            x.scatter_reduce(0, index, src, "prod", include_self=False),
            x.index_reduce(0, lib.tensor([0, 2, 0], device=device), src, "prod"),
            ints.scatter_reduce(1, index, ints + 1, "prod"))


def _gradients_through_positions(lib, device):
    """Backward of ops that pick positions (sort, topk, cummax, mode, embedding): their
    scatter-adds run on the device (CuPy's bincount reads the host twice)."""
    x = lib.tensor([[0.5, -1.0, 2.0, 2.0], [3.0, 0.25, -2.0, 1.0]], device=device,
                   requires_grad=True)
    w = lib.arange(12.0, device=device).reshape(4, 3).requires_grad_()
    weights = lib.arange(1.0, 9.0, device=device).reshape(2, 4)
    loss = (x.sort(1)[0] * weights).sum() + x.topk(2)[0].sum() + x.cummax(1)[0].sum() + \
        x.mode(1)[0].sum() + lib.nn.functional.embedding(
            lib.tensor([[1, 3, 1]], device=device), w).sum()
    return lib.autograd.grad(loss, (x, w))


def _embedding_bag_max(lib, device):
    """Bags' maxima (one bag empty, a padding row left out) by scatter-max: no read."""
    w = lib.tensor([[0.5, -1.0], [2.0, 2.0], [-3.0, 4.0], [1.0, 0.0]], device=device,
                   requires_grad=True)
    out = lib.nn.functional.embedding_bag(
        lib.tensor([1, 3, 2, 0, 2, 1], device=device), w,
        lib.tensor([0, 3, 3, 5], device=device), mode="max", padding_idx=0)
    return out, lib.autograd.grad((out * lib.arange(8.0, device=device).reshape(4, 2)).sum(),
                                  w)[0]


def _histc(lib, device):
    """With its range given, as PyTorch's CUDA histc: no read (elements outside are left out)."""
    return lib.histc(lib.tensor([0.5, -2.0, 1.0, 3.5, 1.25, 0.0], device=device), 4, 0, 2)


def _mask_assignments(lib, device):
    """`t[mask] = number` (one boolean mask, full slices before it, one value on the host) is
    a masked fill in PyTorch (index_put_ hands it to masked_fill_): the count of the mask's
    True elements is never read. Top-k samplers do it for every token."""
    logits = lib.tensor([[0.5, -1.0, 2.0, 1.5], [3.0, 0.25, -2.0, 1.0]], device=device)
    v, _ = lib.topk(logits, 2)
    logits[logits < v[:, [-1]]] = -float("inf")
    x = lib.arange(24.0, device=device).reshape(2, 3, 4)
    x[x[..., 0] > 10] = 7  # a mask over the leading dims fills whole rows
    x[:, lib.tensor([True, False, True], device=device)] = lib.tensor(-1.0)  # a host tensor
    x[1, :, lib.tensor([False, True, True, False], device=device)] = 0.5
    half = lib.ones(4, dtype=lib.bfloat16, device=device)
    half[half.float().cumsum(0) > 2] = 3.5
    pair = lib.zeros(3, dtype=lib.complex32, device=device)  # a record of two halves on CuPy
    pair[lib.tensor([True, False, True], device=device)] = 2
    ints = lib.arange(6, device=device).index_put_(
        (lib.tensor([True, False] * 3, device=device),), lib.tensor(9))
    w = lib.tensor([1.0, -2.0, 3.0], device=device, requires_grad=True)
    y = w * 2
    y[y < 0] = 0.0  # tracked: the gradient is masked the same way
    grad, = lib.autograd.grad((y * lib.tensor([1.0, 2.0, 3.0], device=device)).sum(), w)
    return logits, x, half, pair, ints, y.detach(), grad


def _repeated_draws(lib, device):
    """multinomial with repeated draws: PyTorch's CUDA kernel checks the probabilities with a
    device-side assert (one draw, or draws without repeats, read the device twice there)."""
    lib.manual_seed(0)
    return lib.multinomial(lib.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 2.0, 0.5, 0.0]],
                                      device=device), 6, replacement=True)


OPS = {"fill_": _fill_from_a_device_scalar, "histc": _histc,
       "embedding_bag_max": _embedding_bag_max,
       "backward_scatter_adds": _gradients_through_positions,
       "scatter_products": _scatter_products, "masked_scatter": _masked_scatter,
       "searchsorted": _searchsorted, "mask_assignments": _mask_assignments,
       "multinomial_repeated_draws": _repeated_draws, "sparse_add": _sparse_add, "csr": _csr}
# random draws: the CPU and a device draw from different streams (as in PyTorch), so their
# values are checked, not compared: repeated draws pick only categories of non-zero weight
DRAWS = {"multinomial_repeated_draws": lambda out: set(out[0].tolist()) <= {0, 2, 3}
         and set(out[1].tolist()) <= {0, 1, 2}}
# inputs made before the count starts
INPUTS = {"sparse_add": _coalesced_coo, "csr": _coalesced_coo}


def _run(name, device):
    inputs = INPUTS[name](ember, device) if name in INPUTS else ()
    before = TRANSFERS.count
    out = OPS[name](ember, device, *inputs)
    return out, TRANSFERS.count - before


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.filterwarnings("ignore:Sparse invariant checks", "ignore:index_reduce",
                            "ignore:ComplexHalf support is experimental")
def test_no_device_read_and_the_cpus_values(name):
    expected, _ = _run(name, "cpu")
    with strict_cupy():
        got, reads = _run(name, "cuda")
        assert reads == 0, "the op read the device"
        for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                        got if isinstance(got, tuple) else (got,)):
            assert g.device.type == "cuda" and g.dtype is e.dtype
            if name in DRAWS:  # the CPU's stream is PyTorch's, a device's its own
                assert g.shape == e.shape and DRAWS[name](g.cpu())
            else:
                assert g.cpu().tolist() == e.tolist()


@pytest.mark.parametrize("args, dtype", [((7,), None), ((1, 2.5, 0.25), None),
                                         ((0, 10, 3), ember.float16), ((-4, 7, 2), ember.int8),
                                         ((0.5, 3.0, 0.5), ember.float64), ((0,), None)])
def test_arange_on_cuda_is_made_there(monkeypatch, args, dtype):
    """arange's values are made on the device, as PyTorch's kernel makes them: a copy from
    pageable host memory waits for the stream's queued work (a GPT step's positions did)."""
    from tests._strict_cupy import module
    with strict_cupy():
        def no_host_data(value):
            assert not module_holds(value), "arange copied host data to the device"
            return False
        module_holds = module._holds_host_data
        monkeypatch.setattr(module, "_holds_host_data", no_host_data)
        got = ember.arange(*args, dtype=dtype, device="cuda")
        monkeypatch.undo()
        assert got.device.type == "cuda"
        got = got.cpu()
    want = ember.arange(*args, dtype=dtype)
    assert got.dtype is want.dtype and got.tolist() == want.tolist()
