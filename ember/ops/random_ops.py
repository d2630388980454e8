"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, multinomial, poisson,
their `_like` forms, and the in-place samplers (`uniform_`, `normal_` ...).

Every draw comes from an `ember.Generator` of the result's device (`generator=` or the
device's default), through the backend generator's `random`, `standard_normal`,
`integers` and `poisson` only: NumPy's and CuPy's generators both have those, so one body
serves both. Other distributions are transforms of those draws, done on whole arrays.

Samplers are not differentiable, but PyTorch still records them: a result computed from a
tensor that requires grad gets a node (`NormalBackward3`, `UniformBackward0` ...) whose
gradient is zero. In-place samplers go through `_writes.inplace`, so a leaf that requires
grad is refused outside `no_grad` (inside it, as `nn.init` does, they simply write).
"""
import builtins
import math
import warnings

import numpy as np

from .. import _memory_format as _mf
from .. import dtypes as _dt
from .._tensor import Tensor, make_tensor
from ..device import assert_on_device, backend_of, checks_on_host
from . import _torch_stream as _ts
from ._draws import (_affine_inplace, _integers, _normal_array, _rand_array,
                     _randn_array, _rng, _standard_normal, _uniform01, _width, bernoulli_mask)
from ._libm import libm
from ._graph import Node, record
from ._writes import inplace, write_out
from .creation import (_is_size_int, check_factory_grad, factory_out, resolve_device, size_arg,
                       zeros_like)

__all__ = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "poisson", "rand_like", "randn_like", "randint_like"]
METHODS = ["uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
           "log_normal_", "cauchy_", "bernoulli", "multinomial"]


def _xp(t):
    return backend_of(t._device).xp


def _not_implemented(kernel, d):
    raise NotImplementedError(f'"{kernel}" not implemented for \'{d._scalar_name}\'')


def _refuse_barebones(d):
    """Integer draws take uint16/32/64 alone of PyTorch's barebones dtypes."""
    if d._kind and d._kind is not _dt.UINT:
        if d._kind in (_dt.COMPLEX32, _dt.BITS, _dt.SUB_INT, _dt.SUB_UINT):
            raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                               "boolean types")
        _not_implemented("random_update_from_to", d)


def _require_float(d, kernel, complex_ok=False):
    if not (d.is_floating_point or (complex_ok and d.is_complex)) or \
            (d._kind and not (complex_ok and d is _dt.complex32)):
        _not_implemented(kernel, d)


def _new(array, dev, requires_grad=False):
    t = make_tensor(array, dev)
    if requires_grad:
        t._requires_grad = True
    return t


def _factory(fname, size, dtype, device, requires_grad, out, draw):
    """The shared body of rand/randn/randint/randperm: dtype from `out` when not given."""
    if out is not None and dtype is not None and out.dtype is not _dt.to_dtype(dtype):
        raise RuntimeError(f"dtype {_dt.to_dtype(dtype)._scalar_name} does not match dtype of "
                           f"out parameter ({out.dtype._scalar_name})")
    d = _dt.dtype_arg(dtype, fname) if dtype is not None else (
        out.dtype if out is not None else None)
    dev = resolve_device(device) if out is None or device is not None else out._device
    arr, d = draw(dev, d)
    check_factory_grad(d, requires_grad)
    t = _new(arr, dev, requires_grad)
    return t if out is None else factory_out(out, t, fname)


# ---- factories ----------------------------------------------------------------------------
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, **kwargs):
    size = _size_kwarg(size, kwargs, "rand")
    return _rand(size, generator, out, dtype, device, kwargs.get("requires_grad", False))


def _rand(size, generator, out, dtype, device, requires_grad):
    shape = size_arg(size, "rand")

    def draw(dev, d):
        d = d or _dt.get_default_dtype()
        _require_float(d, "check_uniform_bounds", complex_ok=True)
        return _rand_array(_rng(dev, generator), shape, d), d
    return _factory("rand", shape, dtype, device, requires_grad, out, draw)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, **kwargs):
    size = _size_kwarg(size, kwargs, "randn")
    return _randn(size, generator, out, dtype, device, kwargs.get("requires_grad", False))


