"""Op-table entries for `ember/ops/conversion.py`: `to` in its call forms, `cpu`, `cuda`,
`type`, `type_as` and the dtype shorthands (`.float()`, `.long()` ...).

Conversions to a low-precision dtype (float32 from float64, half, bfloat16) and to complex
skip gradcheck (finite differences cannot resolve the rounded result; ember's gradcheck is
real-valued); parity still compares their gradients with PyTorch's."""
import contextlib

import numpy as np

import ember

from tests._strict_cupy import strict_cupy

from . import OpInfo, Sample, integers, randn, register


def _float_values(rng, *shape):
    """Values with fractions of both signs and exact halves (truncation, rounding)."""
    x = randn(rng, *shape) * 3
    x.reshape(-1)[:2] = (-2.5, 1.5)[: x.size] if x.size >= 2 else x.reshape(-1)[:2]
    return x


def _samples(rng):
    return [
        Sample((_float_values(rng, 3, 4),)),
        Sample((randn(rng),)),
        Sample((_float_values(rng, 4, 3),), noncontig=(0,)),
        Sample((randn(rng, 0, 3),)),
        Sample((integers(rng, 3, 4),)),
        Sample((np.array([True, False, True]),)),
        Sample((np.array([0.0, -0.0, np.nan, np.inf, -np.inf]),), grad=()),
    ]


def _int_samples(rng):
    return [Sample((integers(rng, 3, 4, low=-300, high=300),)),
            Sample((integers(rng, 2, 3).astype(np.int32),)),
            Sample((integers(rng, 2, 3).astype(np.uint8),))]


_SHORTHANDS = {
    # name: (gradcheck, in float64 the shorthand is exact)
    "double": True, "float": False, "half": False, "bfloat16": False, "cfloat": False,
    "cdouble": False, "int": False, "long": False, "short": False, "char": False, "byte": False,
    "bool": False,
}

# chalf's complex32 has no NumPy type: its values are compared as complex64
register(OpInfo("chalf", lambda lib, x: x.chalf().to(lib.complex64), _samples, grad=False,
                atol=0, rtol=0))

for _name, _check in _SHORTHANDS.items():
    register(
        OpInfo(_name, lambda lib, x, n=_name: getattr(x, n)(), _samples, grad=_check,
               # bfloat16 keeps 8 bits of mantissa: PyTorch rounds a float64 straight to it,
               # ember through float32 would round twice; the values must agree exactly
               atol=0, rtol=0),
        OpInfo(_name, lambda lib, x, n=_name: getattr(x, n)(), _int_samples, variant="int",
               grad=False, atol=0, rtol=0),
        OpInfo(_name, lambda lib, x, n=_name: getattr(x, n)() is x,
               lambda rng: [Sample((randn(rng, 3),)), Sample((integers(rng, 3),))],
               variant="identity", grad=False),
    )


# ---- to ------------------------------------------------------------------------------------------
def _to_dtype(dtype, **kw):
    return lambda lib, x: x.to(getattr(lib, dtype), **kw)


def _to_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng),)),
            Sample((randn(rng, 4, 3),), noncontig=(0,)), Sample((integers(rng, 3, 4),)),
            Sample((randn(rng, 0, 2),))]


def _to_forms(lib, x, y):
    """Every overload that names one dtype and the CPU: each gives the same tensor."""
    return (x.to(y.dtype), x.to("cpu", y.dtype), x.to(lib.device("cpu"), dtype=y.dtype),
            x.to(y), x.to(dtype=y.dtype), x.to(y.dtype, False, True), x.to(device="cpu"),
            x.to(float), x.to(int), x.to(bool), x.to("cpu", float))


def _to_identity(lib, x, y):
    """`to` returns self when nothing changes, a copy when asked or when anything changes."""
    return (x.to(x.dtype) is x, x.to("cpu") is x, x.to(x) is x, x.to(x.dtype, copy=True) is x,
            x.to(y) is x, x.to(x.dtype, copy=True))


