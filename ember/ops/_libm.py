"""float64 log, log1p, exp, sin, cos, tan and pow as the C library computes them, for the
values PyTorch's CPU kernels take from scalar `std::` calls (the samplers, logspace).

NumPy built with AVX-512 computes these ufuncs with its own SIMD routines (SVML), which
differ from the C library's in the last place for some float64 values (seen on a Sapphire
Rapids machine: log1p 7%, exp 4%, log 0.3%, tan 0.5%, and pow of logspace's exponents).
There the values are taken from Python's `math` module, which calls the C library PyTorch
calls, one value at a time (~0.1 us each). Where NumPy's loops agree with the C library
(checked once, on 4096 values), NumPy computes them."""
import functools
import math

import numpy as np


def _scalar(name, function):
    """`function` of Python's math module, with C's value where math raises instead (inf,
    nan or 0 on overflow and domain errors: NumPy's loops give those values too)."""
    def value(*args):
        try:
            return function(*args)
        except (OverflowError, ValueError):
            with np.errstate(all="ignore"):
                return float(getattr(np, name)(*map(np.float64, args)))
    return value


_SCALAR = {name: _scalar(name, function) for name, function in (
    ("log", math.log), ("log1p", math.log1p), ("exp", math.exp), ("sin", math.sin),
    ("cos", math.cos), ("tan", math.tan), ("power", math.pow))}
_PROBES = {"log": (0, 2), "log1p": (-1, 1), "exp": (-30, 30), "sin": (0, 7), "cos": (0, 7),
           "tan": (-2, 2), "power": (0.5, 10)}


@functools.lru_cache(maxsize=None)
def _numpy_is_libm(name):
    """Whether NumPy's float64 `name` gives the C library's values on this machine."""
    rng = np.random.default_rng(0)
    args = (rng.uniform(*_PROBES[name], 4096),)
    if name == "power":
        args += (rng.uniform(-30, 30, 4096),)
    ours = getattr(np, name)(*args)
    theirs = np.array([_SCALAR[name](*values) for values in zip(*args)])
    return bool(np.array_equal(ours, theirs))


def libm(name, *args):
    """np.`name`(*args) (one of _SCALAR's, of float64 arrays), the C library's values."""
    args = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in args))
    if _numpy_is_libm(name):
        return getattr(np, name)(*args)
    scalar = _SCALAR[name]
    values = [scalar(*v) for v in zip(*(a.ravel().tolist() for a in args))]
    return np.array(values, dtype=np.float64).reshape(args[0].shape)
