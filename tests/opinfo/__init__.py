"""The op table: sample inputs for every public op, like PyTorch's OpInfo.

Each family of ops has a module here (`pointwise.py`, `reduction.py` ...) that calls
`register(OpInfo(...))`. `tests/test_ops.py` runs every entry through gradcheck,
gradgradcheck and parity with PyTorch, and fails when a public op has no entry.

An entry's `call(lib, *args, **kwargs)` runs the op with `lib` being `ember` or `torch`, so
one entry drives both. In a Sample, NumPy arrays become tensors of the library under test
(float arrays are cast to float64 for gradcheck); everything else passes through unchanged.
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
    grad: tuple = None


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


OPS = []


def register(*infos):
    OPS.extend(infos)


def all_ops():
    """Every registered entry (imports each family module of this package once)."""
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    return OPS


def randn(rng, *shape):
    return rng.standard_normal(shape)


def positive(rng, *shape):
    return rng.uniform(0.5, 2.0, shape)
