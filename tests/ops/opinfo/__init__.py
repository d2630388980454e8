"""The op table: sample inputs for every public op, like PyTorch's OpInfo.

Each family of ops has a module here (`pointwise.py`, `reduction.py` ...) that calls
`register(OpInfo(...))`. `tests/ops/test_ops.py` runs every entry through gradcheck,
gradgradcheck and parity with PyTorch, and fails when a public op has no entry.

An entry's `call(lib, *args, **kwargs)` runs the op with `lib` being `ember` or `torch`, so
one entry drives both. In a Sample, NumPy arrays become tensors of the library under test
(float arrays are cast to float64 for gradcheck); everything else passes through unchanged.
Arrays inside a list or tuple argument (`cat([a, b])`) and in keyword arguments become
tensors too.

Parity runs every sample twice: floating arrays as float64 and as float32 (the default
dtype). A sample with `raises` set is an error case: both libraries must raise that
exception type with the same message (gradcheck skips it).
"""
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    # indices of the array args that require grad; None: every floating array arg
    # (a list argument's index makes every floating array in it require grad; a keyword's
    # name selects a keyword argument)
    grad: tuple = None
    # indices (or keyword names) of array args passed as non-contiguous tensors holding the
    # same values: transposed memory for 2-D and up, every other element for 1-D
    noncontig: tuple = ()
    # an exception type: the call must raise it (with PyTorch's message, under parity)
    raises: type = None


@dataclass
class OpInfo:
    name: str                       # the public name (ember.<name> and/or Tensor.<name>)
    call: Callable                  # call(lib, *args, **kwargs) -> output(s)
    samples: Callable               # samples(rng: np.random.Generator) -> list[Sample]
    covers: tuple = ()              # further public names this entry exercises (aliases, methods, in-place forms)
    grad: bool = True               # run gradcheck
    gradgrad: bool = True           # run gradgradcheck
    parity: str = "values"          # "values", "meta" (shape and dtype only: random ops), or "none"
    atol: float = 1e-5
    rtol: float = 1.3e-6
    grad_dtype: str = "float64"     # dtype gradcheck uses for floating args
    # False where PyTorch's backward is not the mathematical gradient (ctc_loss assumes its
    # input came from log_softmax): gradcheck still runs, gradient parity does not
    grad_parity: bool = True
    variant: str = ""               # tells apart entries of one name in test ids ("add.int-0")
    # context(lib) -> a context manager the runner holds around each whole check of the entry
    # (a stand-in device, a default dtype ...); None: no context
    context: Callable = None
    # known bugs: {kind: reason} or {(kind, sample index): reason}, kind one of "gradcheck",
    # "gradgradcheck", "parity", "parity_float32", "raises"; the runner marks them
    # xfail(strict=True)
    xfail: dict = field(default_factory=dict)
    # optional modules the op imports (an extra such as SciPy): its tests skip without them
    needs: tuple = ()


OPS = []
IMPORT_ERRORS = {}  # family module name -> traceback text, for modules that failed to import


def register(*infos):
    OPS.extend(infos)


def all_ops():
    """Every registered entry (imports each family module of this package once). A module
    that fails to import is left out and its traceback kept in IMPORT_ERRORS, so one broken
    family does not hide the others' tests."""
    for mod in pkgutil.iter_modules(__path__):
        try:
            importlib.import_module(f"{__name__}.{mod.name}")
        except Exception:
            import traceback
            IMPORT_ERRORS[mod.name] = traceback.format_exc()
        else:
            IMPORT_ERRORS.pop(mod.name, None)
    return OPS


def randn(rng, *shape):
    return rng.standard_normal(shape)


def positive(rng, *shape):
    return rng.uniform(0.5, 2.0, shape)


def integers(rng, *shape, low=-5, high=6):
    return rng.integers(low, high, shape, dtype=np.int64)


def away_from(rng, *shape, points=(0.0,), gap=0.2):
    """Standard normal values at least `gap` from each of `points` (the kinks of abs,
    clamp, relu ...), so finite differences and ties do not straddle them."""
    x = rng.standard_normal(shape)
    for _ in range(100):
        near = np.zeros(x.shape, bool)
        for p in points:
            near |= np.abs(x - p) < gap
        if not near.any():
            return x
        x = np.where(near, rng.standard_normal(shape), x)
    raise ValueError("away_from: points too dense")


# ---- entry calls: call(lib, *args, **kwargs) for a public name ---------------------------------
def top(name):
    """An entry call for `lib.<name>` (`ember.<name>` / `torch.<name>`)."""
    def call(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)
    return call


def F(name):
    """An entry call for `lib.nn.functional.<name>`."""
    def call(lib, *args, **kwargs):
        return getattr(lib.nn.functional, name)(*args, **kwargs)
    return call


def method(name):
    """An entry call for the Tensor method `<name>` of the first argument."""
    def call(lib, x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)
    return call