def _randn(size, generator, out, dtype, device, requires_grad, mean=0.0, std=1.0,
           fname="randn"):
    shape = size_arg(size, fname)

    def draw(dev, d):
        d = d or _dt.get_default_dtype()
        _require_float(d, "normal_kernel_cpu", complex_ok=True)
        return _normal_array(_rng(dev, generator), shape, d, mean, std), d
    return _factory(fname, shape, dtype, device, requires_grad, out, draw)


def _size_kwarg(size, kwargs, fname):
    """`rand(2, 3)` or `rand(size=(2, 3))`; other keywords as PyTorch's factories take them."""
    extra = set(kwargs) - {"size", "requires_grad", "pin_memory", "memory_format"}
    if extra:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{extra.pop()}'")
    if "size" in kwargs:
        if size:
            raise TypeError(f"{fname}() got multiple values for argument 'size'")
        return (kwargs["size"],)
    # PyTorch's size has no default (rand() is not a 0-d draw), and varargs that do not start
    # with an int fit neither signature
    if not size or (len(size) > 1 and not _is_size_int(size[0])):
        common = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
                  "torch.device device = None, bool pin_memory = False, bool requires_grad = "
                  "False)")
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"({', '.join(type(s).__name__ for s in size)}), but "
                        "expected one of:\n * (tuple of ints size, *, torch.Generator generator, "
                        f"{common}\n * (tuple of ints size, *, {common}\n")
    return size


def _check_int_arg(v, name, fname, pos):
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, np.integer):
        v = int(v)
    if not isinstance(v, builtins.int) or isinstance(v, builtins.bool):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{name}'{where} must be int, not {type(v).__name__}")
    return v


def _check_range(low, high, d):
    """PyTorch's `random_(from, to)` checks: a non-empty range that `d` can hold."""
    _refuse_barebones(d)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if d.is_floating_point:
        digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[d.name]
        lim = 1 << digits
        if low < -lim or low > lim or high - 1 < -lim or high - 1 > lim:
            warnings.warn(f"to - 1 is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                          f"precision limitations {d._cpp_name} can support discrete "
                          "uniform distribution only within this range. This warning will "
                          "become an error in version 1.7 release, please fix the code in "
                          "advance", UserWarning, stacklevel=4)
        return
    info = (0, 1) if d is _dt.bool else (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max))
    if not info[0] <= low <= info[1]:
        raise RuntimeError(f"from is out of bounds for {d._cpp_name}")
    if not info[0] <= high - 1 <= info[1]:
        raise RuntimeError(f"to - 1 is out of bounds for {d._cpp_name}")


def _randint_args(args, low, high, size, fname):
    """randint's overloads: (high, size), (low, high, size), with keywords for any."""
    args = list(args)
    if len(args) == 3:
        low, high, size = args
    elif len(args) == 2:
        if size is None:
            high, size = args
        else:
            low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    if high is None or size is None:
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    pos = 1 if len(args) < 3 and low == 0 else 2
    high = _check_int_arg(high, "high", fname, pos)
    low = _check_int_arg(low, "low", fname, 1)
    if not isinstance(size, (tuple, list)):
        where = f" (position {pos + 1})" if len(args) > pos else ""
        raise TypeError(f"{fname}(): argument 'size'{where} must be tuple of ints, not "
                        f"{type(size).__name__}")
    return low, high, size_arg((size,), fname, pos + 1)


