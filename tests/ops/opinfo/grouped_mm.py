"""Op-table entries for `ember/ops/grouped_mm.py`. PyTorch's grouped_mm takes float32, bfloat16
and float16 only, so the entry runs in float32 whatever the table's float dtype (gradients are
compared with PyTorch's in tests/ops/test_grouped_mm.py)."""
import numpy as np

from . import F, OpInfo, Sample, randn, register


def call(transpose_b):
    def run(lib, a, b, offs=None, **kwargs):
        a, b = a.float(), b.float()
        if transpose_b:
            b = b.transpose(-2, -1)
        if offs is not None:
            kwargs["offs"] = lib.tensor(offs, dtype=lib.int32)
        return lib.nn.functional.grouped_mm(a, b, **kwargs)
    return run


def column_major(rng):
    return [
        Sample((randn(rng, 2, 4, 8), randn(rng, 2, 4, 8))),
        # offs[-1] covers every row: PyTorch leaves the rows past it uninitialised
        Sample((randn(rng, 8, 8), randn(rng, 2, 4, 8), [2, 8])),
        Sample((randn(rng, 4, 8), randn(rng, 4, 8), [4, 8])),
        Sample((randn(rng, 8, 8), randn(rng, 2, 4, 8)), raises=RuntimeError),
        Sample((randn(rng, 8, 8), randn(rng, 3, 4, 8), [2, 6]), raises=RuntimeError),
        Sample((randn(rng, 2, 4, 8), randn(rng, 3, 4, 8)), raises=RuntimeError),
        Sample((randn(rng, 2, 4, 8), randn(rng, 2, 4, 4)), raises=RuntimeError),
    ]


def row_major(rng):
    return [
        Sample((randn(rng, 2, 3, 4), randn(rng, 2, 4, 4))),
        Sample((randn(rng, 2, 4, 8), randn(rng, 8, 8), [4, 8])),
        Sample((randn(rng, 2, 4, 4), randn(rng, 2, 4, 3)), raises=RuntimeError),
        Sample((randn(rng, 4), randn(rng, 4, 4)), raises=RuntimeError),
        Sample((randn(rng, 2, 4, 4), randn(rng, 2, 4, 4)), {"bias": randn(rng, 2, 4)},
               grad=(0, 1), raises=RuntimeError),
    ]


register(
    OpInfo("grouped_mm", call(True), column_major, grad=False,
           covers=("nn.functional.grouped_mm",)),
    OpInfo("grouped_mm", call(False), row_major, grad=False, variant="row_major"),
)
