"""The barebones dtypes (float8, complex32, float4, bits, the wide unsigned ints) on cuda
under the strict CuPy stand-in give what they give on the CPU: creation, fills, copies, moves
(flip, index, where, stack, cat) and the binary ops each dtype takes, or the same refusal.
CuPy has no float8 kernels, so moves run on the bits and arithmetic through float32."""
import warnings

import pytest

import ember
from tests._strict_cupy import strict_cupy
from tests.test_dtypes_barebones import BINARY, OPAQUE, VALUED

VALUES = [[1, 2, 3], [4, 5, 6]]


def _made(T, name, dev, values=VALUES):
    d = getattr(T, name)
    if name in OPAQUE:
        return T.tensor(values, dtype=T.uint8, device=dev).view(d)
    return T.tensor(values, device=dev).to(d)


def _calls(name):
    d = getattr(ember, name)
    yield "tensor", lambda dev: ember.tensor(VALUES, dtype=d, device=dev)
    yield "zeros", lambda dev: ember.zeros(2, 3, dtype=d, device=dev)
    yield "ones", lambda dev: ember.ones(2, dtype=d, device=dev)
    yield "full", lambda dev: ember.full((2,), 2.5, dtype=d, device=dev)
    yield "to", lambda dev: ember.tensor([[1.5, 2.0], [0.25, 7.0]], device=dev).to(d)
    yield "to_float32", lambda dev: _made(ember, name, dev).to(ember.float32)
    yield "to_int64", lambda dev: _made(ember, name, dev).to(ember.int64)
    yield "t_contiguous", lambda dev: _made(ember, name, dev).clone().t().contiguous()
    yield "cat", lambda dev: ember.cat([_made(ember, name, dev)] * 2)
    yield "stack", lambda dev: ember.stack([_made(ember, name, dev)] * 2)
    yield "flip", lambda dev: _made(ember, name, dev).flip(0)
    yield "item", lambda dev: _made(ember, name, dev)[1, 2].item()
    yield "index", lambda dev: _made(ember, name, dev)[ember.tensor([1, 0], device=dev)]
    yield "where", lambda dev: ember.where(ember.tensor([True, False], device=dev),
                                          _made(ember, name, dev)[0, :2],
                                          _made(ember, name, dev)[1, :2])
    yield "fill_", lambda dev: ember.empty(3, dtype=d, device=dev).fill_(2)
    yield "zero_", lambda dev: ember.ones(3, dtype=d, device=dev).zero_()
    yield "copy_", lambda dev: ember.empty(3, dtype=d, device=dev).copy_(ember.ones(3, device=dev))
    yield "repr", lambda dev: repr(_made(ember, name, dev)).replace(", device='cuda:0'", "")
    yield "masked_fill", lambda dev: _made(ember, name, dev).masked_fill(
        ember.tensor([True, False, True], device=dev), 0)
    for op, f in BINARY.items():
        for other in ("tensor",) if op == "pow" else ("tensor", 2, 0.5):
            def run(dev, f=f, other=other):
                b = _made(ember, name, dev, [[2, 2, 1], [4, 1, 3]]) if other == "tensor" else other
                return f(_made(ember, name, dev), b)
            yield f"{op}-{other}", run


def _outcome(f, dev):
    try:
        v = f(dev)
    except Exception as e:
        return type(e).__name__, str(e)
    if isinstance(v, ember.Tensor):
        v, dtype = v.cpu(), str(v.dtype)
        if v.dtype.itemsize == 1 and v.dtype._kind:  # float8, float4, bits8: the bytes (NaNs)
            v = v.view(ember.uint8)
        return "ok", dtype, v.tolist()
    return "ok", v


@pytest.mark.parametrize("name", VALUED + ["float4_e2m1fn_x2", "bits8"])
def test_barebones_dtypes_on_cuda_match_the_cpu(name):
    with warnings.catch_warnings(), strict_cupy():
        warnings.simplefilter("ignore")  # complex32 is experimental
        for label, f in _calls(name):
            cpu, cuda = _outcome(f, "cpu"), _outcome(f, "cuda")
            if cpu[0] != "ok":
                assert cuda[0] == cpu[0], (label, cpu, cuda)
            else:
                assert cuda == cpu, label