def randint(*args, low=0, high=None, size=None, generator=None, out=None, dtype=None,
            layout=None, device=None, requires_grad=False, pin_memory=False):
    low, high, shape = _randint_args(args, low, high, size, "randint")

    def draw(dev, d):
        d = d or _dt.int64
        _check_range(low, high, d)
        return _integers(_rng(dev, generator), low, high - 1, shape).astype(d.np), d
    return _factory("randint", shape, dtype, device, requires_grad, out, draw)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    n = _check_int_arg(n, "n", "randperm", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")

    def draw(dev, d):
        d = d or _dt.int64
        if not d.is_floating_point and n > 0 and n - 1 > (1 if d is _dt.bool else
                                                          int(np.iinfo(d.np).max)):
            raise RuntimeError(f"value cannot be converted to type {d.np.name}_t without "
                               "overflow")
        rng = _rng(dev, generator)
        bits = _ts.stream(rng)
        if bits is not None:
            return _ts.randperm(bits, n).astype(d.np), d
        # on a device: the order that sorts independent uniform keys
        keys = _integers(rng, 0, (1 << 62), (n,))
        return keys.argsort(kind="stable").astype(d.np), d
    return _factory("randperm", (n,), dtype, device, requires_grad, out, draw)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
              memory_format=None, generator=None):
    d, dev = _like(input, dtype, device, "rand_like")
    t = rand(input.shape, dtype=d, device=dev, requires_grad=requires_grad,
             generator=generator)
    return _mf.lay_out_like(t, input, memory_format, "rand_like")


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None, generator=None):
    d, dev = _like(input, dtype, device, "randn_like")
    t = randn(input.shape, dtype=d, device=dev, requires_grad=requires_grad,
              generator=generator)
    return _mf.lay_out_like(t, input, memory_format, "randn_like")


def randint_like(input, *args, low=0, high=None, dtype=None, layout=None, device=None,
                 requires_grad=False, pin_memory=False, memory_format=None, generator=None):
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    if high is None:
        raise TypeError("randint_like() missing required argument 'high'")
    d, dev = _like(input, dtype, device, "randint_like")
    t = randint(low, high, tuple(input.shape), dtype=d, device=dev,
                requires_grad=requires_grad, generator=generator)
    return _mf.lay_out_like(t, input, memory_format, "randint_like")


def _like(input, dtype, device, fname):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return (input.dtype if dtype is None else _dt.to_dtype(dtype),
            input._device if device is None else device)


# ---- samplers that take tensors (differentiable in name: their gradient is zero) ----------
class _ZeroGradNode(Node):
    """A sampler's node: PyTorch defines its derivative as zero for every input."""

    def backward(self, grad):
        zeros = tuple(zeros_like(grad, dtype=_dt.FROM_NUMPY[m[1]]).expand(m[0])
                      if edge[0] is not None else None
                      for edge, m in zip(self._next, self._meta))
        return zeros[0] if len(zeros) == 1 else zeros


def _zero_grad_node(name):
    return type(name, (_ZeroGradNode,), {"__module__": __name__})


NormalBackward0 = _zero_grad_node("NormalBackward0")   # normal_
NormalBackward1 = _zero_grad_node("NormalBackward1")   # normal(Tensor mean, float std)
NormalBackward2 = _zero_grad_node("NormalBackward2")   # normal(float mean, Tensor std)
NormalBackward3 = _zero_grad_node("NormalBackward3")   # normal(Tensor mean, Tensor std)
BernoulliBackward0 = _zero_grad_node("BernoulliBackward0")  # bernoulli(Tensor)
BernoulliBackward1 = _zero_grad_node("BernoulliBackward1")  # bernoulli_(Tensor p)
BernoulliBackward2 = _zero_grad_node("BernoulliBackward2")  # bernoulli_(float p)
PoissonBackward0 = _zero_grad_node("PoissonBackward0")
UniformBackward0 = _zero_grad_node("UniformBackward0")
RandomBackward0 = _zero_grad_node("RandomBackward0")  # random_(from, to)
RandomBackward1 = _zero_grad_node("RandomBackward1")  # random_(to)
RandomBackward2 = _zero_grad_node("RandomBackward2")  # random_()
ExponentialBackward0 = _zero_grad_node("ExponentialBackward0")
GeometricBackward0 = _zero_grad_node("GeometricBackward0")
LogNormalBackward0 = _zero_grad_node("LogNormalBackward0")
CauchyBackward0 = _zero_grad_node("CauchyBackward0")


