"""Op-table entries for `ember/ops/bilinear.py`: torch.bilinear / nn.functional.bilinear."""
import numpy as np

from . import OpInfo, Sample, randn, register


def _samples(rng):
    return [
        Sample((randn(rng, 5, 3), randn(rng, 5, 4), randn(rng, 2, 3, 4), randn(rng, 2))),
        Sample((randn(rng, 5, 3), randn(rng, 5, 4), randn(rng, 2, 3, 4), None)),
        Sample((randn(rng, 3), randn(rng, 4), randn(rng, 2, 3, 4), randn(rng, 2))),
        Sample((randn(rng, 2, 3, 3), randn(rng, 2, 3, 2), randn(rng, 4, 3, 2), randn(rng, 4))),
        Sample((randn(rng, 4, 3), randn(rng, 3, 4).T.copy(), randn(rng, 2, 3, 3), randn(rng, 2)),
               noncontig=(0, 2)),
        Sample((randn(rng, 0, 3), randn(rng, 0, 4), randn(rng, 2, 3, 4), randn(rng, 2))),
        Sample((randn(rng, 5, 3), randn(rng, 5, 4), randn(rng, 2, 3, 4), randn(rng, 2)), grad=(2,)),
        # errors: batch, sizes, bias, ranks, dtypes, a 0-dim input
        Sample((randn(rng, 5, 3), randn(rng, 4, 4), randn(rng, 2, 3, 4), None), raises=RuntimeError),
        Sample((randn(rng, 5, 3), randn(rng, 5, 5), randn(rng, 2, 3, 4), None), raises=RuntimeError),
        Sample((randn(rng, 5, 2), randn(rng, 5, 4), randn(rng, 2, 3, 4), None), raises=RuntimeError),
        Sample((randn(rng, 5, 3), randn(rng, 5, 4), randn(rng, 2, 3, 4), randn(rng, 3)),
               raises=RuntimeError),
        Sample((randn(rng, 5, 3), randn(rng, 5, 1, 4), randn(rng, 2, 3, 4), None), raises=RuntimeError),
        Sample((randn(rng, 5, 3), randn(rng, 5, 3), randn(rng, 2, 3), None), raises=IndexError),
        Sample((randn(rng), randn(rng), randn(rng, 2, 1, 1), None), raises=IndexError),
        Sample((randn(rng, 5, 3).astype(np.float32), randn(rng, 5, 4), randn(rng, 2, 3, 4), None),
               raises=RuntimeError),
    ]


def _dtype_error(rng):
    return [Sample((randn(rng, 5, 3).astype(np.int64), randn(rng, 4, 4), randn(rng, 2, 3, 4),
                    randn(rng, 2)), grad=(), raises=RuntimeError)]


register(
    OpInfo("bilinear", lambda lib, a, b, w, bias: lib.bilinear(a, b, w, bias), _samples),
    OpInfo("bilinear", lambda lib, a, b, w, bias: lib.nn.functional.bilinear(a, b, w, bias),
           _samples, variant="functional"),
    OpInfo("bilinear", lambda lib, a, b, w, bias: lib.nn.functional.bilinear(a, b, w, bias=bias),
           _dtype_error, variant="dtype_error", grad=False),
)
