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


OPS = {"fill_": _fill_from_a_device_scalar, "masked_scatter": _masked_scatter,
       "searchsorted": _searchsorted}


@pytest.mark.parametrize("name", sorted(OPS))
def test_no_device_read_and_the_cpus_values(name):
    expected = OPS[name](ember, "cpu")
    with strict_cupy():
        before = TRANSFERS.count
        got = OPS[name](ember, "cuda")
        assert TRANSFERS.count == before, "the op read the device"
        for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                        got if isinstance(got, tuple) else (got,)):
            assert g.device.type == "cuda" and g.dtype is e.dtype
            assert g.cpu().tolist() == e.tolist()
