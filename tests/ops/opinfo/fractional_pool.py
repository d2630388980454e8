"""Op-table entries for `ember/ops/fractional_pool.py`: fractional max pooling, driven by
given `_random_samples` (the windows then are deterministic, so both libraries pick the
same ones) and by output ratios; error cases in PyTorch's check order."""
import numpy as np

from . import F, OpInfo, Sample, register
from .pooling import distinct


def samples_for(nd):
    def samples(rng):
        size = (9, 8, 7)[:nd]
        x = distinct(rng, 2, 3, *size)
        u = rng.random((2, 3, nd))
        out = (4, 3, 3)[:nd]
        small = (3, 2, 2)[:nd]
        ratio = (0.5,) * nd
        bad = out[:-1] + (size[-1] + 1,)
        return [
            Sample((x, 2), dict(output_size=out, _random_samples=u), grad=(0,)),
            Sample((x, (2, 3, 2)[:nd]), dict(output_size=small, _random_samples=u), grad=(0,)),
            Sample((x, 2), dict(output_ratio=ratio, _random_samples=u), grad=(0,)),
            Sample((distinct(rng, 3, *size), 3), dict(output_size=small,
                                                      _random_samples=rng.random((1, 3, nd))),
                   grad=(0,)),                                            # unbatched
            Sample((x, 2), dict(output_size=out, _random_samples=u), grad=(0,), noncontig=(0,)),
            Sample((x, 2), dict(output_size=bad, _random_samples=u), grad=(0,),
                   raises=RuntimeError),
            Sample((x, 2), dict(output_size=out, _random_samples=rng.random((1, 3, nd))),
                   grad=(0,), raises=RuntimeError),
            Sample((x, 2), dict(output_size=out, _random_samples=rng.random((2, 4, nd))),
                   grad=(0,), raises=RuntimeError),
            Sample((x, 2), dict(output_size=out, _random_samples=rng.random((2, 3, nd + 1))),
                   grad=(0,), raises=RuntimeError),
            Sample((x, 2), dict(output_size=out, _random_samples=rng.random((2, 3))),
                   grad=(0,), raises=RuntimeError),
            Sample((x[0, 0], 2), dict(output_size=out, _random_samples=u), grad=(0,),
                   raises=RuntimeError),
            Sample((x, 2), dict(_random_samples=u), grad=(0,), raises=ValueError),
            # random samples that require grad: PyTorch refuses before any other check
            Sample((x, 2), dict(output_size=bad, _random_samples=u), raises=RuntimeError),
        ]
    return samples


for _nd in (2, 3):
    register(OpInfo(f"fractional_max_pool{_nd}d", F(f"fractional_max_pool{_nd}d"),
                    samples_for(_nd)))
    register(OpInfo(f"fractional_max_pool{_nd}d", F(f"fractional_max_pool{_nd}d_with_indices"),
                    samples_for(_nd), variant="indices", grad=False, gradgrad=False,
                    covers=(f"fractional_max_pool{_nd}d_with_indices",)))