register(
    OpInfo("to", _to_dtype("float64"), _to_samples),
    OpInfo("to", _to_dtype("float32"), _to_samples, variant="float32", grad=False),
    OpInfo("to", _to_dtype("float16"), _to_samples, variant="float16", grad=False),
    OpInfo("to", _to_dtype("int64"), _to_samples, variant="int64", grad=False),
    OpInfo("to", _to_dtype("bool"), _to_samples, variant="bool", grad=False),
    OpInfo("to", _to_dtype("int32"), _to_samples, variant="int32", grad=False),
    OpInfo("to", _to_dtype("uint8"), lambda rng: [Sample((integers(rng, 3, 4, low=-300, high=300),))],
           variant="uint8", grad=False),
    OpInfo("to", _to_dtype("float64", non_blocking=True), lambda rng: _to_samples(rng)[:1],
           variant="non_blocking"),
    OpInfo("to", _to_forms,
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 2).astype(np.float32)), grad=(0,)),
                        Sample((randn(rng, 3, 4), integers(rng, 2))),
                        Sample((integers(rng, 3, 4), randn(rng, 2)), grad=())],
           variant="forms", grad=False),
    OpInfo("to", _to_identity,
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 2).astype(np.float32)), grad=()),
                        Sample((integers(rng, 3), integers(rng, 2).astype(np.int32)))],
           variant="identity", grad=False),
    OpInfo("to", lambda lib, x, *a: x.to(*a),
           lambda rng: [Sample((randn(rng, 3), "cpu", "float32"), raises=TypeError),
                        Sample((randn(rng, 3), "float32"), raises=RuntimeError),
                        Sample((randn(rng, 3), "float64", "cpu"), raises=TypeError)],
           variant="errors", grad=False),
    OpInfo("to", lambda lib, x: x.to(lib.float64, "cpu"),
           lambda rng: [Sample((randn(rng, 3),), raises=TypeError)], variant="errors_dtype_first",
           grad=False),
    OpInfo("cpu", lambda lib, x: x.cpu(), _to_samples),
    OpInfo("cpu", lambda lib, x: x.cpu() is x, lambda rng: _to_samples(rng)[:1], variant="identity",
           grad=False),
)


# ---- type, type_as -------------------------------------------------------------------------------
def _no_cuda(samples):
    """PyTorch's CPU build refuses CUDA type names; ember matches it where there is no GPU."""
    return lambda rng: [] if ember.cuda.is_available() else samples(rng)


def _type_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((integers(rng, 3),)), Sample((np.array([True]),)),
            Sample((randn(rng, 2).astype(np.float32),), grad=()),
            Sample((integers(rng, 2).astype(np.uint8),))]


register(
    OpInfo("type", lambda lib, x: x.type(), _type_samples, grad=False),
    OpInfo("type", lambda lib, x: x.type(lib.float64), _type_samples, variant="dtype"),
    OpInfo("type", lambda lib, x: x.type(lib.int32), _type_samples, variant="int_dtype", grad=False),
    OpInfo("type", lambda lib, x: x.type("torch.DoubleTensor"), _type_samples, variant="string"),
    OpInfo("type", lambda lib, x: x.type("torch.LongTensor"), _type_samples, variant="string_long",
           grad=False),
    OpInfo("type", lambda lib, x: x.type(lib.DoubleTensor), _type_samples, variant="class"),
    OpInfo("type", lambda lib, x: x.type(lib.float64) is x, _type_samples, variant="identity",
           grad=False),
    OpInfo("type", lambda lib, x, arg: x.type(arg), lambda rng: [
        Sample((randn(rng, 2), "Nope"), grad=(), raises=ValueError),
        Sample((randn(rng, 2), "torch.float64"), grad=(), raises=ValueError),
        Sample((randn(rng, 2), 5), grad=(), raises=TypeError)], variant="errors", grad=False),
    OpInfo("type", lambda lib, x, name: x.type(name), _no_cuda(lambda rng: [
        Sample((randn(rng, 2), "torch.cuda.FloatTensor"), grad=(), raises=RuntimeError),
        Sample((randn(rng, 2), "torch.cuda.Nope"), grad=(), raises=RuntimeError)]),
        variant="cuda_without_gpu", grad=False),
    OpInfo("type_as", lambda lib, x, y: x.type_as(y),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 2)), grad=(0,)),
                        Sample((randn(rng, 3, 4), integers(rng, 2)), grad=(0,)),
                        Sample((integers(rng, 3), randn(rng, 2))),
                        Sample((randn(rng, 3, 4), randn(rng, 2).astype(np.float32)), grad=(0,))],
           grad=False),
    OpInfo("type_as", lambda lib, x, y: x.type_as(y),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 2)), grad=(0,))], variant="grad"),
)


# ---- cuda ------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _some_cuda(lib):
    """The real CUDA where there is one, else the strict CuPy stand-in."""
    if lib.cuda.is_available():
        yield
        return
    with strict_cupy():
        yield


def _cuda_round_trip(lib, x):
    y = x.cuda()
    z = y * 2
    return z.cpu(), y.is_cuda, str(y.device), y.cuda() is y, x.cuda(0).device == y.device


register(
    # PyTorch's CPU build has no CUDA: ember's transfers are checked by gradcheck, on a GPU
    # or on the NumPy stand-in
    OpInfo("cuda", _cuda_round_trip, lambda rng: [Sample((randn(rng, 3, 4),)),
                                                 Sample((randn(rng, 4, 3),), noncontig=(0,)),
                                                 Sample((integers(rng, 3),))],
           parity="none", context=_some_cuda),
)