def _broadcast_shape(a, b):
    out = []
    for i in range(1, builtins.max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            n = builtins.max(len(a), len(b))
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {n - i}")
        out.append(x if y == 1 else y)
    return tuple(reversed(out))


def _finish_sampled(arr, dev, node_cls, inputs, out, fname):
    t = make_tensor(arr, dev)
    if out is not None:
        return write_out(out, t, fname)
    record(node_cls, inputs, t)
    return t


def normal(mean, std=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """normal(Tensor, Tensor), normal(Tensor, float=1), normal(float, Tensor),
    normal(float, float, size): `mean + std * N(0, 1)` in the tensor operand's dtype."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected one of:")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
        # PyTorch's empty(size).normal_(mean, std): mean and std applied in its kernel
        t = _randn((size,), generator, out, dtype, device, False, mean, std, "normal")
        if requires_grad:
            check_factory_grad(t.dtype, True)
            t._requires_grad = True
        return t
    if std is None:
        std = 1.0
    ref = mean if mt else std
    d, dev = ref.dtype, ref._device
    _require_float(d, "normal_kernel_cpu")
    if st:
        if bool((std._array < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    m = mean._array if mt else mean
    s = std._array.astype(d.np, copy=False) if st else std
    shape = _broadcast_shape(mean._array.shape, std._array.shape) if mt and st else ref._array.shape
    if st:  # PyTorch: standard draws, times std, plus mean, each in the tensor's dtype
        arr = (m + s * _randn_array(_rng(dev, generator), shape, d)).astype(d.np, copy=False)
    else:  # a number std is applied inside the sampler (as normal_(0, std)), then mean added
        arr = (m + _normal_array(_rng(dev, generator), shape, d, 0.0, std)).astype(
            d.np, copy=False)
    node_cls = NormalBackward3 if mt and st else (NormalBackward1 if mt else NormalBackward2)
    inputs = (mean, std) if mt and st else (ref,)
    return _finish_sampled(arr, dev, node_cls, inputs, out, "normal")


def _fmt(x):
    """A Python number as PyTorch prints it in messages (-1.0 as -1)."""
    return f"{x:g}" if isinstance(x, builtins.float) else str(x)


def bernoulli(input, p=None, *, generator=None, out=None):
    """Samples 1 with probability `input` (or `p` everywhere, `input` giving the shape)."""
    dev, shape = input._device, input._array.shape
    rng = _rng(dev, generator)
    if p is not None:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
        arr = bernoulli_mask(rng, shape, p).astype(input._array.dtype)
        return _finish_sampled(arr, dev, BernoulliBackward0, (input,), out, "bernoulli")
    _require_float(input.dtype, "bernoulli_tensor_cpu_p_")
    probs = input._array
    outside = (probs < 0) | (probs > 1)
    if not checks_on_host(dev):  # PyTorch's CUDA kernel asserts on the device: no read
        assert_on_device(dev, outside, "Assertion `0 <= p && p <= 1`")
    elif bool(outside.any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    arr = _bernoulli_draws(rng, shape, probs).astype(probs.dtype)
    return _finish_sampled(arr, dev, BernoulliBackward0, (input,), out, "bernoulli")


def _bernoulli_draws(rng, shape, probs):
    """u < p elementwise for an array of probabilities: PyTorch's CPU kernel draws u as a
    double (53 bits) for float64 probabilities and as a float (24 bits) for the others,
    compared with p in that precision."""
    if probs.dtype == np.float64:
        return _uniform01(rng, shape, _dt.float64) < probs
    return _uniform01(rng, shape, _dt.float32) < probs.astype(np.float32, copy=False)


def poisson(input, generator=None):
    _require_float(input.dtype, "poisson_cpu")
    rates = input._array
    if bool((~(rates >= 0)).any()):  # (NaN too, as the kernel's check)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    rng = _rng(input._device, generator)
    bits = _ts.stream(rng) if rates.size <= LOOPED_DRAWS_MAX else None
    arr = (_ts.poisson(bits, rates) if bits is not None else
           rng.poisson(rates.astype(np.float64), size=rates.shape)).astype(rates.dtype)
    return _finish_sampled(arr, input._device, PoissonBackward0, (input,), None, "poisson")


# The samplers whose PyTorch draws are a Python loop here (poisson, log_normal_, gamma: ~2 us
# a value) reproduce them up to this many values; larger tensors take NumPy's samplers.
LOOPED_DRAWS_MAX = 1 << 16


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices drawn from each row's (unnormalised) probabilities."""
    d = input.dtype
    if not d.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{d._scalar_name}")
    if input._array.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    num_samples = _check_int_arg(num_samples, "num_samples", "multinomial", 2)
    n_cat = input._array.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    dev = input._device
    xp = backend_of(dev).xp
    probs = input._array.reshape(-1, n_cat).astype(np.float64)
    rows = probs.shape[0]
    if rows and replacement and num_samples > 1:
        _check_rows_to_draw_from(probs, dev, xp)
    elif rows:  # PyTorch's path for one draw or none repeated reads two checks on the host
        if bool((~xp.isfinite(probs) | (probs < 0)).any()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if bool((probs.sum(axis=1) <= 0).any()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(dev, generator)
    bits = _ts.stream(rng)
    if rows == 0:
        idx = xp.zeros((0, num_samples), dtype=np.int64)
    elif bits is not None and input._array.dtype in (np.float32, np.float64):
        idx = _ts.multinomial(bits, input._array.reshape(rows, n_cat), num_samples, replacement)
    elif replacement:
        idx = _with_replacement(xp, rng, probs, num_samples)
    else:
        # Sequential draws without replacement equal the order of exponential races
        # E_i / p_i (E_i ~ Exp(1)): the k smallest, in order.
        e = -xp.log1p(-rng.random((rows, n_cat), dtype=np.float64))
        keys = e / probs  # a zero probability races at infinity: never before the others
        idx = keys.argsort(axis=1, kind="stable")[:, :num_samples].astype(np.int64)
    idx = idx.reshape(input._array.shape[:-1] + (num_samples,))
    t = make_tensor(idx, dev)
    return t if out is None else write_out(out, t, "multinomial")


def _check_rows_to_draw_from(probs, dev, xp):
    """PyTorch's checks for repeated draws, made inside its kernels: on the CPU, row by row,
    each entry (not negative, then finite) and then the row's sum; on CUDA, a device-side
    assert on negative entries only, with no read of the device."""
    if not checks_on_host(dev):
        assert_on_device(dev, probs < 0, "renormRowsL1: Assertion `!(val < zero)`")
        return
    negative = ~(probs >= 0)  # NaN too, as the kernel's `>= 0` test sees it
    bad = negative | ~np.isfinite(probs)
    row_bad = bad.any(axis=1) | (probs.sum(axis=1) <= 0)
    if not row_bad.any():
        return
    r = int(row_bad.argmax())
    if not bad[r].any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    which = "< 0" if negative[r, bad[r].argmax()] else "= infinity or NaN"
    raise RuntimeError(f"invalid multinomial distribution (encountering probability entry "
                       f"{which})")


def _with_replacement(xp, rng, probs, k):
    """Inverse-CDF sampling for all rows at once: each row's CDF is shifted by its row number
    so one sorted array and one `searchsorted` serve every row."""
    rows, n = probs.shape
    cdf = xp.cumsum(probs, axis=1)
    cdf /= cdf[:, -1:]
    offsets = xp.arange(rows, dtype=np.float64)[:, None]
    u = rng.random((rows, k), dtype=np.float64)
    flat = (cdf + offsets).reshape(-1)
    pos = xp.searchsorted(flat, (u + offsets).reshape(-1), side="right").reshape(rows, k)
    idx = pos - (xp.arange(rows)[:, None] * n)
    # Rounding can leave the last CDF entry a hair under 1: never step past the last
    # category that has probability.
    last = (n - 1) - (probs[:, ::-1] > 0).argmax(axis=1)
    return xp.minimum(idx, last[:, None]).astype(np.int64)


# ---- in-place samplers ----------------------------------------------------------------------
def _sample_inplace(self, node_cls, draw, others=()):
    """Fill `self` with `draw(rng_source_tensor)` through the in-place path: leaf checks,
    version bump, and (when tracked) a zero-gradient node for the new value. Values are drawn
    in the order of self's memory, as PyTorch's CPU kernels fill a tensor (a transposed one
    too), unless `others` (a probability tensor) must line up with self's own order."""
    def compute(s):
        t = make_tensor(draw(s) if others else _in_memory_order(s, draw), s._device)
        record(node_cls, (s,) + tuple(o for o in others if isinstance(o, Tensor)), t)
        return t
    return inplace(self, compute, others)


def uniform_(self, from_=0, to=1, *, generator=None, **kwargs):
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    _require_float(self.dtype, "check_uniform_bounds", complex_ok=True)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(from_)} > to={_fmt(to)}")
    if self.dtype.is_floating_point:
        fmax = float(_dt.finfo(self.dtype).max)
        if not -fmax <= from_ <= fmax:
            raise RuntimeError(f"from is out of bounds for {self.dtype._cpp_name}")
        if not -fmax <= to <= fmax:
            raise RuntimeError(f"to is out of bounds for {self.dtype._cpp_name}")
    gen = generator

    def draw(s):
        rng = _rng(s._device, gen)
        if (s.dtype is _dt.float16 or s.dtype is _dt.bfloat16) and _ts.stream(rng):
            return _ts.uniform_half(_ts.stream(rng), s._array.shape, s.dtype, from_, to)
        u = _rand_array(rng, s._array.shape, s.dtype)
        # PyTorch takes the width between the bounds in float32, as it holds them
        return _affine_inplace(u, _width(from_, to, u), from_)
    return _sample_inplace(self, UniformBackward0, draw)


def normal_(self, mean=0, std=1, *, generator=None):
    _require_float(self.dtype, "normal_kernel_cpu", complex_ok=True)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    # PyTorch fills a non-contiguous tensor value by value (its small-draw Box-Muller)
    per_value = not self._array.flags.c_contiguous

    def draw(s):
        rng = _rng(s._device, generator)
        if per_value and _ts.stream(rng) is not None and not s.dtype.is_complex:
            n = s._array.size
            return _ts.normal(rng, (n,), s.dtype, mean, std, per_value=True).reshape(
                s._array.shape)
        return _normal_array(rng, s._array.shape, s.dtype, mean, std)
    return _sample_inplace(self, NormalBackward0, draw)


def _in_memory_order(s, draw):
    """draw(s) for a C-contiguous s; else the values drawn for s's dims in the order of its
    strides (outermost first) and laid back in s's own order."""
    arr = s._array
    if not isinstance(arr, np.ndarray) or arr.ndim < 2 or arr.flags.c_contiguous:
        return draw(s)
    order = sorted(builtins.range(arr.ndim), key=lambda i: -builtins.abs(arr.strides[i]))
    drawn = draw(make_tensor(arr.transpose(order), s._device))
    return drawn.transpose(np.argsort(order))


def bernoulli_(self, p=0.5, *, generator=None):
    if isinstance(p, Tensor):
        _require_float(p.dtype, "bernoulli_tensor_cpu_p_")
        target = self._array.shape
        if _broadcast_or_none(p._array.shape, target) != target:
            raise RuntimeError(_expand_message(target, p._array.shape))

        def draw_t(s):
            return _bernoulli_draws(_rng(s._device, generator), s._array.shape,
                                    p._array).astype(s._array.dtype)
        return _sample_inplace(self, BernoulliBackward1, draw_t, (p,))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")

    def draw(s):
        return bernoulli_mask(_rng(s._device, generator), s._array.shape, p).astype(
            s._array.dtype)
    return _sample_inplace(self, BernoulliBackward2, draw)


def _broadcast_or_none(a, b):
    try:
        return _broadcast_shape(a, b)
    except RuntimeError:
        return None


def _expand_message(target, shape):
    n = len(target)
    padded = (1,) * (n - len(shape)) + tuple(shape)
    for i in range(n - 1, -1, -1):
        if padded[i] != 1 and padded[i] != target[i]:
            return (f"The expanded size of the tensor ({target[i]}) must match the existing size "
                    f"({padded[i]}) at non-singleton dimension {i}.  Target sizes: "
                    f"{list(target)}.  Tensor sizes: {list(shape)}")
    return f"expand: invalid shape {list(shape)} for {list(target)}"


def _full_range(d):
    """`random_()`'s range for dtype `d`: [0, 2^mantissa] for floats, [0, max] otherwise."""
    _refuse_barebones(d)
    if d.is_floating_point:
        return 0, 1 << {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[d.name]
    return 0, 1 if d is _dt.bool else int(np.iinfo(d.np).max)


def random_(self, *args, generator=None, **kwargs):
    """random_() over the dtype's range, random_(to), random_(from, to): [from, to - 1]."""
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 arguments ({len(args)} given)")
    from_ = kwargs.pop("from", 0)
    to = kwargs.pop("to", None)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) == 2:
        from_, to = args
    elif len(args) == 1:
        to = args[0]
    d = self.dtype
    if d.is_complex:
        _not_implemented("random_from_to", d)
    if len(args) == 0 and to is None and from_ == 0:
        low, high, node = *_full_range(d), RandomBackward2
    elif to is None:
        low, high, node = from_, _full_range(d)[1], RandomBackward0
    else:
        _check_range(from_, to, d)
        low, high = from_, to - 1
        node = RandomBackward1 if len(args) == 1 else RandomBackward0

    def draw(s):
        vals = _integers(_rng(s._device, generator), low, high, s._array.shape)
        return vals.astype(s._array.dtype)
    return _sample_inplace(self, node, draw)


def exponential_(self, lambd=1, *, generator=None):
    if not self.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           "dtype must be a floating point but you specified "
                           f"{self.dtype._scalar_name}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")

    def draw(s):
        u = _uniform01(_rng(s._device, generator), s._array.shape, _dt.float64)
        if s._array.dtype == np.float64 and isinstance(u, np.ndarray):
            return -libm("log1p", -u) / lambd  # (PyTorch's std::log1p, to the last place)
        return (-_xp(s).log1p(-u) / lambd).astype(s._array.dtype)
    return _sample_inplace(self, ExponentialBackward0, draw)


def geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")

    def draw(s):
        rng = _rng(s._device, generator)
        u = _uniform01(rng, s._array.shape, _dt.float64)
        # trials up to the first success: ceil(log(u) / log(1 - p)) (1 - u and u alike are
        # uniform; PyTorch's kernel takes log(u), so its stream gives its values), at least 1
        xp = _xp(s)
        with np.errstate(divide="ignore"):  # (u = 0: log is -inf, the draw inf, as PyTorch's)
            k = xp.maximum(xp.ceil(xp.log(u) / math.log1p(-p)), 1)
        return k.astype(s._array.dtype)
    return _sample_inplace(self, GeometricBackward0, draw)


def log_normal_(self, mean=1, std=2, *, generator=None):
    _require_float(self.dtype, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")

    def draw(s):
        rng = _rng(s._device, generator)
        # (PyTorch's draws: a double normal draw each, then exp)
        if _ts.stream(rng) is not None:
            return _ts.log_normal(rng, s._array.shape, mean, std).astype(s._array.dtype)
        n = _standard_normal(rng, s._array.shape, _dt.float64)
        return _xp(s).exp(n * std + mean).astype(s._array.dtype)
    return _sample_inplace(self, LogNormalBackward0, draw)


def cauchy_(self, median=0, sigma=1, *, generator=None):
    if not self.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {self.dtype._cpp_name}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")

    def draw(s):
        u = _uniform01(_rng(s._device, generator), s._array.shape, _dt.float64)
        if s._array.dtype == np.float64 and isinstance(u, np.ndarray):
            return median + sigma * libm("tan", math.pi * (u - 0.5))  # (std::tan's values)
        return (median + sigma * _xp(s).tan(math.pi * (u - 0.5))).astype(s._array.dtype)
    return _sample_inplace(self, CauchyBackward0, draw)


